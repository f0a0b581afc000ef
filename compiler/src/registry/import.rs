//! An MCP server's answer as registry entries: [`import_mcp`] (a
//! `tools/list` answer, and a live server's prompts), [`tools_list_names`],
//! and [`definition_digest`], the pin a gateway compares a listing with.

use serde::Deserialize;

use super::entries::FirstSeen;
use super::locate::{locate, offset_of};
use super::model::{compact_json, JsonText, Origin, Registry, Tool};
use super::prompts::{self, McpPrompt, Prompt};
use super::{remote_name_problem, remote_tool_name};
use crate::diagnostics::Problem;
use crate::source::{FileId, Span};

/// The MCP `tools/list` result (bare, or inside a JSON-RPC response); a
/// live server's answer carries its `prompts/list` too (`prompts`).
#[derive(Deserialize)]
struct ToolsList {
    tools: Vec<McpTool>,
    #[serde(default)]
    prompts: Vec<McpPrompt>,
}

#[derive(Deserialize)]
struct McpTool {
    name: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default, rename = "inputSchema", deserialize_with = "compact_json")]
    input_schema: Option<JsonText>,
    #[serde(default, rename = "outputSchema", deserialize_with = "compact_json")]
    output_schema: Option<JsonText>,
    #[serde(default, deserialize_with = "compact_json")]
    annotations: Option<JsonText>,
}

/// The pinned digest of a remote tool's definition as the registry holds it
/// ([`toolgate_runtime::mcp::definition_digest`] of its title, description,
/// schemas and annotations): what a gateway compares a server's listing with.
pub fn definition_digest(tool: &Tool) -> String {
    let json = |t: &Option<JsonText>| {
        t.as_ref()
            .and_then(|j| serde_json::from_str::<serde_json::Value>(j.get()).ok())
    };
    let mut def = serde_json::Map::new();
    let mut put = |k: &str, v: Option<serde_json::Value>| {
        if let Some(v) = v {
            def.insert(k.to_string(), v);
        }
    };
    put("title", tool.title.clone().map(serde_json::Value::String));
    put(
        "description",
        tool.description.clone().map(serde_json::Value::String),
    );
    put("inputSchema", json(&tool.input_schema));
    put("outputSchema", json(&tool.output_schema));
    put("annotations", json(&tool.annotations));
    toolgate_runtime::mcp::definition_digest(&serde_json::Value::Object(def))
}

/// The tool names of an MCP `tools/list` answer (bare, or inside a JSON-RPC
/// response), as listed; the error keeps only schema words.
pub fn tools_list_names(text: &str) -> Result<Vec<String>, String> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| format!("not JSON (line {}, column {})", e.line(), e.column()))?;
    if value.get("error").is_some() {
        return Err("a JSON-RPC error response, not a tools/list result".into());
    }
    let list = value.get("result").cloned().unwrap_or(value);
    let list: ToolsList = serde_json::from_value(list)
        .map_err(|_| "not an MCP tools/list result (`tools`, each with a `name`)".to_string())?;
    Ok(list.tools.into_iter().map(|t| t.name).collect())
}

/// Turn an MCP `tools/list` answer from `server` into registry entries. A
/// remote name that breaks the naming rule is a problem, never a silent drop.
pub fn import_mcp(file: FileId, text: &str, server: &str) -> (Registry, Vec<Problem>) {
    let value: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            let at = offset_of(text, e.line(), e.column());
            return (
                Registry::default(),
                vec![Problem::RegistryInvalid {
                    span: Span::new(file, at..at),
                    message: e.to_string(),
                }],
            );
        }
    };
    if let Some(err) = value.get("error") {
        return (
            Registry::default(),
            vec![Problem::RegistryInvalid {
                span: Span::new(file, 0..text.len().min(200)),
                message: format!(
                    "this is a JSON-RPC error response, not a tools/list result: {err}"
                ),
            }],
        );
    }
    // Accept the JSON-RPC envelope `{"jsonrpc":"2.0","id":1,"result":{"tools":[...]}}` too.
    let list = value.get("result").cloned().unwrap_or(value);
    let list: ToolsList = match serde_json::from_value(list) {
        Ok(l) => l,
        Err(e) => {
            return (
                Registry::default(),
                vec![Problem::RegistryInvalid {
                    span: Span::new(file, 0..0),
                    message: format!("not an MCP tools/list result: {e}"),
                }],
            )
        }
    };
    let mut problems = Vec::new();
    if let Some(reason) = remote_name_problem(server) {
        problems.push(Problem::RemoteNameInvalid {
            name: server.to_string(),
            span: Span::new(file, 0..0),
            reason: format!("the server name is invalid: {reason}"),
        });
        return (Registry::default(), problems);
    }
    let mut tools: Vec<Tool> = Vec::with_capacity(list.tools.len());
    let mut seen = FirstSeen::default();
    seen.reserve(list.tools.len());
    let mut cursor = 0;
    for t in list.tools {
        let span = locate(file, text, &t.name, &mut cursor, true);
        let name = remote_tool_name(server, &t.name);
        if let Some(reason) = remote_name_problem(&t.name).or_else(|| remote_name_problem(&name)) {
            problems.push(Problem::RemoteNameInvalid { name, span, reason });
            continue;
        }
        if let Some(i) = seen.earlier(&name, &tools) {
            // The first entry stays, so the registry returned still holds
            // each name once; the command refuses to write it (TG4006).
            problems.push(Problem::ServerListsTwice {
                name: t.name,
                span,
                first: tools[i].span,
            });
            continue;
        }
        tools.push(Tool {
            name,
            span,
            group: format!("mcp_{server}"),
            origin: Origin::Remote {
                server: server.to_string(),
            },
            admin_only: true,
            enabled: false,
            class: None,
            description: t.description,
            input_schema: t.input_schema,
            output_schema: t.output_schema,
            title: t.title,
            annotations: t.annotations,
        });
    }
    let mut prompts: Vec<Prompt> = Vec::with_capacity(list.prompts.len());
    let mut prompt_cursor = 0;
    for p in list.prompts {
        let span = locate(file, text, &p.name, &mut prompt_cursor, true);
        let prompt = Prompt {
            name: remote_tool_name(server, &p.name),
            span,
            server: server.to_string(),
            title: p.title,
            description: p.description,
            arguments: p.arguments,
        };
        if let Some(problem) = remote_name_problem(&p.name)
            .map(|reason| Problem::RemoteNameInvalid {
                name: prompt.name.clone(),
                span,
                reason: format!("prompt: {reason}"),
            })
            .or_else(|| prompts::check(&prompt))
        {
            problems.push(problem);
            continue;
        }
        if let Some(first) = prompts.iter().find(|q| q.name == prompt.name) {
            problems.push(Problem::ServerListsTwice {
                name: p.name,
                span,
                first: first.span,
            });
            continue;
        }
        prompts.push(prompt);
    }
    (Registry { tools, prompts }, problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A live server's prompts, imported as its tools are.
    #[test]
    fn import_mcp_takes_the_prompts_of_a_live_answer() {
        let text = r#"{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"prompts":[{"name":"greet","description":"Say hello.","arguments":[{"name":"who"}]},{"name":"bad name"},{"name":"greet"}]}"#;
        let (reg, problems) = import_mcp(FileId(0), text, "s");
        assert_eq!(
            reg.prompts
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>(),
            ["mcp_s_greet"]
        );
        assert_eq!(
            problems.iter().map(|p| p.code()).collect::<Vec<_>>(),
            ["TG4001", "TG4006"]
        );
        // A captured tools/list answer has none.
        let (reg, problems) = import_mcp(FileId(0), r#"{"tools":[]}"#, "s");
        assert!(reg.prompts.is_empty() && problems.is_empty());
    }
}
