//! The registry: the tools that exist, in registry order. Read from TOML or
//! JSON (one schema, docs/registry.md), or imported from an MCP `tools/list`
//! answer.
//!
//! | module | what |
//! | --- | --- |
//! | `model.rs` | [`Tool`], [`Origin`], [`Registry`], [`JsonText`] and its serde helpers, the file schema's tool entry; [`MAX_TOOLS`] |
//! | `read.rs` | [`load`], [`parse`]: a registry file, JSON in one pass, TOML table by table or whole; [`MAX_REGISTRY_BYTES`] |
//! | `toml_tables.rs` | a TOML registry cut at its table headers and parsed on threads ([`PARSE_THREADS`]) |
//! | `entries.rs` | each entry turned into a tool, a prompt or a problem as it is read: the serde seeds, the checks, duplicates |
//! | `locate.rs` | where an entry's name is in the text (its span) |
//! | `import.rs` | [`import_mcp`], [`tools_list_names`]: an MCP `tools/list` answer; [`definition_digest`] |
//! | `write.rs` | [`to_toml`], [`to_json`], [`descriptor_bytes`] |
//! | `prompts.rs` | [`Prompt`]: the remote servers' prompts, pinned |
//! | `toml_json.rs` | JSON values in TOML (the `$json` escapes) |
//! | `mcp_pages.rs` | a live server's listing gathered page by page, under bounds |

mod entries;
mod import;
mod locate;
pub mod mcp_pages;
mod model;
pub mod prompts;
mod read;
pub mod toml_json;
mod toml_tables;
mod write;

pub use import::{definition_digest, import_mcp, tools_list_names};
pub use model::{JsonText, Origin, Registry, Tool, MAX_TOOLS};
pub use prompts::Prompt;
pub use read::{load, parse, MAX_REGISTRY_BYTES};
pub use toml_tables::PARSE_THREADS;
/// The longest a remote tool's local name may be.
pub use toolgate_runtime::names::MAX_REMOTE_NAME;
pub use toolgate_runtime::names::{remote_name_problem, remote_tool_name};
pub use write::{descriptor_bytes, to_json, to_toml};

/// For `prompts.rs`, whose entries are read and written as tools' are.
use model::{as_value, compact_json};
