//! One decision, the offered set and the unavailable list: the compiled table
//! side by side with the naive reference interpreter, in the same run.
//! `TOOLGATE_SIZES=1000,10000` limits the tool counts.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::hint::black_box;
use std::time::Duration;
use toolgate_bench::{id_cycle, AskedNames, Subject};
use toolgate_reference::{reference_decide, reference_unavailable};

fn bench(c: &mut Criterion) {
    for n in toolgate_bench::sizes(&[1_000, 10_000, 100_000, 1_000_000]) {
        let s = Subject::new(n);
        let (ctx, rctx, names) = (s.context(), s.reference(), &s.w.tool_names);

        let mut g = c.benchmark_group("decide");
        g.bench_with_input(BenchmarkId::new("table_by_id", n), &n, |b, _| {
            let mut ids = id_cycle(n);
            b.iter(|| black_box(ctx.decide_id(black_box(*ids.next()))))
        });
        g.bench_with_input(BenchmarkId::new("table_by_name", n), &n, |b, _| {
            let names = AskedNames::new(names);
            let mut asked = names.cycle();
            b.iter(|| black_box(ctx.decide(black_box(asked()))))
        });
        // The name -> index lookup alone (no gate read): the floor under
        // "by name", the part a million names push out of the cache.
        g.bench_with_input(BenchmarkId::new("table_lookup_by_name", n), &n, |b, _| {
            let names = AskedNames::new(names);
            let mut asked = names.cycle();
            b.iter(|| black_box(s.table.tool_id(black_box(asked()))))
        });
        // 64 names a call (a proxy filtering an upstream's `tools/list`), in
        // the walk's order; criterion's time is per call of 64.
        g.bench_with_input(BenchmarkId::new("table_by_name_many64", n), &n, |b, _| {
            let asked = AskedNames::new(names);
            let batches = asked.batches(64);
            let mut which = toolgate_bench::Cycle::new((0..batches.len()).collect());
            b.iter(|| black_box(ctx.decide_many(black_box(&batches[*which.next()]))))
        });
        if n <= 10_000 {
            g.bench_with_input(BenchmarkId::new("reference", n), &n, |b, _| {
                let names = AskedNames::new(names);
                let mut asked = names.cycle();
                b.iter(|| black_box(reference_decide(&s.m, &rctx, black_box(asked()))))
            });
        }
        g.finish();

        // The same decisions on the same workload whose config0 has a
        // `needs-approval` list (format 4): what approvals cost a decision.
        let sa = toolgate_bench::Subject::with_approvals(n);
        let actx = sa.context();
        let mut g = c.benchmark_group("approvals");
        g.bench_with_input(BenchmarkId::new("without_by_name", n), &n, |b, _| {
            let names = AskedNames::new(names);
            let mut asked = names.cycle();
            b.iter(|| black_box(ctx.decide(black_box(asked()))))
        });
        g.bench_with_input(BenchmarkId::new("with_by_name", n), &n, |b, _| {
            let names = AskedNames::new(&sa.w.tool_names);
            let mut asked = names.cycle();
            b.iter(|| black_box(actx.decide(black_box(asked()))))
        });
        g.finish();

        // The list's length, so that the cost per entry can be read off.
        eprintln!(
            "unavailable at {n} tools: {} entries",
            ctx.unavailable_ids().len()
        );
        let mut g = c.benchmark_group("unavailable");
        g.bench_with_input(BenchmarkId::new("table", n), &n, |b, _| {
            b.iter(|| black_box(ctx.unavailable()))
        });
        g.bench_with_input(BenchmarkId::new("table_ids", n), &n, |b, _| {
            b.iter(|| black_box(ctx.unavailable_ids()))
        });
        g.bench_with_input(BenchmarkId::new("table_count", n), &n, |b, _| {
            b.iter(|| black_box(ctx.unavailable_count()))
        });
        if n <= 1_000 {
            g.bench_with_input(BenchmarkId::new("reference", n), &n, |b, _| {
                b.iter(|| black_box(reference_unavailable(&s.m, &rctx)))
            });
        }
        g.finish();

        let mut g = c.benchmark_group("offered");
        g.bench_with_input(BenchmarkId::new("table", n), &n, |b, _| {
            b.iter(|| black_box(ctx.offered_ids()))
        });
        g.bench_with_input(BenchmarkId::new("table_count", n), &n, |b, _| {
            b.iter(|| black_box(ctx.offered_count()))
        });
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_millis(500));
    targets = bench
}
criterion_main!(benches);
