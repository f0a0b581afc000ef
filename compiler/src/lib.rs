//! The toolgate compiler: policy text and a registry in, a validated model
//! and a decision table out, with diagnostics on the way.
//!
//! Data flow: [`parse`] (text -> [`ast`]) -> [`validate`] (ast + [`registry`]
//! -> [`model`]) -> [`lower`] (model -> `toolgate_runtime::TableSpec`).

pub mod ast;
pub mod diagnostics;
pub mod diff;
pub mod discover;
pub mod formatter;
pub mod lower;
pub mod mcp_pages;
pub mod mcp_sync;
pub mod model;
pub mod names;
pub mod noeffect;
pub mod parse;
pub mod project;
pub mod readout;
pub mod registry;
pub mod replay;
pub mod report;
pub mod sarif;
#[cfg(feature = "schema")]
pub mod schemas;
pub mod signing;
pub mod snapshot;
pub mod source;
pub mod suggest;
pub mod suppress;
pub mod testing;
pub mod toml_json;
pub mod validate;
