//! The toolgate compiler: policy text and a registry in, a validated model
//! and a decision table out, with diagnostics on the way.
//!
//! The stages, each a folder: [`syntax`] (text -> [`syntax::ast`]),
//! [`registry`] (the tools, from TOML, JSON or an MCP server), [`validate`]
//! (ast + registry -> [`model`]), [`lints`] (findings that need the table),
//! [`diagnostics`] (the problems, their codes and suppressions), then
//! [`lower`] (model -> `toolgate_runtime::TableSpec` and the table's bytes).
//! [`source`] holds the files and spans every stage points into;
//! [`project`] loads a project's files and [`pipeline`] runs the stages over
//! them; [`report`] prints what they found (human, JSON, SARIF);
//! [`mcp_sync`] compares a registry with a live server's tools.

pub mod diagnostics;
pub mod lints;
pub mod lower;
pub mod mcp_sync;
pub mod model;
pub mod pipeline;
pub mod project;
pub mod registry;
pub mod report;
pub mod signing;
pub mod source;
pub mod syntax;
pub mod validate;
