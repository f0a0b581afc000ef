//! `toolgate lsp`: the time from a changed document to its diagnostics, in a
//! project of 10,000 tools and 100 configurations (target: within 100 ms).
//! Timed in process through `Workspace::set_text`, the handler of
//! `didOpen`/`didChange`: the project loaded over the overlay, checked,
//! indexed, and every file's diagnostics converted for publishing.

use std::path::PathBuf;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use toolgate_lsp::Workspace;

fn bench(c: &mut Criterion) {
    let w = toolgate_bench::generate(10_000, 100, 42);
    let dir = std::env::temp_dir().join(format!("toolgate-lsp-bench-{}", std::process::id()));
    w.write_project(&dir).unwrap();
    let policy: PathBuf = dir.join("policy.tg");
    // A clean edit, and an edit that leaves a near miss (did-you-mean over
    // every tool name) in a new configuration's exclusions.
    let typo = {
        let mut t = w.tool_names[w.tool_names.len() / 2].clone();
        t.push('x');
        t
    };
    let clean = format!("{}\n# edited\n", w.policy);
    let finding = format!(
        "{}\nconfiguration edited {{ exclude [{typo}] }}\n",
        w.policy
    );
    let mut ws = Workspace::new();
    let first = ws.set_text(&policy, w.policy.clone());
    assert!(
        first.iter().all(|(_, d)| d.is_empty()),
        "the workload is clean"
    );
    let mut g = c.benchmark_group("lsp_10000x100");
    g.sample_size(20).measurement_time(Duration::from_secs(8));
    let mut flip = false;
    g.bench_function("did_change_clean", |b| {
        b.iter(|| {
            flip = !flip;
            let text = if flip { &clean } else { &w.policy };
            black_box(ws.set_text(&policy, text.clone()))
        })
    });
    let out = ws.set_text(&policy, finding.clone());
    assert_eq!(out.iter().map(|(_, d)| d.len()).sum::<usize>(), 1);
    g.bench_function("did_change_with_finding", |b| {
        b.iter(|| {
            flip = !flip;
            let text = if flip { &finding } else { &w.policy };
            black_box(ws.set_text(&policy, text.clone()))
        })
    });
    g.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench);
criterion_main!(benches);
