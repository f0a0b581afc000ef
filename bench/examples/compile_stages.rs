//! The stages of `toolgate compile` over a project on disk, each timed in
//! one process, with the peak RSS at the end:
//! `cargo run --release -p toolgate-bench --example compile_stages -- DIR`
//! (write DIR with `examples/dump TOOLS CONFIGS DIR`). BENCHMARKS.md, "A
//! million tools × 1,000 configurations".

use std::time::Instant;
use toolgate_compiler::{lower, project::Project};
use toolgate_runtime::Table;

// The allocator of the `toolgate` binary (cli/src/main.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn stage<T>(name: &str, f: impl FnOnce() -> T) -> T {
    let t = Instant::now();
    let out = f();
    println!(
        "{name:<40} {:>9.1} ms  (RSS {:.0} MiB, peak {:.0} MiB)",
        t.elapsed().as_secs_f64() * 1e3,
        rss_mib("VmRSS:"),
        rss_mib("VmHWM:")
    );
    out
}

/// A memory line of /proc/self/status in MiB (0 where there is none).
fn rss_mib(key: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        })
        .map_or(0.0, |kib| kib / 1024.0)
}

fn main() {
    // As `toolgate compile` (cli/src/main.rs, `no_huge_pages`): no
    // transparent huge pages for this process.
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes one integer and touches no memory.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
    let dir = std::env::args().nth(1).expect("usage: compile_stages DIR");
    let all = Instant::now();
    let project = stage("load (read, parse the registry)", || {
        Project::load(std::path::Path::new(&dir)).expect("loads")
    });
    let checked = stage("check (parse, validate, lint)", || project.check());
    let lowered = checked.lowered.expect("the project compiles");
    let bytes = stage("encode the lowered table", || {
        lower::encode_lowered(&lowered)
    });
    stage("drop the check's table", || drop(lowered));
    let table = stage("verify by loading", || Table::load(&bytes).expect("loads"));
    println!(
        "{:<40} {:>9.1} ms  ({} tools, {} bytes, peak RSS {:.0} MiB)",
        "total",
        all.elapsed().as_secs_f64() * 1e3,
        table.tool_count(),
        bytes.len(),
        toolgate_bench::peak_rss_mib()
    );
}
