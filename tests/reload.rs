//! Hot reload under load: reader threads decide while a writer swaps between
//! two tables a thousand times. Every decision must equal the answer of
//! exactly the table it was made with (identified by its digest).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use toolgate_compiler::lower;
use toolgate_reference::model;
use toolgate_runtime::{Reason, Role, Table, TableHandle};

const REG: &str = "[[tool]]\nname = \"a\"\ngroup = \"g\"\n[[tool]]\nname = \"b\"\ngroup = \"g\"\n[[tool]]\nname = \"c\"\ngroup = \"h\"\n";

fn bytes(policy: &str) -> Vec<u8> {
    lower::compile(&model(REG, &[policy]))
}

#[test]
fn decisions_under_a_thousand_swaps_come_from_exactly_one_table() {
    let a = bytes("provider p { zone local } configuration c { provider p exclude [a] }");
    let b = bytes("provider p { zone local } configuration c { provider p groups [h] }");
    let (ta, tb) = (Table::load(&a).unwrap(), Table::load(&b).unwrap());
    assert_ne!(ta.digest(), tb.digest());
    // The expected answers per table digest.
    let mut expected: HashMap<[u8; 32], Vec<(bool, Option<Reason>)>> = HashMap::new();
    for t in [&ta, &tb] {
        let ctx = t.context("c").unwrap().role(Role::User);
        expected.insert(
            t.digest(),
            ["a", "b", "c"]
                .iter()
                .map(|n| {
                    let d = ctx.decide(n);
                    (d.allowed, d.reason)
                })
                .collect(),
        );
    }
    let expected = Arc::new(expected);
    let handle = Arc::new(TableHandle::new(ta));
    let stop = Arc::new(AtomicBool::new(false));
    let count = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let readers: Vec<_> = (0..4)
        .map(|r| {
            let (handle, stop, count, expected) = (
                handle.clone(),
                stop.clone(),
                count.clone(),
                expected.clone(),
            );
            std::thread::spawn(move || {
                let names = ["a", "b", "c"];
                let mut i = r;
                let mut seen = std::collections::HashSet::new();
                while !stop.load(Ordering::Relaxed) {
                    let t = handle.current();
                    let ctx = t.context("c").unwrap().role(Role::User);
                    let k = i % 3;
                    let d = ctx.decide(names[k]);
                    let want = expected.get(&t.digest()).expect("a known table")[k];
                    assert_eq!((d.allowed, d.reason), want);
                    seen.insert(t.digest());
                    count.fetch_add(1, Ordering::Relaxed);
                    i += 1;
                }
                seen.len()
            })
        })
        .collect();
    for s in 0..1000 {
        let next = if s % 2 == 0 { &b } else { &a };
        handle.reload(next).unwrap();
        std::thread::yield_now();
    }
    stop.store(true, Ordering::Relaxed);
    let seen: Vec<usize> = readers
        .into_iter()
        .map(|r| r.join().expect("no reader panicked"))
        .collect();
    let n = count.load(Ordering::Relaxed);
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "reload: {n} decisions in {secs:.3} s across 1000 swaps ({:.0} decisions/s)",
        n as f64 / secs
    );
    assert!(n > 1000, "readers made progress: {n}");
    assert!(seen.contains(&2), "some reader saw both tables: {seen:?}");
}

#[test]
fn a_corrupt_update_never_replaces_a_good_table() {
    let a = bytes("provider p { zone local } configuration c { provider p }");
    let handle = TableHandle::new(Table::load(&a).unwrap());
    let before = handle.current().digest();
    let mut bad = a.clone();
    bad[60] ^= 0xff;
    assert!(handle.reload(&bad).is_err());
    assert!(handle.reload(&a[..a.len() - 1]).is_err());
    assert_eq!(handle.current().digest(), before);
    assert!(handle.current().context("c").unwrap().decide("a").allowed);
}
