//! Property tests on random registries and policies: the compiled table
//! agrees with the naive reference interpreter on every tool and context;
//! `unavailable` is exactly the refusals of `decide`; exclusions and resumes
//! only narrow; tables are deterministic and survive a round trip.

use proptest::prelude::*;
use toolgate_compiler::lower;
use toolgate_runtime::{AllowList, Exclusions, Role, RunState, Table};
use toolgate_tests::*;

const CLASSES: [&str; 6] = [
    "publicContent",
    "editorContent",
    "sourceCode",
    "internalConfiguration",
    "systemDiagnostics",
    "secretAdjacent",
];
const ZONES: [&str; 4] = ["local", "privateHosted", "externalEu", "externalGlobal"];
const GROUPS: [&str; 4] = ["content", "editing", "code", "system"];

#[derive(Debug, Clone)]
struct GenTool {
    remote: Option<u8>,
    group: usize,
    enabled: Option<bool>,
    admin_only: Option<bool>,
    class: Option<usize>,
}

/// (provider, groups, excluded tools, a stale name too?, skills)
type GenConfig = (
    Option<usize>,
    Option<Vec<usize>>,
    Vec<usize>,
    bool,
    Vec<usize>,
);

#[derive(Debug, Clone)]
struct World {
    tools: Vec<GenTool>,
    /// (state, default class) per builtin group.
    groups: Vec<(Option<bool>, Option<usize>)>,
    /// Per tool: (state, admin-only, class) overrides.
    overrides: Vec<(Option<bool>, Option<bool>, Option<usize>)>,
    /// (zone or none, fallbacks)
    providers: Vec<(Option<usize>, Vec<usize>)>,
    /// None: declares nothing.
    skills: Vec<Option<Vec<usize>>>,
    /// (provider, groups, excluded tools, stale name?, skills)
    configs: Vec<GenConfig>,
    /// (tools, groups, remote server prefixes)
    profiles: Vec<(Vec<usize>, Vec<usize>, Vec<u8>)>,
    consumers: Vec<usize>,
    observe: bool,
    visibility: u8,
    unprofiled_refused: bool,
}

fn tool_name(i: usize, t: &GenTool) -> String {
    match t.remote {
        Some(s) => format!("mcp_srv{s}_tool{i}"),
        None if i == 0 => "load_skill".to_string(),
        None => format!("tool{i}"),
    }
}

fn group_name(t: &GenTool) -> String {
    match t.remote {
        Some(s) => format!("mcp_srv{s}"),
        None => GROUPS[t.group].to_string(),
    }
}

fn opt<T: std::fmt::Debug + Clone + 'static, S: Strategy<Value = T> + Clone>(
    s: S,
) -> impl Strategy<Value = Option<T>> + Clone {
    prop::option::of(s)
}

fn gen_tool() -> impl Strategy<Value = GenTool> {
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

fn world() -> impl Strategy<Value = World> {
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
            (any::<bool>(), 0u8..3, any::<bool>()),
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
                    (observe, visibility, unprofiled_refused),
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
                    }
                },
            )
    })
}

/// All group names in registry order (builtin groups and remote servers).
fn groups_of(w: &World) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for t in &w.tools {
        let g = group_name(t);
        if !out.contains(&g) {
            out.push(g);
        }
    }
    out
}

fn render(w: &World) -> (String, String) {
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

fn contexts(w: &World, n_configs: usize) -> Vec<RefCtx> {
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

fn runs(names: &[String]) -> Vec<RunState> {
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

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn table_equals_reference_everywhere(w in world()) {
        let (reg, pol) = render(&w);
        let m = model(&reg, &[&pol]);
        let bytes = lower::compile(&m);
        // Deterministic: the same input gives the same bytes.
        prop_assert_eq!(&bytes, &lower::compile(&model(&reg, &[&pol])));
        let t = Table::load(&bytes).expect("loads");
        let names: Vec<String> = m.tools.iter().map(|t| t.name.clone()).collect();
        let run_states = runs(&names);
        for (k, mut c) in contexts(&w, m.configurations.len()).into_iter().enumerate() {
            // Cycle run states over contexts to keep the case count bounded.
            if k % 2 == 1 {
                c.run = Some(run_states[(k / 2) % run_states.len()].clone());
            }
            let rt = runtime_ctx(&t, &c);
            for name in names.iter().map(String::as_str).chain(["retired_zzz_tool", "nope"]) {
                let d = rt.decide(name);
                let r = reference_decide(&m, &c, name);
                prop_assert_eq!((d.allowed, d.reason.map(|r| r.code()), d.observed_only), r, "{} in {:?}\n{}", name, c, pol);
            }
            let un: Vec<(String, &str)> = rt.unavailable().iter().map(|u| (u.tool.to_string(), u.reason.code())).collect();
            prop_assert_eq!(&un, &reference_unavailable(&m, &c));
            // unavailable == the refusals of decide over all tools (visible ones).
            let from_decide: Vec<(String, &str)> = rt
                .decisions()
                .filter(|d| !d.allowed)
                .filter(|d| rt.remote_names_visible() || !t.spec().tools[t.tool_id(d.tool).unwrap() as usize].remote)
                .map(|d| (d.tool.to_string(), d.reason.unwrap().code()))
                .collect();
            prop_assert_eq!(&un, &from_decide);
            // No leak across gates: a refusal before the trust-zone gate carries
            // no zone facts, and its typed refusal names no zone or ceiling.
            for d in rt.decisions() {
                if !d.allowed && d.reason != Some(toolgate_runtime::Reason::TrustZone) {
                    prop_assert_eq!((d.class, d.zone, d.ceiling), (None, None, None));
                    let r = serde_json::to_string(&rt.refusal(&d).unwrap()).unwrap().to_lowercase();
                    prop_assert!(!r.contains("zone") && !r.contains("ceiling"), "{}", r);
                }
            }
            // offered == the allowed decisions.
            let offered: Vec<&str> = rt.offered();
            let allowed: Vec<&str> = rt.decisions().filter(|d| d.allowed).map(|d| d.tool).collect();
            prop_assert_eq!(offered, allowed);
        }
    }

    #[test]
    fn adding_an_exclusion_never_adds_a_tool(w in world(), pick in 0usize..1000) {
        let (reg, pol) = render(&w);
        let m = model(&reg, &[&pol]);
        let t = Table::load(&lower::compile(&m)).unwrap();
        let victim = &m.tools[pick % m.tools.len()].name;
        let narrowed = format!("{pol}\nconfiguration extra {{ exclude [{victim}] }}\nconfiguration base {{ }}\n");
        let t2 = table(&reg, &[&narrowed]);
        let _ = t;
        for role in Role::ALL {
            let before: Vec<&str> = t2.context("base").unwrap().role(role).offered();
            let after: Vec<&str> = t2.context("extra").unwrap().role(role).offered();
            prop_assert!(after.iter().all(|x| before.contains(x)));
            prop_assert!(!after.contains(&victim.as_str()));
        }
    }

    #[test]
    fn a_resume_never_widens(w in world(), a in 0usize..6, b in 0usize..6) {
        let (reg, pol) = render(&w);
        let m = model(&reg, &[&pol]);
        let t = Table::load(&lower::compile(&m)).unwrap();
        let names: Vec<String> = m.tools.iter().map(|t| t.name.clone()).collect();
        let rs = runs(&names);
        let (stored, live) = (&rs[a], &rs[b]);
        let resumed = RunState::from_json(&stored.to_json()).resume(live);
        for c in 0..m.configurations.len() {
            let ctx = |r: &RunState| t.context(&format!("c{c}")).unwrap().role(Role::Admin).run(r).offered();
            let (s, l, r) = (ctx(stored), ctx(live), ctx(&resumed));
            prop_assert!(r.iter().all(|x| s.contains(x) && l.contains(x)), "{:?} {:?} -> {:?}", stored, live, resumed);
        }
    }
}

/// The same policy with random layout: spaces become runs of spaces, line
/// breaks, or comments (never inside a token; generated names have no spaces).
fn messy(policy: &str, choices: &[u8]) -> String {
    let mut out = String::with_capacity(policy.len() * 2);
    let mut k = 0;
    for ch in policy.chars() {
        if ch == ' ' || ch == '\n' {
            let c = choices.get(k % choices.len().max(1)).copied().unwrap_or(0);
            k += 1;
            out.push_str(match c % 6 {
                0 => " ",
                1 => "   ",
                2 => "\n",
                3 => " # a comment, with [brackets] and \"quotes\"\n",
                4 => "\n\n\n",
                _ => "\t",
            });
        } else {
            out.push(ch);
        }
    }
    out
}

fn spec_without_digests(registry: &str, policy: &str) -> toolgate_runtime::TableSpec {
    let mut s = lower::lower(&model(registry, &[policy]));
    s.policy_digests.clear();
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn formatting_never_changes_meaning_and_is_idempotent(w in world(), choices in prop::collection::vec(any::<u8>(), 1..64)) {
        let (reg, pol) = render(&w);
        let src = messy(&pol, &choices);
        let once = toolgate_compiler::format::format(&src).expect("formats");
        let twice = toolgate_compiler::format::format(&once).expect("formats again");
        prop_assert_eq!(&once, &twice, "fmt(fmt(x)) != fmt(x) for\n{}", src);
        prop_assert_eq!(spec_without_digests(&reg, &src), spec_without_digests(&reg, &once));
        // Every comment survives.
        prop_assert_eq!(src.matches("# a comment").count(), once.matches("# a comment").count());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// The gates over live metadata (a tool registered after compilation)
    /// agree with the table's for a tool of the same metadata under a new
    /// name, wherever the name itself plays no part (exclusions, allow-lists
    /// and profiles name tools; a new name is in none of them).
    #[test]
    fn live_tools_go_through_the_same_gates(w in world()) {
        let (reg, pol) = render(&w);
        let m = model(&reg, &[&pol]);
        let t = Table::load(&lower::compile(&m)).unwrap();
        let spec = t.spec();
        for c in 0..m.configurations.len() {
            let cfg = &spec.configurations[c];
            let allow_listed = cfg.skills.iter().any(|&s| spec.skills[s as usize].tools.is_some());
            for role in Role::ALL {
                for mode in [None, Some("observe"), Some("enforce")] {
                    let ctx = t.context(&cfg.name).unwrap().role(role).enforcement(mode);
                    for (i, tool) in spec.tools.iter().enumerate() {
                        let d = ctx.decide_id(i as u32);
                        let named = matches!(d.reason, Some(toolgate_runtime::Reason::ConfigurationExcluded));
                        if named || allow_listed || tool.name == spec.skill_loader {
                            continue;
                        }
                        let live = toolgate_runtime::LiveTool {
                            name: format!("live_only_{i}"),
                            group: spec.groups[tool.group as usize].name.clone(),
                            remote: tool.remote,
                            enabled: tool.enabled,
                            admin_only: tool.admin_only,
                            class: Some(spec.classes[tool.class as usize].clone()),
                        };
                        let l = ctx.decide_live(&live);
                        prop_assert_eq!((l.allowed, l.reason, l.observed_only), (d.allowed, d.reason, d.observed_only), "{} as live in {}", tool.name, cfg.name);
                    }
                }
            }
        }
    }
}
