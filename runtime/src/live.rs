//! Live tools: tools a host registered after the table was compiled. They
//! have no bit in the table, so [`Context::decide_live`] runs the same gates
//! in the same [`GATE_ORDER`] over their metadata, and every rule that holds
//! for the table's tools holds for them: a live name is validated as a
//! registry name is ([`crate::names::tool_name_problem`]), and a refused
//! remote live tool whose name the user may not see is hidden exactly as a
//! table one is ([`Decision::hidden`]).

use serde::Deserialize;

use crate::context::{Context, Mode, ProfileGate};
use crate::decide::Decision;
use crate::reason::{Reason, GATE_ORDER};
use crate::run::{AllowList, Exclusions};

/// A tool the host registered after the table was compiled, with its live
/// metadata. Made only by [`LiveTool::new`] (or its JSON form), so its name
/// has passed the registry's naming rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveTool {
    name: String,
    group: String,
    remote: bool,
    enabled: bool,
    admin_only: bool,
    class: Option<String>,
}

/// What a host knows of a live tool, before its name is checked. Every
/// gate-relevant fact is required (a missing `enabled` or `adminOnly` must
/// not default to the wider answer); `class` may be absent or null (then the
/// group's default class, else the most sensitive). The JSON shape hosts in
/// every language hand over: `{"name","group","remote","enabled","adminOnly","class"}`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LiveToolSpec {
    pub name: String,
    pub group: String,
    pub remote: bool,
    pub enabled: bool,
    pub admin_only: bool,
    #[serde(default)]
    pub class: Option<String>,
}

/// A live tool that cannot be used: its name or group breaks the naming
/// rule, or its JSON is malformed. The message names the (escaped) name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveToolError {
    pub message: String,
}

impl std::fmt::Display for LiveToolError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for LiveToolError {}

impl LiveTool {
    /// Check `spec` as the registry checks a tool: the name by the naming
    /// rule (remote tools: MCP's `[a-zA-Z0-9_-]{1,64}`), name and group
    /// non-empty and free of control and format characters.
    pub fn new(spec: LiveToolSpec) -> Result<LiveTool, LiveToolError> {
        if let Some(problem) = crate::names::tool_name_problem(&spec.name, spec.remote) {
            return Err(LiveToolError {
                message: format!(
                    "live tool `{}`: {problem}",
                    crate::names::escape(&spec.name)
                ),
            });
        }
        if let Some(problem) = crate::names::tool_name_problem(&spec.group, false) {
            return Err(LiveToolError {
                message: format!(
                    "live tool `{}`: its group `{}`: {problem}",
                    spec.name,
                    crate::names::escape(&spec.group)
                ),
            });
        }
        Ok(LiveTool {
            name: spec.name,
            group: spec.group,
            remote: spec.remote,
            enabled: spec.enabled,
            admin_only: spec.admin_only,
            class: spec.class,
        })
    }

    /// A live tool from its JSON object (the [`LiveToolSpec`] shape).
    pub fn from_json(text: &[u8]) -> Result<LiveTool, LiveToolError> {
        let spec: LiveToolSpec = serde_json::from_slice(text).map_err(|e| LiveToolError {
            message: format!("live tool: {e}"),
        })?;
        LiveTool::new(spec)
    }

    /// Live tools from a JSON array of [`LiveToolSpec`] objects; the first
    /// bad one fails the whole list (with its position).
    pub fn list_from_json(text: &[u8]) -> Result<Vec<LiveTool>, LiveToolError> {
        let specs: Vec<LiveToolSpec> = serde_json::from_slice(text).map_err(|e| LiveToolError {
            message: format!("live tools: {e}"),
        })?;
        specs
            .into_iter()
            .enumerate()
            .map(|(i, s)| {
                LiveTool::new(s).map_err(|e| LiveToolError {
                    message: format!("live tools[{i}]: {}", e.message),
                })
            })
            .collect()
    }

    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn group(&self) -> &str {
        &self.group
    }
    pub fn remote(&self) -> bool {
        self.remote
    }
    pub fn enabled(&self) -> bool {
        self.enabled
    }
    pub fn admin_only(&self) -> bool {
        self.admin_only
    }
    pub fn class(&self) -> Option<&str> {
        self.class.as_deref()
    }
}

impl<'t> Context<'t> {
    /// Decide for a tool with its live metadata: the table's facts when the
    /// table knows the name, else the same gates over the live metadata.
    pub fn decide_live<'n>(&self, tool: &'n LiveTool) -> Decision<'n>
    where
        't: 'n,
    {
        if let Some(i) = self.table.tool_id(&tool.name) {
            return self.decision_for(i as usize);
        }
        let (reason, above, class) = self.live_gates(tool);
        // A refused remote tool whose name this user may not see is hidden,
        // exactly as a remote tool of the table is.
        let hidden = reason.is_some() && tool.remote && !self.remote_names_visible();
        // A live tool is not in the table's approval lists (they are
        // resolved against the table's tools at load).
        self.decision(&tool.name, reason, above, class, hidden, false)
    }

    /// The gates over live metadata, in [`GATE_ORDER`].
    fn live_gates(&self, tool: &LiveTool) -> (Option<Reason>, bool, u32) {
        let t = self.table;
        let spec = &t.spec;
        let group = t
            .group_index
            .get(&tool.group)
            .map(|&g| &spec.groups[g as usize]);
        // A declared class the ladder does not know is the most sensitive,
        // never the group's default (that could lower it).
        let top = spec.classes.len() as u32 - 1;
        let class = match tool.class.as_deref() {
            Some(c) => spec
                .classes
                .iter()
                .position(|x| x == c)
                .map_or(top, |p| p as u32),
            None => group.and_then(|g| g.default_class).unwrap_or(top),
        };
        let cfg = &spec.configurations[self.config as usize];
        let ceiling = spec.zones[cfg.zone as usize].ceiling;
        let above = class > ceiling;
        let is_loader = tool.name == spec.skill_loader;
        for gate in GATE_ORDER {
            let refuses = match gate {
                Reason::NotRegistered => false,
                Reason::ToolDisabled => !tool.enabled || group.is_some_and(|g| !g.enabled),
                Reason::RequiresAdmin => tool.admin_only && !self.role.is_admin(),
                Reason::NotInProfile => match self.profile {
                    ProfileGate::Open => false,
                    ProfileGate::Closed => true,
                    ProfileGate::Profile(p) => {
                        let p = &spec.profiles[p as usize];
                        !(p.tools.contains(&tool.name)
                            || t.group_index
                                .get(&tool.group)
                                .is_some_and(|g| p.groups.contains(g))
                            || p.prefixes
                                .iter()
                                .any(|pre| tool.name.starts_with(pre.as_str())))
                    }
                },
                Reason::ConfigurationGroup => match &self.run.as_ref().allowed {
                    AllowList::Unreadable => true,
                    _ if is_loader => false,
                    run => {
                        let in_groups = match &cfg.groups {
                            None => true,
                            Some(gs) => t
                                .group_index
                                .get(&tool.group)
                                .is_some_and(|g| gs.contains(g)),
                        };
                        let in_run = match run {
                            AllowList::Only(names) => names.contains(&tool.name),
                            _ => true,
                        };
                        !(in_groups && in_run)
                    }
                },
                // A name in the exclusion list excludes the tool even when it
                // was registered after compilation; a new name never is.
                Reason::ConfigurationExcluded => {
                    cfg.excluded.contains(&tool.name)
                        || match &self.run.excluded {
                            Exclusions::Names(n) => n.contains(&tool.name),
                            Exclusions::Unreadable => true,
                        }
                }
                Reason::TrustZone => above && (tool.remote || self.mode == Mode::Enforce),
            };
            if refuses {
                return (Some(gate), above, class);
            }
        }
        (None, above, class)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_name_with_a_line_or_paragraph_separator_is_refused() {
        for (name, remote, message) in [
            (
                "delete_record\u{2028}",
                false,
                "live tool `delete_record\\u2028`: it contains U+2028 at byte 13, a line or paragraph separator",
            ),
            (
                "purge\u{2029}- delete_record: available",
                false,
                "live tool `purge\\u2029- delete_record: available`: it contains U+2029 at byte 5, a line or paragraph separator",
            ),
            (
                "purge\u{85}",
                true,
                "live tool `purge\\u0085`: it contains U+0085 at byte 5, a control or format character",
            ),
        ] {
            let spec = LiveToolSpec {
                name: name.into(),
                group: "g".into(),
                remote,
                enabled: true,
                admin_only: false,
                class: None,
            };
            assert_eq!(
                LiveTool::new(spec).map_err(|e| e.message),
                Err(message.to_string())
            );
        }
        let e = LiveTool::from_json(
            br#"{"name":"a","group":"g\u2028x","remote":false,"enabled":true,"adminOnly":false}"#,
        )
        .map_err(|e| e.message);
        assert_eq!(
            e,
            Err("live tool `a`: its group `g\\u2028x`: it contains U+2028 at byte 1, a line or paragraph separator".into())
        );
    }
}
