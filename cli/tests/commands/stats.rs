//! `toolgate stats`: refusals counted from a decision log.

use crate::common::*;

#[test]
fn stats_counts_refusals_per_reason_and_configuration() {
    let dir = std::env::temp_dir().join(format!("toolgate-cli-{}-stats", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("decisions.jsonl");
    let line = |cfg: &str, allowed: bool, reason: Option<&str>| {
        format!(
            "{{\"timeUnixMs\":1,\"table\":\"ab\",\"configuration\":\"{cfg}\",\"role\":\"user\",\"consumer\":null,\"tool\":\"t\",\"allowed\":{allowed},\"reason\":{},\"observedOnly\":false}}\n",
            reason.map(|r| format!("\"{r}\"")).unwrap_or("null".into())
        )
    };
    let text = [
        line("editor-chat", false, Some("configurationExcluded")),
        line("editor-chat", false, Some("configurationExcluded")),
        line("demo-chat", false, Some("configurationGroup")),
        line("demo-chat", true, None),
    ]
    .concat();
    std::fs::write(&log, text).unwrap();
    let o = run(&["stats", log.to_str().unwrap(), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (v["decisions"].as_u64(), v["refused"].as_u64()),
        (Some(4), Some(3))
    );
    assert_eq!(v["byReason"]["configurationExcluded"], 2);
    assert_eq!(v["byConfiguration"]["demo-chat"]["configurationGroup"], 1);
    let text = stdout(&run(&["stats", log.to_str().unwrap()]));
    // comfy-table columns; the bars on a log scale (1 against 2: 25 3/8
    // columns against 40).
    assert_eq!(
        text,
        "4 decisions, 3 refused, 0 offered under observe\n\n\
         refusals by reason (bar: log scale)\n  \
         reason                 refusals\n  \
         configurationGroup            1  █████████████████████████▎\n  \
         configurationExcluded         2  ████████████████████████████████████████\n\n\
         refusals by configuration\n  \
         configuration  refusals  by reason\n  \
         demo-chat             1  configurationGroup 1\n  \
         editor-chat           2  configurationExcluded 2\n"
    );
}
