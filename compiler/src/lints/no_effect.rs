//! The exact no-effect lint (TG3009): a statement whose removal changes no
//! decision anywhere in the table is reported, with why.
//!
//! "Anywhere" is the whole decision space of the registered tools: every
//! configuration, role (admin, user, none), consumer (none, each bound one,
//! an unprofiled one), enforcement mode (the policy's, observe, enforce),
//! for a new run and for a run started with any extra skill (`run start
//! --skill`); a decision is (allowed, reason, observed only). Tools the host
//! registers live are outside it.
//!
//! Nothing is recompiled per statement. The gates are ordered, so a
//! statement matters exactly when the gate it feeds is *reached* by a tool
//! whose answer at that gate it flips; reach comes from the table's own bit
//! sets, one pass over the configurations:
//!
//! | statement | matters when |
//! | --- | --- |
//! | `exclude` entry of configuration C | the tool is enabled and some run of C admits it |
//! | tool `enabled` / `disabled` | it changes the effective state (its group is enabled, the registry says otherwise) |
//! | group `disabled` (`enabled` never matters) | some tool of the group is enabled on its own |
//! | tool `admin-only` / `not admin-only` | it differs from the registry and the tool is enabled |
//! | tool or group `class` | some configuration whose trust-zone gate the tool reaches has a ceiling between the class with and without it |
//! | profile `allow` entry | a consumer uses the profile and the entry alone selects an enabled tool |
//! | skill `tools` entry | some configuration allows the (enabled, non-loader) tool's group and no other skill it attaches declares the tool |
//! | provider `fallback` entry | without it, some configuration using the provider gets a higher ceiling, and a tool reaching its trust-zone gate is classed in between |
//! | `needs-approval` entry of configuration C | some context of C offers a tool it selects |
//! | profile `needs-approval` entry | a consumer uses the profile, and some context of some configuration offers that consumer a tool the entry selects |
//!
//! Findings other codes already make are left to them: TG3001 (an
//! exclusion outside the groups), TG3002 (`enabled` in a disabled group),
//! TG1009 (a stale exclusion), TG2003/TG2004 (repeats), TG3005 (a selector
//! matching nothing), TG3006 (a fallback to itself).

use std::collections::{HashMap, HashSet};

use toolgate_runtime::bits::BitSet;
use toolgate_runtime::table::ConfigSets;
use toolgate_runtime::Table;

use crate::diagnostics::Problem;
use crate::model::Model;
use crate::registry::Registry;
use crate::syntax::ast::{self, Block, Name, Prop, Statement};
use crate::validate::Parsed;

/// Every TG3009 finding of a model that validated without errors; `table`
/// is the model lowered ([`lower::lowered`]).
pub fn lint<'a>(
    model: &'a Model,
    registry: &'a Registry,
    policies: &[Parsed<'a>],
    table: &'a Table,
) -> Vec<Problem> {
    // No configuration: nothing is decided, and every statement would be
    // "without effect"; that is not a useful thing to say line by line.
    if model.configurations.is_empty() || registry.tools.len() != model.tools.len() {
        return Vec::new();
    }
    // The configurations whose `needs-approval` entries are judged (the
    // model's resolved lists): only their offered tools are kept.
    let config_index: HashMap<&str, usize> = model
        .configurations
        .iter()
        .enumerate()
        .map(|(i, c)| (c.name.as_str(), i))
        .collect();
    let judged: Vec<bool> = model
        .configurations
        .iter()
        .map(|c| !c.approval.is_empty())
        .collect();
    let space = Space::new(model, table, &judged);
    let mut lint = Lint {
        model,
        registry,
        table,
        space: &space,
        group_index: model
            .groups
            .iter()
            .enumerate()
            .map(|(i, g)| (g.name.as_str(), i))
            .collect(),
        config_index,
        members: {
            let mut v = vec![Vec::new(); model.groups.len()];
            for (i, t) in model.tools.iter().enumerate() {
                v[t.group].push(i);
            }
            v
        },
        prefixes: HashMap::new(),
        out: Vec::new(),
    };
    for p in policies {
        for st in &p.ast.statements {
            match st {
                Statement::Tool(b) => lint.tool(b),
                Statement::Group(b) => lint.group(b),
                Statement::Configuration(b) => lint.configuration(b),
                Statement::Skill(b) => lint.skill(b),
                Statement::Profile(b) => lint.profile(b),
                Statement::Provider(b) => lint.provider(b),
                _ => {}
            }
        }
    }
    lint.out
}

/// What the per-configuration pass learns.
struct Space {
    n: usize,
    /// Per class rank `k`: the tools that reach the trust-zone gate in some
    /// configuration whose ceiling is `k` (`None`: no such configuration).
    reach_zone: Vec<Option<Vec<u64>>>,
    /// Exclusions without effect: (configuration, tool) -> why.
    exclusions: HashMap<(usize, u32), String>,
    /// (provider, fallback) pairs with an effect.
    fallbacks: HashSet<(usize, usize)>,
    /// Providers some configuration uses.
    used_providers: HashSet<usize>,
    /// Per skill-declared tool: some configuration admits it through any
    /// skill (none it attaches declares it) ...
    any_skill: BitSet,
    /// ... or only through this one skill it attaches: (tool, skill).
    sole_skill: HashMap<u32, Vec<usize>>,
    /// Skill-declared tools whose group some configuration allows.
    allowed_somewhere: BitSet,
    /// Per configuration with `needs-approval` entries (`None` for the
    /// others: a set of a bit a tool for each of 1,000 configurations would
    /// be 125 MB at a million tools): the tools some context of it offers,
    /// the profile gate aside (enabled, admitted by some run, not excluded,
    /// and not a remote tool above its ceiling, which no mode offers).
    offerable: Vec<Option<Vec<u64>>>,
    /// The same over every configuration, united: what a profile's
    /// `needs-approval` entry is judged by (some configuration offers it).
    offerable_anywhere: Vec<u64>,
}

/// What the pass over the configurations reads for each, and its scratch
/// words (`reach`, `offered`: overwritten for each configuration).
struct Pass<'a> {
    m: &'a Model,
    t: &'a Table,
    /// Every tool some skill declares.
    all_declared: BitSet,
    remote: BitSet,
    /// The tools some skill declares, in order.
    declared_ids: Vec<u32>,
    reach: Vec<u64>,
    offered: Vec<u64>,
}

fn word(s: &BitSet, w: usize) -> u64 {
    s.words().get(w).copied().unwrap_or(0)
}

impl Space {
    /// `judged`: per configuration, whether its offered tools are kept
    /// ([`Space::offerable`]).
    fn new(m: &Model, t: &Table, judged: &[bool]) -> Space {
        let n = t.tool_count();
        let words = n.div_ceil(64);
        let nc = m.classes.len();
        // Every tool some skill declares: a run started with that skill
        // admits it (where its groups do).
        let mut declared_by: HashMap<u32, Vec<usize>> = HashMap::new();
        let mut all_declared = BitSet::new(n);
        for (si, s) in m.skills.iter().enumerate() {
            for name in s.tools.iter().flatten() {
                if let Some(id) = t.tool_id(name) {
                    all_declared.insert(id as usize);
                    declared_by.entry(id).or_default().push(si);
                }
            }
        }
        let declared_ids: Vec<u32> = {
            let mut v: Vec<u32> = declared_by.keys().copied().collect();
            v.sort_unstable();
            v
        };
        let mut sp = Space {
            n,
            reach_zone: vec![None; nc],
            exclusions: HashMap::new(),
            fallbacks: HashSet::new(),
            used_providers: HashSet::new(),
            any_skill: BitSet::new(n),
            sole_skill: HashMap::new(),
            allowed_somewhere: BitSet::new(n),
            offerable: judged.iter().map(|&j| j.then(|| vec![0; words])).collect(),
            offerable_anywhere: vec![0; words],
        };
        let mut remote = BitSet::new(n);
        for (i, tool) in m.tools.iter().enumerate() {
            if tool.remote {
                remote.insert(i);
            }
        }
        let mut pass = Pass {
            m,
            t,
            all_declared,
            remote,
            declared_ids,
            reach: vec![0; words],
            offered: vec![0; words],
        };
        for ci in 0..m.configurations.len() {
            // The configuration's sets are built for this pass and dropped
            // after it, not cached in the table.
            t.with_configuration_sets(ci, |cs| sp.note_configuration(&mut pass, ci, cs));
        }
        sp
    }

    /// What configuration `ci`, with the sets `cs`, adds to the space.
    fn note_configuration(&mut self, pass: &mut Pass<'_>, ci: usize, cs: ConfigSets<'_>) {
        let sp = self;
        let (m, t) = (pass.m, pass.t);
        let Pass {
            all_declared,
            remote,
            declared_ids,
            reach,
            offered,
            ..
        } = pass;
        let cfg = &m.configurations[ci];
        let en = t.enabled_tools();
        let nc = m.classes.len();
        let words = reach.len();
        // What some run of this configuration admits: a new run's
        // allow-list, widened by any skill a run may be started with.
        for (w, r) in reach.iter_mut().enumerate() {
            let runnable = if cs.new_run_listed {
                word(cs.new_run_allowed, w) | (word(cs.allowed, w) & word(all_declared, w))
            } else {
                word(cs.allowed, w)
            };
            *r = word(en, w) & runnable;
        }
        for name in &cfg.excluded {
            let Some(id) = t.tool_id(name) else { continue };
            if !cs.allowed.contains(id as usize) || has(reach, id as usize) {
                continue; // TG3001's, or it has an effect
            }
            let why = if !en.contains(id as usize) {
                disabled_why(m, id as usize)
            } else {
                format!(
                        "no run of configuration `{}` admits `{}`: the allow-lists of its skills leave it out",
                        esc(&cfg.name),
                        esc(name)
                    )
            };
            sp.exclusions.insert((ci, id), why);
        }
        // Reaching the trust-zone gate: not excluded either.
        for (w, r) in reach.iter_mut().enumerate() {
            *r &= !word(cs.excluded, w);
        }
        let k = cs.ceiling as usize;
        let above = t.tools_above(cs.ceiling);
        for (w, (o, r)) in offered.iter_mut().zip(reach.iter()).enumerate() {
            let blocked = above.map_or(0, |a| word(a, w)) & word(remote, w);
            *o = r & !blocked;
        }
        for (a, o) in sp.offerable_anywhere.iter_mut().zip(offered.iter()) {
            *a |= o;
        }
        if let Some(kept) = sp.offerable.get_mut(ci).and_then(Option::as_mut) {
            kept.copy_from_slice(offered);
        }
        if k < nc {
            let acc = sp.reach_zone[k].get_or_insert_with(|| vec![0; words]);
            for (a, r) in acc.iter_mut().zip(reach.iter()) {
                *a |= r;
            }
        }
        // Fallbacks: the ceiling without one occurrence of each.
        if let Some(p) = cfg.provider {
            sp.note_fallbacks(m, t, p, k, reach);
        }
        // Skill tools: how many skills this configuration attaches declare each.
        sp.note_skill_tools(m, t, &cfg.skills, &cs, declared_ids);
    }

    /// The fallbacks of provider `p` that matter for a configuration with
    /// ceiling `k` and the tools `reach` reaching its trust-zone gate: the
    /// ceiling without one occurrence of the fallback is higher, and some
    /// reached tool's class lies between the two.
    fn note_fallbacks(&mut self, m: &Model, t: &Table, p: usize, k: usize, reach: &[u64]) {
        let words = reach.len();
        let ceil_of = |zone: Option<usize>| -> usize {
            zone.or(m.least_trusted_zone())
                .map_or(0, |z| m.zones[z].ceiling)
        };
        self.used_providers.insert(p);
        let fb = &m.providers[p].fallback;
        let own = ceil_of(m.providers[p].zone);
        for (pos, &f) in fb.iter().enumerate() {
            if self.fallbacks.contains(&(p, f)) {
                continue;
            }
            let without = fb
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != pos)
                .fold(own, |c, (_, &g)| c.min(ceil_of(m.providers[g].zone)));
            if without > k {
                let (lo, hi) = (t.tools_above(k as u32), t.tools_above(without as u32));
                if let (Some(lo), Some(hi)) = (lo, hi) {
                    let band = (0..words).any(|w| reach[w] & word(lo, w) & !word(hi, w) != 0);
                    if band {
                        self.fallbacks.insert((p, f));
                    }
                }
            }
        }
    }

    /// For each skill-declared tool a configuration allows: whether some
    /// run admits it through any skill (none the configuration attaches
    /// declares it) or through only one of its attached skills.
    fn note_skill_tools(
        &mut self,
        m: &Model,
        t: &Table,
        skills: &[usize],
        cs: &ConfigSets<'_>,
        declared_ids: &[u32],
    ) {
        let en = t.enabled_tools();
        let loader = t.skill_loader_id();
        let mut count: HashMap<u32, (u32, usize)> = HashMap::new();
        for &s in skills {
            for name in m.skills[s].tools.iter().flatten() {
                if let Some(id) = t.tool_id(name) {
                    let e = count.entry(id).or_insert((0, s));
                    e.0 += 1;
                }
            }
        }
        for &id in declared_ids {
            let i = id as usize;
            if Some(id) == loader || !cs.allowed.contains(i) {
                continue;
            }
            self.allowed_somewhere.insert(i);
            if !en.contains(i) {
                continue;
            }
            // Most configurations attach no skill: no lookup then.
            let declared = if count.is_empty() {
                None
            } else {
                count.get(&id)
            };
            match declared {
                None => {
                    self.any_skill.insert(i);
                }
                Some(&(1, s)) => {
                    let sole = self.sole_skill.entry(id).or_default();
                    if !sole.contains(&s) {
                        sole.push(s);
                    }
                }
                Some(_) => {}
            }
        }
    }

    /// Whether moving tool `id` from class `a` to class `b` changes some
    /// decision: a configuration reached at its trust-zone gate by the tool
    /// has a ceiling that one class is above and the other is not.
    fn class_matters(&self, id: u32, a: usize, b: usize) -> bool {
        if a == b {
            return false;
        }
        self.reach_zone
            .iter()
            .enumerate()
            .any(|(k, s)| (a > k) != (b > k) && s.as_ref().is_some_and(|s| has(s, id as usize)))
    }
}

/// Bit `i` of a word vector.
/// A selector's name (for the span) and how a message shows it.
fn selector_words(sel: &ast::Selector) -> (&Name, String) {
    match sel {
        ast::Selector::Tool(x) => (x, format!("`{}`", esc(&x.text))),
        ast::Selector::Group(x) => (x, format!("`group {}`", esc(&x.text))),
        ast::Selector::Server(x) => (x, format!("`server {}`", esc(&x.text))),
        ast::Selector::Prefix(x) => (x, format!("`{}*`", esc(&x.text))),
    }
}

/// The one-tool set of a registered tool name.
fn ast_free_tool(table: &Table, name: &str) -> Option<BitSet> {
    let id = table.tool_id(name)?;
    let mut s = BitSet::new(table.tool_count());
    s.insert(id as usize);
    Some(s)
}

fn has(v: &[u64], i: usize) -> bool {
    v.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
}

fn esc(name: &str) -> std::borrow::Cow<'_, str> {
    toolgate_runtime::names::escape(name)
}

/// Why a disabled tool is disabled: its group, else its own state.
fn disabled_why(m: &Model, i: usize) -> String {
    let t = &m.tools[i];
    let g = &m.groups[t.group];
    if g.state == Some(false) {
        format!(
            "`{}` is off: its group `{}` is disabled",
            esc(&t.name),
            esc(&g.name)
        )
    } else {
        format!("`{}` is disabled", esc(&t.name))
    }
}

struct Lint<'a> {
    model: &'a Model,
    registry: &'a Registry,
    table: &'a Table,
    space: &'a Space,
    group_index: HashMap<&'a str, usize>,
    config_index: HashMap<&'a str, usize>,
    /// Registered tools of each group.
    members: Vec<Vec<usize>>,
    /// The tools of each prefix selector, found once.
    prefixes: HashMap<&'a str, BitSet>,
    out: Vec<Problem>,
}

/// The first property of each kind in a block (a repeat is TG2002/TG2003's
/// and, for lists, not applied).
fn first_of<P, K: PartialEq>(props: &[Prop<P>], kind: impl Fn(&P) -> K) -> Vec<&Prop<P>> {
    let mut seen: Vec<K> = Vec::new();
    let mut out = Vec::new();
    for p in props {
        let k = kind(&p.value);
        if !seen.contains(&k) {
            seen.push(k);
            out.push(p);
        }
    }
    out
}

/// The first occurrence of each name in a list (a repeat is TG2004's).
fn unique(names: &[Name]) -> Vec<&Name> {
    let mut seen = HashSet::new();
    names
        .iter()
        .filter(|n| seen.insert(n.text.as_str()))
        .collect()
}

impl<'a> Lint<'a> {
    fn push(&mut self, span: crate::source::Span, what: String, owner: String, why: String) {
        self.out.push(Problem::NoEffect {
            span,
            what,
            owner,
            why,
        });
    }

    fn tool(&mut self, b: &Block<ast::ToolProp>) {
        let Some(id) = self.table.tool_id(&b.name.text) else {
            return;
        };
        let i = id as usize;
        let m = self.model;
        let t = &m.tools[i];
        let g = &m.groups[t.group];
        let reg = &self.registry.tools[i];
        let owner = format!("tool `{}`", esc(&t.name));
        let enabled = self.table.enabled_tools().contains(i);
        for p in first_of(&b.props, std::mem::discriminant) {
            match &p.value {
                ast::ToolProp::State(s) => {
                    let what = if *s { "`enabled`" } else { "`disabled`" };
                    let why = if g.state == Some(false) {
                        if *s {
                            continue; // TG3002
                        }
                        format!(
                            "its group `{}` is disabled, so the tool is off either way",
                            esc(&g.name)
                        )
                    } else if *s == t.default_enabled {
                        format!(
                            "the registry already has it {}",
                            if *s { "enabled" } else { "disabled" }
                        )
                    } else {
                        continue;
                    };
                    self.push(p.span, what.into(), owner.clone(), why);
                }
                ast::ToolProp::AdminOnly(a) => {
                    let what = if *a {
                        "`admin-only`"
                    } else {
                        "`not admin-only`"
                    };
                    let why = if *a == reg.admin_only {
                        format!(
                            "the registry already has it {}",
                            if *a { "admin-only" } else { "not admin-only" }
                        )
                    } else if !enabled {
                        disabled_why(m, i)
                    } else {
                        continue;
                    };
                    self.push(p.span, what.into(), owner.clone(), why);
                }
                ast::ToolProp::Class(c) => {
                    let Some(cur) = t.class else { continue };
                    let without = reg
                        .class
                        .as_ref()
                        .and_then(|rc| m.classes.iter().position(|x| x == rc))
                        .or(g.default_class)
                        .unwrap_or_else(|| m.top_class());
                    if self.space.class_matters(id, cur, without) {
                        continue;
                    }
                    let why = self.class_why(&[i], cur, without);
                    self.push(
                        p.span,
                        format!("`class {}`", esc(&c.text)),
                        owner.clone(),
                        why,
                    );
                }
            }
        }
    }

    /// Why moving `tools` from class `cur` to `without` changes nothing.
    fn class_why(&self, tools: &[usize], cur: usize, without: usize) -> String {
        let m = self.model;
        if cur == without {
            return format!(
                "without it the class is `{}` all the same",
                esc(&m.classes[cur])
            );
        }
        let (lo, hi) = (cur.min(without), cur.max(without));
        let reached = tools.iter().any(|&i| {
            self.space
                .reach_zone
                .iter()
                .any(|s| s.as_ref().is_some_and(|s| has(s, i)))
        });
        if !reached {
            let who = if tools.len() == 1 {
                format!("`{}`", esc(&m.tools[tools[0]].name))
            } else {
                "none of these tools".into()
            };
            return format!(
                "{who} never reaches the trust-zone gate (disabled, excluded or outside every configuration's groups), so its class decides nothing"
            );
        }
        format!(
            "without it the class is `{}`, and no configuration reaching {} at the trust-zone gate has a ceiling from `{}` up to below `{}`",
            esc(&m.classes[without]),
            if tools.len() == 1 { "it" } else { "them" },
            esc(&m.classes[lo]),
            esc(&m.classes[hi])
        )
    }

    fn group(&mut self, b: &Block<ast::GroupProp>) {
        let Some(&gi) = self.group_index.get(b.name.text.as_str()) else {
            return;
        };
        let m = self.model;
        let g = &m.groups[gi];
        let owner = format!("group `{}`", esc(&g.name));
        let members = std::mem::take(&mut self.members[gi]);
        for p in first_of(&b.props, std::mem::discriminant) {
            match &p.value {
                ast::GroupProp::State(true) => {
                    self.push(
                        p.span,
                        "`enabled`".into(),
                        owner.clone(),
                        "a group is enabled unless it is disabled".into(),
                    );
                }
                ast::GroupProp::State(false) => {
                    let on = members
                        .iter()
                        .any(|&i| m.tools[i].state.unwrap_or(m.tools[i].default_enabled));
                    if on {
                        continue;
                    }
                    let why = if members.is_empty() {
                        "no registered tool is in the group".to_string()
                    } else {
                        "every tool of the group is disabled on its own".to_string()
                    };
                    self.push(p.span, "`disabled`".into(), owner.clone(), why);
                }
                ast::GroupProp::Class(c) => {
                    let Some(cur) = g.default_class else { continue };
                    let top = m.top_class();
                    let inherit: Vec<usize> = members
                        .iter()
                        .copied()
                        .filter(|&i| m.tools[i].class.is_none())
                        .collect();
                    if inherit
                        .iter()
                        .any(|&i| self.space.class_matters(i as u32, cur, top))
                    {
                        continue;
                    }
                    let why = if inherit.is_empty() {
                        "every tool of the group has a class of its own".to_string()
                    } else {
                        self.class_why(&inherit, cur, top)
                    };
                    self.push(
                        p.span,
                        format!("`class {}`", esc(&c.text)),
                        owner.clone(),
                        why,
                    );
                }
            }
        }
        self.members[gi] = members;
    }

    fn configuration(&mut self, b: &'a Block<ast::ConfigurationProp>) {
        let Some(&ci) = self.config_index.get(b.name.text.as_str()) else {
            return;
        };
        let owner = format!("configuration `{}`", esc(&b.name.text));
        if let Some(list) = b.props.iter().find_map(|p| match &p.value {
            ast::ConfigurationProp::NeedsApproval(l) => Some(l),
            _ => None,
        }) {
            for sel in list {
                let Some(set) = self.selector_set(sel) else {
                    continue;
                };
                // Every configuration with a `needs-approval` list kept its words.
                let Some(offered) = self.space.offerable.get(ci).and_then(Option::as_ref) else {
                    continue;
                };
                if (0..offered.len()).any(|w| word(&set, w) & offered[w] != 0) {
                    continue;
                }
                let (name, what) = selector_words(sel);
                let why = format!(
                    "no context of configuration `{}` offers {what}: a refusing gate stops it first, and a refused tool is never asked about",
                    esc(&b.name.text)
                );
                self.push(
                    name.span,
                    format!("needing approval for {what}"),
                    owner.clone(),
                    why,
                );
            }
        }
        let Some(list) = b.props.iter().find_map(|p| match &p.value {
            ast::ConfigurationProp::Exclude(l) => Some(l),
            _ => None,
        }) else {
            return;
        };
        for n in unique(list) {
            let Some(id) = self.table.tool_id(&n.text) else {
                continue;
            };
            if let Some(why) = self.space.exclusions.get(&(ci, id)) {
                let what = format!("excluding `{}`", esc(&n.text));
                self.push(n.span, what, owner.clone(), why.clone());
            }
        }
    }

    fn skill(&mut self, b: &Block<ast::SkillProp>) {
        let m = self.model;
        let Some(si) = m.skills.iter().position(|s| s.name == b.name.text) else {
            return;
        };
        let owner = format!("skill `{}`", esc(&b.name.text));
        let Some(ast::SkillProp::Tools(list)) = b.props.first().map(|p| &p.value) else {
            return;
        };
        let loader = self.table.skill_loader_id();
        for n in unique(list) {
            let Some(id) = self.table.tool_id(&n.text) else {
                continue;
            };
            let sp = self.space;
            if sp.any_skill.contains(id as usize)
                || sp.sole_skill.get(&id).is_some_and(|v| v.contains(&si))
            {
                continue;
            }
            let why = if Some(id) == loader {
                format!(
                    "`{}` is the skill loader, which no allow-list holds back",
                    esc(&n.text)
                )
            } else if !sp.allowed_somewhere.contains(id as usize) {
                format!("no configuration allows the group of `{}`", esc(&n.text))
            } else if !self.table.enabled_tools().contains(id as usize) {
                disabled_why(m, id as usize)
            } else {
                format!(
                    "every configuration that allows `{}` gets it from another skill it attaches",
                    esc(&n.text)
                )
            };
            self.push(n.span, format!("`{}`", esc(&n.text)), owner.clone(), why);
        }
    }

    fn profile(&mut self, b: &'a Block<ast::ProfileProp>) {
        let m = self.model;
        let Some(pi) = m.profiles.iter().position(|p| p.name == b.name.text) else {
            return;
        };
        let owner = format!("profile `{}`", esc(&b.name.text));
        if let Some(list) = b.props.iter().find_map(|p| match &p.value {
            ast::ProfileProp::NeedsApproval(l) => Some(l),
            _ => None,
        }) {
            self.profile_approvals(pi, &b.name.text, list, &owner);
        }
        let Some(list) = b.props.iter().find_map(|p| match &p.value {
            ast::ProfileProp::Allow(l) => Some(l),
            _ => None,
        }) else {
            return;
        };
        let n = self.space.n;
        // Each entry's tools; a selector that names nothing is TG1001/TG3005's.
        let sets: Vec<(&ast::Selector, Option<BitSet>)> = list
            .iter()
            .map(|sel| (sel, self.selector_set(sel)))
            .collect();
        let used = m.consumers.iter().any(|c| c.profile == pi);
        let mut once = BitSet::new(n);
        let mut twice = BitSet::new(n);
        for s in sets.iter().filter_map(|(_, s)| s.as_ref()) {
            let mut both = once.clone();
            both.intersect_with(s);
            twice.union_with(&both);
            once.union_with(s);
        }
        let en = self.table.enabled_tools();
        for (sel, set) in &sets {
            let Some(set) = set else { continue };
            let (name, what) = match sel {
                ast::Selector::Tool(x) => (x, format!("`{}`", esc(&x.text))),
                ast::Selector::Group(x) => (x, format!("`group {}`", esc(&x.text))),
                ast::Selector::Server(x) => (x, format!("`server {}`", esc(&x.text))),
                ast::Selector::Prefix(x) => (x, format!("`{}*`", esc(&x.text))),
            };
            let why = if !used {
                format!("no consumer uses profile `{}`", esc(&b.name.text))
            } else {
                let alone =
                    (0..n.div_ceil(64)).any(|w| word(set, w) & !word(&twice, w) & word(en, w) != 0);
                if alone {
                    continue;
                }
                "every enabled tool it selects is selected by another entry of the profile too"
                    .to_string()
            };
            self.push(name.span, what, owner.clone(), why);
        }
    }

    /// A profile's `needs-approval` entries: each must select a tool its
    /// `allow` list admits and some configuration offers, for a profile a
    /// consumer uses.
    fn profile_approvals(
        &mut self,
        pi: usize,
        profile: &str,
        list: &'a [ast::Selector],
        owner: &str,
    ) {
        let m = self.model;
        let used = m.consumers.iter().any(|c| c.profile == pi);
        let mut allowed = BitSet::new(self.space.n);
        for sel in &m.profiles[pi].allow {
            let s = match sel {
                crate::model::Selector::Tool(x) => ast_free_tool(self.table, x),
                crate::model::Selector::Group(g) => {
                    let mut s = BitSet::new(self.space.n);
                    for &i in &self.members[*g] {
                        s.insert(i);
                    }
                    Some(s)
                }
                crate::model::Selector::Prefix(x) => {
                    let mut s = BitSet::new(self.space.n);
                    for (i, t) in m.tools.iter().enumerate() {
                        if t.name.starts_with(x.as_str()) {
                            s.insert(i);
                        }
                    }
                    Some(s)
                }
            };
            if let Some(s) = s {
                allowed.union_with(&s);
            }
        }
        for sel in list {
            let Some(set) = self.selector_set(sel) else {
                continue;
            };
            let (name, what) = selector_words(sel);
            let why = if !used {
                format!("no consumer uses profile `{}`", esc(profile))
            } else {
                let o = &self.space.offerable_anywhere;
                let offered = (0..o.len()).any(|w| word(&set, w) & word(&allowed, w) & o[w] != 0);
                if offered {
                    continue;
                }
                format!(
                    "no configuration offers {what} to a consumer of profile `{}`: a refusing gate stops it first",
                    esc(profile)
                )
            };
            self.push(
                name.span,
                format!("needing approval for {what}"),
                owner.to_string(),
                why,
            );
        }
    }

    /// The registered tools an `allow` entry selects; `None` when it names
    /// nothing registered (reported by another code).
    fn selector_set(&mut self, sel: &'a ast::Selector) -> Option<BitSet> {
        let n = self.space.n;
        let mut s = BitSet::new(n);
        let group = |g: &str, s: &mut BitSet| -> Option<()> {
            let gi = *self.group_index.get(g)?;
            for &i in &self.members[gi] {
                s.insert(i);
            }
            (!self.members[gi].is_empty()).then_some(())
        };
        match sel {
            ast::Selector::Tool(x) => s.insert(self.table.tool_id(&x.text)? as usize),
            ast::Selector::Group(x) => group(&x.text, &mut s)?,
            ast::Selector::Server(x) => group(&format!("mcp_{}", x.text), &mut s)?,
            ast::Selector::Prefix(x) => {
                let m = self.model;
                let set = self.prefixes.entry(x.text.as_str()).or_insert_with(|| {
                    let mut set = BitSet::new(n);
                    for (i, t) in m.tools.iter().enumerate() {
                        if t.name.starts_with(&x.text) {
                            set.insert(i);
                        }
                    }
                    set
                });
                if set.is_empty() {
                    return None;
                }
                s = set.clone();
            }
        }
        Some(s)
    }

    fn provider(&mut self, b: &Block<ast::ProviderProp>) {
        let m = self.model;
        let Some(pi) = m.providers.iter().position(|p| p.name == b.name.text) else {
            return;
        };
        let owner = format!("provider `{}`", esc(&b.name.text));
        let applied: &[usize] = &m.providers[pi].fallback;
        let Some(list) = b.props.iter().find_map(|p| match &p.value {
            ast::ProviderProp::Fallback(l) => Some(l),
            _ => None,
        }) else {
            return;
        };
        for n in unique(list) {
            let Some(f) = m.providers.iter().position(|p| p.name == n.text) else {
                continue;
            };
            if f == pi || !applied.contains(&f) || self.space.fallbacks.contains(&(pi, f)) {
                continue;
            }
            let why = if !self.space.used_providers.contains(&pi) {
                format!("no configuration uses provider `{}`", esc(&b.name.text))
            } else {
                "without it, every configuration using the provider keeps a ceiling that refuses the same tools"
                    .to_string()
            };
            self.push(
                n.span,
                format!("fallback `{}`", esc(&n.text)),
                owner.clone(),
                why,
            );
        }
    }
}
