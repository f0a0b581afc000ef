//! The table loader: any bytes are refused or give a table that decides without panicking.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolgate_runtime::{Role, Table};

fuzz_target!(|data: &[u8]| {
    if let Ok(t) = Table::load(data) {
        let names: Vec<String> = t.configuration_names().map(str::to_string).collect();
        for c in names {
            if let Ok(ctx) = t.context(&c) {
                for role in Role::ALL {
                    let ctx = ctx.clone().role(role).consumer(Some("x"));
                    let _ = ctx.unavailable();
                    let _ = ctx.offered();
                    for d in ctx.decisions() {
                        let _ = ctx.refusal(&d);
                    }
                }
            }
        }
    }
});
