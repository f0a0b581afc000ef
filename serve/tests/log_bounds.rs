//! The decision log grows with what a request sent, not with its items
//! times its defaults (docs/decision-log.md, "Bounds").

mod common;

use common::*;
use serde_json::{json, Value};
use toolgate_runtime::log::{LogStats, ServiceRecord};
use toolgate_serve::{LogTarget, RequestLimits};

/// A batch of `items` empty evaluations whose defaults carry a stored run of
/// about `run_bytes` (and the shape: 1,000 items, 11.7 KB of run).
fn batch(items: usize, run_bytes: usize) -> Value {
    let names: Vec<String> = (0..run_bytes / 20)
        .map(|i| format!("excluded_tool_{i:04}"))
        .collect();
    json!({
        "subject": {"type": "user", "id": "alice"},
        "action": {"name": "call"},
        "resource": {"type": "tool", "id": "get_help_article"},
        "context": {"configuration": "support-chat",
                    "run": {"allowedToolNames": null, "excludedToolNames": names}},
        "evaluations": vec![json!({}); items],
    })
}

/// The service over the profiles example, logging to `log`.
async fn logging(log: &std::path::Path) -> Running {
    let source = profiles_source();
    let t = source.load().expect("compiles");
    start(
        t,
        Some(source),
        RequestLimits::default(),
        Some((LogTarget::File(log.to_path_buf()), 65_536)),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batchs_shared_run_is_logged_once_and_the_log_stays_near_the_request() {
    let dir = tempfile::tempdir().expect("a directory");
    let log = dir.path().join("decisions.jsonl");
    let s = logging(&log).await;
    let body = batch(1000, 11_700).to_string();
    assert!(
        (14_000..18_500).contains(&body.len()),
        "{} bytes",
        body.len()
    );
    let a = s.post("/access/v1/evaluations", body.clone()).await;
    assert_eq!(a.status, 200, "{}", &a.text[..a.text.len().min(300)]);
    assert_eq!(a.json["evaluations"].as_array().map(Vec::len), Some(1000));
    // A second batch whose items name their own subject: the default
    // context (and its run) is still the request's once.
    let mut own = batch(3, 11_700);
    own["evaluations"] = json!([
        {"subject": {"type": "user", "id": "bob"}},
        {"subject": {"type": "user", "id": "carol"}},
        {"context": {"configuration": "support-chat", "run": {"allowedToolNames": ["get_help_article"]}}},
    ]);
    let b = s.post_json("/access/v1/evaluations", &own).await;
    assert_eq!(b.status, 200, "{}", &b.text[..b.text.len().min(300)]);
    let service = s.service.clone();
    s.stop().await;
    assert_eq!(service.shared.metrics.log_dropped.get(), 0);
    let text = std::fs::read_to_string(&log).expect("the log");
    let records: Vec<ServiceRecord> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a service record"))
        .collect();
    assert_eq!(records.len(), 1003);
    // The first batch: its run whole once, then referred to.
    let first_batch = &text.as_bytes()[..text.lines().take(1000).map(|l| l.len() + 1).sum()];
    let ratio = first_batch.len() as f64 / body.len() as f64;
    assert!(
        ratio < 50.0,
        "{} bytes of log for a {}-byte request: x{ratio:.1} (x745 when every record repeated the run)",
        first_batch.len(),
        body.len()
    );
    let whole = &records[0];
    assert!(whole
        .input
        .context
        .run
        .as_ref()
        .is_some_and(Value::is_object));
    let reference = json!(format!("[as in decision {}]", whole.decision_id));
    for r in &records[1..1000] {
        assert_eq!(r.input.context.run.as_ref(), Some(&reference));
        assert_eq!(r.input.context.configuration, "support-chat");
    }
    // The second: its two items on the defaults share one run; the item
    // with a context of its own logs that one whole.
    let (b0, b1, b2) = (&records[1000], &records[1001], &records[1002]);
    assert!(b0.input.context.run.as_ref().is_some_and(Value::is_object));
    assert_eq!(b0.input.subject.id, "bob");
    assert_eq!(
        b1.input.context.run,
        Some(json!(format!("[as in decision {}]", b0.decision_id)))
    );
    assert_eq!(
        b2.input.context.run,
        Some(json!({"allowedToolNames": ["get_help_article"]}))
    );
    // The log is still read whole.
    let stats = LogStats::read(&text).expect("stats read the log");
    assert_eq!(stats.decisions, 1003);
}

/// The worst case the references cannot shrink: defaults at the 1,024-byte
/// name caps and empty items. The log of one request stays within 64 bytes
/// for each byte it sent; the records past that are dropped and counted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_requests_log_is_bounded_by_what_it_sent() {
    let dir = tempfile::tempdir().expect("a directory");
    let log = dir.path().join("decisions.jsonl");
    let s = logging(&log).await;
    let long = "x".repeat(1024);
    let body = json!({
        "subject": {"type": "user", "id": long},
        "action": {"name": "call"},
        "resource": {"type": "tool", "id": long},
        "context": {"configuration": "support-chat"},
        "evaluations": vec![json!({}); 1000],
    })
    .to_string();
    let a = s.post("/access/v1/evaluations", body.clone()).await;
    assert_eq!(a.status, 200, "{}", &a.text[..a.text.len().min(300)]);
    assert_eq!(a.json["evaluations"].as_array().map(Vec::len), Some(1000));
    let service = s.service.clone();
    s.stop().await;
    let written = std::fs::read_to_string(&log).expect("the log").len();
    assert!(
        written <= 64 * body.len(),
        "{written} bytes of log for a {}-byte request",
        body.len()
    );
    // Without the bound every record repeated both names: about x700.
    let dropped = service.shared.metrics.log_dropped.get();
    assert!(dropped > 0, "nothing was dropped: {written} bytes written");
    assert_eq!(
        std::fs::read_to_string(&log)
            .expect("the log")
            .lines()
            .count() as u64
            + dropped,
        1000
    );
}
