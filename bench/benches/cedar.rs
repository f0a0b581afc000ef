//! Side by side with Cedar, in the same criterion run: one decision (Cedar
//! `is_authorized` vs our `decide`) and the unavailable list (Cedar looping
//! over every tool vs our resolver), plus our naive reference interpreter as
//! the baseline. Agreement is checked before anything is timed. Cedar's
//! requests are built outside the timed loop (generous to Cedar).
//! `TOOLGATE_SIZES=1000,10000` limits the tool counts.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::hint::black_box;
use toolgate_bench::cedar::{check_agreement, CedarWorld};
use toolgate_bench::{walk, AskedNames, Cycle, Subject};
use toolgate_runtime::Role;
use toolgate_tests::{reference_decide, reference_unavailable};

fn bench(c: &mut Criterion) {
    for n in toolgate_bench::sizes(&[1_000, 10_000, 100_000]) {
        let s = Subject::new(n);
        // Every context up to 10k tools; above, the timed context over every
        // tool (checked below), as the full space takes minutes of Cedar.
        if n <= 10_000 {
            let checked = check_agreement(&s.table, if n >= 10_000 { 1 } else { 10 })
                .expect("Cedar and toolgate agree");
            eprintln!("{n} tools: Cedar and toolgate agree on {checked} decisions");
        }
        let (ctx, rctx, names) = (s.context(), s.reference(), &s.w.tool_names);
        let spec = s.table.spec();
        let world = CedarWorld::new(spec);
        let cctx = world.context(spec, &s.w.configurations[0], Some("k0"), None);
        let requests = world.requests(spec, Role::User, &cctx);
        for (i, r) in requests.iter().enumerate() {
            assert_eq!(
                ctx.decide_id(i as u32).allowed,
                world.allowed(r),
                "tool {i}"
            );
        }
        eprintln!("{n} tools: Cedar and toolgate agree on the timed context's {n} decisions");

        let mut g = c.benchmark_group("cedar_decide");
        g.bench_with_input(BenchmarkId::new("toolgate", n), &n, |b, _| {
            let names = AskedNames::new(names);
            let mut asked = names.cycle();
            b.iter(|| black_box(ctx.decide(black_box(asked()))))
        });
        // 64 names a call (`decide_many`): time per call of 64.
        g.bench_with_input(BenchmarkId::new("toolgate_many64", n), &n, |b, _| {
            let asked = AskedNames::new(names);
            let batches = asked.batches(64);
            let mut which = Cycle::new((0..batches.len()).collect());
            b.iter(|| black_box(ctx.decide_many(black_box(&batches[*which.next()]))))
        });
        g.bench_with_input(BenchmarkId::new("cedar", n), &n, |b, _| {
            let mut asked = Cycle::new(walk(n).into_iter().map(|i| &requests[i]).collect());
            b.iter(|| black_box(world.allowed(black_box(asked.next()))))
        });
        if n <= 10_000 {
            g.bench_with_input(BenchmarkId::new("reference", n), &n, |b, _| {
                let names = AskedNames::new(names);
                let mut asked = names.cycle();
                b.iter(|| black_box(reference_decide(&s.m, &rctx, black_box(asked()))))
            });
        }
        g.finish();

        let mut g = c.benchmark_group("cedar_unavailable");
        g.sample_size(10);
        g.bench_with_input(BenchmarkId::new("toolgate", n), &n, |b, _| {
            b.iter(|| black_box(ctx.unavailable()))
        });
        // Cedar looping takes about 15 µs a tool: 1.5 s an iteration at 100k.
        if n <= 10_000 {
            g.bench_with_input(BenchmarkId::new("cedar", n), &n, |b, _| {
                b.iter(|| black_box(requests.iter().filter(|r| !world.allowed(r)).count()))
            });
        }
        if n <= 1_000 {
            g.bench_with_input(BenchmarkId::new("reference", n), &n, |b, _| {
                b.iter(|| black_box(reference_unavailable(&s.m, &rctx)))
            });
        }
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_millis(500));
    targets = bench
}
criterion_main!(benches);
