//! Live tools: tools the host registered after the table was compiled.
//! They cross the boundary as their spec (`{name, group, remote, enabled,
//! adminOnly, class}`, every gate-relevant fact required) and are made by
//! the runtime's `LiveTool::new` at every use, which checks the name as the
//! registry checks one: a name it refuses is an `ArgumentError` with the
//! runtime's message.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use toolgate_runtime as rt;

use crate::errors;

/// What a host knows of a live tool.
#[napi(object)]
#[derive(Clone)]
pub struct LiveToolSpec {
    pub name: String,
    pub group: String,
    pub remote: bool,
    pub enabled: bool,
    pub admin_only: bool,
    pub class: Option<String>,
}

/// The runtime's live tool of a spec.
pub(crate) fn live_tool(s: &LiveToolSpec) -> Result<rt::LiveTool> {
    rt::LiveTool::new(rt::LiveToolSpec {
        name: s.name.clone(),
        group: s.group.clone(),
        remote: s.remote,
        enabled: s.enabled,
        admin_only: s.admin_only,
        class: s.class.clone(),
    })
    .map_err(errors::live_tool)
}

fn spec_of(t: &rt::LiveTool) -> LiveToolSpec {
    LiveToolSpec {
        name: t.name().to_string(),
        group: t.group().to_string(),
        remote: t.remote(),
        enabled: t.enabled(),
        admin_only: t.admin_only(),
        class: t.class().map(str::to_string),
    }
}

/// Every live tool of a list.
pub(crate) fn live_tools(specs: &[LiveToolSpec]) -> Result<Vec<rt::LiveTool>> {
    specs.iter().map(live_tool).collect()
}

/// Check a live tool's spec as the runtime does; the spec it keeps.
#[napi]
pub fn live_tool_check(spec: LiveToolSpec) -> Result<LiveToolSpec> {
    live_tool(&spec).map(|t| spec_of(&t))
}

/// A live tool from its JSON object (as the C ABI and PHP take it).
#[napi]
pub fn live_tool_from_json(text: Uint8Array) -> Result<LiveToolSpec> {
    rt::LiveTool::from_json(&text)
        .map(|t| spec_of(&t))
        .map_err(errors::live_tool)
}
