//! One-shot timings of every stage at a given size, with peak memory:
//! `cargo run --release -p toolgate-bench --example scale -- TOOLS CONFIGS`.

use std::time::Instant;
use toolgate_compiler::{lower, project::Project};
use toolgate_runtime::Table;

fn peak_rss_mib() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map(|kb| kb / 1024.0)
        .unwrap_or(0.0)
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let (tools, configs) = (
        args.first().copied().unwrap_or(100_000),
        args.get(1).copied().unwrap_or(1_000),
    );
    let t = Instant::now();
    let w = toolgate_bench::generate(tools, configs, 42);
    println!(
        "generate        {:>8.1} ms  (registry {} KiB, policy {} KiB)",
        t.elapsed().as_secs_f64() * 1e3,
        w.registry.len() / 1024,
        w.policy.len() / 1024
    );
    let t = Instant::now();
    let checked =
        Project::from_texts(("registry.toml", &w.registry), &[("policy.tg", &w.policy)]).check();
    let model = checked.model.expect("generated workload compiles");
    println!(
        "parse+validate  {:>8.1} ms  ({} warnings)",
        t.elapsed().as_secs_f64() * 1e3,
        checked.problems.len()
    );
    let t = Instant::now();
    let bytes = lower::compile(&model);
    println!(
        "lower+encode    {:>8.1} ms  ({} KiB table)",
        t.elapsed().as_secs_f64() * 1e3,
        bytes.len() / 1024
    );
    drop(model);
    if let Ok(path) = std::env::var("TOOLGATE_WRITE_TABLE") {
        std::fs::write(path, &bytes).unwrap();
    }
    let t = Instant::now();
    let table = Table::load(&bytes).unwrap();
    println!(
        "table load      {:>8.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    let ctx = table.context(&w.configurations[0]).unwrap();
    let t = Instant::now();
    let n = ctx.unavailable().len();
    println!(
        "unavailable     {:>8.3} ms  ({n} refused)",
        t.elapsed().as_secs_f64() * 1e3
    );
    if std::env::var("TOOLGATE_SKIP_DIFF").is_err() {
        let t = Instant::now();
        let d = toolgate_compiler::diff::diff(&table, &table);
        println!(
            "diff (self)     {:>8.1} ms  ({} decisions)",
            t.elapsed().as_secs_f64() * 1e3,
            d.summary.decisions
        );
    }
    println!("peak RSS        {:>8.1} MiB", peak_rss_mib());
}
