//! docs/decision-log.md is true: its example lines are exactly what the
//! writers write, and `toolgate stats` (LogStats) reads them.

use toolgate_runtime::log::{LogRecord, LogStats, ServiceRecord};

fn doc() -> String {
    std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/decision-log.md"
    ))
    .expect("docs/decision-log.md")
}

/// The lines of the ```jsonl blocks, in order.
fn example_lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        match (inside, line) {
            (false, "```jsonl") => inside = true,
            (true, "```") => inside = false,
            (true, l) => out.push(l.to_string()),
            _ => {}
        }
    }
    out
}

#[test]
fn the_documented_records_are_written_field_for_field_and_read_by_stats() {
    let lines = example_lines(&doc());
    assert_eq!(lines.len(), 2);
    let runtime: LogRecord = serde_json::from_str(&lines[0]).expect("a runtime record");
    assert_eq!(serde_json::to_string(&runtime).unwrap(), lines[0]);
    let service: ServiceRecord = serde_json::from_str(&lines[1]).expect("a service record");
    assert_eq!(serde_json::to_string(&service).unwrap(), lines[1]);
    let stats = LogStats::read(&lines.join("\n")).unwrap();
    assert_eq!((stats.decisions, stats.refused), (2, 2));
    assert_eq!(
        stats.by_reason,
        vec![
            ("notInProfile".to_string(), 1),
            ("configurationGroup".to_string(), 1)
        ]
    );
}
