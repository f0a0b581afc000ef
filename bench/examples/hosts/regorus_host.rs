//! Rego through Regorus on the same decisions (bench/src/rego.rs): the
//! compiled program on one reused VM, an input built beforehand per tool
//! (generous to Regorus, as the Cedar row is to Cedar), and the list as one
//! evaluation per tool (the loop a host would write) after the set rule
//! `unavailable` was checked too. Regorus answers allow or deny only, so its
//! list holds names without reasons; remote tools whose names this user may
//! not see are left out by the runtime's visibility rule, as every list.

use std::hint::black_box;
use std::path::Path;

use toolgate_bench::peers::timed_context;
use toolgate_bench::rego::RegoWorld;
use toolgate_runtime::Table;

use crate::expected::{self, strided, CONFIGURATION};
use crate::timing::{self, ns_per_op, row};

pub fn run(dir: &Path, n: usize) -> Result<(), String> {
    let (bytes, tools) = expected::read(dir, n)?;
    let table = Table::load(&bytes).map_err(|e| e.to_string())?;
    let ctx = expected::context(&table)?;
    let spec = table.spec();
    let mut world = RegoWorld::new(spec);
    let pctx = timed_context(spec, CONFIGURATION);
    let inputs = world.inputs(spec, &pctx);
    let shown: Vec<bool> = (0..n as u32).map(|i| ctx.name_visible(i)).collect();
    for (t, input) in tools.iter().zip(&inputs) {
        if world.allowed(input) != t.allowed {
            return Err(format!(
                "{}: Regorus says {}, the runtime {}",
                t.name, !t.allowed, t.allowed
            ));
        }
    }
    let list = |world: &mut RegoWorld| -> Vec<&str> {
        inputs
            .iter()
            .zip(&tools)
            .zip(&shown)
            .filter(|((r, _), shown)| **shown && !world.allowed(r))
            .map(|((_, t), _)| t.name.as_str())
            .collect()
    };
    let want: Vec<&str> = expected::unavailable(&tools)
        .into_iter()
        .map(|(t, _)| t)
        .collect();
    if list(&mut world) != want {
        return Err("Regorus's unavailable list differs from the runtime's".into());
    }
    let list_input = world.input(spec, &pctx, None);
    let mut set = world.unavailable(&list_input);
    set.sort_unstable();
    let mut refused: Vec<&str> = tools
        .iter()
        .filter(|t| !t.allowed)
        .map(|t| t.name.as_str())
        .collect();
    refused.sort_unstable();
    if set != refused {
        return Err("Regorus's unavailable set rule differs from the runtime's refusals".into());
    }

    let seq = strided(&inputs);
    let passes = timing::passes(20_000, n);
    let ns = ns_per_op(passes, || {
        for r in &seq {
            black_box(world.allowed(black_box(r)));
        }
    }) / n as f64;
    row("regorus", "decide", n, ns, passes * n);
    let iters = timing::iters((5_000 / n).max(1));
    let ns = ns_per_op(iters, || {
        black_box(list(&mut world));
    });
    row("regorus", "unavailable", n, ns, iters);
    Ok(())
}
