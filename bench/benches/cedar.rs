//! Side by side with Cedar, in the same criterion run: one decision (Cedar
//! `is_authorized` vs our `decide`) and the unavailable list (Cedar looping
//! over every tool vs our resolver), plus our naive reference interpreter as
//! the baseline. Agreement is checked before anything is timed. Cedar's
//! requests are built outside the timed loop (generous to Cedar).
//! `TOOLGATE_SIZES=1000,10000` limits the tool counts.
//!
//! With `--features regorus` and `--features casbin`, Rego (Regorus's
//! bytecode VM) and Casbin (`Enforcer`, `CachedEnforcer`) run in the same
//! groups at 1k, 10k and 100k tools, each checked first on every decision of
//! the timed context (and, up to 10k, every context of the first
//! configuration). Cedar also runs at 1M tools (its entity store built once,
//! outside the timed loop); there its list is not timed (about 10 s an
//! iteration).

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode};
use std::hint::black_box;
use toolgate_bench::cedar::{check_agreement, CedarWorld};
use toolgate_bench::{walk, AskedNames, Cycle, Subject};
use toolgate_reference::{reference_decide, reference_unavailable};
use toolgate_runtime::Role;

/// What one size times: our context, and each peer set up and checked.
struct Sized<'s> {
    n: usize,
    s: &'s Subject,
    ctx: toolgate_runtime::Context<'s>,
    rctx: toolgate_reference::RefCtx,
    world: CedarWorld,
    requests: Vec<cedar_policy::Request>,
    /// Regorus and Casbin run up to 100k tools.
    #[cfg(feature = "regorus")]
    rego: Option<Rego>,
    #[cfg(feature = "casbin")]
    casbin: Option<Casbin>,
}

/// Rego's world, each tool's input of the timed context, the list's input.
#[cfg(feature = "regorus")]
type Rego = (
    std::cell::RefCell<toolgate_bench::rego::RegoWorld>,
    Vec<regorus::Value>,
    regorus::Value,
);

/// Casbin's enforcers and each tool's request of the timed context.
#[cfg(feature = "casbin")]
type Casbin = (
    toolgate_bench::casbin_model::CasbinWorld,
    Vec<toolgate_bench::casbin_model::Req>,
);

impl<'s> Sized<'s> {
    /// Every peer built and checked to agree with toolgate before anything
    /// is timed.
    fn new(s: &'s Subject, n: usize) -> Sized<'s> {
        // Every context up to 10k tools; above, the timed context over every
        // tool (checked below), as the full space takes minutes of Cedar.
        if n <= 10_000 {
            let checked = check_agreement(&s.table, if n >= 10_000 { 1 } else { 10 })
                .expect("Cedar and toolgate agree");
            eprintln!("{n} tools: Cedar and toolgate agree on {checked} decisions");
        }
        let ctx = s.context();
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
        #[cfg(any(feature = "regorus", feature = "casbin"))]
        let refused: Vec<bool> = (0..n).map(|i| !ctx.decide_id(i as u32).allowed).collect();
        Sized {
            n,
            s,
            rctx: s.reference(),
            #[cfg(feature = "regorus")]
            rego: (n <= 100_000).then(|| rego(s, &refused)),
            #[cfg(feature = "casbin")]
            casbin: (n <= 100_000).then(|| casbin(s, &refused)),
            ctx,
            world,
            requests,
        }
    }

    fn peers(&self) -> bool {
        self.n <= 100_000
    }
}

#[cfg(feature = "regorus")]
fn rego(s: &Subject, refused: &[bool]) -> Rego {
    let (spec, names, n) = (s.table.spec(), &s.w.tool_names, refused.len());
    let pctx = toolgate_bench::peers::timed_context(spec, &s.w.configurations[0]);
    let mut world = toolgate_bench::rego::RegoWorld::new(spec);
    if n <= 10_000 {
        let checked = toolgate_bench::peers::check_agreement(
            &s.table,
            1,
            |c, i| {
                let input = world.input(spec, c, Some(&names[i]));
                world.allowed(&input)
            },
            "regorus",
        )
        .expect("Rego and toolgate agree");
        eprintln!("{n} tools: Rego and toolgate agree on {checked} decisions");
    }
    let inputs = world.inputs(spec, &pctx);
    for (i, input) in inputs.iter().enumerate() {
        assert_eq!(world.allowed(input), !refused[i], "Rego, tool {i}");
    }
    let list_input = world.input(spec, &pctx, None);
    let mut theirs = world.unavailable(&list_input);
    let mut expected: Vec<String> = (0..n)
        .filter(|&i| refused[i])
        .map(|i| names[i].clone())
        .collect();
    theirs.sort_unstable();
    expected.sort_unstable();
    assert_eq!(theirs, expected, "Rego's unavailable set");
    eprintln!("{n} tools: Rego and toolgate agree on the timed context's {n} decisions and its unavailable set");
    (std::cell::RefCell::new(world), inputs, list_input)
}

#[cfg(feature = "casbin")]
fn casbin(s: &Subject, refused: &[bool]) -> Casbin {
    use toolgate_bench::casbin_model::CasbinWorld;
    let (spec, names, n) = (s.table.spec(), &s.w.tool_names, refused.len());
    let pctx = toolgate_bench::peers::timed_context(spec, &s.w.configurations[0]);
    let world = CasbinWorld::new(spec, n);
    if n <= 10_000 {
        let checked = toolgate_bench::peers::check_agreement(
            &s.table,
            1,
            |c, i| world.allowed(&CasbinWorld::request(spec, c, &names[i])),
            "casbin",
        )
        .expect("Casbin and toolgate agree");
        eprintln!("{n} tools: Casbin and toolgate agree on {checked} decisions");
    }
    let requests = CasbinWorld::requests(spec, &pctx);
    for (i, r) in requests.iter().enumerate() {
        assert_eq!(world.allowed(r), !refused[i], "Casbin, tool {i}");
        assert_eq!(
            world.allowed_cached(r),
            !refused[i],
            "Casbin cached, tool {i}"
        );
    }
    eprintln!("{n} tools: Casbin (both enforcers) and toolgate agree on the timed context's {n} decisions");
    (world, requests)
}

/// One decision: toolgate by name and 64 names a call, each peer, and the
/// reference interpreter up to 10k tools.
fn decide_group(c: &mut Criterion, z: &Sized<'_>) {
    let (n, names) = (z.n, &z.s.w.tool_names);
    let mut g = c.benchmark_group("cedar_decide");
    g.bench_with_input(BenchmarkId::new("toolgate", n), &n, |b, _| {
        let names = AskedNames::new(names);
        let mut asked = names.cycle();
        b.iter(|| black_box(z.ctx.decide(black_box(asked()))))
    });
    // 64 names a call (`decide_many`): time per call of 64.
    g.bench_with_input(BenchmarkId::new("toolgate_many64", n), &n, |b, _| {
        let asked = AskedNames::new(names);
        let batches = asked.batches(64);
        let mut which = Cycle::new((0..batches.len()).collect());
        b.iter(|| black_box(z.ctx.decide_many(black_box(&batches[*which.next()]))))
    });
    // The same workload with a `needs-approval` list in config0 (a format 4
    // table): a decision costs what it did without approvals.
    let sa = toolgate_bench::Subject::with_approvals(n);
    let actx = sa.context();
    g.bench_with_input(
        BenchmarkId::new("toolgate_with_approvals", n),
        &n,
        |b, _| {
            let names = AskedNames::new(&sa.w.tool_names);
            let mut asked = names.cycle();
            b.iter(|| black_box(actx.decide(black_box(asked()))))
        },
    );
    g.bench_with_input(BenchmarkId::new("cedar", n), &n, |b, _| {
        let mut asked = Cycle::new(walk(n).into_iter().map(|i| &z.requests[i]).collect());
        b.iter(|| black_box(z.world.allowed(black_box(asked.next()))))
    });
    #[cfg(feature = "regorus")]
    if let Some((world, inputs, _)) = &z.rego {
        g.bench_with_input(BenchmarkId::new("regorus", n), &n, |b, _| {
            let mut asked = Cycle::new(walk(n).into_iter().map(|i| &inputs[i]).collect());
            let mut world = world.borrow_mut();
            b.iter(|| black_box(world.allowed(black_box(asked.next()))))
        });
    }
    #[cfg(feature = "casbin")]
    if let Some((world, requests)) = &z.casbin {
        g.bench_with_input(BenchmarkId::new("casbin", n), &n, |b, _| {
            let mut asked = Cycle::new(walk(n).into_iter().map(|i| &requests[i]).collect());
            b.iter(|| black_box(world.allowed(black_box(asked.next()))))
        });
        // Every request of the walk was asked in the agreement check
        // above, so the cache (sized to the tool count) answers.
        g.bench_with_input(BenchmarkId::new("casbin_cached", n), &n, |b, _| {
            let mut asked = Cycle::new(walk(n).into_iter().map(|i| &requests[i]).collect());
            b.iter(|| black_box(world.allowed_cached(black_box(asked.next()))))
        });
    }
    if n <= 10_000 {
        g.bench_with_input(BenchmarkId::new("reference", n), &n, |b, _| {
            let names = AskedNames::new(names);
            let mut asked = names.cycle();
            b.iter(|| black_box(reference_decide(&z.s.m, &z.rctx, black_box(asked()))))
        });
    }
    g.finish();
}

/// The unavailable list: toolgate's resolver against each peer looping over
/// every tool (Rego's set rule too), the reference up to 1k tools.
fn list_group(c: &mut Criterion, z: &Sized<'_>) {
    let n = z.n;
    let mut g = c.benchmark_group("cedar_unavailable");
    g.sample_size(10);
    // Equal samples: a peer's loop takes up to seconds an iteration at
    // 100k, and linear sampling would run 55 of them.
    g.sampling_mode(SamplingMode::Flat);
    g.bench_with_input(BenchmarkId::new("toolgate", n), &n, |b, _| {
        b.iter(|| black_box(z.ctx.unavailable()))
    });
    // Cedar looping takes about 10 µs a tool: 1 s an iteration at 100k,
    // 10 s at 1M (not timed there).
    if z.peers() {
        g.bench_with_input(BenchmarkId::new("cedar", n), &n, |b, _| {
            b.iter(|| black_box(z.requests.iter().filter(|r| !z.world.allowed(r)).count()))
        });
    }
    #[cfg(feature = "regorus")]
    if let Some((world, inputs, list_input)) = &z.rego {
        let mut world = world.borrow_mut();
        g.bench_with_input(BenchmarkId::new("regorus", n), &n, |b, _| {
            b.iter(|| black_box(inputs.iter().filter(|r| !world.allowed(r)).count()))
        });
        // Rego's own form of the list: the set rule, one evaluation.
        g.bench_with_input(BenchmarkId::new("regorus_set_rule", n), &n, |b, _| {
            b.iter(|| black_box(world.unavailable(black_box(list_input)).len()))
        });
    }
    #[cfg(feature = "casbin")]
    if let Some((world, requests)) = &z.casbin {
        g.bench_with_input(BenchmarkId::new("casbin", n), &n, |b, _| {
            b.iter(|| black_box(requests.iter().filter(|r| !world.allowed(r)).count()))
        });
        g.bench_with_input(BenchmarkId::new("casbin_cached", n), &n, |b, _| {
            b.iter(|| black_box(requests.iter().filter(|r| !world.allowed_cached(r)).count()))
        });
    }
    if n <= 1_000 {
        g.bench_with_input(BenchmarkId::new("reference", n), &n, |b, _| {
            b.iter(|| black_box(reference_unavailable(&z.s.m, &z.rctx)))
        });
    }
    g.finish();
}

fn bench(c: &mut Criterion) {
    for n in toolgate_bench::sizes(&[1_000, 10_000, 100_000, 1_000_000]) {
        let s = Subject::new(n);
        let z = Sized::new(&s, n);
        decide_group(c, &z);
        list_group(c, &z);
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_millis(500));
    targets = bench
}
criterion_main!(benches);
