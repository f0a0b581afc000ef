//! The native addon of the `toolgate` Node package (napi-rs, Node-API 6).
//!
//! Every answer comes from `toolgate-runtime` (never the compiler): this
//! crate only moves values across the boundary, through the runtime's host
//! layer (`HostContext`, `host::codes`, `host::read_file`, `mcp`), and has
//! no lifetime-extending `unsafe` of its own. Errors leave as the JSON of
//! `errors.rs`, which the package's `errors.js` turns into its classes.
//!
//! | module | what |
//! | --- | --- |
//! | `errors` | the runtime's errors as the package's error classes |
//! | `common` | `NativeTable`'s data and loading, the argument rules classes share |
//! | `table` | `NativeTable`'s methods |
//! | `context` | `NativeContext`, decisions, lists, refusals, the tool set |
//! | `classify` | `classify`, `classifyEnvelope`, `classifyFile` |
//! | `run` | `NativeRunState` |
//! | `live` | live tool specs, checked by the runtime |
//! | `handle` | `NativeTableHandle` |

#![deny(clippy::unwrap_used)]
// napi-derive registers the exported functions only outside `cfg(test)`, so
// in the (empty) test build they look unused. The addon is tested from
// Node (`node --test`).
#![cfg_attr(test, allow(dead_code))]

mod classify;
mod common;
mod context;
mod errors;
mod handle;
mod live;
mod run;
mod table;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::Value;
use toolgate_runtime::{host, mcp, Refusal};

/// Every code the library exposes: `gates`, `refusalKinds` (with each
/// kind's `exception`), `roles`, `statuses`, `packed`, `maxFileBytes` (the
/// runtime's `host::catalogue`, the C ABI's `toolgate_codes_json`).
#[napi]
pub fn codes() -> Value {
    host::catalogue()
}

/// Where a refusal was decided, for [`refusal_error`].
#[napi(object)]
pub struct Provenance {
    pub decision_id: Option<String>,
    pub table_digest: Option<String>,
}

/// The JSON-RPC error object of a refused `tools/call`
/// (`toolgate_runtime::mcp::refusal_error`): `{code, message, data}`.
/// `refusal` is a typed refusal's JSON (as `Context.refusal` gives it).
#[napi]
pub fn refusal_error(
    refusal: Value,
    provenance: Option<Provenance>,
    stealth: Option<bool>,
) -> Result<Value> {
    let r: Refusal =
        serde_json::from_value(refusal).map_err(|e| errors::argument(format!("refusal: {e}")))?;
    let p = provenance.as_ref();
    let at = mcp::Provenance {
        decision_id: p.and_then(|p| p.decision_id.as_deref()),
        table_digest: p.and_then(|p| p.table_digest.as_deref()),
    };
    Ok(mcp::refusal_error(&r, at, stealth.unwrap_or(false)).to_json())
}

/// The JSON-RPC error of a call of a tool nobody has (`Unknown tool: NAME`).
#[napi]
pub fn unknown_tool_error(name: String) -> Value {
    mcp::unknown_tool_error(&name).to_json()
}

/// The MCP revision the runtime's gateway contract implements.
#[napi]
pub fn mcp_revision() -> String {
    mcp::REVISION.to_string()
}

/// The registry name of server `server`'s tool `name` (`mcp_<server>_<name>`,
/// as `registry import-mcp --server` writes it: the runtime's rule).
#[napi]
pub fn remote_tool_name(server: String, name: String) -> String {
    toolgate_runtime::names::remote_tool_name(&server, &name)
}

/// What is wrong with an MCP server or tool name under MCP's naming rule
/// (`[A-Za-z0-9_-]{1,64}`), or `null`: the runtime's check, which the
/// gateway and the registry apply too.
#[napi]
pub fn remote_name_problem(name: String) -> Option<String> {
    toolgate_runtime::names::remote_name_problem(&name)
}
