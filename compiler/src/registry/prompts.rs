//! The registry's prompts: each MCP prompt a server lists, pinned as it was
//! imported and reviewed (docs/registry.md, "Prompts"). A prompt is not a
//! tool: the policy does not name it, and it is offered exactly when its
//! server is visible to the caller. Its entry exists so a gateway can
//! withhold a prompt whose definition changed since the review, as it does
//! a tool's (docs/gateway.md, "Pinned definitions").

use serde::{Deserialize, Serialize};

use super::{as_value, compact_json, remote_name_problem, JsonText};
use crate::diagnostics::Problem;
use crate::source::Span;

/// One registered prompt: `name` is the gateway's name for it,
/// `mcp_<server>_<remote>`, as a remote tool's is.
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    pub name: String,
    pub span: Span,
    pub server: String,
    pub title: Option<String>,
    pub description: Option<String>,
    /// MCP `arguments`, kept as given (compact JSON).
    pub arguments: Option<JsonText>,
}

/// A `[[prompt]]` table (or an entry of the JSON `prompt` list).
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPrompt {
    pub name: String,
    pub server: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "compact_json",
        serialize_with = "as_value"
    )]
    pub arguments: Option<JsonText>,
}

impl RawPrompt {
    pub(super) fn of(p: &Prompt) -> RawPrompt {
        RawPrompt {
            name: p.name.clone(),
            server: p.server.clone(),
            title: p.title.clone(),
            description: p.description.clone(),
            arguments: p.arguments.clone(),
        }
    }

    pub(super) fn into_prompt(self, span: Span) -> Prompt {
        Prompt {
            name: self.name,
            span,
            server: self.server,
            title: self.title,
            description: self.description,
            arguments: self.arguments,
        }
    }
}

/// An MCP `prompts/list` entry.
#[derive(Deserialize)]
pub(super) struct McpPrompt {
    pub name: String,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default, deserialize_with = "compact_json")]
    pub arguments: Option<JsonText>,
}

/// Why `prompt` cannot be registered, if it cannot: its name must be
/// `mcp_<server>_<remote>` under the naming rule remote tools follow.
pub(super) fn check(prompt: &Prompt) -> Option<Problem> {
    let prefix = format!("mcp_{}_", prompt.server);
    let reason = if let Some(reason) = remote_name_problem(&prompt.server) {
        format!("its server name is invalid: {reason}")
    } else if !prompt.name.starts_with(&prefix) || prompt.name.len() == prefix.len() {
        format!("it does not have the form `{prefix}<remote>`")
    } else {
        remote_name_problem(&prompt.name)?
    };
    Some(Problem::RemoteNameInvalid {
        name: prompt.name.clone(),
        span: prompt.span,
        reason: format!("prompt: {reason}"),
    })
}

/// The pinned digest of a prompt's definition as the registry holds it
/// ([`toolgate_runtime::mcp::prompt_digest`] of its title, description and
/// arguments): what a gateway compares a server's `prompts/list` with.
pub fn digest(prompt: &Prompt) -> String {
    let mut def = serde_json::Map::new();
    if let Some(t) = &prompt.title {
        def.insert("title".into(), t.clone().into());
    }
    if let Some(d) = &prompt.description {
        def.insert("description".into(), d.clone().into());
    }
    if let Some(a) = prompt
        .arguments
        .as_ref()
        .and_then(|a| serde_json::from_str::<serde_json::Value>(a.get()).ok())
    {
        def.insert("arguments".into(), a);
    }
    toolgate_runtime::mcp::prompt_digest(&serde_json::Value::Object(def))
}
