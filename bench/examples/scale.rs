//! One-shot timings of every stage at a given size, with peak memory:
//! `cargo run --release -p toolgate-bench --example scale -- TOOLS CONFIGS [STAGE]`.
//!
//! Without STAGE: generate, parse+validate, lower+encode, load, decide,
//! unavailable, diff in one process (peak RSS at the end). With STAGE
//! (`registry-toml`, `registry-json`): only that registry parse, so that the
//! process's peak RSS is the parse's, next to the file's size. With
//! `TOOLGATE_ROWS` set, each stage also prints `ROW stage tools configs ms`
//! (bench/scripts/scaling.sh gathers them for bench/plot.py).

use std::hint::black_box;
use std::time::Instant;
use toolgate_compiler::source::FileId;
use toolgate_compiler::{lower, project::Project, registry};
use toolgate_runtime::{Role, Table};

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

/// A machine-readable row for bench/scripts/scaling.sh: `ROW stage tools configs ms`.
fn row(stage: &str, tools: usize, configs: usize, ms: f64) {
    if std::env::var_os("TOOLGATE_ROWS").is_some() {
        println!("ROW {stage} {tools} {configs} {ms:.6}");
    }
}

/// One registry parse in this process: its time, the file's size and the
/// process's peak RSS (the workload's own text included).
fn registry_only(text: &str, is_json: bool) {
    let base = toolgate_bench::peak_rss_mib();
    let t = Instant::now();
    let (reg, problems) = registry::load(FileId(0), text, is_json);
    let took = ms(t);
    let size = text.len() as f64 / (1024.0 * 1024.0);
    let peak = toolgate_bench::peak_rss_mib();
    println!(
        "registry {} {:>8.1} ms  ({} tools, {} problems; file {size:.1} MiB; peak RSS {peak:.1} MiB, {:.1} MiB before the parse: {:.1}x the file)",
        if is_json { "json" } else { "toml" },
        took,
        reg.tools.len(),
        problems.len(),
        base,
        (peak - base) / size
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize, d: usize| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
    let (tools, configs) = (num(0, 100_000), num(1, 1_000));
    let t = Instant::now();
    let w = toolgate_bench::generate(tools, configs, 42);
    println!(
        "generate        {:>8.1} ms  (registry {} KiB, policy {} KiB)",
        ms(t),
        w.registry.len() / 1024,
        w.policy.len() / 1024
    );
    match args.get(2).map(String::as_str) {
        Some("registry-toml") => return registry_only(&w.registry, false),
        Some("registry-json") => {
            let json = toolgate_bench::registry_json(&w.registry);
            drop(w);
            return registry_only(&json, true);
        }
        _ => {}
    }
    let t = Instant::now();
    let (reg, _) = registry::load(FileId(0), &w.registry, false);
    row("parse_registry", tools, configs, ms(t));
    drop(reg);
    let t = Instant::now();
    let checked =
        Project::from_texts(("registry.toml", &w.registry), &[("policy.tg", &w.policy)]).check();
    row("parse_and_check", tools, configs, ms(t));
    let model = checked.model.expect("generated workload compiles");
    println!(
        "parse+validate  {:>8.1} ms  ({} warnings)",
        ms(t),
        checked.problems.len()
    );
    let t = Instant::now();
    let bytes = lower::compile(&model);
    row("lower", tools, configs, ms(t));
    println!(
        "lower+encode    {:>8.1} ms  ({} KiB table)",
        ms(t),
        bytes.len() / 1024
    );
    drop(model);
    if let Ok(path) = std::env::var("TOOLGATE_WRITE_TABLE") {
        std::fs::write(path, &bytes).unwrap();
    }
    let t = Instant::now();
    let table = Table::load(&bytes).unwrap();
    row("load", tools, configs, ms(t));
    println!("table load      {:>8.1} ms", ms(t));
    let ctx = table
        .context(&w.configurations[0])
        .unwrap()
        .role(Role::User)
        .consumer(Some("k0"));
    // 100k decisions by name with the benches' walk (a one-shot mean).
    let asked = toolgate_bench::AskedNames::new(&w.tool_names);
    let mut asked = asked.cycle();
    let t = Instant::now();
    let mut allowed = 0usize;
    for _ in 0..100_000 {
        allowed += usize::from(black_box(ctx.decide(black_box(asked()))).allowed);
    }
    row("decide_by_name", tools, configs, ms(t) / 100_000.0);
    println!(
        "decide by name  {:>8.1} ns  (mean of 100,000; {allowed} allowed)",
        ms(t) * 1e6 / 100_000.0
    );
    // The best of five (one list is microseconds at the small sizes).
    let (mut best, mut n) = (f64::MAX, 0);
    for _ in 0..5 {
        let t = Instant::now();
        n = black_box(ctx.unavailable()).len();
        best = best.min(ms(t));
    }
    row("unavailable", tools, configs, best);
    println!("unavailable     {:>8.3} ms  ({n} refused; best of 5)", best);
    if std::env::var("TOOLGATE_SKIP_DIFF").is_err() {
        let t = Instant::now();
        let d = toolgate_review::diff::diff(&table, &table);
        row("diff", tools, configs, ms(t));
        println!(
            "diff (self)     {:>8.1} ms  ({} decisions)",
            ms(t),
            d.summary.decisions
        );
    }
    println!(
        "peak RSS        {:>8.1} MiB",
        toolgate_bench::peak_rss_mib()
    );
}
