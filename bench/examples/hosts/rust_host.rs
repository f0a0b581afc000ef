//! The runtime in process: `Context::decide` by name and `Context::unavailable`.

use std::hint::black_box;
use std::path::Path;

use toolgate_runtime::Table;

use crate::expected::{self, strided};
use crate::timing::{self, ns_per_op, row};

pub fn run(dir: &Path, n: usize) -> Result<(), String> {
    let (bytes, tools) = expected::read(dir, n)?;
    let table = Table::load(&bytes).map_err(|e| e.to_string())?;
    let ctx = expected::context(&table)?;
    // The table read back from the file answers as the one that wrote the TSV.
    for t in &tools {
        let d = ctx.decide(&t.name);
        if (d.allowed, d.reason) != (t.allowed, t.reason) {
            return Err(format!("{}: the runtime decides {d:?}", t.name));
        }
    }
    let list: Vec<_> = ctx
        .unavailable()
        .iter()
        .map(|u| (u.tool, u.reason))
        .collect();
    if list != expected::unavailable(&tools) {
        return Err("the runtime's unavailable list differs from the TSV".into());
    }

    let tools_allowed: Vec<String> = tools
        .iter()
        .filter(|t| t.allowed)
        .map(|t| t.name.clone())
        .collect();
    let names: Vec<String> = tools.into_iter().map(|t| t.name).collect();
    let seq = strided(&names);
    let passes = timing::passes(1_000_000, n);
    let ns = ns_per_op(passes, || {
        for name in &seq {
            black_box(ctx.decide(black_box(name.as_str())));
        }
    }) / n as f64;
    row("rust", "decide", n, ns, passes * n);
    let iters = timing::iters(20_000_000 / n);
    let ns = ns_per_op(iters, || {
        black_box(ctx.unavailable());
    });
    row("rust", "unavailable", n, ns, iters);
    // A chat host's request: a new context, then every registered tool (the
    // offered set and the unavailable list together).
    let request = || {
        let c = expected::context(&table).expect("config0");
        (c.offered(), c.unavailable())
    };
    let offered_want: Vec<&str> = tools_allowed.iter().map(String::as_str).collect();
    let (offered, listed) = request();
    if offered != offered_want || listed.len() != list.len() {
        return Err(
            "a request's offered set or unavailable list differs from the runtime's".into(),
        );
    }
    let iters = timing::iters(20_000_000 / n);
    let ns = ns_per_op(iters, || {
        black_box(request());
    });
    row("rust", "request", n, ns, iters);
    Ok(())
}
