//! Classification of gateway answers: success, a tool failure, or a typed
//! refusal. The rules are data: the policy's declared `gateway` rules for the
//! answer's origin first, then the built-in rule sets for the denial shapes
//! public gateways produce (docs/refusals.md), then the fallbacks. An answer
//! nothing recognises is a generic policy refusal: never success, never
//! "retry forever".

use std::sync::OnceLock;

use serde::Serialize;
use serde_json::Value;

use crate::refusal::{Facts, Refusal, RefusalKind};
use crate::spec::{RuleOutcome, RuleSpec};
use crate::table::Table;

/// What a gateway answer means.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "camelCase")]
pub enum Classified {
    /// A normal tool result.
    Success,
    /// The tool ran and failed (`isError: true`): not a refusal.
    ToolFailure {
        text: String,
    },
    Refusal {
        refusal: Box<Refusal>,
    },
}

/// One answer to classify.
#[derive(Debug, Clone, Copy)]
pub struct Answer<'a> {
    /// The JSON body (a JSON-RPC response, or a gateway's own error body).
    pub body: &'a Value,
    pub http_status: Option<u16>,
    /// The gateway that answered (a `gateway` name of the policy).
    pub origin: Option<&'a str>,
    /// The tool that was called, when the caller knows it.
    pub tool: Option<&'a str>,
}

fn rule(
    name: &str,
    status: Option<i64>,
    code: Option<i64>,
    message: Option<&str>,
    data: &[(&str, &str)],
    outcome: RuleOutcome,
) -> RuleSpec {
    RuleSpec {
        name: name.to_string(),
        http_status: status,
        error_code: code,
        message: message.map(str::to_string),
        data: data
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect(),
        result_text: None,
        outcome,
    }
}

/// The built-in rule sets, in the order they are tried, for the shapes of
/// /docs/refusals.md (A to G). A denial inside an `isError` result (shape E)
/// has no built-in rule: it is a tool failure unless the policy declares a
/// rule for that gateway.
pub fn builtin_rules() -> &'static [RuleSpec] {
    static RULES: OnceLock<Vec<RuleSpec>> = OnceLock::new();
    RULES.get_or_init(|| {
        vec![
            // C: ContextForge plugin (content) violation, HTTP 422 only: an
            // RBAC denial (B) that also carries a plugin field stays a denial.
            rule(
                "contextforge-plugin-violation",
                Some(422),
                None,
                None,
                &[("plugin_error_code", "*")],
                RuleOutcome::ContentPolicy,
            ),
            // G: MuleSoft Flex Gateway MCP access control (before B: more specific).
            rule(
                "mulesoft-access-denied",
                Some(403),
                None,
                Some("Access denied to: *"),
                &[],
                RuleOutcome::NotInProfile,
            ),
            // B: ContextForge RBAC.
            rule(
                "contextforge-rbac",
                None,
                Some(-32003),
                Some("Access denied*"),
                &[],
                RuleOutcome::NotInProfile,
            ),
            // F: Docker mcp-gateway governance (its tools allow-list per server).
            rule(
                "docker-policy-denied",
                None,
                Some(0),
                Some("policy denied tool *"),
                &[],
                RuleOutcome::NotInProfile,
            ),
            // D: agentgateway external guardrail PERMISSION_DENIED.
            rule(
                "agentgateway-guardrail-denied",
                None,
                Some(-32001),
                None,
                &[],
                RuleOutcome::Policy,
            ),
            // A: agentgateway hides a denied tool as unknown (as MCP reports an unknown tool).
            rule(
                "unknown-tool",
                None,
                Some(-32602),
                Some("Unknown tool*"),
                &[],
                RuleOutcome::NotRegistered,
            ),
        ]
    })
}

/// `*` matches any run of characters; everything else matches itself.
pub fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ti < t.len() {
        if pi < p.len() && p[pi] != '*' && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The parts of an answer the rules look at.
struct Shape<'a> {
    error: Option<&'a Value>,
    code: Option<i64>,
    message: Option<&'a str>,
    /// Text of an `isError: true` result.
    error_result: Option<String>,
}

fn shape(body: &Value) -> Shape<'_> {
    let error = body.get("error").filter(|e| e.is_object());
    let error_result = body
        .get("result")
        .filter(|r| r.get("isError").and_then(Value::as_bool) == Some(true))
        .map(|r| {
            r.get("content")
                .and_then(Value::as_array)
                .map(|c| {
                    c.iter()
                        .filter_map(|x| x.get("text").and_then(Value::as_str))
                        .collect::<Vec<_>>()
                        .join("\n")
                })
                .unwrap_or_default()
        });
    Shape {
        error,
        code: error.and_then(|e| e.get("code")).and_then(Value::as_i64),
        message: error.and_then(|e| e.get("message")).and_then(Value::as_str),
        error_result,
    }
}

fn matches(r: &RuleSpec, a: &Answer<'_>, s: &Shape<'_>) -> bool {
    let status_ok = r
        .http_status
        .is_none_or(|want| a.http_status.map(i64::from) == Some(want));
    let code_ok = r.error_code.is_none_or(|want| s.code == Some(want));
    let message_ok = r
        .message
        .as_deref()
        .is_none_or(|g| s.message.is_some_and(|m| glob(g, m)));
    let data_ok = r.data.iter().all(|(field, g)| {
        s.error
            .and_then(|e| e.get("data"))
            .and_then(|d| d.get(field))
            .and_then(scalar_text)
            .is_some_and(|v| glob(g, &v))
    });
    let result_ok = r
        .result_text
        .as_deref()
        .is_none_or(|g| s.error_result.as_deref().is_some_and(|t| glob(g, t)));
    // A rule must look at something: one with no matcher never matches.
    let looks = r.http_status.is_some()
        || r.error_code.is_some()
        || r.message.is_some()
        || !r.data.is_empty()
        || r.result_text.is_some();
    // Error-shaped matchers need an error; a result-text matcher needs an isError result.
    let kind_ok = if r.result_text.is_some() {
        s.error_result.is_some()
    } else {
        s.error.is_some()
    };
    looks && kind_ok && status_ok && code_ok && message_ok && data_ok && result_ok
}

fn refusal(kind: RefusalKind, a: &Answer<'_>, s: &Shape<'_>, rule: Option<&str>) -> Classified {
    let data = s.error.and_then(|e| e.get("data"));
    let field = |k: &str| {
        data.and_then(|d| d.get(k))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    let facts = Facts {
        tool: a.tool.map(str::to_string),
        profile: field("profile"),
        policy: if kind == RefusalKind::ContentPolicy {
            field("plugin_name")
        } else {
            None
        },
        origin: a.origin.map(str::to_string),
        rule: rule.map(str::to_string),
        detail: s
            .message
            .map(str::to_string)
            .or_else(|| s.error_result.clone()),
        ..Facts::default()
    };
    Classified::Refusal {
        refusal: Box::new(Refusal::new(kind, facts)),
    }
}

fn outcome(o: RuleOutcome, a: &Answer<'_>, s: &Shape<'_>, rule: &str) -> Classified {
    match RefusalKind::from_outcome(o) {
        Some(kind) => refusal(kind, a, s, Some(rule)),
        None => Classified::ToolFailure {
            text: s
                .error_result
                .clone()
                .or_else(|| s.message.map(str::to_string))
                .unwrap_or_default(),
        },
    }
}

/// Classify with the built-in rules only.
pub fn classify(a: &Answer<'_>) -> Classified {
    classify_with(&[], a)
}

/// The members a JSON-RPC response with a result may have.
const RESULT_MEMBERS: [&str; 3] = ["jsonrpc", "id", "result"];

/// Why an answer cannot be read as one unambiguous outcome, if it cannot.
fn ambiguity(body: &Value) -> Option<&'static str> {
    let result = body.get("result");
    if body.get("error").is_some() && result.is_some() {
        return Some("the answer has both `error` and `result`");
    }
    let result = result?;
    let members = body.as_object().map(|o| o.keys());
    if members
        .into_iter()
        .flatten()
        .any(|k| !RESULT_MEMBERS.contains(&k.as_str()))
    {
        return Some("a `result` with members other than `jsonrpc` and `id` beside it");
    }
    if result.get("isError").is_some_and(|e| !e.is_boolean()) {
        return Some("`isError` is not a boolean");
    }
    if result.get("error").is_some() {
        return Some("an `error` inside `result`");
    }
    None
}

/// toolgate's own refusal, as its hosts answer a refused call (the MCP proxy
/// of the Python package, the decision service): a JSON-RPC error whose
/// `data.toolgate` is a typed refusal. The kind and the facts are read from
/// it; class, retryability, action and texts are recomputed from the kind, so
/// an answer cannot claim that a configuration refusal is worth retrying.
fn own_refusal(a: &Answer<'_>, s: &Shape<'_>) -> Option<Classified> {
    let t = s.error?.get("data")?.get("toolgate")?;
    let kind = RefusalKind::from_code(t.get("kind")?.as_str()?)?;
    let text = |k: &str| t.get(k).and_then(Value::as_str).map(str::to_string);
    let facts = Facts {
        tool: text("tool").or_else(|| a.tool.map(str::to_string)),
        profile: text("profile"),
        consumer: text("consumer"),
        configuration: text("configuration"),
        file: text("file"),
        policy: text("policy"),
        origin: a.origin.map(str::to_string),
        rule: Some("toolgate".into()),
        detail: s.message.map(str::to_string),
        ..Facts::default()
    };
    Some(Classified::Refusal {
        refusal: Box::new(Refusal::new(kind, facts)),
    })
}

/// A generic policy refusal for an answer that cannot be read unambiguously.
fn unreadable(a: &Answer<'_>, why: String) -> Classified {
    let facts = Facts {
        tool: a.tool.map(str::to_string),
        origin: a.origin.map(str::to_string),
        detail: Some(why),
        ..Facts::default()
    };
    Classified::Refusal {
        refusal: Box::new(Refusal::new(RefusalKind::Policy, facts)),
    }
}

/// Classify with declared rules (tried first), then the built-in ones. An
/// ambiguous answer (both `error` and `result`, a `result` with members
/// beside it other than `jsonrpc` and `id`, a non-boolean `isError`, an
/// `error` nested in `result`) is a `policy` refusal before any rule is
/// tried: success must be unambiguous.
pub fn classify_with(declared: &[RuleSpec], a: &Answer<'_>) -> Classified {
    if let Some(why) = ambiguity(a.body) {
        return unreadable(a, why.to_string());
    }
    let s = shape(a.body);
    for r in declared {
        if matches(r, a, &s) {
            return outcome(r.outcome, a, &s, &r.name);
        }
    }
    if let Some(own) = own_refusal(a, &s) {
        return own;
    }
    for r in builtin_rules() {
        if matches(r, a, &s) {
            return outcome(r.outcome, a, &s, &r.name);
        }
    }
    // Any error that is present and not null rules success out, even one of an odd shape.
    let error_field = a.body.get("error").is_some_and(|e| !e.is_null());
    if !error_field {
        if let Some(text) = &s.error_result {
            return Classified::ToolFailure { text: text.clone() };
        }
        if a.body.get("result").is_some_and(Value::is_object) {
            // A result is a success whatever the HTTP status said, unless a rule said otherwise.
            return Classified::Success;
        }
    }
    refusal(RefusalKind::Policy, a, &s, None)
}

/// An answer as received: the raw body bytes and what the transport said.
/// This is the one entry point for answers from outside (the CLI, policy
/// tests, the bindings): the body is parsed strictly, so a key named twice
/// anywhere, or bytes that are not UTF-8 JSON, make a `policy` refusal.
#[derive(Debug, Clone, Copy)]
pub struct RawAnswer<'a> {
    pub body: &'a [u8],
    pub http_status: Option<u16>,
    pub origin: Option<&'a str>,
    pub tool: Option<&'a str>,
}

fn classify_raw_with(declared: &[RuleSpec], a: &RawAnswer<'_>) -> Classified {
    let parsed = crate::json::parse_strict(a.body);
    let null = Value::Null;
    let answer = Answer {
        body: parsed.as_ref().unwrap_or(&null),
        http_status: a.http_status,
        origin: a.origin,
        tool: a.tool,
    };
    match &parsed {
        Ok(_) => classify_with(declared, &answer),
        Err(e) => unreadable(&answer, format!("the answer is not one JSON value: {e}")),
    }
}

/// Classify raw bytes with the built-in rules only.
pub fn classify_raw(a: &RawAnswer<'_>) -> Classified {
    classify_raw_with(&[], a)
}

/// A gateway answer file, as `toolgate classify`, policy tests and the
/// bindings read it: either a bare body, or an envelope
/// `{"httpStatus": 403, "origin": "mulesoft", "body": {...}}` holding
/// exactly those keys (`body` required, the others optional). One rule for
/// every reader. The body's bytes are kept as written, so its duplicate keys
/// are still seen by [`classify_raw`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Envelope {
    pub http_status: Option<u16>,
    pub origin: Option<String>,
    pub body: Vec<u8>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct EnvelopeFile<'a> {
    http_status: Option<u16>,
    origin: Option<String>,
    #[serde(borrow)]
    body: &'a serde_json::value::RawValue,
}

impl Envelope {
    /// Read a file's bytes. Anything that is not exactly an envelope is a
    /// bare body (and a body that is not JSON classifies as a refusal).
    pub fn read(bytes: &[u8]) -> Envelope {
        match serde_json::from_slice::<EnvelopeFile<'_>>(bytes) {
            Ok(e) => Envelope {
                http_status: e.http_status,
                origin: e.origin,
                body: e.body.get().as_bytes().to_vec(),
            },
            Err(_) => Envelope {
                http_status: None,
                origin: None,
                body: bytes.to_vec(),
            },
        }
    }

    /// The answer to classify; `http_status`, `origin` given by the caller win.
    pub fn answer<'a>(
        &'a self,
        http_status: Option<u16>,
        origin: Option<&'a str>,
        tool: Option<&'a str>,
    ) -> RawAnswer<'a> {
        RawAnswer {
            body: &self.body,
            http_status: http_status.or(self.http_status),
            origin: origin.or(self.origin.as_deref()),
            tool,
        }
    }
}

impl Table {
    /// The policy's declared rules for a gateway, in the order written.
    pub fn gateway_rules(&self, origin: &str) -> &[RuleSpec] {
        self.spec
            .gateways
            .iter()
            .find(|g| g.name == origin)
            .map(|g| g.rules.as_slice())
            .unwrap_or(&[])
    }

    /// Classify an answer with this table's rules for its origin, then the built-in ones.
    pub fn classify(&self, a: &Answer<'_>) -> Classified {
        let declared = a.origin.map(|o| self.gateway_rules(o)).unwrap_or(&[]);
        classify_with(declared, a)
    }

    /// [`Table::classify`] of raw bytes, parsed strictly ([`RawAnswer`]).
    pub fn classify_raw(&self, a: &RawAnswer<'_>) -> Classified {
        let declared = a.origin.map(|o| self.gateway_rules(o)).unwrap_or(&[]);
        classify_raw_with(declared, a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_matches_runs() {
        assert!(glob(
            "Access denied to: *",
            "Access denied to: refund.issue"
        ));
        assert!(glob("*", ""));
        assert!(glob("a*b*c", "axxbyyc"));
        assert!(!glob("a*b*c", "axxbyy"));
        assert!(!glob("Access denied", "Access denied to: x"));
        assert!(glob("Access denied*", "Access denied"));
    }
}
