//! Every stage at scale: parse, validate, lower, table load, diff, classify,
//! and cold `toolgate check` / `toolgate compile` processes. Two series:
//! tools 1k, 10k, 100k at 100 configurations; configurations 10, 100, 1k at
//! 10k tools (BENCHMARKS.md plots both).

use std::path::PathBuf;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::hint::black_box;
use toolgate_compiler::project::Project;
use toolgate_compiler::source::FileId;
use toolgate_compiler::{lower, registry, syntax::parse};
use toolgate_review::diff;
use toolgate_runtime::{classify, Answer, Table};

fn sizes() -> Vec<(usize, usize)> {
    vec![
        (1_000, 100),
        (10_000, 100),
        (100_000, 100),
        (10_000, 10),
        (10_000, 1_000),
        (100_000, 1_000),
    ]
}

fn bench(c: &mut Criterion) {
    let bin = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/release/toolgate");
    for (tools, configs) in sizes() {
        let id = format!("{tools}x{configs}");
        let w = toolgate_bench::generate(tools, configs, 42);
        let project =
            Project::from_texts(("registry.toml", &w.registry), &[("policy.tg", &w.policy)]);
        let m = project.check().model.expect("compiles");
        let bytes = lower::compile(&m);
        // The second version: one exclusion fewer in the first configuration that has one.
        let narrowed = w.policy.replacen(" exclude [", " exclude [tool1, ", 1);
        let m2 = Project::from_texts(("registry.toml", &w.registry), &[("policy.tg", &narrowed)])
            .check()
            .model
            .expect("compiles");
        let (t1, t2) = (
            Table::load(&bytes).unwrap(),
            Table::load(&lower::compile(&m2)).unwrap(),
        );

        let mut g = c.benchmark_group("stage");
        g.sample_size(10)
            .measurement_time(Duration::from_secs(3))
            .warm_up_time(Duration::from_millis(300));
        g.bench_with_input(BenchmarkId::new("parse_registry", &id), &id, |b, _| {
            b.iter(|| black_box(registry::load(FileId(0), &w.registry, false)))
        });
        g.bench_with_input(BenchmarkId::new("parse_policy", &id), &id, |b, _| {
            // Only the AST's cost is measured: the error (a large `Problem`) never occurs here.
            b.iter(|| black_box(parse::parse_policy(FileId(1), &w.policy).ok()))
        });
        g.bench_with_input(BenchmarkId::new("check", &id), &id, |b, _| {
            b.iter(|| black_box(project.check()))
        });
        g.bench_with_input(BenchmarkId::new("lower", &id), &id, |b, _| {
            b.iter(|| black_box(lower::compile(&m)))
        });
        g.bench_with_input(BenchmarkId::new("load", &id), &id, |b, _| {
            b.iter(|| black_box(Table::load(&bytes).unwrap()))
        });
        g.bench_with_input(BenchmarkId::new("diff", &id), &id, |b, _| {
            b.iter(|| black_box(diff::diff(&t1, &t2)))
        });
        if bin.exists() {
            let dir = std::env::temp_dir().join(format!("toolgate-stages-{id}"));
            w.write_project(&dir).unwrap();
            let out = dir.join("policy.tgt");
            g.bench_with_input(BenchmarkId::new("process_check", &id), &id, |b, _| {
                b.iter(|| {
                    assert!(std::process::Command::new(&bin)
                        .arg("check")
                        .arg(&dir)
                        .output()
                        .unwrap()
                        .status
                        .success())
                })
            });
            g.bench_with_input(BenchmarkId::new("process_compile", &id), &id, |b, _| {
                b.iter(|| {
                    assert!(std::process::Command::new(&bin)
                        .arg("compile")
                        .arg(&dir)
                        .arg("-o")
                        .arg(&out)
                        .output()
                        .unwrap()
                        .status
                        .success())
                })
            });
        }
        g.finish();
    }
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/gateway");
    let mut answers = Vec::new();
    for e in std::fs::read_dir(fixtures).unwrap() {
        // The one reader of answer files; bodies parsed once, outside the timing.
        let env = toolgate_runtime::Envelope::read(&std::fs::read(e.unwrap().path()).unwrap());
        let body = toolgate_runtime::json::parse_strict(&env.body).unwrap();
        answers.push((body, env.http_status, env.origin));
    }
    c.bench_function("classify/all_fixtures", |b| {
        b.iter(|| {
            for (body, status, origin) in &answers {
                black_box(classify(&Answer {
                    body,
                    http_status: *status,
                    origin: origin.as_deref(),
                    tool: Some("refund.issue"),
                }));
            }
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
