//! Write a generated workload as a project: `dump TOOLS CONFIGS DIR`.
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let w = toolgate_bench::generate(a[1].parse().unwrap(), a[2].parse().unwrap(), 42);
    let dir = std::path::Path::new(&a[3]);
    w.write_project(dir).unwrap();
}
