//! The second, independent oracle: generated registries and policies
//! translated to Cedar must give the same allow/deny on every request
//! (every configuration, role, consumer and enforcement mode, every tool).
//! Behind the `cedar` feature: `cargo test -p toolgate-bench --features cedar --release`.

use toolgate_bench::cedar::check_agreement;
use toolgate_compiler::lower;
use toolgate_reference::model;
use toolgate_runtime::Table;

#[test]
fn cedar_agrees_with_the_table_on_generated_workloads() {
    let mut total = 0;
    for seed in 0..24u64 {
        let tools = 40 + (seed as usize * 37) % 300;
        let configs = 3 + (seed as usize % 9);
        let w = toolgate_bench::generate(tools, configs, seed);
        let table = Table::load(&lower::compile(&model(&w.registry, &[&w.policy]))).unwrap();
        match check_agreement(&table, usize::MAX) {
            Ok(n) => total += n,
            Err(e) => panic!("seed {seed}: {e}"),
        }
    }
    eprintln!("Cedar and toolgate agree on {total} decisions");
    assert!(total > 100_000);
}
