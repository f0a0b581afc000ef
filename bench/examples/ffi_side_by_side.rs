//! The Rust half of the PHP FFI comparison (BENCHMARKS.md, "Hosts: C ABI and
//! PHP FFI"): writes the 1,000-tool workload's table for the PHP half and
//! times, in this process, the runtime and the C ABI on the same context.
//!
//! `bindings/php/bench/run.sh` runs both halves in one go.

use std::hint::black_box;
use std::time::Instant;

use toolgate::*;
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
    println!("rust\t{label}\t{ns:.1}");
}

fn main() {
    let mut args = std::env::args().skip(1);
    let out = args
        .next()
        .unwrap_or_else(|| "/tmp/toolgate-ffi-bench.tgt".into());
    let tools: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1000);
    let w = toolgate_bench::generate(tools, 10, 42);
    let m = toolgate_reference::model(&w.registry, &[&w.policy]);
    let bytes = toolgate_compiler::lower::compile(&m);
    std::fs::write(&out, &bytes).expect("write the table");
    let t = Table::load(&bytes).expect("loads");
    let ctx = t
        .context("config0")
        .expect("config0")
        .role(Role::User)
        .consumer(Some("k0"));
    let names = &w.tool_names;
    let n = names.len();
    println!("meta\ttools\t{n}\tunavailable\t{}", ctx.unavailable_count());
    time("decide by name (runtime)", 2_000_000, |i| {
        ctx.decide(&names[(i * 7919) % n]).allowed
    });

    // The same through the C ABI, from Rust: the cost of the boundary itself.
    let mut table = std::ptr::null_mut();
    let mut c = std::ptr::null_mut();
    unsafe {
        assert_eq!(
            toolgate_table_load(bytes.as_ptr().cast(), bytes.len(), &mut table),
            TOOLGATE_OK
        );
        assert_eq!(
            toolgate_context_new(
                table,
                "config0".as_ptr().cast(),
                7,
                TOOLGATE_ROLE_USER,
                "k0".as_ptr().cast(),
                2,
                std::ptr::null(),
                std::ptr::null(),
                0,
                &mut c,
            ),
            TOOLGATE_OK
        );
    }
    time("decide by name (C ABI, packed)", 2_000_000, |i| {
        let name = &names[(i * 7919) % n];
        unsafe { toolgate_decide_packed(c, name.as_ptr().cast(), name.len()) }
    });
    time("unavailable list (runtime, names)", 20_000, |_| {
        ctx.unavailable().len()
    });
    time("unavailable list (C ABI, JSON)", 20_000, |_| unsafe {
        let mut b = toolgate_buf {
            ptr: std::ptr::null_mut(),
            len: 0,
        };
        toolgate_unavailable_json(c, &mut b);
        let len = b.len;
        toolgate_buf_free(b);
        len
    });
    time("unavailable list (C ABI, columns)", 20_000, |_| unsafe {
        let mut b = toolgate_buf {
            ptr: std::ptr::null_mut(),
            len: 0,
        };
        toolgate_unavailable_columns(c, &mut b);
        let len = b.len;
        toolgate_buf_free(b);
        len
    });
    time("unavailable prompt (runtime)", 20_000, |_| {
        ctx.unavailable_prompt().len()
    });
    unsafe {
        toolgate_context_free(c);
        toolgate_table_free(table);
    }
}
