//! Drift between a registry and what an MCP server lists now: new, removed
//! and changed tools, and the registry brought up to date.
//!
//! A sync grants nothing: a new tool arrives as `import_mcp` makes it
//! (disabled, admin-only, no class), and a tool the registry already holds
//! keeps the registry's `enabled`, `admin_only` and `class`; only what the
//! server says about it (title, description, schemas, annotations) follows
//! the server.

use std::collections::{HashMap, HashSet};

use serde::Serialize;

use crate::diagnostics::{Problem, RefKind};
use crate::project::Project;
use crate::registry::{descriptor_bytes, Origin, Prompt, Registry, Tool};

/// A tool the server lists and the registry does not.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Added {
    pub name: String,
    pub descriptor_bytes: usize,
}

/// A tool the registry holds and the server no longer lists.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Removed {
    pub name: String,
    pub descriptor_bytes: usize,
}

/// A tool both hold, whose server-side facts differ.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Changed {
    pub name: String,
    /// Registry field names, in schema order: `title`, `description`,
    /// `input_schema`, `output_schema`, `annotations`.
    pub fields: Vec<&'static str>,
    pub descriptor_bytes_before: usize,
    pub descriptor_bytes_after: usize,
}

/// What changed for one server, registry order for kept and removed tools,
/// the server's order for new ones.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Drift {
    pub server: String,
    pub added: Vec<Added>,
    pub removed: Vec<Removed>,
    pub changed: Vec<Changed>,
    pub prompts: PromptDrift,
}

/// What changed in one server's prompts (registry names).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PromptDrift {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<PromptChanged>,
}

/// A prompt both hold, whose definition differs.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PromptChanged {
    pub name: String,
    /// Registry field names, in schema order: `title`, `description`, `arguments`.
    pub fields: Vec<&'static str>,
}

impl PromptDrift {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.changed.is_empty()
    }
}

/// A policy statement that names a tool or group the sync removes.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Statement {
    pub file: String,
    pub line: usize,
    pub column: usize,
    /// The diagnostic code it would get (`TG1001`, `TG1009`, `TG1010`).
    pub code: &'static str,
    pub message: String,
}

/// A removed tool and the statements that name it.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RemovedReport {
    pub name: String,
    pub descriptor_bytes: usize,
    pub statements: Vec<Statement>,
}

/// `toolgate registry sync --format json`.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncReport<'a> {
    pub server: &'a str,
    /// Whether anything was added, removed or changed.
    pub drift: bool,
    pub added: &'a [Added],
    pub removed: Vec<RemovedReport>,
    /// Statements naming the server's group `mcp_SERVER`, when it is gone.
    pub group_statements: Vec<Statement>,
    pub changed: &'a [Changed],
    /// The change in descriptor bytes of the server's tools.
    pub descriptor_bytes_delta: i64,
    /// New, removed and changed prompts of the server.
    pub prompts: &'a PromptDrift,
    /// Whether the registry file was written (`--write`).
    pub written: bool,
}

impl Drift {
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.changed.is_empty()
            && self.prompts.is_empty()
    }

    /// The change in descriptor bytes of this server's tools, all of them
    /// counted (offered or not): what the server's catalogue costs more or less.
    pub fn descriptor_delta(&self) -> i64 {
        let added: usize = self.added.iter().map(|a| a.descriptor_bytes).sum();
        let removed: usize = self.removed.iter().map(|r| r.descriptor_bytes).sum();
        let changed: i64 = self
            .changed
            .iter()
            .map(|c| c.descriptor_bytes_after as i64 - c.descriptor_bytes_before as i64)
            .sum();
        added as i64 - removed as i64 + changed
    }
}

fn bytes(t: &Tool) -> usize {
    descriptor_bytes(&t.name, t.description.as_deref(), t.input_schema.as_ref())
}

fn of_server(t: &Tool, server: &str) -> bool {
    matches!(&t.origin, Origin::Remote { server: s } if s == server)
}

/// The tools of `live` (server `server`) whose registry name the registry
/// already holds as another server's tool or a builtin: server `a`'s tool
/// `b_c` and server `a_b`'s tool `c` are both `mcp_a_b_c`. A sync must not
/// take one for the other, so each is a problem (TG4007).
pub fn collisions(current: &Registry, server: &str, live: &Registry) -> Vec<Problem> {
    let by_name: HashMap<&str, &Tool> =
        current.tools.iter().map(|t| (t.name.as_str(), t)).collect();
    let mut found: Vec<Problem> = live
        .tools
        .iter()
        .filter_map(|now| {
            let held = by_name.get(now.name.as_str())?;
            let other_server = match &held.origin {
                Origin::Remote { server: s } if s == server => return None,
                Origin::Remote { server: s } => Some(s.clone()),
                Origin::Builtin => None,
            };
            Some(Problem::RemoteNameCollision {
                name: now.name.clone(),
                span: now.span,
                server: server.to_string(),
                other_server,
                other: held.span,
            })
        })
        .collect();
    // Prompts likewise: server `a`'s prompt `b_c` is not server `a_b`'s `c`.
    let prompts: HashMap<&str, &Prompt> = current
        .prompts
        .iter()
        .map(|p| (p.name.as_str(), p))
        .collect();
    found.extend(live.prompts.iter().filter_map(|now| {
        let held = prompts.get(now.name.as_str())?;
        (held.server != server).then(|| Problem::RemoteNameCollision {
            name: now.name.clone(),
            span: now.span,
            server: server.to_string(),
            other_server: Some(held.server.clone()),
            other: held.span,
        })
    }));
    found
}

/// The registry's prompts with `server`'s brought up to date from `live`,
/// as [`sync`] does tools: removed ones dropped, kept ones with the
/// server's definition, new ones after the server's last (or at the end).
fn sync_prompts(current: &[Prompt], server: &str, live: &[Prompt]) -> (PromptDrift, Vec<Prompt>) {
    let mut drift = PromptDrift::default();
    let live_by_name: HashMap<&str, &Prompt> = live.iter().map(|p| (p.name.as_str(), p)).collect();
    let current_names: HashSet<&str> = current.iter().map(|p| p.name.as_str()).collect();
    let mut out = Vec::with_capacity(current.len() + live.len());
    let mut insert_at = None;
    for p in current {
        if p.server != server {
            out.push(p.clone());
            continue;
        }
        let Some(now) = live_by_name.get(p.name.as_str()) else {
            drift.removed.push(p.name.clone());
            insert_at = Some(out.len());
            continue;
        };
        let fields: Vec<&'static str> = [
            ("title", p.title != now.title),
            ("description", p.description != now.description),
            ("arguments", p.arguments != now.arguments),
        ]
        .into_iter()
        .filter_map(|(f, differs)| differs.then_some(f))
        .collect();
        if !fields.is_empty() {
            drift.changed.push(PromptChanged {
                name: p.name.clone(),
                fields,
            });
        }
        out.push(Prompt {
            span: p.span,
            ..(*now).clone()
        });
        insert_at = Some(out.len());
    }
    let new: Vec<Prompt> = live
        .iter()
        .filter(|p| !current_names.contains(p.name.as_str()))
        .cloned()
        .collect();
    drift.added = new.iter().map(|p| p.name.clone()).collect();
    let at = insert_at.unwrap_or(out.len());
    out.splice(at..at, new);
    (drift, out)
}

/// Compare the registry's tools of `server` with `live` (the server's
/// answer, through `registry::import_mcp`). Returns the drift and the
/// registry after the sync: removed tools dropped, kept tools with the
/// server's facts, new tools after the server's last tool (or at the end).
/// Linear in the two registries (names are looked up by hash). Call
/// [`collisions`] first: a live tool whose name another server's tool holds
/// counts here as neither new nor kept.
pub fn sync(current: &Registry, server: &str, live: &Registry) -> (Drift, Registry) {
    let mut drift = Drift {
        server: server.to_string(),
        ..Drift::default()
    };
    let live_by_name: HashMap<&str, &Tool> =
        live.tools.iter().map(|t| (t.name.as_str(), t)).collect();
    let current_names: HashSet<&str> = current.tools.iter().map(|t| t.name.as_str()).collect();
    let mut tools = Vec::with_capacity(current.tools.len() + live.tools.len());
    let mut insert_at = None;
    for t in &current.tools {
        if !of_server(t, server) {
            tools.push(t.clone());
            continue;
        }
        let Some(now) = live_by_name.get(t.name.as_str()) else {
            drift.removed.push(Removed {
                name: t.name.clone(),
                descriptor_bytes: bytes(t),
            });
            insert_at = Some(tools.len());
            continue;
        };
        let fields: Vec<&'static str> = [
            ("title", t.title != now.title),
            ("description", t.description != now.description),
            ("input_schema", t.input_schema != now.input_schema),
            ("output_schema", t.output_schema != now.output_schema),
            ("annotations", t.annotations != now.annotations),
        ]
        .into_iter()
        .filter_map(|(f, differs)| differs.then_some(f))
        .collect();
        let kept = Tool {
            title: now.title.clone(),
            description: now.description.clone(),
            input_schema: now.input_schema.clone(),
            output_schema: now.output_schema.clone(),
            annotations: now.annotations.clone(),
            ..t.clone()
        };
        if !fields.is_empty() {
            drift.changed.push(Changed {
                name: t.name.clone(),
                fields,
                descriptor_bytes_before: bytes(t),
                descriptor_bytes_after: bytes(&kept),
            });
        }
        tools.push(kept);
        insert_at = Some(tools.len());
    }
    let new: Vec<Tool> = live
        .tools
        .iter()
        .filter(|t| !current_names.contains(t.name.as_str()))
        .cloned()
        .collect();
    drift.added = new
        .iter()
        .map(|t| Added {
            name: t.name.clone(),
            descriptor_bytes: bytes(t),
        })
        .collect();
    let at = insert_at.unwrap_or(tools.len());
    tools.splice(at..at, new);
    let (prompt_drift, prompts) = sync_prompts(&current.prompts, server, &live.prompts);
    drift.prompts = prompt_drift;
    (drift, Registry { tools, prompts })
}

/// The policy statements that name a tool the sync removed (or a group no
/// tool is left in): the project checked against the updated registry, its
/// findings about those names. Each carries the statement's span.
pub fn stale_statements(project: &mut Project, updated: Registry, drift: &Drift) -> Vec<Problem> {
    let removed: HashSet<&str> = drift.removed.iter().map(|r| r.name.as_str()).collect();
    let removed = |n: &str| removed.contains(n);
    let group = format!("mcp_{}", drift.server);
    let group_gone = !updated.tools.iter().any(|t| t.group == group);
    project.set_registry(updated);
    project
        .check()
        .problems
        .into_iter()
        .filter(|p| match p {
            Problem::Unknown {
                kind: RefKind::Tool,
                name,
                ..
            }
            | Problem::StaleExclusion { name, .. }
            | Problem::ExclusionTypo { name, .. } => removed(name),
            Problem::Unknown {
                kind: RefKind::Group,
                name,
                ..
            } => group_gone && *name == group,
            _ => false,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::import_mcp;
    use crate::source::FileId;

    fn live(json: &str) -> Registry {
        let (r, p) = import_mcp(FileId(0), json, "srv");
        assert!(p.is_empty(), "{p:?}");
        r
    }

    #[test]
    fn added_removed_changed_and_the_registry_after() {
        let before = live(
            r#"{"tools":[{"name":"a","description":"A"},{"name":"b"},{"name":"c","inputSchema":{"type":"object"}}]}"#,
        );
        let mut current = before.clone();
        // The policy's choices live in the registry too: a sync keeps them.
        current.tools[2].enabled = true;
        current.tools[2].class = Some("public".into());
        current.tools.insert(
            0,
            Tool {
                origin: Origin::Builtin,
                name: "local".into(),
                group: "g".into(),
                ..current.tools[0].clone()
            },
        );
        let now = live(
            r#"{"tools":[{"name":"d","description":"new"},{"name":"c","inputSchema":{"type":"object","properties":{}}},{"name":"a","description":"A"}]}"#,
        );
        let (drift, after) = sync(&current, "srv", &now);
        assert_eq!(
            drift,
            Drift {
                server: "srv".into(),
                added: vec![Added {
                    name: "mcp_srv_d".into(),
                    descriptor_bytes: 12
                }],
                removed: vec![Removed {
                    name: "mcp_srv_b".into(),
                    descriptor_bytes: 9
                }],
                changed: vec![Changed {
                    name: "mcp_srv_c".into(),
                    fields: vec!["input_schema"],
                    descriptor_bytes_before: 9 + 17,
                    descriptor_bytes_after: 9 + 33,
                }],
                prompts: PromptDrift::default(),
            }
        );
        assert_eq!(drift.descriptor_delta(), 12 - 9 + 16);
        let names: Vec<&str> = after.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["local", "mcp_srv_a", "mcp_srv_c", "mcp_srv_d"]);
        let c = &after.tools[2];
        assert_eq!(
            (
                c.enabled,
                c.class.as_deref(),
                c.input_schema.as_ref().map(|s| s.get())
            ),
            (
                true,
                Some("public"),
                Some(r#"{"type":"object","properties":{}}"#)
            )
        );
        let d = &after.tools[3];
        assert_eq!(
            (d.enabled, d.admin_only, d.class.as_deref()),
            (false, true, None)
        );
    }

    #[test]
    fn prompts_drift_and_follow_the_server() {
        let mut current = live(
            r#"{"tools":[],"prompts":[{"name":"a","description":"A"},{"name":"b"},{"name":"c","arguments":[{"name":"x"}]}]}"#,
        );
        let other = live(r#"{"tools":[],"prompts":[{"name":"z"}]}"#).prompts[0].clone();
        current.prompts.insert(
            0,
            Prompt {
                server: "other".into(),
                name: "mcp_other_z".into(),
                ..other
            },
        );
        let now = live(
            r#"{"tools":[],"prompts":[{"name":"d"},{"name":"c","arguments":[{"name":"x","required":true}]},{"name":"a","description":"A"}]}"#,
        );
        let (drift, after) = sync(&current, "srv", &now);
        assert_eq!(
            drift.prompts,
            PromptDrift {
                added: vec!["mcp_srv_d".into()],
                removed: vec!["mcp_srv_b".into()],
                changed: vec![PromptChanged {
                    name: "mcp_srv_c".into(),
                    fields: vec!["arguments"]
                }],
            }
        );
        assert!(!drift.is_empty());
        let names: Vec<&str> = after.prompts.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(
            names,
            ["mcp_other_z", "mcp_srv_a", "mcp_srv_c", "mcp_srv_d"]
        );
        assert_eq!(
            after.prompts[2].arguments.as_ref().map(|a| a.get()),
            Some(r#"[{"name":"x","required":true}]"#)
        );
        // Server `s` prompt `rv_p` would take server `srv`'s name space: no.
        let (clash, _) = import_mcp(
            FileId(0),
            r#"{"tools":[],"prompts":[{"name":"srv_a"}]}"#,
            "mcp",
        );
        assert!(collisions(&after, "mcp", &clash).is_empty());
        let (clash, p) = import_mcp(FileId(0), r#"{"tools":[],"prompts":[{"name":"a"}]}"#, "srv");
        assert!(p.is_empty());
        assert!(collisions(&after, "srv", &clash).is_empty());
        let mut taken = after.clone();
        taken.prompts[1].server = "sr".into();
        assert_eq!(
            collisions(&taken, "srv", &clash)
                .iter()
                .map(|p| p.code())
                .collect::<Vec<_>>(),
            ["TG4007"]
        );
    }

    #[test]
    fn no_drift_when_the_server_lists_the_same() {
        let r = live(r#"{"tools":[{"name":"a","title":"T","annotations":{"readOnlyHint":true}}]}"#);
        let (drift, after) = sync(&r, "srv", &r);
        assert!(drift.is_empty());
        assert_eq!(after.tools, r.tools);
    }

    #[test]
    fn stale_statements_are_the_findings_about_removed_names() {
        let registry = "[[tool]]\nname = \"mcp_srv_a\"\ngroup = \"mcp_srv\"\nserver = \"srv\"\n\
                        [[tool]]\nname = \"mcp_srv_b\"\ngroup = \"mcp_srv\"\nserver = \"srv\"\n";
        let policy = "tool mcp_srv_b { enabled }\n\
                      configuration c {\n  groups [mcp_srv]\n  exclude [mcp_srv_b]\n}\n\
                      tool mcp_srv_zz { enabled }\n";
        let mut project = Project::from_texts(("registry.toml", registry), &[("p.tg", policy)]);
        let (current, _) = crate::registry::load(FileId(1), registry, false);
        let (drift, updated) = sync(&current, "srv", &live(r#"{"tools":[{"name":"a"}]}"#));
        let stale = stale_statements(&mut project, updated, &drift);
        // The unknown tool of the policy that the sync did not remove is not listed.
        let got: Vec<(&str, String, usize)> = stale
            .iter()
            .map(|p| {
                (
                    p.code(),
                    format!("{:?}", p.span().range()),
                    p.span().file.0 as usize,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("TG1001", "5..14".to_string(), 2),
                ("TG1010", "75..84".to_string(), 2)
            ]
        );
    }

    #[test]
    fn new_tools_of_a_server_the_registry_lacks_go_last() {
        let (drift, after) = sync(
            &Registry::default(),
            "srv",
            &live(r#"{"tools":[{"name":"x"}]}"#),
        );
        assert_eq!(drift.added.len(), 1);
        assert_eq!(after.tools[0].name, "mcp_srv_x");
    }
}
