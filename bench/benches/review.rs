//! Review at scale: the no-effect lint (TG3009) inside `check`, at 10k and
//! 100k tools × 1k configurations, against `check` without it (the same
//! check minus the lint, timed alone in the same run); and the replay of a
//! 1,000,000-record decision log (BENCHMARKS.md).

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::hint::black_box;
use toolgate_compiler::project::Project;
use toolgate_compiler::source::FileId;
use toolgate_compiler::{lints::no_effect, lower, registry, syntax::parse, validate};
use toolgate_review::replay;
use toolgate_runtime::log::DecisionLog;
use toolgate_runtime::{Role, Table};

fn lint(c: &mut Criterion) {
    let mut g = c.benchmark_group("noeffect");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(4))
        .warm_up_time(Duration::from_millis(300));
    for (tools, configs) in [(10_000, 1_000), (100_000, 1_000)] {
        let id = format!("{tools}x{configs}");
        let w = toolgate_bench::generate(tools, configs, 42);
        let project =
            Project::from_texts(("registry.toml", &w.registry), &[("policy.tg", &w.policy)]);
        let model = project.check().model.expect("compiles");
        let (reg, _) = registry::load(FileId(1), &w.registry, false);
        let ast = parse::parse_policy(FileId(2), &w.policy).expect("parses");
        let parsed = [validate::Parsed {
            file: FileId(2),
            ast: &ast,
        }];
        g.bench_with_input(BenchmarkId::new("check_with_lint", &id), &id, |b, _| {
            b.iter(|| black_box(project.check()))
        });
        g.bench_with_input(BenchmarkId::new("lint_alone", &id), &id, |b, _| {
            // The lowering the lint reads is counted in, as inside `check`.
            b.iter(|| {
                let table = lower::lowered(&model).expect("loads");
                black_box(no_effect::lint(&model, &reg, &parsed, &table))
            })
        });
    }
    g.finish();
}

fn replay_log(c: &mut Criterion) {
    let w = toolgate_bench::generate(10_000, 100, 42);
    let compile = |policy: &str| {
        let m = Project::from_texts(("registry.toml", &w.registry), &[("policy.tg", policy)])
            .check()
            .model
            .expect("compiles");
        Table::load(&lower::compile(&m)).expect("loads")
    };
    let old = compile(&w.policy);
    // The change: one more exclusion in the first configuration that has one.
    let new = compile(&w.policy.replacen(" exclude [", " exclude [tool1, ", 1));
    // 1,000,000 records: every configuration, the three roles, no consumer
    // and `k0`, tools by a stride of 7919.
    let mut log = DecisionLog::new(Vec::with_capacity(300 << 20));
    let n = old.tool_count() as u32;
    let mut tool = 0u32;
    for i in 0..1_000_000usize {
        let ctx = old
            .context(&w.configurations[i % w.configurations.len()])
            .unwrap()
            .role(Role::ALL[i % 3])
            .consumer((i % 2 == 0).then_some("k0"));
        tool = (tool + 7919) % n;
        log.record(&ctx, &ctx.decide_id(tool)).unwrap();
    }
    let text = String::from_utf8(log.into_inner()).unwrap();
    let r = replay::replay(&old, &new, &text).expect("reads");
    assert_eq!((r.records, r.compared), (1_000_000, 1_000_000));
    let mut g = c.benchmark_group("replay");
    g.sample_size(10)
        .measurement_time(Duration::from_secs(20))
        .warm_up_time(Duration::from_millis(100));
    g.bench_function("1M_records_10000x100", |b| {
        b.iter(|| black_box(replay::replay(&old, &new, &text).unwrap()))
    });
    g.finish();
}

criterion_group!(benches, lint, replay_log);
criterion_main!(benches);
