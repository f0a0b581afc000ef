//! The registry's model: [`Tool`], [`Origin`], [`Registry`], and
//! [`JsonText`] (a JSON value kept as its compact text, with the serde
//! helpers that read and write it); the file schema's tool entry
//! ([`RawTool`]), as read and written.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

use super::prompts::Prompt;
use crate::source::Span;

/// At most this many tools in one registry (TG0002 beyond).
pub const MAX_TOOLS: usize = 1 << 20;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    Builtin,
    Remote { server: String },
}

/// One registered tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    pub name: String,
    pub span: Span,
    pub group: String,
    pub origin: Origin,
    pub admin_only: bool,
    pub enabled: bool,
    pub class: Option<String>,
    pub description: Option<String>,
    /// The input schema as compact JSON text (only its size and its text
    /// are ever used: a value tree per tool would cost tens of times the file).
    pub input_schema: Option<JsonText>,
    /// MCP `outputSchema`, kept as given (compact JSON).
    pub output_schema: Option<JsonText>,
    /// MCP `title` and `annotations`, kept as given (annotations as compact JSON).
    pub title: Option<String>,
    pub annotations: Option<JsonText>,
}

impl Tool {
    pub fn is_remote(&self) -> bool {
        matches!(self.origin, Origin::Remote { .. })
    }
}

#[derive(Debug, Clone, Default)]
pub struct Registry {
    pub tools: Vec<Tool>,
    /// The remote servers' prompts, pinned (docs/registry.md, "Prompts").
    pub prompts: Vec<Prompt>,
}

/// One `[[tool]]` table (or an entry of the JSON `tool` list) of the file
/// schema (docs/registry.md).
#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTool {
    pub(super) name: String,
    pub(super) group: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) origin: Option<RawOrigin>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) server: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) admin_only: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) enabled: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) class: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) description: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "compact_json",
        serialize_with = "as_value"
    )]
    pub(super) input_schema: Option<JsonText>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "compact_json",
        serialize_with = "as_value"
    )]
    pub(super) output_schema: Option<JsonText>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "compact_json",
        serialize_with = "as_value"
    )]
    pub(super) annotations: Option<JsonText>,
}

/// A JSON value kept as its compact text.
#[derive(Debug, Clone)]
pub struct JsonText(pub(super) Box<RawValue>);

impl JsonText {
    /// The compact JSON text.
    pub fn get(&self) -> &str {
        self.0.get()
    }
}

impl PartialEq for JsonText {
    fn eq(&self, other: &JsonText) -> bool {
        self.get() == other.get()
    }
}

/// Any value (from TOML or JSON) as compact JSON text. The value tree exists
/// only while this one value is read.
pub(super) fn compact_json<'de, D: Deserializer<'de>>(d: D) -> Result<Option<JsonText>, D::Error> {
    let v = serde_json::Value::deserialize(d)?;
    serde_json::value::to_raw_value(&v)
        .map(|r| Some(JsonText(r)))
        .map_err(serde::de::Error::custom)
}

/// Compact JSON text written back as a value (so TOML output gets tables).
pub(super) fn as_value<S: Serializer>(v: &Option<JsonText>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        None => s.serialize_none(),
        Some(raw) => serde_json::from_str::<serde_json::Value>(raw.get())
            .map_err(serde::ser::Error::custom)?
            .serialize(s),
    }
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub(super) enum RawOrigin {
    Builtin,
    Remote,
}
