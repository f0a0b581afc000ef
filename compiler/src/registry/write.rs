//! A registry written back in its schema: [`to_toml`] and [`to_json`], which
//! read back to the same entries; and [`descriptor_bytes`], what a tool's
//! descriptor costs as the registry's text.

use serde::Serialize;

use super::model::{JsonText, Origin, RawOrigin, RawTool, Registry, Tool};
use super::prompts::RawPrompt;
use super::toml_json;

/// The file schema (TOML `[[tool]]` tables, or JSON `{"tool": [...]}`), as
/// written by [`to_toml`] and [`to_json`]. Reading goes through
/// [`RegistrySeed`](super::entries::RegistrySeed), which turns each entry
/// into a [`Tool`] as it is read.
#[derive(Debug, Serialize)]
struct RawRegistry {
    tool: Vec<RawTool>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    prompt: Vec<RawPrompt>,
}

/// Render registry entries as TOML in the registry schema: one `[[tool]]`
/// table each, its JSON values as one-line inline values in their own key
/// order, with null and the other values TOML cannot hold escaped
/// ([`crate::registry::toml_json`]). Reading it back gives the same tools.
pub fn to_toml(registry: &Registry) -> String {
    let mut out = String::new();
    for t in &registry.tools {
        let mut raw = raw_tool(t);
        let json = [
            ("input_schema", raw.input_schema.take()),
            ("output_schema", raw.output_schema.take()),
            ("annotations", raw.annotations.take()),
        ];
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str("[[tool]]\n");
        // Strings, booleans and names only: the toml writer cannot fail on them.
        out.push_str(&toml::to_string(&raw).unwrap_or_default());
        for (key, value) in json {
            let Some(value) = value else { continue };
            let v: serde_json::Value =
                serde_json::from_str(value.get()).unwrap_or(serde_json::Value::Null);
            out.push_str(key);
            out.push_str(" = ");
            out.push_str(&toml_json::inline(&v));
            out.push('\n');
        }
    }
    for p in &registry.prompts {
        let mut raw = RawPrompt::of(p);
        let arguments = raw.arguments.take();
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str("[[prompt]]\n");
        out.push_str(&toml::to_string(&raw).unwrap_or_default());
        if let Some(a) = arguments {
            let v: serde_json::Value =
                serde_json::from_str(a.get()).unwrap_or(serde_json::Value::Null);
            out.push_str("arguments = ");
            out.push_str(&toml_json::inline(&v));
            out.push('\n');
        }
    }
    out
}

/// What a tool's descriptor costs in a prompt: its name, description and
/// input schema as compact JSON (the registry's text). One definition for
/// the table (`lower`) and the sync report.
pub fn descriptor_bytes(name: &str, description: Option<&str>, schema: Option<&JsonText>) -> usize {
    name.len() + description.map(str::len).unwrap_or(0) + schema.map(|s| s.get().len()).unwrap_or(0)
}

/// Render registry entries as JSON in the registry schema.
pub fn to_json(registry: &Registry) -> String {
    let raw = RawRegistry {
        tool: registry.tools.iter().map(raw_tool).collect(),
        prompt: registry.prompts.iter().map(RawPrompt::of).collect(),
    };
    serde_json::to_string_pretty(&raw).unwrap_or_default()
}

fn raw_tool(t: &Tool) -> RawTool {
    let server = match &t.origin {
        Origin::Remote { server } => Some(server.clone()),
        Origin::Builtin => None,
    };
    RawTool {
        name: t.name.clone(),
        group: t.group.clone(),
        origin: Some(if server.is_some() {
            RawOrigin::Remote
        } else {
            RawOrigin::Builtin
        }),
        server,
        admin_only: Some(t.admin_only),
        enabled: Some(t.enabled),
        class: t.class.clone(),
        title: t.title.clone(),
        description: t.description.clone(),
        input_schema: t.input_schema.clone(),
        output_schema: t.output_schema.clone(),
        annotations: t.annotations.clone(),
    }
}
