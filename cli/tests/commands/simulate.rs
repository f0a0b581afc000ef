//! `toolgate simulate` (with `decide`): the decision log they append, as
//! `stats` reads it. Hidden remote names under simulate: `hidden.rs`.

use crate::common::*;

#[test]
fn decide_and_simulate_append_the_decision_log_that_stats_reads() {
    let dir = temp("log");
    let log = dir.join("decisions.jsonl");
    let l = log.to_str().unwrap();
    let o = run(&demo_chat("decide", &["--log", l, "read_source"]));
    assert_eq!(o.status.code(), Some(1));
    let o = run(&demo_chat("simulate", &["--log", l]));
    assert_eq!(o.status.code(), Some(0));
    let text = std::fs::read_to_string(&log).unwrap();
    let records: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // One record for decide, one per registered tool for simulate.
    assert_eq!(records.len(), 24);
    let first = &records[0];
    for (k, v) in [
        ("configuration", "demo-chat"),
        ("role", "user"),
        ("tool", "read_source"),
        ("reason", "configurationGroup"),
    ] {
        assert_eq!(first[k], v, "{k}");
    }
    assert_eq!(first["allowed"], false);
    assert_eq!(first["table"].as_str().map(str::len), Some(64));
    let o = run(&["stats", l, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (v["decisions"].as_u64(), v["refused"].as_u64()),
        (Some(24), Some(18))
    );
}
