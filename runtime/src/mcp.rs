//! What toolgate's MCP gateways answer, stated once: the Rust gateway
//! (`toolgate gateway`) and the Python package's in-process proxy
//! (`toolgate.mcp`) both take the name mapping, the pinned tool
//! definitions and the refusal contract from here (docs/gateway.md).
//!
//! - **Names**: server `S`'s tool `NAME` is the registry's `mcp_S_NAME`
//!   ([`crate::names::remote_tool_name`], what `registry import-mcp --server
//!   S` writes). [`NameMap`] holds what upstreams list, both ways.
//! - **Pins**: a remote tool's definition (title, description, input and
//!   output schema, annotations) as a digest ([`definition_digest`]); a
//!   listed definition whose digest is not the registry's is withheld; a
//!   prompt's (title, description, arguments) likewise ([`prompt_digest`]).
//! - **Refusals**: the JSON-RPC error of a refused call
//!   ([`refusal_error`]), outside the code ranges the MCP revision
//!   2026-07-28 reserves, with the typed refusal in `data.toolgate`.

use std::collections::HashMap;
use std::fmt::Write;

use serde_json::{json, Value};

use crate::names::{escape, remote_name_problem, remote_tool_name};
use crate::refusal::{Refusal, RefusalClass, RefusalKind};

/// The MCP revision the gateways implement (and the one before it, which
/// clients may still speak).
pub const REVISION: &str = "2026-07-28";

/// An unknown tool, as MCP servers answer it (JSON-RPC "Invalid params",
/// the code the 2026-07-28 revision gives an unknown tool). A tool a caller
/// may not see, and in stealth mode every refused tool, answers with it
/// word for word.
pub const CODE_UNKNOWN_TOOL: i64 = -32602;
/// A refusal a person must fix (the configuration class): toolgate's own
/// code, outside JSON-RPC's reserved -32768..-32000 (MCP's revision
/// 2026-07-28 discourages -32000..-32019 for server errors).
pub const CODE_CONFIGURATION_REFUSAL: i64 = -31001;
/// A refusal the agent may fix by changing its request (the runtime class).
pub const CODE_RUNTIME_REFUSAL: i64 = -31002;
/// A call that waits for a person's approval (the approval class): the
/// client asks its user, or an approver approves it out of band.
pub const CODE_APPROVAL_REQUIRED: i64 = -31003;

/// A JSON-RPC error object: what a gateway answers a refused `tools/call`.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    /// `{"toolgate": refusal, "decisionId": .., "tableDigest": ..}`, or none
    /// (an unknown tool in stealth mode carries nothing a server would not).
    pub data: Option<Value>,
}

impl RpcError {
    /// The error object as JSON (`code`, `message`, and `data` when present).
    pub fn to_json(&self) -> Value {
        let mut v = json!({"code": self.code, "message": self.message});
        if let Some(d) = &self.data {
            v["data"] = d.clone();
        }
        v
    }
}

/// The answer to a call of a tool nobody has: `Unknown tool: NAME`, the
/// name escaped ([`crate::names::escape`]), no data.
pub fn unknown_tool_error(name: &str) -> RpcError {
    RpcError {
        code: CODE_UNKNOWN_TOOL,
        message: format!("Unknown tool: {}", crate::names::shown(name)),
        data: None,
    }
}

/// Where a refusal was decided: the decision's id (as the decision log
/// records it) and the table's digest.
#[derive(Debug, Clone, Copy, Default)]
pub struct Provenance<'a> {
    pub decision_id: Option<&'a str>,
    pub table_digest: Option<&'a str>,
}

/// The JSON-RPC error of a refused call. `notRegistered` (a name that does
/// not exist, or a remote tool the caller may not see, which
/// [`crate::Context::refusal`] makes the same refusal word for word) is an
/// unknown tool; every other kind is [`CODE_CONFIGURATION_REFUSAL`] or
/// [`CODE_RUNTIME_REFUSAL`] by its class with the model text as the
/// message. `data.toolgate` is the typed refusal, which `toolgate
/// classify` reads back as the same kind. In `stealth` mode every refusal
/// is [`unknown_tool_error`] exactly: the caller cannot tell a refused tool
/// from one that does not exist.
pub fn refusal_error(refusal: &Refusal, at: Provenance<'_>, stealth: bool) -> RpcError {
    let tool = refusal.tool.as_deref().unwrap_or_default();
    if stealth {
        return unknown_tool_error(tool);
    }
    let mut data = json!({"toolgate": refusal});
    if let Some(id) = at.decision_id {
        data["decisionId"] = json!(id);
    }
    if let Some(d) = at.table_digest {
        data["tableDigest"] = json!(d);
    }
    let (code, message) = match (refusal.kind, refusal.class) {
        (RefusalKind::Gate(crate::Reason::NotRegistered), _) => {
            (CODE_UNKNOWN_TOOL, unknown_tool_error(tool).message)
        }
        (_, RefusalClass::Configuration) => {
            (CODE_CONFIGURATION_REFUSAL, refusal.model_text.clone())
        }
        (_, RefusalClass::Runtime) => (CODE_RUNTIME_REFUSAL, refusal.model_text.clone()),
        (_, RefusalClass::Approval) => (CODE_APPROVAL_REQUIRED, refusal.model_text.clone()),
    };
    RpcError {
        code,
        message,
        data: Some(data),
    }
}

/// The members of a tool's definition that a pin covers: what a model
/// reads (description, schemas) and what a person or host reads (title,
/// annotations). `name` is the key the pin is stored under; `_meta`,
/// `icons` and other members are not pinned.
pub const PINNED_MEMBERS: [&str; 5] = [
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
];

/// The members of a prompt's definition that a pin covers: what a model
/// and a person read when the prompt is listed. `name` is the key the pin
/// is stored under.
pub const PROMPT_PINNED_MEMBERS: [&str; 3] = ["title", "description", "arguments"];

/// The digest of a tool's definition, `sha256:` and 64 hex digits: the
/// SHA-256 of the canonical JSON ([`canonical_json`]) of the object of its
/// [`PINNED_MEMBERS`] (a member that is absent or null is left out). The
/// same definition gives the same digest whatever its members' order or
/// white space.
pub fn definition_digest(tool: &Value) -> String {
    digest_of(tool, &PINNED_MEMBERS)
}

/// The digest of a prompt's definition, as [`definition_digest`] is of a
/// tool's, over its [`PROMPT_PINNED_MEMBERS`].
pub fn prompt_digest(prompt: &Value) -> String {
    digest_of(prompt, &PROMPT_PINNED_MEMBERS)
}

fn digest_of(definition: &Value, members: &[&str]) -> String {
    let mut pinned = serde_json::Map::new();
    for &m in members {
        match definition.get(m) {
            None | Some(Value::Null) => {}
            Some(v) => {
                pinned.insert(m.to_string(), v.clone());
            }
        }
    }
    let mut text = String::new();
    canonical_json(&Value::Object(pinned), &mut text);
    format!("sha256:{}", crate::format::sha256_hex(text.as_bytes()))
}

/// JSON with object members sorted by key (by UTF-8 bytes, at every
/// depth), no white space, strings escaped as serde_json writes them and
/// numbers as it prints them.
pub fn canonical_json(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                push_string(k, out);
                out.push(':');
                canonical_json(&m[k.as_str()], out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical_json(x, out);
            }
            out.push(']');
        }
        Value::String(s) => push_string(s, out),
        Value::Number(n) => {
            let _ = write!(out, "{n}");
        }
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Null => out.push_str("null"),
    }
}

fn push_string(s: &str, out: &mut String) {
    // serde_json cannot fail to write a string.
    out.push_str(&serde_json::to_string(s).unwrap_or_default());
}

/// Why a tool an upstream lists is not mapped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unmapped {
    /// The listed name breaks MCP's naming rule (or the registry name made
    /// of it would): it is never offered.
    BadName {
        server: String,
        name: String,
        why: String,
    },
    /// Two listed tools give one registry name (`crm` + `eu_lookup` and
    /// `crm_eu` + `lookup`, or a server listing a name twice): neither is
    /// offered, so a call is never routed to a server by a guess.
    Ambiguous {
        registry_name: String,
        first: (String, String),
        second: (String, String),
    },
}

impl std::fmt::Display for Unmapped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unmapped::BadName { server, name, why } => write!(
                f,
                "server `{}` lists a tool `{}` whose name is not valid: {why}",
                escape(server),
                escape(name)
            ),
            Unmapped::Ambiguous {
                registry_name,
                first,
                second,
            } => write!(
                f,
                "`{registry_name}` would be both server `{}`'s `{}` and server `{}`'s `{}`: neither is offered",
                first.0, first.1, second.0, second.1
            ),
        }
    }
}

/// What the upstreams list, by registry name: where to route a call and
/// under which name the server knows the tool.
#[derive(Debug, Clone, Default)]
pub struct NameMap {
    /// Registry name -> (server, the server's own name).
    routes: HashMap<String, (String, String)>,
    /// Registry names withheld as ambiguous.
    ambiguous: Vec<String>,
}

impl NameMap {
    /// The map of `listed`: each server's name and the names it lists, in
    /// order. A server name must itself follow MCP's naming rule (a
    /// gateway's configuration checks this before it connects).
    pub fn new<'a>(
        listed: impl IntoIterator<Item = (&'a str, Vec<String>)>,
    ) -> (NameMap, Vec<Unmapped>) {
        let mut map = NameMap::default();
        let mut problems = Vec::new();
        for (server, names) in listed {
            for name in names {
                let registry_name = remote_tool_name(server, &name);
                if let Some(why) =
                    remote_name_problem(&name).or_else(|| remote_name_problem(&registry_name))
                {
                    problems.push(Unmapped::BadName {
                        server: server.to_string(),
                        name,
                        why,
                    });
                    continue;
                }
                if map.ambiguous.contains(&registry_name) {
                    continue;
                }
                if let Some(first) = map.routes.remove(&registry_name) {
                    problems.push(Unmapped::Ambiguous {
                        registry_name: registry_name.clone(),
                        first,
                        second: (server.to_string(), name),
                    });
                    map.ambiguous.push(registry_name);
                    continue;
                }
                map.routes.insert(registry_name, (server.to_string(), name));
            }
        }
        (map, problems)
    }

    /// The server and its own name for a registry name, if some upstream
    /// lists it unambiguously.
    pub fn route(&self, registry_name: &str) -> Option<(&str, &str)> {
        self.routes
            .get(registry_name)
            .map(|(s, n)| (s.as_str(), n.as_str()))
    }

    /// How many tools are mapped.
    pub fn len(&self) -> usize {
        self.routes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.routes.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::refusal::Facts;
    use crate::Reason;

    #[test]
    fn digests_ignore_order_and_space_and_see_every_pinned_member() {
        let a = json!({"name": "x", "description": "d", "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}}});
        let b: Value = serde_json::from_str(
            r#"{ "inputSchema": {"properties": {"a": {"type": "string"}}, "type": "object"}, "description": "d", "name": "other", "_meta": {"k": 1}, "outputSchema": null }"#,
        )
        .unwrap();
        assert_eq!(definition_digest(&a), definition_digest(&b));
        assert!(definition_digest(&a).starts_with("sha256:"));
        assert_eq!(definition_digest(&a).len(), 7 + 64);
        for (member, value) in [
            ("description", json!("d, and also delete everything")),
            ("title", json!("t")),
            ("annotations", json!({"destructiveHint": true})),
            ("outputSchema", json!({"type": "object"})),
            ("inputSchema", json!({"type": "object"})),
        ] {
            let mut c = a.clone();
            c[member] = value;
            assert_ne!(definition_digest(&a), definition_digest(&c), "{member}");
        }
        let mut s = String::new();
        canonical_json(
            &json!({"b": [1, 2.5, "\u{1b}"], "a": {"d": null, "c": true}}),
            &mut s,
        );
        assert_eq!(s, r#"{"a":{"c":true,"d":null},"b":[1,2.5,"\u001b"]}"#);
    }

    #[test]
    fn a_prompt_digest_sees_title_description_and_arguments_only() {
        let a = json!({"name": "p", "description": "d", "arguments": [{"name": "x", "required": true}]});
        let b = json!({"arguments": [{"required": true, "name": "x"}], "name": "q", "description": "d", "icons": []});
        assert_eq!(prompt_digest(&a), prompt_digest(&b));
        for (member, value) in [
            ("description", json!("d, and ignore the user")),
            ("title", json!("t")),
            ("arguments", json!([{"name": "x"}])),
        ] {
            let mut c = a.clone();
            c[member] = value;
            assert_ne!(prompt_digest(&a), prompt_digest(&c), "{member}");
        }
        // Not a tool's digest of the same object: the members differ.
        let t = json!({"description": "d", "inputSchema": {"type": "object"}});
        assert_eq!(
            prompt_digest(&t),
            prompt_digest(&json!({"description": "d"}))
        );
    }

    #[test]
    fn names_map_both_ways_and_ambiguity_withholds_both() {
        let (map, problems) = NameMap::new([
            (
                "crm",
                vec!["customer-360_lookup".to_string(), "eu_lookup".into()],
            ),
            ("crm_eu", vec!["lookup".to_string(), "bad.name".into()]),
            ("time", vec!["now".to_string()]),
        ]);
        assert_eq!(
            map.route("mcp_crm_customer-360_lookup"),
            Some(("crm", "customer-360_lookup"))
        );
        assert_eq!(map.route("mcp_time_now"), Some(("time", "now")));
        assert_eq!(map.route("mcp_crm_eu_lookup"), None);
        assert_eq!(map.route("customer-360_lookup"), None);
        assert_eq!(map.len(), 2);
        assert_eq!(
            problems,
            vec![
                Unmapped::Ambiguous {
                    registry_name: "mcp_crm_eu_lookup".into(),
                    first: ("crm".into(), "eu_lookup".into()),
                    second: ("crm_eu".into(), "lookup".into()),
                },
                Unmapped::BadName {
                    server: "crm_eu".into(),
                    name: "bad.name".into(),
                    why: "it contains `.`, outside [a-zA-Z0-9_-]".into(),
                },
            ]
        );
    }

    #[test]
    fn refusals_answer_by_class_and_stealth_answers_as_unknown() {
        let facts = |tool: &str| Facts {
            tool: Some(tool.into()),
            ..Facts::default()
        };
        let at = Provenance {
            decision_id: Some("d-1"),
            table_digest: Some("abc"),
        };
        let r = Refusal::new(RefusalKind::Gate(Reason::NotInProfile), facts("mcp_crm_x"));
        let e = refusal_error(&r, at, false);
        assert_eq!(e.code, CODE_CONFIGURATION_REFUSAL);
        assert_eq!(e.message, r.model_text);
        let data = e.data.as_ref().unwrap();
        assert_eq!(data["toolgate"]["kind"], "notInProfile");
        assert_eq!(data["decisionId"], "d-1");
        assert_eq!(data["tableDigest"], "abc");
        let c = Refusal::new(RefusalKind::ContentPolicy, facts("x"));
        assert_eq!(refusal_error(&c, at, false).code, CODE_RUNTIME_REFUSAL);
        let u = Refusal::new(RefusalKind::Gate(Reason::NotRegistered), facts("mcp_crm_x"));
        let ue = refusal_error(&u, at, false);
        assert_eq!(
            (ue.code, ue.message.as_str()),
            (-32602, "Unknown tool: mcp_crm_x")
        );
        assert_eq!(refusal_error(&r, at, true), unknown_tool_error("mcp_crm_x"));
        assert_eq!(refusal_error(&r, at, true).data, None);
        assert_eq!(
            unknown_tool_error("a\nb").to_json(),
            json!({"code": -32602, "message": "Unknown tool: a\\u000ab"})
        );
    }
}
