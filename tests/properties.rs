//! Property tests on random registries and policies: the compiled table
//! agrees with the naive reference interpreter on every tool and context;
//! `unavailable` is exactly the refusals of `decide`; exclusions and resumes
//! only narrow; tables are deterministic and survive a round trip.

use proptest::prelude::*;
use toolgate_compiler::lower;
use toolgate_reference::*;
use toolgate_runtime::{Role, RunState, Table};

#[allow(dead_code)]
mod generator;
use generator::*;

/// A generated world rendered (registry and policy), modelled and compiled.
fn compiled(w: &World) -> (String, String, toolgate_compiler::model::Model, Table) {
    let (reg, pol) = render(w);
    let m = model(&reg, &[&pol]);
    let t = Table::load(&lower::compile(&m)).unwrap();
    (reg, pol, m, t)
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
            let asked: Vec<&str> = names.iter().map(String::as_str).chain(["retired_zzz_tool", "nope"]).collect();
            for &name in &asked {
                let d = rt.decide(name);
                let r = reference_decide(&m, &c, name);
                prop_assert_eq!((d.allowed, d.reason.map(|r| r.code()), d.observed_only), r, "{} in {:?}\n{}", name, c, pol);
            }
            // All at once: the same decisions as one by one.
            let one_by_one: Vec<_> = asked.iter().map(|n| rt.decide(n)).collect();
            prop_assert_eq!(rt.decide_many(&asked), one_by_one);
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
            // The id forms (hosts' arrays) are the same list by position.
            let by_id: Vec<(String, &str)> = rt.unavailable_ids().iter().map(|&(i, r)| (names[i as usize].clone(), r.code())).collect();
            prop_assert_eq!(&un, &by_id);
            let mut into = vec![u32::MAX; names.len() + 1];
            let n = rt.unavailable_ids_into(&mut into, |i, r| i << 3 | u32::from(r.number())).expect("room for every tool");
            let packed: Vec<(String, &str)> = into[..n].iter().map(|&v| (names[(v >> 3) as usize].clone(), toolgate_runtime::Reason::from_number((v & 7) as u8).unwrap().code())).collect();
            prop_assert_eq!(&un, &packed);
            prop_assert!(into[n..].iter().all(|&v| v == u32::MAX), "nothing written past the list");
            // A buffer short of the tool count is refused whole, never cut.
            let mut short = vec![u32::MAX; names.len() - 1];
            prop_assert_eq!(rt.unavailable_ids_into(&mut short, |i, _| i), None);
            prop_assert!(short.iter().all(|&v| v == u32::MAX));
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
            prop_assert_eq!(&offered, &allowed);
            // The offered ids written into a host's buffer: the same set by
            // position, nothing past it, and a short buffer refused whole.
            let mut into = vec![u32::MAX; names.len() + 1];
            let n = rt.offered_ids_into(&mut into).expect("room for every tool");
            let by_id: Vec<&str> = into[..n].iter().map(|&i| names[i as usize].as_str()).collect();
            prop_assert_eq!(&by_id, &allowed);
            prop_assert!(into[n..].iter().all(|&v| v == u32::MAX), "nothing written past the offered set");
            let mut short = vec![u32::MAX; names.len() - 1];
            prop_assert_eq!(rt.offered_ids_into(&mut short), None);
            prop_assert!(short.iter().all(|&v| v == u32::MAX));
        }
    }

    #[test]
    fn adding_an_exclusion_never_adds_a_tool(w in world(), pick in 0usize..1000) {
        let (reg, pol, m, t) = compiled(&w);
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
        let (_, _, m, t) = compiled(&w);
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
        let once = toolgate_compiler::syntax::formatter::format(&src).expect("formats");
        let twice = toolgate_compiler::syntax::formatter::format(&once).expect("formats again");
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
        let (_, _, m, t) = compiled(&w);
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
                        let live = toolgate_reference::live_twin(spec, i);
                        let l = ctx.decide_live(&live);
                        prop_assert_eq!((l.allowed, l.reason, l.observed_only), (d.allowed, d.reason, d.observed_only), "{} as live in {}", tool.name, cfg.name);
                    }
                }
            }
        }
    }
}
