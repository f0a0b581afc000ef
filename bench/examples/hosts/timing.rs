//! Repetitions, medians and the `ROW` lines hosts.sh gathers. Every figure
//! is the median of `reps()` timed repetitions after one untimed warm-up
//! repetition; `HOSTS_QUICK=1` shortens the loops (a smoke run, not numbers).

use std::convert::Infallible;
use std::time::Instant;

pub fn quick() -> bool {
    std::env::var("HOSTS_QUICK").is_ok_and(|v| !v.is_empty() && v != "0")
}

pub fn reps() -> usize {
    if quick() {
        5
    } else {
        7
    }
}

/// A loop size: `full`, or a twentieth of it in a quick run (at least 1).
pub fn iters(full: usize) -> usize {
    if quick() {
        (full / 20).max(1)
    } else {
        full.max(1)
    }
}

/// Passes over the `n` strided names that make about `target` decisions.
pub fn passes(target: usize, n: usize) -> usize {
    iters(target).div_ceil(n).max(1)
}

pub fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Median over the repetitions of one repetition's figure (`rep` returns it).
pub fn median_of<E>(mut rep: impl FnMut() -> Result<f64, E>) -> Result<f64, E> {
    rep()?;
    let mut xs = Vec::with_capacity(reps());
    for _ in 0..reps() {
        xs.push(rep()?);
    }
    Ok(median(xs))
}

/// Median ns per call of `f`, called `iters` times a repetition.
pub fn ns_per_op(iters: usize, mut f: impl FnMut()) -> f64 {
    let Ok(ns) = median_of::<Infallible>(|| {
        let t = Instant::now();
        for _ in 0..iters {
            f();
        }
        Ok(t.elapsed().as_nanos() as f64 / iters as f64)
    });
    ns
}

pub fn row(path: &str, op: &str, n: usize, ns: f64, iters: usize) {
    println!(
        "ROW path={path} op={op} n={n} ns={ns:.1} iters={iters} reps={}",
        reps()
    );
}
