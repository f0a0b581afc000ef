//! What one read from memory costs on this machine: the floor under a name
//! lookup at a million tools (BENCHMARKS.md, "Round four: the floor under a
//! name at a million tools").
//!
//! - Dependent reads: a pointer chase through one random cycle over a region
//!   of 1 to 64 MB, one pointer per 64-byte line; each read waits for the
//!   last, so the time per read is the latency of the level that holds the region.
//! - Overlapped reads: 1 to 16 such chases interleaved over a 32 MB region
//!   (the size of the name slots at 1M tools); the time per read shows how
//!   many misses the core keeps in flight.
//!
//! `cargo run --release -p toolgate-bench --example memory_latency`. Medians of 5.

use std::hint::black_box;
use std::time::Instant;

const LINE: usize = 8; // u64 words per 64-byte line

/// A single random cycle through the `lines` lines of a region (Sattolo's
/// shuffle with a fixed xorshift, so every run walks the same cycle).
fn cycle(lines: usize) -> (Vec<u64>, Vec<usize>) {
    let mut order: Vec<usize> = (0..lines).collect();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for i in (1..lines).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        order.swap(i, (x % i as u64) as usize);
    }
    let mut next = vec![0u64; lines * LINE];
    for k in 0..lines {
        next[order[k] * LINE] = (order[(k + 1) % lines] * LINE) as u64;
    }
    (next, order)
}

/// Nanoseconds per read with `chains` chases interleaved, median of 5.
fn per_read(next: &[u64], order: &[usize], chains: usize, reads: usize) -> f64 {
    let mut times: Vec<f64> = (0..5)
        .map(|_| {
            let mut at: Vec<usize> = (0..chains)
                .map(|c| order[c * order.len() / chains] * LINE)
                .collect();
            let t = Instant::now();
            for _ in 0..reads / chains {
                for p in at.iter_mut() {
                    *p = next[*p] as usize;
                }
            }
            black_box(&at);
            t.elapsed().as_nanos() as f64 / (reads / chains * chains) as f64
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[2]
}

fn main() {
    let reads = 4_000_000;
    println!("dependent reads (one chase)");
    println!("| region | ns per read |\n| ---: | ---: |");
    for mb in [1usize, 2, 4, 8, 16, 32, 64] {
        let (next, order) = cycle(mb << 20 >> 6);
        println!("| {mb} MB | {:.1} |", per_read(&next, &order, 1, reads));
    }
    println!("\noverlapped reads over 32 MB");
    println!("| chases in flight | ns per read |\n| ---: | ---: |");
    let (next, order) = cycle(32 << 20 >> 6);
    for chains in [1usize, 2, 3, 4, 6, 8, 16] {
        println!(
            "| {chains} | {:.1} |",
            per_read(&next, &order, chains, reads)
        );
    }
}
