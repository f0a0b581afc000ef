//! The fourth oracle: generated registries and policies translated to a
//! Casbin model and policy must give the same allow/deny on every request
//! (every configuration, role, consumer and enforcement mode, every tool),
//! from the `Enforcer` and from the `CachedEnforcer` (asked twice, so the
//! second answer comes from its cache).
//! Behind the `casbin` feature: `cargo test -p toolgate-bench --features casbin --release`.

use toolgate_bench::casbin_model::CasbinWorld;
use toolgate_bench::peers::check_agreement;
use toolgate_compiler::lower;
use toolgate_reference::model;
use toolgate_runtime::Table;

#[test]
fn casbin_agrees_with_the_table_on_generated_workloads() {
    let mut total = 0;
    for seed in 0..24u64 {
        let tools = 40 + (seed as usize * 37) % 300;
        let configs = 3 + (seed as usize % 9);
        let w = toolgate_bench::generate(tools, configs, seed);
        let table = Table::load(&lower::compile(&model(&w.registry, &[&w.policy]))).unwrap();
        let spec = table.spec();
        let world = CasbinWorld::new(spec, 1 << 16);
        let n = check_agreement(
            &table,
            usize::MAX,
            |c, i| {
                let r = CasbinWorld::request(spec, c, &spec.tools[i].name);
                let plain = world.allowed(&r);
                for _ in 0..2 {
                    assert_eq!(
                        world.allowed_cached(&r),
                        plain,
                        "seed {seed}: the cached enforcer and the enforcer disagree on {r:?}"
                    );
                }
                plain
            },
            "casbin",
        )
        .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        total += n;
    }
    eprintln!("Casbin and toolgate agree on {total} decisions");
    assert!(total > 100_000);
}
