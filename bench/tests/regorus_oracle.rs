//! The third oracle: generated registries and policies translated to Rego
//! and evaluated by Regorus must give the same allow/deny on every request
//! (every configuration, role, consumer and enforcement mode, every tool),
//! and the Rego set rule `unavailable` the exact set of refused tools.
//! Behind the `regorus` feature: `cargo test -p toolgate-bench --features regorus --release`.

use std::collections::BTreeSet;

use toolgate_bench::peers::check_agreement;
use toolgate_bench::rego::RegoWorld;
use toolgate_compiler::lower;
use toolgate_reference::model;
use toolgate_runtime::Table;

#[test]
fn rego_agrees_with_the_table_on_generated_workloads() {
    let (mut total, mut lists) = (0, 0);
    for seed in 0..24u64 {
        let tools = 40 + (seed as usize * 37) % 300;
        let configs = 3 + (seed as usize % 9);
        let w = toolgate_bench::generate(tools, configs, seed);
        let table = Table::load(&lower::compile(&model(&w.registry, &[&w.policy]))).unwrap();
        let spec = table.spec();
        let mut world = RegoWorld::new(spec);
        let mut refused: Vec<BTreeSet<String>> = Vec::new();
        let mut last = String::new();
        let n = check_agreement(
            &table,
            usize::MAX,
            |c, i| {
                let key = format!("{} {:?} {:?} {:?}", c.config, c.role, c.consumer, c.mode);
                if key != last {
                    // The set rule for this context, once, beside the decisions.
                    let input = world.input(spec, c, None);
                    refused.push(world.unavailable(&input).into_iter().collect());
                    last = key;
                }
                let input = world.input(spec, c, Some(&spec.tools[i].name));
                let allowed = world.allowed(&input);
                assert_eq!(
                    !allowed,
                    refused.last().unwrap().contains(&spec.tools[i].name),
                    "seed {seed}: Rego's unavailable set and its allow disagree on {}",
                    spec.tools[i].name
                );
                allowed
            },
            "regorus",
        )
        .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        total += n;
        lists += refused.len();
    }
    eprintln!("Rego and toolgate agree on {total} decisions and {lists} unavailable sets");
    assert!(total > 100_000);
}
