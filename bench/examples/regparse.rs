//! Registry parse only (for profiling): `regparse TOOLS`.
fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100_000);
    let w = toolgate_bench::generate(n, 10, 42);
    let t = std::time::Instant::now();
    let (r, p) =
        toolgate_compiler::registry::load(toolgate_compiler::source::FileId(0), &w.registry, false);
    println!(
        "{} tools, {} problems, {:.1} ms",
        r.tools.len(),
        p.len(),
        t.elapsed().as_secs_f64() * 1e3
    );
}
