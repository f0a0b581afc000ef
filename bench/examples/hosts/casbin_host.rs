//! Casbin on the same decisions (bench/src/casbin_model.rs): the
//! `Enforcer`'s `enforce` on a request built beforehand (generous to Casbin,
//! as the Cedar row is to Cedar), and the list as one request per tool.
//! Casbin answers allow or deny only, so its list holds names without
//! reasons; remote tools whose names this user may not see are left out by
//! the runtime's visibility rule, as every list. (The `CachedEnforcer` is in
//! the criterion run, benches/cedar.rs.)

use std::hint::black_box;
use std::path::Path;

use toolgate_bench::casbin_model::CasbinWorld;
use toolgate_bench::peers::timed_context;
use toolgate_runtime::Table;

use crate::expected::{self, strided, CONFIGURATION};
use crate::timing::{self, ns_per_op, row};

pub fn run(dir: &Path, n: usize) -> Result<(), String> {
    let (bytes, tools) = expected::read(dir, n)?;
    let table = Table::load(&bytes).map_err(|e| e.to_string())?;
    let ctx = expected::context(&table)?;
    let spec = table.spec();
    let world = CasbinWorld::new(spec, n);
    let requests = CasbinWorld::requests(spec, &timed_context(spec, CONFIGURATION));
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
                "{}: Casbin says {}, the runtime {}",
                t.name, !t.allowed, t.allowed
            ));
        }
    }
    let want: Vec<&str> = expected::unavailable(&tools)
        .into_iter()
        .map(|(t, _)| t)
        .collect();
    if list() != want {
        return Err("Casbin's unavailable list differs from the runtime's".into());
    }

    let seq = strided(&requests);
    let passes = timing::passes(20_000, n);
    let ns = ns_per_op(passes, || {
        for r in &seq {
            black_box(world.allowed(black_box(r)));
        }
    }) / n as f64;
    row("casbin", "decide", n, ns, passes * n);
    let iters = timing::iters((5_000 / n).max(1));
    let ns = ns_per_op(iters, || {
        black_box(list());
    });
    row("casbin", "unavailable", n, ns, iters);
    Ok(())
}
