//! `toolgate-python-bench TABLE NAMES`: times, in Rust, what bench/bench.py
//! times from Python on the same table, context (`config0`, user, consumer
//! `k0`) and names (one a line, already in the order they are asked).
//! Prints tab-separated `label ns_per_op` lines and a check line.

use std::hint::black_box;
use std::time::Instant;

use toolgate_runtime::{Role, Table};

fn time<R>(label: &str, iters: usize, mut f: impl FnMut(usize) -> R) {
    for i in 0..iters / 10 {
        black_box(f(i));
    }
    let start = Instant::now();
    for i in 0..iters {
        black_box(f(i));
    }
    let ns = start.elapsed().as_nanos() as f64 / iters as f64;
    println!("{label}\t{ns:.1}");
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [table, names] = args.as_slice() else {
        eprintln!("usage: toolgate-python-bench TABLE NAMES");
        std::process::exit(2);
    };
    let bytes = std::fs::read(table).expect("read the table");
    let names: Vec<String> = std::fs::read_to_string(names)
        .expect("read the names")
        .lines()
        .map(str::to_string)
        .collect();
    let t = Table::load(&bytes).expect("the table loads");
    let ctx = t
        .context("config0")
        .expect("config0")
        .role(Role::User)
        .consumer(Some("k0"));
    let n = names.len();
    let allowed = names.iter().filter(|x| ctx.decide(x).allowed).count();
    println!("check\t{allowed}\t{}", ctx.unavailable_count());
    time("decide", 2_000_000, |i| ctx.decide(&names[i % n]).allowed);
    let iters = if t.tool_count() > 5_000 {
        5_000
    } else {
        20_000
    };
    time("unavailable", iters, |_| ctx.unavailable().len());
}
