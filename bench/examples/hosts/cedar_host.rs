//! Cedar on the same decisions (bench/src/cedar.rs): `is_authorized` on a
//! request built beforehand (generous to Cedar, as in benches/cedar.rs), and
//! the list as one request per tool. Cedar answers allow or deny only, so
//! its list holds names without reasons; remote tools whose names this user
//! may not see are left out by the runtime's visibility rule, as every list.

use std::hint::black_box;
use std::path::Path;

use toolgate_bench::cedar::CedarWorld;
use toolgate_runtime::{Role, Table};

use crate::expected::{self, strided, CONFIGURATION, CONSUMER};
use crate::timing::{self, ns_per_op, row};

pub fn run(dir: &Path, n: usize) -> Result<(), String> {
    let (bytes, tools) = expected::read(dir, n)?;
    let table = Table::load(&bytes).map_err(|e| e.to_string())?;
    let ctx = expected::context(&table)?;
    let spec = table.spec();
    let world = CedarWorld::new(spec);
    let cctx = world.context(spec, CONFIGURATION, Some(CONSUMER), None);
    let requests = world.requests(spec, Role::User, &cctx);
    let shown: Vec<bool> = (0..n as u32).map(|i| ctx.name_visible(i)).collect();
    let list = || -> Vec<&str> {
        requests
            .iter()
            .zip(&tools)
            .zip(&shown)
            .filter(|((r, _), shown)| **shown && !world.allowed(r))
            .map(|((_, t), _)| t.name.as_str())
            .collect()
    };
    for (t, r) in tools.iter().zip(&requests) {
        if world.allowed(r) != t.allowed {
            return Err(format!(
                "{}: Cedar says {}, the runtime {}",
                t.name, !t.allowed, t.allowed
            ));
        }
    }
    let want: Vec<&str> = expected::unavailable(&tools)
        .into_iter()
        .map(|(t, _)| t)
        .collect();
    if list() != want {
        return Err("Cedar's unavailable list differs from the runtime's".into());
    }

    let seq = strided(&requests);
    let passes = timing::passes(20_000, n);
    let ns = ns_per_op(passes, || {
        for r in &seq {
            black_box(world.allowed(black_box(r)));
        }
    }) / n as f64;
    row("cedar", "decide", n, ns, passes * n);
    let iters = timing::iters((5_000 / n).max(1));
    let ns = ns_per_op(iters, || {
        black_box(list());
    });
    row("cedar", "unavailable", n, ns, iters);
    Ok(())
}
