//! Classification of gateway answers: success, a tool failure, or a typed
//! refusal. The rules are data: the policy's declared `gateway` rules for the
//! answer's origin first, then the built-in rule sets for the denial shapes
//! public gateways produce (docs/refusals.md), then the fallbacks. An answer
//! nothing recognises is a generic policy refusal: never success, never
//! "retry forever".

use std::sync::OnceLock;

use serde::Serialize;
use serde_json::Value;

use crate::pattern::{self, Captured};
use crate::refusal::{Facts, Refusal, RefusalKind};
use crate::spec::{RuleOutcome, RuleSpec};
use crate::table::Table;

/// What a gateway answer means.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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

/// One answer to classify, its body already parsed (JSON-RPC or a gateway's
/// own JSON error body). It has no headers and no raw text, so `header` and
/// `body` matchers never hold for it: answers from outside go through
/// [`RawAnswer`].
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

/// What the rules see of one answer: the transport (status, headers, raw
/// text) and, when the body is one JSON value, that value.
struct Input<'a> {
    json: Option<&'a Value>,
    /// The body as text, when it is UTF-8.
    text: Option<&'a str>,
    headers: &'a [(String, String)],
    http_status: Option<u16>,
    origin: Option<&'a str>,
    tool: Option<&'a str>,
}

impl<'a> Input<'a> {
    fn of(a: &Answer<'a>) -> Input<'a> {
        Input {
            json: Some(a.body),
            text: None,
            headers: &[],
            http_status: a.http_status,
            origin: a.origin,
            tool: a.tool,
        }
    }
}

/// A body longer than this never matches a `body` glob: denials are short,
/// and the glob's worst case grows with the text (docs/refusals.md).
pub const BODY_GLOB_LIMIT: usize = 64 * 1024;

/// One built-in rule as data: the fields of a `RuleSpec` a built-in sets
/// (none matches on result text or body).
struct Builtin {
    name: &'static str,
    status: Option<i64>,
    code: Option<i64>,
    message: Option<&'static str>,
    data: &'static [(&'static str, &'static str)],
    headers: &'static [(&'static str, &'static str)],
    remediation: Option<&'static str>,
    outcome: RuleOutcome,
}

/// The fields a row leaves out (`..UNSET`): it matches on nothing more.
const UNSET: Builtin = Builtin {
    name: "",
    status: None,
    code: None,
    message: None,
    data: &[],
    headers: &[],
    remediation: None,
    outcome: RuleOutcome::NotInProfile,
};

impl Builtin {
    fn spec(&self) -> RuleSpec {
        let pairs = |xs: &[(&str, &str)]| {
            xs.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        RuleSpec {
            name: self.name.to_string(),
            http_status: self.status,
            error_code: self.code,
            message: self.message.map(str::to_string),
            data: pairs(self.data),
            result_text: None,
            headers: pairs(self.headers),
            body: None,
            remediation: self.remediation.map(str::to_string),
            outcome: self.outcome,
        }
    }
}

/// MuleSoft's MCP access policies: one rule, answered on either transport.
const MULESOFT: Builtin = Builtin {
    name: "mulesoft-access-denied",
    message: Some("Access denied to: {tool}*"),
    remediation: Some("allow {tool} for this client in the gateway's MCP access policies (MCP Global Access, MCP Attribute-Based Access Control) in API Manager, or widen {profile} there"),
    outcome: RuleOutcome::NotInProfile,
    ..UNSET
};

/// The built-in rules as rows, in the order they are tried.
const BUILTINS: &[Builtin] = {
    use RuleOutcome::*;
    &[
        // C: ContextForge plugin (content) violation, HTTP 422 only: an
        // RBAC denial (B) that also carries a plugin field stays a denial.
        Builtin {
            name: "contextforge-plugin-violation",
            status: Some(422),
            data: &[("plugin_error_code", "*")],
            outcome: ContentPolicy,
            ..UNSET
        },
        // G: MuleSoft Flex Gateway MCP access control (before B: more specific).
        Builtin {
            status: Some(403),
            ..MULESOFT
        },
        // G': the same policies from Omni Gateway 1.13 on: HTTP 200, code -32008.
        Builtin {
            code: Some(-32008),
            ..MULESOFT
        },
        // B: ContextForge RBAC.
        Builtin {
            name: "contextforge-rbac",
            code: Some(-32003),
            message: Some("Access denied*"),
            outcome: NotInProfile,
            ..UNSET
        },
        // F: Docker mcp-gateway governance (its tools allow-list per server).
        Builtin {
            name: "docker-policy-denied",
            code: Some(0),
            message: Some("policy denied tool {tool}*"),
            outcome: NotInProfile,
            ..UNSET
        },
        // D: agentgateway external guardrail PERMISSION_DENIED.
        Builtin {
            name: "agentgateway-guardrail-denied",
            code: Some(-32001),
            outcome: Policy,
            ..UNSET
        },
        // A: agentgateway hides a denied tool as unknown (as MCP reports an unknown tool).
        Builtin {
            name: "unknown-tool",
            code: Some(-32602),
            message: Some("Unknown tool: {tool}*"),
            outcome: NotRegistered,
            ..UNSET
        },
        Builtin {
            name: "unknown-tool",
            code: Some(-32602),
            message: Some("Unknown tool*"),
            outcome: NotRegistered,
            ..UNSET
        },
        // H: MCP authorization at the transport: 403 with a Bearer
        // challenge for a scope the token lacks (whatever the body).
        Builtin {
            name: "mcp-insufficient-scope",
            status: Some(403),
            headers: &[("WWW-Authenticate", "*error=\"insufficient_scope\"*")],
            remediation: Some("the consumer's token lacks the scope that {tool} needs (the server names it in `WWW-Authenticate`): grant that scope to the consumer at the authorization server; the agent cannot fix this at run time"),
            outcome: NotInProfile,
            ..UNSET
        },
    ]
};

/// The built-in rule sets, in the order they are tried, for the shapes of
/// /docs/refusals.md (A to H). A denial inside an `isError` result (shape E)
/// has no built-in rule: it is a tool failure unless the policy declares a
/// rule for that gateway.
pub fn builtin_rules() -> &'static [RuleSpec] {
    static RULES: OnceLock<Vec<RuleSpec>> = OnceLock::new();
    RULES.get_or_init(|| BUILTINS.iter().map(Builtin::spec).collect())
}

pub use crate::pattern::glob;

fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The parts of an answer the rules look at.
#[derive(Default)]
struct Shape<'a> {
    error: Option<&'a Value>,
    code: Option<i64>,
    message: Option<&'a str>,
    /// Text of an `isError: true` result.
    error_result: Option<String>,
}

fn shape(body: Option<&Value>) -> Shape<'_> {
    let Some(body) = body else {
        return Shape::default();
    };
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

/// Which parts of an answer a rule needs: a JSON-RPC error (error-code,
/// message, data), an `isError` result (result-text), or neither (status,
/// headers, body: the transport).
pub fn needs_error(r: &RuleSpec) -> bool {
    r.error_code.is_some() || r.message.is_some() || !r.data.is_empty()
}

/// Whether a rule looks at anything at all (one with no matcher never matches).
pub fn looks_at_something(r: &RuleSpec) -> bool {
    r.http_status.is_some()
        || needs_error(r)
        || r.result_text.is_some()
        || !r.headers.is_empty()
        || r.body.is_some()
}

/// `Some(captures)` when every matcher of the rule holds. Captures are taken
/// in the order message, data, result text, headers, body; the first wins.
fn matches(r: &RuleSpec, a: &Input<'_>, s: &Shape<'_>) -> Option<Captured> {
    if !looks_at_something(r)
        || (needs_error(r) && s.error.is_none())
        || (r.result_text.is_some() && s.error_result.is_none())
    {
        return None;
    }
    if r.http_status
        .is_some_and(|want| a.http_status.map(i64::from) != Some(want))
        || r.error_code.is_some_and(|want| s.code != Some(want))
    {
        return None;
    }
    let mut got = Captured::default();
    let mut check = |glob: &str, text: Option<&str>| -> bool {
        match text.and_then(|t| pattern::capture(glob, t)) {
            Some(c) => {
                got.fill(c);
                true
            }
            None => false,
        }
    };
    if let Some(g) = &r.message {
        if !check(g, s.message) {
            return None;
        }
    }
    for (field, g) in &r.data {
        let v = s
            .error
            .and_then(|e| e.get("data"))
            .and_then(|d| d.get(field))
            .and_then(scalar_text);
        if !check(g, v.as_deref()) {
            return None;
        }
    }
    if let Some(g) = &r.result_text {
        if !check(g, s.error_result.as_deref()) {
            return None;
        }
    }
    for (name, g) in &r.headers {
        let hit = a
            .headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .any(|(_, v)| check(g, Some(v)));
        if !hit {
            return None;
        }
    }
    if let Some(g) = &r.body {
        let text = a.text.filter(|t| t.len() <= BODY_GLOB_LIMIT);
        if !check(g, text) {
            return None;
        }
    }
    Some(got)
}

/// Longest detail kept from a body that is not a JSON-RPC answer.
const DETAIL_CHARS: usize = 240;

/// What the gateway said, as received: the JSON-RPC message, the text of an
/// `isError` result, a problem document's `detail` or `title` (RFC 9457),
/// or the start of a plain body.
fn detail(a: &Input<'_>, s: &Shape<'_>) -> Option<String> {
    if let Some(m) = s.message {
        return Some(m.to_string());
    }
    if let Some(t) = &s.error_result {
        return Some(t.clone());
    }
    if let Some(j) = a.json {
        return ["detail", "title"]
            .iter()
            .find_map(|k| j.get(*k).and_then(Value::as_str))
            .map(str::to_string);
    }
    let t = a.text?.trim();
    (!t.is_empty()).then(|| match t.char_indices().nth(DETAIL_CHARS) {
        Some((i, _)) => format!("{}…", &t[..i]),
        None => t.to_string(),
    })
}

fn refusal(
    kind: RefusalKind,
    a: &Input<'_>,
    s: &Shape<'_>,
    rule: Option<&RuleSpec>,
    got: Captured,
) -> Classified {
    let data = s.error.and_then(|e| e.get("data"));
    let field = |k: &str| {
        data.and_then(|d| d.get(k))
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    // The caller knows what it called (a gateway may show a mapped name);
    // what the answer says fills what the caller did not say.
    let tool = a.tool.map(str::to_string).or(got.tool);
    let profile = got.profile.or_else(|| field("profile"));
    let remediation = rule
        .and_then(|r| r.remediation.as_deref())
        .map(|t| pattern::fill(t, tool.as_deref(), profile.as_deref()));
    let facts = Facts {
        tool,
        profile,
        policy: if kind == RefusalKind::ContentPolicy {
            field("plugin_name")
        } else {
            None
        },
        origin: a.origin.map(str::to_string),
        rule: rule.map(|r| r.name.clone()),
        // A denial that says why only in a header: the first header the rule looked at.
        detail: detail(a, s).or_else(|| {
            let (name, _) = rule?.headers.first()?;
            let (n, v) = a
                .headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))?;
            Some(format!("{n}: {v}"))
        }),
        remediation,
        ..Facts::default()
    };
    Classified::Refusal {
        refusal: Box::new(Refusal::new(kind, facts)),
    }
}

fn outcome(r: &RuleSpec, a: &Input<'_>, s: &Shape<'_>, got: Captured) -> Classified {
    match RefusalKind::from_outcome(r.outcome) {
        Some(kind) => refusal(kind, a, s, Some(r), got),
        None => Classified::ToolFailure {
            text: s
                .error_result
                .clone()
                .or_else(|| s.message.map(str::to_string))
                .or_else(|| detail(a, s))
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
fn own_refusal(a: &Input<'_>, s: &Shape<'_>) -> Option<Classified> {
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
fn unreadable(a: &Input<'_>, why: String) -> Classified {
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
    classify_input(declared, &Input::of(a), None)
}

/// The one classification: `unparsed` is why the body is not one JSON value
/// (then only transport matchers can hold, and an answer no rule matches is
/// refused with that reason).
fn classify_input(declared: &[RuleSpec], a: &Input<'_>, unparsed: Option<String>) -> Classified {
    if let Some(why) = a.json.and_then(ambiguity) {
        return unreadable(a, why.to_string());
    }
    let s = shape(a.json);
    for r in declared {
        if let Some(got) = matches(r, a, &s) {
            return outcome(r, a, &s, got);
        }
    }
    if let Some(own) = own_refusal(a, &s) {
        return own;
    }
    for r in builtin_rules() {
        if let Some(got) = matches(r, a, &s) {
            return outcome(r, a, &s, got);
        }
    }
    let Some(body) = a.json else {
        return unreadable(a, unparsed.unwrap_or_default());
    };
    // Any error that is present and not null rules success out, even one of an odd shape.
    let error_field = body.get("error").is_some_and(|e| !e.is_null());
    if !error_field {
        if let Some(text) = &s.error_result {
            return Classified::ToolFailure { text: text.clone() };
        }
        if body.get("result").is_some_and(Value::is_object) {
            // A result is a success whatever the HTTP status said, unless a rule said otherwise.
            return Classified::Success;
        }
    }
    refusal(RefusalKind::Policy, a, &s, None, Captured::default())
}

/// An answer as received: the raw body bytes and what the transport said.
/// This is the one entry point for answers from outside (the CLI, policy
/// tests, the bindings): the body is parsed strictly, so a key named twice
/// anywhere, or bytes that are not UTF-8 JSON, leave only the transport
/// matchers (`http-status`, `header`, `body`) to recognise it, and an answer
/// none of them recognises is a `policy` refusal.
#[derive(Debug, Clone, Copy)]
pub struct RawAnswer<'a> {
    pub body: &'a [u8],
    pub http_status: Option<u16>,
    /// HTTP header fields as received (name, value); a name may repeat.
    pub headers: &'a [(String, String)],
    pub origin: Option<&'a str>,
    pub tool: Option<&'a str>,
}

fn classify_raw_with(declared: &[RuleSpec], a: &RawAnswer<'_>) -> Classified {
    let parsed = crate::json::parse_strict(a.body);
    let input = Input {
        json: parsed.as_ref().ok(),
        text: std::str::from_utf8(a.body).ok(),
        headers: a.headers,
        http_status: a.http_status,
        origin: a.origin,
        tool: a.tool,
    };
    let why = parsed
        .as_ref()
        .err()
        .map(|e| format!("the answer is not one JSON value: {e}"));
    classify_input(declared, &input, why)
}

/// Classify raw bytes with the built-in rules only.
pub fn classify_raw(a: &RawAnswer<'_>) -> Classified {
    classify_raw_with(&[], a)
}

/// A gateway answer file, as `toolgate classify`, policy tests and the
/// bindings read it: either a bare body, or an envelope holding exactly the
/// keys `httpStatus`, `origin`, `headers` (optional) and one of `body` (a
/// JSON body, kept as written) or `bodyText` (the body as text: plain text,
/// HTML, empty). `headers` is an object of header name to a string or a
/// list of strings (a field received several times); a name given twice,
/// in any case, makes the file a bare body. One rule for every reader. The
/// body's bytes are kept as written, so its duplicate keys are still seen
/// by [`classify_raw`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Envelope {
    pub http_status: Option<u16>,
    pub origin: Option<String>,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct EnvelopeFile<'a> {
    http_status: Option<u16>,
    origin: Option<String>,
    #[serde(borrow)]
    headers: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow)]
    body: Option<&'a serde_json::value::RawValue>,
    body_text: Option<String>,
}

/// The `headers` of an envelope, strictly: an object (no name twice, in any
/// ASCII case) of strings or lists of strings.
pub fn headers_of(raw: &[u8]) -> Option<Vec<(String, String)>> {
    let v = crate::json::parse_strict(raw).ok()?;
    let mut out: Vec<(String, String)> = Vec::new();
    for (name, value) in v.as_object()? {
        if out.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
            return None;
        }
        match value {
            Value::String(s) => out.push((name.clone(), s.clone())),
            Value::Array(xs) => {
                for x in xs {
                    out.push((name.clone(), x.as_str()?.to_string()));
                }
            }
            _ => return None,
        }
    }
    Some(out)
}

impl Envelope {
    /// Read a file's bytes. Anything that is not exactly an envelope is a
    /// bare body (and a body that is not JSON classifies as a refusal unless
    /// a transport rule recognises it).
    pub fn read(bytes: &[u8]) -> Envelope {
        let bare = || Envelope {
            http_status: None,
            origin: None,
            headers: Vec::new(),
            body: bytes.to_vec(),
        };
        let Ok(e) = serde_json::from_slice::<EnvelopeFile<'_>>(bytes) else {
            return bare();
        };
        let headers = match e.headers {
            None => Vec::new(),
            Some(h) => match headers_of(h.get().as_bytes()) {
                Some(h) => h,
                None => return bare(),
            },
        };
        let body = match (e.body, e.body_text) {
            (Some(b), None) => b.get().as_bytes().to_vec(),
            (None, Some(t)) => t.into_bytes(),
            _ => return bare(),
        };
        Envelope {
            http_status: e.http_status,
            origin: e.origin,
            headers,
            body,
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
            headers: &self.headers,
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
