//! The random registries and policies of the property tests, shared with
//! the conformance corpus generator (tests/conformance.rs): a `World`, its
//! rendering as registry TOML and policy text, and the contexts and run
//! states to try on it.

use proptest::prelude::*;
use toolgate_reference::RefCtx;
use toolgate_runtime::{AllowList, Exclusions, Role, RunState};

/// The default ladder, from the one place it is defined.
pub const CLASSES: [&str; 6] = toolgate_compiler::model::DEFAULT_CLASSES;
pub const ZONES: [&str; 4] = ["local", "privateHosted", "externalEu", "externalGlobal"];
pub const GROUPS: [&str; 4] = ["content", "editing", "code", "system"];

#[derive(Debug, Clone)]
pub struct GenTool {
    pub remote: Option<u8>,
    pub group: usize,
    pub enabled: Option<bool>,
    pub admin_only: Option<bool>,
    pub class: Option<usize>,
}

/// (provider, groups, excluded tools, a stale name too?, skills)
pub type GenConfig = (
    Option<usize>,
    Option<Vec<usize>>,
    Vec<usize>,
    bool,
    Vec<usize>,
);

#[derive(Debug, Clone)]
pub struct World {
    pub tools: Vec<GenTool>,
    /// (state, default class) per builtin group.
    pub groups: Vec<(Option<bool>, Option<usize>)>,
    /// Per tool: (state, admin-only, class) overrides.
    pub overrides: Vec<(Option<bool>, Option<bool>, Option<usize>)>,
    /// (zone or none, fallbacks)
    pub providers: Vec<(Option<usize>, Vec<usize>)>,
    /// None: declares nothing.
    pub skills: Vec<Option<Vec<usize>>>,
    /// (provider, groups, excluded tools, stale name?, skills)
    pub configs: Vec<GenConfig>,
    /// (tools, groups, remote server prefixes)
    pub profiles: Vec<(Vec<usize>, Vec<usize>, Vec<u8>)>,
    pub consumers: Vec<usize>,
    pub observe: bool,
    pub visibility: u8,
    pub unprofiled_refused: bool,
    pub unknown_admitted: bool,
}

pub fn tool_name(i: usize, t: &GenTool) -> String {
    match t.remote {
        Some(s) => format!("mcp_srv{s}_tool{i}"),
        None if i == 0 => "load_skill".to_string(),
        None => format!("tool{i}"),
    }
}

pub fn group_name(t: &GenTool) -> String {
    match t.remote {
        Some(s) => format!("mcp_srv{s}"),
        None => GROUPS[t.group].to_string(),
    }
}

pub fn opt<T: std::fmt::Debug + Clone + 'static, S: Strategy<Value = T> + Clone>(
    s: S,
) -> impl Strategy<Value = Option<T>> + Clone {
    prop::option::of(s)
}

pub fn gen_tool() -> impl Strategy<Value = GenTool> {
    (
        opt(0u8..2),
        0usize..4,
        opt(any::<bool>()),
        opt(any::<bool>()),
        opt(0usize..6),
    )
        .prop_map(|(remote, group, enabled, admin_only, class)| GenTool {
            // Tool 0 is the skill loader and stays builtin (fixed below).
            remote,
            group,
            enabled,
            admin_only,
            class,
        })
}

pub fn world() -> impl Strategy<Value = World> {
    (1usize..140).prop_flat_map(move |n| {
        (
            prop::collection::vec(gen_tool(), n),
            prop::collection::vec((opt(any::<bool>()), opt(0usize..6)), 4),
            prop::collection::vec((opt(any::<bool>()), opt(any::<bool>()), opt(0usize..6)), n),
            prop::collection::vec((opt(0usize..4), prop::collection::vec(0usize..3, 0..3)), 3),
            prop::collection::vec(opt(prop::collection::vec(0..n, 0..6)), 3),
            prop::collection::vec(
                (
                    opt(0usize..3),
                    opt(prop::collection::vec(0usize..6, 1..4)),
                    prop::collection::vec(0..n, 0..5),
                    any::<bool>(),
                    prop::collection::vec(0usize..3, 0..3),
                ),
                1..4,
            ),
            prop::collection::vec(
                (
                    prop::collection::vec(0..n, 0..5),
                    prop::collection::vec(0usize..4, 0..2),
                    prop::collection::vec(0u8..2, 0..2),
                ),
                1..3,
            ),
            prop::collection::vec(0usize..2, 0..3),
            (any::<bool>(), 0u8..3, any::<bool>(), any::<bool>()),
        )
            .prop_map(
                |(
                    mut tools,
                    groups,
                    overrides,
                    providers,
                    skills,
                    configs,
                    profiles,
                    consumers,
                    (observe, visibility, unprofiled_refused, unknown_admitted),
                )| {
                    tools[0].remote = None;
                    World {
                        tools,
                        groups,
                        overrides,
                        providers,
                        skills,
                        configs,
                        profiles,
                        consumers,
                        observe,
                        visibility,
                        unprofiled_refused,
                        unknown_admitted,
                    }
                },
            )
    })
}

/// All group names in registry order (builtin groups and remote servers).
pub fn groups_of(w: &World) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in &w.tools {
        let g = group_name(t);
        if !out.contains(&g) {
            out.push(g);
        }
    }
    out
}

pub fn render(w: &World) -> (String, String) {
    let mut reg = String::new();
    for (i, t) in w.tools.iter().enumerate() {
        reg.push_str(&format!(
            "[[tool]]\nname = \"{}\"\ngroup = \"{}\"\n",
            tool_name(i, t),
            group_name(t)
        ));
        if let Some(s) = t.remote {
            reg.push_str(&format!("server = \"srv{s}\"\n"));
        }
        if let Some(e) = t.enabled {
            reg.push_str(&format!("enabled = {e}\n"));
        }
        if let Some(a) = t.admin_only {
            reg.push_str(&format!("admin_only = {a}\n"));
        }
        if let Some(c) = t.class {
            reg.push_str(&format!("class = \"{}\"\n", CLASSES[c]));
        }
    }
    let present = groups_of(w);
    let mut p = String::new();
    p.push_str(if w.observe {
        "enforcement observe\n"
    } else {
        "enforcement enforce\n"
    });
    p.push_str(
        [
            "remote-tools visible-to admins\n",
            "remote-tools visible-to everyone\n",
            "remote-tools visible-to nobody\n",
        ][w.visibility as usize],
    );
    if w.unprofiled_refused {
        p.push_str("consumers-without-profile refused\n");
    }
    if w.unknown_admitted {
        p.push_str("unknown-consumers admitted\n");
    }
    for (gi, (state, class)) in w.groups.iter().enumerate() {
        if !present.iter().any(|g| g == GROUPS[gi]) || (state.is_none() && class.is_none()) {
            continue;
        }
        p.push_str(&format!("group {} {{ ", GROUPS[gi]));
        if let Some(s) = state {
            p.push_str(if *s { "enabled " } else { "disabled " });
        }
        if let Some(c) = class {
            p.push_str(&format!("class {} ", CLASSES[*c]));
        }
        p.push_str("}\n");
    }
    for (i, (state, admin, class)) in w.overrides.iter().enumerate() {
        if state.is_none() && admin.is_none() && class.is_none() {
            continue;
        }
        p.push_str(&format!("tool {} {{ ", tool_name(i, &w.tools[i])));
        if let Some(s) = state {
            p.push_str(if *s { "enabled " } else { "disabled " });
        }
        if let Some(a) = admin {
            p.push_str(if *a { "admin-only " } else { "not admin-only " });
        }
        if let Some(c) = class {
            p.push_str(&format!("class {} ", CLASSES[*c]));
        }
        p.push_str("}\n");
    }
    for (i, (zone, fb)) in w.providers.iter().enumerate() {
        p.push_str(&format!("provider p{i} {{ "));
        if let Some(z) = zone {
            p.push_str(&format!("zone {} ", ZONES[*z]));
        }
        let mut fbs: Vec<String> = fb
            .iter()
            .filter(|&&f| f != i)
            .map(|f| format!("p{f}"))
            .collect();
        fbs.dedup();
        if !fbs.is_empty() {
            p.push_str(&format!("fallback [{}] ", fbs.join(", ")));
        }
        p.push_str("}\n");
    }
    let names: Vec<String> = w
        .tools
        .iter()
        .enumerate()
        .map(|(i, t)| tool_name(i, t))
        .collect();
    let uniq = |v: &[usize]| {
        let mut v = v.to_vec();
        v.sort();
        v.dedup();
        v
    };
    for (i, s) in w.skills.iter().enumerate() {
        match s {
            None => p.push_str(&format!("skill s{i} {{ }}\n")),
            Some(ts) => {
                let list: Vec<&str> = uniq(ts).iter().map(|&t| names[t].as_str()).collect();
                p.push_str(&format!("skill s{i} {{ tools [{}] }}\n", list.join(", ")));
            }
        }
    }
    for (i, (prov, groups, excl, stale, skills)) in w.configs.iter().enumerate() {
        p.push_str(&format!("configuration c{i} {{ "));
        if let Some(pr) = prov {
            p.push_str(&format!("provider p{pr} "));
        }
        if let Some(gs) = groups {
            let list: Vec<String> = uniq(gs)
                .iter()
                .filter_map(|&g| present.get(g % present.len().max(1)).cloned())
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            p.push_str(&format!("groups [{}] ", list.join(", ")));
        }
        let mut ex: Vec<String> = uniq(excl).iter().map(|&t| names[t].clone()).collect();
        if *stale {
            ex.push("retired_zzz_tool".into());
        }
        if !ex.is_empty() {
            p.push_str(&format!("exclude [{}] ", ex.join(", ")));
        }
        let sk: Vec<String> = uniq(skills).iter().map(|s| format!("s{s}")).collect();
        if !sk.is_empty() {
            p.push_str(&format!("skills [{}] ", sk.join(", ")));
        }
        p.push_str("}\n");
    }
    for (i, (tools, groups, servers)) in w.profiles.iter().enumerate() {
        let mut sel: Vec<String> = uniq(tools).iter().map(|&t| names[t].clone()).collect();
        for g in uniq(groups) {
            if let Some(name) = present.get(g % present.len()) {
                sel.push(format!("group {name}"));
            }
        }
        for s in servers {
            if w.tools.iter().any(|t| t.remote == Some(*s)) {
                sel.push(format!("mcp_srv{s}_*"));
            }
        }
        sel.dedup();
        p.push_str(&format!("profile pr{i} {{ allow [{}] }}\n", sel.join(", ")));
    }
    for (i, pr) in w.consumers.iter().enumerate() {
        p.push_str(&format!(
            "consumer k{i} {{ profile pr{} }}\n",
            pr % w.profiles.len()
        ));
    }
    (reg, p)
}

pub fn contexts(w: &World, n_configs: usize) -> Vec<RefCtx> {
    let mut out = Vec::new();
    let mut consumers: Vec<Option<String>> = vec![None, Some("stranger".into())];
    consumers.extend((0..w.consumers.len()).map(|i| Some(format!("k{i}"))));
    for c in 0..n_configs {
        for role in Role::ALL {
            for consumer in &consumers {
                for enforcement in [None, Some("observe"), Some(" Enforce"), Some("OBSERVE ")] {
                    out.push(RefCtx {
                        config: format!("c{c}"),
                        role,
                        consumer: consumer.clone(),
                        enforcement: enforcement.map(str::to_string),
                        run: None,
                    });
                }
            }
        }
    }
    out
}

pub fn runs(names: &[String]) -> Vec<RunState> {
    let some: Vec<String> = names.iter().step_by(2).cloned().collect();
    vec![
        RunState::default(),
        RunState {
            allowed: AllowList::Only(some.clone()),
            excluded: Exclusions::Names(vec![]),
        },
        RunState {
            allowed: AllowList::Unrestricted,
            excluded: Exclusions::Names(names.iter().skip(1).step_by(3).cloned().collect()),
        },
        RunState {
            allowed: AllowList::Only(vec![]),
            excluded: Exclusions::Names(vec!["load_skill".into()]),
        },
        RunState {
            allowed: AllowList::Unreadable,
            excluded: Exclusions::Names(vec![]),
        },
        RunState {
            allowed: AllowList::Unrestricted,
            excluded: Exclusions::Unreadable,
        },
    ]
}
