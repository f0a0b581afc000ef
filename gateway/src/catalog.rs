//! What the upstreams list, under the registry's names: the gateway's view
//! of every remote tool, rebuilt when an upstream's list changes. Nothing
//! here decides; [`Catalog::offered`] and [`Catalog::call`] ask the
//! runtime for each tool, and the pins for each definition.

use std::collections::HashMap;

use rmcp::model::Tool;
use toolgate_runtime::mcp::{self, NameMap, Unmapped};
use toolgate_runtime::{Context, Decision, Table};

use crate::pins::{Pin, Pins};

/// One listed tool.
#[derive(Debug, Clone)]
pub struct Entry {
    /// `mcp_SERVER_NAME`.
    pub registry_name: String,
    /// The upstream's name for it.
    pub server: String,
    pub server_name: String,
    /// [`mcp::definition_digest`] of the definition as listed.
    pub digest: String,
    /// The definition as listed, under the registry name: what clients get.
    pub tool: Tool,
    /// Whether its input schema names `x-mcp-header` anywhere: a call of it
    /// then carries `Mcp-Param-*` headers (2026-07-28), which only the
    /// SDK's own client writes (direct.rs leaves such calls to it).
    pub header_params: bool,
}

/// Whether `v` holds an `x-mcp-header` key at any depth.
fn names_headers(v: &serde_json::Value) -> bool {
    match v {
        serde_json::Value::Object(m) => {
            m.contains_key("x-mcp-header") || m.values().any(names_headers)
        }
        serde_json::Value::Array(a) => a.iter().any(names_headers),
        _ => false,
    }
}

/// The listed tools of every upstream.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    entries: Vec<Entry>,
    by_name: HashMap<String, usize>,
    /// What could not be mapped (bad names, ambiguous names), for the log.
    pub unmapped: Vec<Unmapped>,
    /// Which listing this is (a page cursor names it).
    pub generation: u64,
}

/// Why a call is not forwarded: the reason counted and logged, and the
/// JSON-RPC error answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Refused {
    pub reason: Option<String>,
    pub error: mcp::RpcError,
}

fn refused(reason: Option<String>, error: mcp::RpcError) -> Box<Refused> {
    Box::new(Refused { reason, error })
}

/// Where a call goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route<'a> {
    pub server: &'a str,
    pub name: &'a str,
    /// [`Entry::header_params`].
    pub header_params: bool,
}

/// Whether the server that lists `e` is the one the registry names for
/// the tool: its group in the table is `mcp_SERVER` (the registry's rule
/// for a remote tool's group). A tool the table does not hold passes here
/// and is refused by the table.
fn registered_server(table: &Table, e: &Entry) -> bool {
    let Some(id) = table.tool_id(&e.registry_name) else {
        return true;
    };
    let spec = table.spec();
    let group = spec.tools[id as usize].group as usize;
    spec.groups
        .get(group)
        .and_then(|g| g.name.strip_prefix("mcp_"))
        .is_some_and(|s| s == e.server)
}

impl Catalog {
    /// The catalog of `listed`: each upstream's name and the tools it lists.
    pub fn new(listed: Vec<(String, Vec<Tool>)>) -> Catalog {
        let (map, unmapped) = NameMap::new(listed.iter().map(|(s, tools)| {
            (
                s.as_str(),
                tools.iter().map(|t| t.name.to_string()).collect(),
            )
        }));
        let mut entries = Vec::with_capacity(map.len());
        let mut by_name = HashMap::with_capacity(map.len());
        for (server, tools) in listed {
            for mut tool in tools {
                let registry_name = toolgate_runtime::names::remote_tool_name(&server, &tool.name);
                match map.route(&registry_name) {
                    Some((s, n)) if s == server && n == tool.name => {}
                    _ => continue,
                }
                let digest = serde_json::to_value(&tool)
                    .map(|v| mcp::definition_digest(&v))
                    .unwrap_or_default();
                let server_name = tool.name.to_string();
                tool.name = registry_name.clone().into();
                by_name.insert(registry_name.clone(), entries.len());
                let header_params = tool.input_schema.contains_key("x-mcp-header")
                    || tool.input_schema.values().any(names_headers);
                entries.push(Entry {
                    registry_name,
                    server: server.clone(),
                    server_name,
                    digest,
                    tool,
                    header_params,
                });
            }
        }
        Catalog {
            entries,
            by_name,
            unmapped,
            generation: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether `other` lists the same tools, by the same servers, with the
    /// same definitions (their digests), and leaves out the same ones.
    pub fn same_listing(&self, other: &Catalog) -> bool {
        fn key(e: &Entry) -> (&str, &str, &str, &str) {
            (&e.registry_name, &e.server, &e.server_name, &e.digest)
        }
        self.unmapped == other.unmapped
            && self.entries.len() == other.entries.len()
            && self
                .entries
                .iter()
                .map(key)
                .eq(other.entries.iter().map(key))
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The tools the registry does not hold: never offered, reported.
    pub fn unregistered<'a>(&'a self, table: &'a Table) -> impl Iterator<Item = &'a Entry> + 'a {
        self.entries
            .iter()
            .filter(|e| table.tool_id(&e.registry_name).is_none())
    }

    /// The tools whose definitions are not the pinned ones (under `table`).
    pub fn changed<'a>(
        &'a self,
        table: &'a Table,
        pins: &'a Pins,
    ) -> impl Iterator<Item = &'a Entry> + 'a {
        let pins = pins.view(table);
        self.entries.iter().filter(move |e| {
            table.tool_id(&e.registry_name).is_some()
                && pins.check(&e.registry_name, &e.server, &e.digest) == Pin::Broken
        })
    }

    /// The tools offered to `ctx`, in the upstreams' order, with the
    /// decision of each one decided (offered or not): the table offers it
    /// and its definition is the pinned one.
    pub fn offered<'c>(
        &'c self,
        ctx: &'c Context<'c>,
        table: &'c Table,
        pins: &'c Pins,
    ) -> impl Iterator<Item = (&'c Entry, Decision<'c>, bool)> + 'c {
        self.entries.iter().map(move |e| {
            let d = ctx.decide(&e.registry_name);
            let offered = d.allowed
                && registered_server(table, e)
                && pins.check(table, &e.registry_name, &e.server, &e.digest) == Pin::Holds;
            (e, d, offered)
        })
    }

    /// Where a call of `name` goes, or the refusal to answer: the table
    /// decides first (a refused tool is never routed), then the pin, then
    /// whether an upstream lists it. `at` is the decision's provenance.
    pub fn call<'a>(
        &'a self,
        ctx: &Context<'_>,
        table: &Table,
        pins: &Pins,
        name: &str,
        at: mcp::Provenance<'_>,
        mode: CallMode,
    ) -> Result<Route<'a>, Box<Refused>> {
        let CallMode { stealth, approved } = mode;
        // A name no registry could hold is no tool: never decided on, never forwarded.
        if toolgate_runtime::names::tool_name_problem(name, true).is_some() {
            return Err(refused(None, mcp::unknown_tool_error(name)));
        }
        let d = ctx.decide(name);
        if !d.allowed {
            let reason = d.reason.map(|r| r.code().to_string());
            let err = match ctx.refusal(&d) {
                Some(r) => mcp::refusal_error(&r, at, stealth),
                None => mcp::unknown_tool_error(name),
            };
            return Err(refused(reason, err));
        }
        if d.needs_approval && !approved {
            // Offered, and a person approves each call: never forwarded
            // without a grant the runtime accepted (approvals.rs). The tool is listed, so stealth hides nothing.
            let err = match ctx.call_refusal(&d) {
                Some(r) => mcp::refusal_error(&r, at, false),
                None => mcp::unknown_tool_error(name),
            };
            return Err(refused(Some("approvalRequired".into()), err));
        }
        let Some(&i) = self.by_name.get(name) else {
            // Registered and allowed, but no upstream lists it now.
            return Err(refused(
                Some("notListed".into()),
                mcp::unknown_tool_error(name),
            ));
        };
        let e = &self.entries[i];
        // Listed under this name by another server than the registry's (a
        // name two servers' names and tools can both make): not this tool.
        if !registered_server(table, e) {
            return Err(refused(
                Some("notListed".into()),
                mcp::unknown_tool_error(name),
            ));
        }
        if pins.check(table, name, &e.server, &e.digest) == Pin::Broken {
            let facts = toolgate_runtime::refusal::Facts {
                tool: Some(name.to_string()),
                configuration: Some(ctx.configuration_name().to_string()),
                consumer: ctx.consumer_name().map(str::to_string),
                origin: Some(format!("upstream `{}`", e.server)),
                ..Default::default()
            };
            let r = toolgate_runtime::Refusal::new(
                toolgate_runtime::RefusalKind::DefinitionChanged,
                facts,
            );
            return Err(refused(
                Some("definitionChanged".into()),
                mcp::refusal_error(&r, at, stealth),
            ));
        }
        Ok(Route {
            server: &e.server,
            name: &e.server_name,
            header_params: e.header_params,
        })
    }
}

/// How a call is answered.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CallMode {
    /// Every refusal answered exactly as an unknown tool.
    pub stealth: bool,
    /// A grant the runtime accepted lets a tool that needs approval through.
    pub approved: bool,
}

#[cfg(test)]
#[path = "catalog_tests.rs"]
mod tests;
