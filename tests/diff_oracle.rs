//! The semantic diff's shortcut (`Table::changed_words`, which
//! skips 64-tool words whose gate masks are equal) against a naive diff that
//! decides every tool at every point of the decision space, on random pairs
//! of policies over one registry.

use std::collections::BTreeSet;

use proptest::prelude::*;
use toolgate_review::diff::{diff, Point};
use toolgate_runtime::{Role, Table};

#[path = "generator.rs"]
#[allow(dead_code)]
mod generator;
use generator::*;

/// One edit of a policy, by index (taken modulo what exists).
#[derive(Debug, Clone)]
enum Edit {
    FlipObserve,
    DropExclusion(usize),
    AddExclusion(usize, usize),
    AllGroups(usize),
    FlipGroup(usize),
    FlipAdmin(usize),
    FlipEnabled(usize),
    Visibility(u8),
    FlipUnprofiled,
    DropConsumers,
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        Just(Edit::FlipObserve),
        any::<usize>().prop_map(Edit::DropExclusion),
        (any::<usize>(), any::<usize>()).prop_map(|(c, t)| Edit::AddExclusion(c, t)),
        any::<usize>().prop_map(Edit::AllGroups),
        any::<usize>().prop_map(Edit::FlipGroup),
        any::<usize>().prop_map(Edit::FlipAdmin),
        any::<usize>().prop_map(Edit::FlipEnabled),
        (0u8..3).prop_map(Edit::Visibility),
        Just(Edit::FlipUnprofiled),
        Just(Edit::DropConsumers),
    ]
}

fn apply(w: &World, edits: &[Edit]) -> World {
    let mut w = w.clone();
    let n = w.tools.len();
    let nc = w.configs.len().max(1);
    for e in edits {
        match *e {
            Edit::FlipObserve => w.observe = !w.observe,
            Edit::DropExclusion(c) => {
                if let Some(cfg) = w.configs.get_mut(c % nc) {
                    cfg.2.pop();
                }
            }
            Edit::AddExclusion(c, t) => {
                if let Some(cfg) = w.configs.get_mut(c % nc) {
                    if !cfg.2.contains(&(t % n)) {
                        cfg.2.push(t % n);
                    }
                }
            }
            Edit::AllGroups(c) => {
                if let Some(cfg) = w.configs.get_mut(c % nc) {
                    cfg.1 = None;
                }
            }
            Edit::FlipGroup(g) => {
                let len = w.groups.len();
                let g = &mut w.groups[g % len].0;
                *g = Some(!g.unwrap_or(true));
            }
            Edit::FlipAdmin(t) => {
                let o = &mut w.overrides[t % n].1;
                *o = Some(!o.unwrap_or(false));
            }
            Edit::FlipEnabled(t) => {
                let o = &mut w.overrides[t % n].0;
                *o = Some(!o.unwrap_or(true));
            }
            Edit::Visibility(v) => w.visibility = v,
            Edit::FlipUnprofiled => w.unprofiled_refused = !w.unprofiled_refused,
            Edit::DropConsumers => w.consumers.clear(),
        }
    }
    w
}

fn compile(w: &World) -> Option<Table> {
    let (reg, pol) = render(w);
    let m =
        toolgate_compiler::project::Project::from_texts(("registry.toml", &reg), &[("p.tg", &pol)])
            .check()
            .model?;
    toolgate_compiler::lower::table(&m).ok()
}

type Row = (
    String,
    String,
    (bool, Option<String>, bool),
    (bool, Option<String>, bool),
    Point,
);

/// Every decision of both tables at every point, kept where they differ.
fn naive(old: &Table, new: &Table) -> BTreeSet<Row> {
    let mut consumers: BTreeSet<String> = BTreeSet::new();
    for t in [old, new] {
        consumers.extend(t.spec().consumers.iter().map(|c| c.name.clone()));
    }
    let mut cs: Vec<Option<String>> = vec![None, Some("*".into())];
    cs.extend(consumers.into_iter().map(Some));
    let mut out = BTreeSet::new();
    let configs: Vec<&str> = new
        .configuration_names()
        .filter(|c| old.configuration_names().any(|o| o == *c))
        .collect();
    for cfg in configs {
        for role in Role::ALL {
            for c in &cs {
                for mode in [None, Some("observe"), Some("enforce")] {
                    fn ctx<'t>(
                        t: &'t Table,
                        cfg: &str,
                        role: Role,
                        c: Option<&str>,
                        mode: Option<&str>,
                    ) -> toolgate_runtime::Context<'t> {
                        t.context(cfg)
                            .unwrap()
                            .role(role)
                            .consumer(c)
                            .enforcement(mode)
                    }
                    let oc = ctx(old, cfg, role, c.as_deref(), mode);
                    let nc = ctx(new, cfg, role, c.as_deref(), mode);
                    for tool in &new.spec().tools {
                        let (o, n) = (oc.decide(&tool.name), nc.decide(&tool.name));
                        let v = |d: &toolgate_runtime::Decision<'_>| {
                            (
                                d.allowed,
                                d.reason.map(|r| r.code().to_string()),
                                d.observed_only,
                            )
                        };
                        if v(&o) != v(&n) {
                            out.insert((
                                cfg.to_string(),
                                tool.name.clone(),
                                v(&o),
                                v(&n),
                                Point {
                                    role,
                                    consumer: c.clone(),
                                    mode,
                                },
                            ));
                        }
                    }
                }
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    #[test]
    fn the_diff_equals_a_naive_diff_over_the_whole_decision_space(
        w in world(),
        edits in prop::collection::vec(edit(), 1..4),
    ) {
        let w2 = apply(&w, &edits);
        let (Some(old), Some(new)) = (compile(&w), compile(&w2)) else {
            return Ok(());
        };
        let d = diff(&old, &new);
        let mut got: BTreeSet<Row> = BTreeSet::new();
        for c in &d.changes {
            for p in &c.points {
                got.insert((
                    c.configuration.clone(),
                    c.tool.clone(),
                    (c.old.allowed, c.old.reason.map(|r| r.code().to_string()), c.old.observed_only),
                    (c.new.allowed, c.new.reason.map(|r| r.code().to_string()), c.new.observed_only),
                    p.clone(),
                ));
            }
        }
        let want = naive(&old, &new);
        prop_assert_eq!(got, want, "edits {:?}", edits);
    }
}
