//! The exact semantic diff of two compiled tables: every decision over the
//! whole (finite) decision space — every configuration, role, consumer and
//! enforcement mode, every tool of either registry — compared, and the
//! changes grouped: widenings (newly offered, the risky direction) first.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use toolgate_runtime::{Context, Decision, Reason, Role, Table};

/// A decision reduced to what a reviewer compares.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Verdict {
    pub allowed: bool,
    pub reason: Option<Reason>,
    pub observed_only: bool,
    /// Offered, and a person approves each call (`needs-approval`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub needs_approval: bool,
}

impl Verdict {
    pub fn of(d: &Decision<'_>) -> Verdict {
        Verdict {
            allowed: d.allowed,
            reason: d.reason,
            observed_only: d.observed_only,
            needs_approval: d.needs_approval,
        }
    }

    pub fn text(&self) -> String {
        let approval = if self.needs_approval {
            ", needs approval"
        } else {
            ""
        };
        match (self.allowed, self.reason, self.observed_only) {
            (true, _, true) => format!("offered (observed only){approval}"),
            (true, _, false) => format!("offered{approval}"),
            (false, Some(r), _) => format!("refused: {}", r.code()),
            (false, None, _) => "refused".into(),
        }
    }
}

#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum ChangeKind {
    /// Refused before, offered now: the risky direction.
    Widened,
    Narrowed,
    /// Refused both times for another reason, or offered both times with a
    /// different observe status.
    ReasonChanged,
}

impl ChangeKind {
    /// The change from `old` to `new`; `None` when they are the same.
    pub fn between(old: &Verdict, new: &Verdict) -> Option<ChangeKind> {
        if old == new {
            return None;
        }
        Some(match (old.allowed, new.allowed) {
            (false, true) => ChangeKind::Widened,
            (true, false) => ChangeKind::Narrowed,
            // Offered both times: "now needs approval" narrows, "no longer
            // needs approval" widens (a call runs without a person).
            (true, true) if old.needs_approval != new.needs_approval => {
                if new.needs_approval {
                    ChangeKind::Narrowed
                } else {
                    ChangeKind::Widened
                }
            }
            _ => ChangeKind::ReasonChanged,
        })
    }

    /// How text and Markdown name it (a widening shouts).
    pub fn label(self) -> &'static str {
        match self {
            ChangeKind::Widened => "WIDENED",
            ChangeKind::Narrowed => "narrowed",
            ChangeKind::ReasonChanged => "reason changed",
        }
    }
}

/// One point of the decision space.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Point {
    pub role: Role,
    /// `None`: not an MCP consumer; `Some("*")`: a consumer without a profile.
    pub consumer: Option<String>,
    /// `None`: as the policy configures it; else the host's override.
    pub mode: Option<&'static str>,
}

/// One change, with every point of the space where it happens.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    pub kind: ChangeKind,
    pub configuration: String,
    pub tool: String,
    pub old: Verdict,
    pub new: Verdict,
    /// Roles, consumers and modes where it happens.
    pub points: Vec<Point>,
    /// It happens at every point evaluated for this configuration.
    pub everywhere: bool,
}

#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub widened: usize,
    pub narrowed: usize,
    pub reason_changed: usize,
    /// Decisions compared.
    pub decisions: u64,
}

#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Diff {
    pub summary: Summary,
    pub tools_added: Vec<String>,
    pub tools_removed: Vec<String>,
    pub configurations_added: Vec<String>,
    pub configurations_removed: Vec<String>,
    /// Setting changes: (setting, old, new).
    pub settings: Vec<(String, String, String)>,
    pub changes: Vec<Change>,
}

const MODES: [Option<&str>; 3] = [None, Some("observe"), Some("enforce")];

fn points(old: &Table, new: &Table) -> Vec<Point> {
    let mut consumers: BTreeSet<String> = BTreeSet::new();
    for t in [old, new] {
        consumers.extend(t.spec().consumers.iter().map(|c| c.name.clone()));
    }
    // "*": a consumer that no `consumer` block binds (no name can contain a space-free "*" block name clash: names cannot be `*`).
    let mut cs: Vec<Option<String>> = vec![None, Some("*".into())];
    cs.extend(consumers.into_iter().map(Some));
    let mut out = Vec::new();
    for role in Role::ALL {
        for c in &cs {
            for mode in MODES {
                out.push(Point {
                    role,
                    consumer: c.clone(),
                    mode,
                });
            }
        }
    }
    out
}

fn context<'t>(t: &'t Table, config: &str, p: &Point) -> Option<Context<'t>> {
    Some(
        t.context(config)
            .ok()?
            .role(p.role)
            .consumer(p.consumer.as_deref())
            .enforcement(p.mode),
    )
}

/// What was added and removed (tools, configurations) and which settings
/// changed: the parts of a diff that are not decisions.
fn inventory(old: &Table, new: &Table) -> Diff {
    let (os, ns) = (old.spec(), new.spec());
    let mut d = Diff::default();
    let old_tools: BTreeSet<&str> = os.tools.iter().map(|t| t.name.as_str()).collect();
    let new_tools: BTreeSet<&str> = ns.tools.iter().map(|t| t.name.as_str()).collect();
    d.tools_added = ns
        .tools
        .iter()
        .map(|t| t.name.clone())
        .filter(|n| !old_tools.contains(n.as_str()))
        .collect();
    d.tools_removed = os
        .tools
        .iter()
        .map(|t| t.name.clone())
        .filter(|n| !new_tools.contains(n.as_str()))
        .collect();
    let old_cfg: BTreeSet<&str> = old.configuration_names().collect();
    let new_cfg: BTreeSet<&str> = new.configuration_names().collect();
    d.configurations_added = new
        .configuration_names()
        .filter(|c| !old_cfg.contains(c))
        .map(str::to_string)
        .collect();
    d.configurations_removed = old
        .configuration_names()
        .filter(|c| !new_cfg.contains(c))
        .map(str::to_string)
        .collect();
    let setting = |name: &str, a: String, b: String, out: &mut Vec<(String, String, String)>| {
        if a != b {
            out.push((name.to_string(), a, b));
        }
    };
    let mode = |o: bool| if o { "observe" } else { "enforce" }.to_string();
    setting(
        "enforcement",
        mode(os.observe),
        mode(ns.observe),
        &mut d.settings,
    );
    setting(
        "remote-tools visible-to",
        format!("{:?}", os.remote_visibility).to_lowercase(),
        format!("{:?}", ns.remote_visibility).to_lowercase(),
        &mut d.settings,
    );
    setting(
        "consumers-without-profile",
        format!("{:?}", os.unprofiled).to_lowercase(),
        format!("{:?}", ns.unprofiled).to_lowercase(),
        &mut d.settings,
    );
    let admitted = |a: bool| if a { "admitted" } else { "refused" }.to_string();
    setting(
        "unknown-consumers",
        admitted(os.unknown_consumers_admitted),
        admitted(ns.unknown_consumers_admitted),
        &mut d.settings,
    );
    setting(
        "skill-loader",
        os.skill_loader.clone(),
        ns.skill_loader.clone(),
        &mut d.settings,
    );

    d
}

/// Compare two tables over the whole decision space.
pub fn diff(old: &Table, new: &Table) -> Diff {
    diff_with_progress(old, new, &|| {})
}

/// [`diff`], calling `tick` after each configuration the two share (a
/// progress bar: one per configuration both tables have).
pub fn diff_with_progress(old: &Table, new: &Table, tick: &dyn Fn()) -> Diff {
    let (os, ns) = (old.spec(), new.spec());
    let mut d = inventory(old, new);
    let removed = d.tools_removed.clone();
    let old_cfg: BTreeSet<&str> = old.configuration_names().collect();
    // Tool names in the order of the new registry, then the removed ones.
    let names: Vec<&str> = ns
        .tools
        .iter()
        .map(|t| t.name.as_str())
        .chain(removed.iter().map(String::as_str))
        .collect();
    let same_registry = os.tools.len() == ns.tools.len()
        && os
            .tools
            .iter()
            .zip(&ns.tools)
            .all(|(a, b)| a.name == b.name);
    let pts = points(old, new);
    // (configuration, tool, kind, old, new) -> points
    let mut groups: BTreeMap<(String, usize, ChangeKind, Verdict, Verdict), Vec<Point>> =
        BTreeMap::new();
    let mut per_config_points: BTreeMap<String, usize> = BTreeMap::new();
    let configs: Vec<&str> = new
        .configuration_names()
        .filter(|c| old_cfg.contains(c))
        .collect();
    let profile_words: BTreeMap<Option<String>, Vec<usize>> = pts
        .iter()
        .map(|p| {
            (
                p.consumer.clone(),
                old.changed_profile_words(new, p.consumer.as_deref()),
            )
        })
        .collect();
    for cfg in configs {
        per_config_points.insert(cfg.to_string(), pts.len());
        let changed = old.changed_words(new, cfg);
        for p in &pts {
            // Same tools, and no gate mask differs anywhere for this point: nothing to look at.
            if let (true, Some(base)) = (same_registry, &changed) {
                if base.is_empty() && profile_words[&p.consumer].is_empty() {
                    d.summary.decisions += ns.tools.len() as u64;
                    continue;
                }
            }
            let (Some(oc), Some(nc)) = (context(old, cfg, p), context(new, cfg, p)) else {
                continue;
            };
            let mut record = |ti: usize, ov: Verdict, nv: Verdict| {
                let Some(kind) = ChangeKind::between(&ov, &nv) else {
                    return;
                };
                groups
                    .entry((cfg.to_string(), ti, kind, ov, nv))
                    .or_default()
                    .push(p.clone());
            };
            if let (true, Some(base)) = (same_registry, &changed) {
                // Only the words where some gate mask differs can hold a change.
                let n = ns.tools.len();
                d.summary.decisions += n as u64;
                let profile = &profile_words[&p.consumer];
                let mut words: Vec<usize> = base.iter().chain(profile).copied().collect();
                words.sort_unstable();
                words.dedup();
                for w in words {
                    for i in w * 64..((w + 1) * 64).min(n) {
                        let (ov, nv) = (
                            Verdict::of(&oc.decide_id(i as u32)),
                            Verdict::of(&nc.decide_id(i as u32)),
                        );
                        record(i, ov, nv);
                    }
                }
            } else {
                d.summary.decisions += names.len() as u64;
                for (ti, name) in names.iter().enumerate() {
                    record(
                        ti,
                        Verdict::of(&oc.decide(name)),
                        Verdict::of(&nc.decide(name)),
                    );
                }
            }
        }
        tick();
    }
    finish(d, groups, &per_config_points, &names)
}

/// The changes found, grouped by (configuration, tool, kind, verdicts), in
/// the diff's order (widenings first), and the summary's counts.
fn finish(
    mut d: Diff,
    groups: BTreeMap<(String, usize, ChangeKind, Verdict, Verdict), Vec<Point>>,
    per_config_points: &BTreeMap<String, usize>,
    names: &[&str],
) -> Diff {
    for ((configuration, ti, kind, old, new), mut points) in groups {
        points.sort();
        let everywhere = per_config_points.get(&configuration) == Some(&points.len());
        d.changes.push(Change {
            kind,
            configuration,
            tool: names[ti].to_string(),
            old,
            new,
            points,
            everywhere,
        });
    }
    d.changes
        .sort_by(|a, b| (a.kind, &a.configuration).cmp(&(b.kind, &b.configuration)));
    d.summary.widened = d
        .changes
        .iter()
        .filter(|c| c.kind == ChangeKind::Widened)
        .count();
    d.summary.narrowed = d
        .changes
        .iter()
        .filter(|c| c.kind == ChangeKind::Narrowed)
        .count();
    d.summary.reason_changed = d
        .changes
        .iter()
        .filter(|c| c.kind == ChangeKind::ReasonChanged)
        .count();
    d
}

fn where_text(c: &Change) -> String {
    if c.everywhere {
        return "every role, consumer and mode".into();
    }
    let mut roles: Vec<&str> = Vec::new();
    for p in &c.points {
        if !roles.contains(&p.role.as_str()) {
            roles.push(p.role.as_str());
        }
    }
    let consumers: BTreeSet<String> = c
        .points
        .iter()
        .map(|p| match &p.consumer {
            None => "no consumer".to_string(),
            Some(s) if s == "*" => "unprofiled consumers".to_string(),
            Some(s) => format!("consumer {s}"),
        })
        .collect();
    let modes: BTreeSet<&str> = c
        .points
        .iter()
        .map(|p| p.mode.unwrap_or("as configured"))
        .collect();
    format!(
        "roles {}; {}; modes {}",
        roles.join(", "),
        consumers.into_iter().collect::<Vec<_>>().join(", "),
        modes.into_iter().collect::<Vec<_>>().join(", ")
    )
}

impl Diff {
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
            && self.tools_added.is_empty()
            && self.tools_removed.is_empty()
            && self.settings.is_empty()
            && self.configurations_added.is_empty()
            && self.configurations_removed.is_empty()
    }

    /// The tools and configurations added and removed, each list under its
    /// label, the empty ones left out (for `text` and `markdown`).
    fn name_lists(&self) -> impl Iterator<Item = (&'static str, &[String])> {
        [
            ("Tools added", &self.tools_added),
            ("Tools removed", &self.tools_removed),
            ("Configurations added", &self.configurations_added),
            ("Configurations removed", &self.configurations_removed),
        ]
        .into_iter()
        .filter(|(_, list)| !list.is_empty())
        .map(|(label, list)| (label, list.as_slice()))
    }

    pub fn text(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        let s = &self.summary;
        let _ = writeln!(
            out,
            "{} widened, {} narrowed, {} reason changed ({} decisions compared)",
            s.widened, s.narrowed, s.reason_changed, s.decisions
        );
        for (label, list) in self.name_lists() {
            let _ = writeln!(out, "{}: {}", label.to_lowercase(), list.join(", "));
        }
        for (k, a, b) in &self.settings {
            let _ = writeln!(out, "setting {k}: {a} -> {b}");
        }
        for c in &self.changes {
            let _ = writeln!(
                out,
                "{:<14} {}: {}: {} -> {} ({})",
                c.kind.label(),
                c.configuration,
                c.tool,
                c.old.text(),
                c.new.text(),
                where_text(c)
            );
        }
        out
    }

    /// Markdown for a pull-request comment: a table of counts, then the
    /// details folded per configuration, widenings first.
    pub fn markdown(&self) -> String {
        use std::fmt::Write as _;
        let s = &self.summary;
        let mut out = String::from("## toolgate: effect of this change on tool access\n\n");
        let _ = writeln!(out, "| widened | narrowed | reason changed | decisions compared |\n| ---: | ---: | ---: | ---: |\n| **{}** | {} | {} | {} |\n", s.widened, s.narrowed, s.reason_changed, s.decisions);
        if self.is_empty() {
            out.push_str("No change to any decision.\n");
            return out;
        }
        if s.widened > 0 {
            out.push_str("> [!WARNING]\n> This change **widens** access: tools below are offered where they were refused.\n\n");
        }
        for (label, list) in self.name_lists() {
            let _ = writeln!(
                out,
                "**{label}:** {}\n",
                list.iter()
                    .map(|t| md_code(t))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        for (k, a, b) in &self.settings {
            let _ = writeln!(out, "**Setting `{k}`:** `{a}` → `{b}`\n");
        }
        let mut by_config: BTreeMap<&str, Vec<&Change>> = BTreeMap::new();
        for c in &self.changes {
            by_config.entry(&c.configuration).or_default().push(c);
        }
        let mut configs: Vec<(&str, Vec<&Change>)> = by_config.into_iter().collect();
        configs.sort_by_key(|(name, cs)| (cs.iter().map(|c| c.kind).min(), *name));
        for (cfg, cs) in configs {
            let w = cs.iter().filter(|c| c.kind == ChangeKind::Widened).count();
            let _ = writeln!(
                out,
                "<details{}><summary><code>{}</code>: {} change{}{}</summary>\n",
                if w > 0 { " open" } else { "" },
                html_text(cfg),
                cs.len(),
                if cs.len() == 1 { "" } else { "s" },
                if w > 0 {
                    format!(", **{w} widened**")
                } else {
                    String::new()
                }
            );
            out.push_str(
                "| change | tool | before | after | where |\n| --- | --- | --- | --- | --- |\n",
            );
            for c in cs {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} |",
                    c.kind.label(),
                    md_code(&c.tool),
                    c.old.text(),
                    c.new.text(),
                    where_text(c)
                );
            }
            out.push_str("\n</details>\n\n");
        }
        out
    }
}

/// A name as a Markdown code span that no character of it can break:
/// invisible characters escaped, a table's `|` escaped, and a fence longer
/// than any run of backticks inside.
pub fn md_code(name: &str) -> String {
    let name = toolgate_runtime::names::escape(name).replace('|', "\\|");
    let longest = name.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest + 1);
    if longest == 0 {
        format!("{fence}{name}{fence}")
    } else {
        format!("{fence} {name} {fence}")
    }
}

/// A name as HTML text (inside `<code>` of a `<summary>`).
fn html_text(name: &str) -> String {
    toolgate_runtime::names::escape(name)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod markdown_names {
    use super::md_code;

    #[test]
    fn names_cannot_break_out_of_their_code_span() {
        assert_eq!(md_code("delete_record"), "`delete_record`");
        assert_eq!(md_code("a`b"), "`` a`b ``");
        assert_eq!(md_code("a|b"), "`a\\|b`");
        assert_eq!(md_code("x\ny"), "`x\\u000ay`");
    }
}
