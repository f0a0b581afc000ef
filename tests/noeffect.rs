//! The no-effect lint (TG3009) is exact: on random policies, every statement
//! of the kinds it covers is cut out of the policy text, the policy is
//! compiled again, and the naive reference interpreter decides the whole
//! space before and after. A statement is reported (by TG3009, or by the
//! older code that owns the case: TG3001, TG3002, TG1009, TG2004, TG3005,
//! TG3006) exactly when no decision changed.
//!
//! The space is the lint's: every configuration, role, consumer (none, an
//! unprofiled one, each bound one) and mode (the policy's, observe,
//! enforce), for a new run and for a run started with each skill besides
//! the configuration's own (`run start --skill`), every registered tool.

use proptest::prelude::*;
use toolgate_compiler::diagnostics::Problem;
use toolgate_compiler::model::Model;
use toolgate_compiler::project::Project;
use toolgate_compiler::source::{FileId, Span};
use toolgate_compiler::syntax::ast::{self, Statement};
use toolgate_compiler::syntax::parse;
use toolgate_reference::*;
use toolgate_runtime::{AllowList, Exclusions, Role, RunState};

#[allow(dead_code)]
mod generator;
use generator::*;

/// Codes that report a statement without effect.
const NO_EFFECT: [&str; 7] = [
    "TG3009", "TG3001", "TG3002", "TG1009", "TG2004", "TG3005", "TG3006",
];

/// The policy is the second file after the manifest and the registry.
const POLICY: FileId = FileId(2);

fn check(reg: &str, pol: &str) -> (Option<Model>, Vec<Problem>) {
    let c = Project::from_texts(("registry.toml", reg), &[("policy0.tg", pol)]).check();
    (c.model, c.problems)
}

/// Every statement the lint covers, as the span a finding points at and the
/// range of text that removing it cuts (a list entry takes its keyword and
/// its comma along).
fn statements(pol: &str) -> Vec<(Span, std::ops::Range<usize>)> {
    let file = parse::parse_policy(POLICY, pol).expect("generated policy parses");
    let mut out = Vec::new();
    let entry = |n: &ast::Name, out: &mut Vec<_>| {
        let (mut a, mut b) = (n.span.start as usize, n.span.end as usize);
        for kw in ["group ", "server "] {
            if pol[..a].ends_with(kw) {
                a -= kw.len();
            }
        }
        if pol[b..].starts_with('*') {
            b += 1;
        }
        if pol[b..].starts_with(',') {
            b += 1;
        }
        out.push((n.span, a..b));
    };
    for st in &file.statements {
        match st {
            Statement::Tool(b) => out.extend(b.props.iter().map(|p| (p.span, p.span.range()))),
            Statement::Group(b) => out.extend(b.props.iter().map(|p| (p.span, p.span.range()))),
            Statement::Configuration(b) => {
                for p in &b.props {
                    if let ast::ConfigurationProp::Exclude(l) = &p.value {
                        l.iter().for_each(|n| entry(n, &mut out));
                    }
                }
            }
            Statement::Skill(b) => {
                for p in &b.props {
                    let ast::SkillProp::Tools(l) = &p.value;
                    l.iter().for_each(|n| entry(n, &mut out));
                }
            }
            Statement::Profile(b) => {
                for p in &b.props {
                    // (The generator writes no `needs-approval`.)
                    let ast::ProfileProp::Allow(l) = &p.value else {
                        continue;
                    };
                    for s in l {
                        match s {
                            ast::Selector::Tool(n)
                            | ast::Selector::Group(n)
                            | ast::Selector::Server(n)
                            | ast::Selector::Prefix(n) => entry(n, &mut out),
                        }
                    }
                }
            }
            Statement::Provider(b) => {
                for p in &b.props {
                    if let ast::ProviderProp::Fallback(l) = &p.value {
                        l.iter().for_each(|n| entry(n, &mut out));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Every decision of the space, in a fixed order.
fn space(m: &Model, consumers: usize) -> Vec<RefDecision> {
    let mut who: Vec<Option<String>> = vec![None, Some("stranger".into())];
    who.extend((0..consumers).map(|i| Some(format!("k{i}"))));
    let mut out = Vec::new();
    for cfg in &m.configurations {
        // A new run, then a run started with each skill.
        let mut runs: Vec<Option<RunState>> = vec![None];
        for extra in 0..m.skills.len() {
            let mut skills = cfg.skills.clone();
            if !skills.contains(&extra) {
                skills.push(extra);
            }
            let declared: Vec<&Vec<String>> = skills
                .iter()
                .filter_map(|&s| m.skills[s].tools.as_ref())
                .collect();
            runs.push(Some(RunState {
                allowed: if declared.is_empty() {
                    AllowList::Unrestricted
                } else {
                    AllowList::Only(declared.into_iter().flatten().cloned().collect())
                },
                excluded: Exclusions::Names(cfg.excluded.clone()),
            }));
        }
        for run in &runs {
            for role in Role::ALL {
                for consumer in &who {
                    for enforcement in [None, Some("observe"), Some("enforce")] {
                        let c = RefCtx {
                            config: cfg.name.clone(),
                            role,
                            consumer: consumer.clone(),
                            enforcement: enforcement.map(str::to_string),
                            run: run.clone(),
                        };
                        for t in &m.tools {
                            out.push(reference_decide(m, &c, &t.name));
                        }
                    }
                }
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn reported_exactly_when_removal_changes_no_decision(
        w in world().prop_filter("small enough to decide the space per statement", |w| w.tools.len() <= 24)
    ) {
        let (reg, pol) = render(&w);
        let (m, problems) = check(&reg, &pol);
        let m = m.expect("generated policy compiles");
        let before = space(&m, w.consumers.len());
        for (span, cut) in statements(&pol) {
            let edited = format!("{}{}", &pol[..cut.start], &pol[cut.end..]);
            let (m2, p2) = check(&reg, &edited);
            let Some(m2) = m2 else {
                // Only an edit that leaves the policy invalid (none expected).
                prop_assert!(false, "removing {:?} broke the policy:\n{}\n{:?}", &pol[cut.clone()], edited, p2);
                unreachable!()
            };
            let unchanged = space(&m2, w.consumers.len()) == before;
            let reported: Vec<&str> = problems
                .iter()
                .filter(|p| p.span() == span && NO_EFFECT.contains(&p.code()))
                .map(|p| p.code())
                .collect();
            prop_assert_eq!(
                !reported.is_empty(),
                unchanged,
                "`{}` at {:?}: reported {:?}, decisions unchanged without it: {}\n{}\n{}",
                &pol[span.range()], span, reported, unchanged, reg, pol
            );
        }
    }
}

#[test]
fn excluding_a_tool_of_a_group_disabled_for_everyone_is_reported() {
    let reg = r#"
[[tool]]
name = "flush_cache"
group = "system"
[[tool]]
name = "read_page"
group = "content"
"#;
    let pol =
        "group system { disabled }\nconfiguration chat { exclude [flush_cache, read_page] }\n";
    let (m, problems) = check(reg, pol);
    assert!(m.is_some());
    let found: Vec<(String, String)> = problems
        .iter()
        .map(|p| {
            let d = p.diagnostic();
            (
                d.code.to_string(),
                format!("{} | {}", d.message, d.help.unwrap_or_default()),
            )
        })
        .collect();
    assert_eq!(
        found,
        vec![(
            "TG3009".to_string(),
            "excluding `flush_cache` in configuration `chat` has no effect | `flush_cache` is off: its group `system` is disabled; no decision of any configuration, role, consumer, mode or run changes without it: remove it, or change it to say what you meant".to_string()
        )]
    );
    let span = problems[0].span();
    assert_eq!(&pol[span.range()], "flush_cache");
    // Kept on purpose: the comment on the line above silences it.
    let kept = format!("group system {{ disabled }}\n# toolgate: allow TG3009 -- kept until the cache is retired\n{}", &pol[26..]);
    assert_eq!(check(reg, &kept).1, vec![]);
}
