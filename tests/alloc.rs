//! Zero heap allocations per decision, proven with a counting allocator.
//! A plain `main` (no test harness), so no other thread allocates meanwhile.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn main() {
    let reg = (0..200)
        .map(|i| {
            format!(
                "[[tool]]\nname = \"t{i}\"\ngroup = \"g{}\"\n{}",
                i % 7,
                if i % 5 == 0 {
                    "admin_only = true\n"
                } else {
                    ""
                }
            )
        })
        .collect::<String>();
    let policy =
        "enforcement observe provider p { zone externalEu } group g3 { class systemDiagnostics } \
                  configuration c { provider p groups [g1, g2, g3] exclude [t2, t9] } \
                  profile pr { allow [group g1, t30] } consumer k { profile pr }";
    let table = toolgate_reference::table(&reg, &[policy]);
    let names: Vec<String> = (0..210).map(|i| format!("t{i}")).collect();
    let ctxs = [
        table
            .context("c")
            .unwrap()
            .role(toolgate_runtime::Role::User),
        table
            .context("c")
            .unwrap()
            .role(toolgate_runtime::Role::Admin)
            .consumer(Some("k"))
            .enforcement(Some("enforce")),
    ];
    let mut allowed = 0usize;
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    for ctx in &ctxs {
        for (i, n) in names.iter().enumerate() {
            let d = ctx.decide(n);
            allowed += usize::from(d.allowed);
            if i < 200 {
                let d = ctx.decide_id(i as u32);
                allowed += usize::from(d.allowed) + usize::from(ctx.is_offered(i as u32));
            }
        }
        ctx.for_each_unavailable(|_, _| allowed += 1);
        allowed += ctx.offered_count();
    }
    let after = ALLOCATIONS.load(Ordering::SeqCst);
    std::hint::black_box(allowed);
    assert_eq!(
        after - before,
        0,
        "decisions allocated {} times",
        after - before
    );
    println!(
        "zero allocations over {} decisions, two unavailable walks and two offered counts",
        2 * (210 + 400)
    );
}
