//! Table load only, repeated (for profiling): `load FILE [N]`.
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let bytes = std::fs::read(&args[1]).unwrap();
    let n: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(10);
    let mut best = f64::MAX;
    for _ in 0..n {
        let t = std::time::Instant::now();
        let table = toolgate_runtime::Table::load(&bytes).unwrap();
        best = best.min(t.elapsed().as_secs_f64());
        drop(std::hint::black_box(table));
    }
    println!("load: {:.1} ms (best of {n}, drop not counted)", best * 1e3);
}
