//! Hot reload, the decision log and shutdown, over real HTTP on 127.0.0.1.

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};
use toolgate_runtime::log::{LogStats, ServiceRecord};
use toolgate_runtime::{Role, Table};
use toolgate_serve::{LogTarget, RequestLimits, Source};

const POLICY_A: &str = "provider p { zone local } configuration c { provider p exclude [a] }";
const POLICY_B: &str =
    "provider p { zone local } configuration c { provider p groups [g] exclude [b] }";

/// Expected (decision, reason) per tool, per table digest.
fn expected(tables: &[&Table]) -> HashMap<String, HashMap<&'static str, (bool, Value)>> {
    tables
        .iter()
        .map(|t| {
            let ctx = t.context("c").unwrap().role(Role::User);
            let per_tool = ["a", "b", "c"]
                .into_iter()
                .map(|n| {
                    let d = ctx.decide(n);
                    (n, (d.allowed, json!(d.reason.map(|r| r.code()))))
                })
                .collect();
            (t.digest_hex(), per_tool)
        })
        .collect()
}

fn single(tool: &str) -> Value {
    json!({"subject": {"type": "user", "id": "u"}, "action": {"name": "call"},
        "resource": {"type": "tool", "id": tool}, "context": {"configuration": "c"}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_matches_the_table_that_made_it_while_the_table_is_swapped_a_thousand_times() {
    let (a, b) = (table_bytes(REG, POLICY_A), table_bytes(REG, POLICY_B));
    let (ta, tb) = (Table::load(&a).unwrap(), Table::load(&b).unwrap());
    assert_ne!(ta.digest(), tb.digest());
    let expected = Arc::new(expected(&[&ta, &tb]));
    // The tables disagree on every tool, so a torn answer cannot pass.
    for tool in ["a", "b", "c"] {
        assert_ne!(
            expected[&ta.digest_hex()][tool],
            expected[&tb.digest_hex()][tool]
        );
    }
    let s = Arc::new(start(ta, None, RequestLimits::default(), None).await);
    let done = Arc::new(AtomicBool::new(false));
    let answers = Arc::new(AtomicU64::new(0));
    let mut clients = Vec::new();
    for k in 0..2usize {
        let (s, done, answers, expected) =
            (s.clone(), done.clone(), answers.clone(), expected.clone());
        clients.push(tokio::spawn(async move {
            let mut seen: HashMap<String, u64> = HashMap::new();
            let mut i = k;
            let deadline = Instant::now() + Duration::from_secs(120);
            while !done.load(Ordering::Relaxed) && Instant::now() < deadline {
                let tools = ["a", "b", "c"];
                if i % 4 == 3 {
                    // A batch: every item from one table.
                    let body = json!({"subject": {"type": "user", "id": "u"},
                        "action": {"name": "call"}, "context": {"configuration": "c"},
                        "evaluations": tools.map(|t| json!({"resource": {"type": "tool", "id": t}})),
                        "options": {"toolgate_context": true}});
                    let r = s.post_json("/access/v1/evaluations", &body).await;
                    assert_eq!(r.status, 200);
                    let digest = r.headers["x-toolgate-table-digest"].to_str().unwrap();
                    assert_eq!(r.json["context"]["tableDigest"], json!(digest));
                    let want = &expected[digest];
                    for (j, tool) in tools.iter().enumerate() {
                        let e = &r.json["evaluations"][j];

                        assert_eq!(
                            (e["decision"].as_bool().unwrap(), e["context"]["reason"].clone()),
                            want[tool].clone(),
                            "{tool} under {digest}"
                        );
                    }
                    *seen.entry(digest.to_string()).or_default() += 1;
                } else {
                    let tool = tools[i % 3];
                    let r = s.post_json("/access/v1/evaluation", &single(tool)).await;
                    assert_eq!(r.status, 200);
                    let digest = r.json["context"]["tableDigest"].as_str().unwrap().to_string();
                    assert_eq!(
                        r.headers["x-toolgate-table-digest"].to_str().unwrap(),
                        digest
                    );
                    assert_eq!(
                        (r.json["decision"].as_bool().unwrap(), r.json["context"]["reason"].clone()),
                        expected[&digest][tool],
                        "{tool} under {digest}"
                    );
                    *seen.entry(digest).or_default() += 1;
                }
                answers.fetch_add(1, Ordering::Relaxed);
                i += 1;
            }
            seen
        }));
    }
    // The swapper: a thousand swaps, each followed by at least one answer.
    let service = s.service.clone();
    let swaps = {
        let answers = answers.clone();
        tokio::task::spawn_blocking(move || {
            let mut swapped = 0;
            for n in 0..1000 {
                let before = answers.load(Ordering::Relaxed);
                let bytes = if n % 2 == 0 { &b } else { &a };
                if service.shared.install_bytes(bytes).expect("loads") {
                    swapped += 1;
                }
                let waited = Instant::now();
                while answers.load(Ordering::Relaxed) == before
                    && waited.elapsed() < Duration::from_secs(5)
                {
                    std::thread::sleep(Duration::from_micros(50));
                }
            }
            swapped
        })
        .await
        .unwrap()
    };
    done.store(true, Ordering::Relaxed);
    let mut seen: HashMap<String, u64> = HashMap::new();
    for c in clients {
        for (d, n) in c.await.unwrap() {
            *seen.entry(d).or_default() += n;
        }
    }
    assert_eq!(swaps, 1000);
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert!(seen.values().sum::<u64>() >= 1000, "{seen:?}");
    assert!(seen.values().all(|&n| n >= 100), "{seen:?}");
    let m = s.get("/metrics").await.text;
    assert!(
        m.contains("toolgate_reloads_total{result=\"swapped\"} 1000\n"),
        "{m}"
    );
    assert!(m.contains("toolgate_reload_failures_total 0\n"));
}

async fn wait_for(s: &Running, what: &str, mut ok: impl FnMut(&Answer) -> bool, path: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let a = s.get(path).await;
        if ok(&a) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}: {}",
            a.text
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Replace `path` as `toolgate compile -o` does: a temporary file renamed over it.
fn replace(path: &std::path::Path, bytes: &[u8]) {
    let tmp = path.with_extension("tmp-write");
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watched_table_file_is_reloaded_and_a_bad_one_never_replaces_the_current_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("policy.tgt");
    let (a, b) = (table_bytes(REG, POLICY_A), table_bytes(REG, POLICY_B));
    let (da, db) = (
        Table::load(&a).unwrap().digest_hex(),
        Table::load(&b).unwrap().digest_hex(),
    );
    std::fs::write(&path, &a).unwrap();
    let source = Source::Table(path.clone());
    let s = start(
        source.load().unwrap(),
        Some(source),
        RequestLimits::default(),
        None,
    )
    .await;
    let _watch = s
        .service
        .watch(std::time::Duration::from_secs(30))
        .expect("watch");
    assert_eq!(s.digest(), da);

    replace(&path, &b);
    wait_for(
        &s,
        "table B",
        |a| a.json["tableDigest"] == json!(db),
        "/health",
    )
    .await;
    let r = s.post_json("/access/v1/evaluation", &single("a")).await;
    assert_eq!(r.json["context"]["tableDigest"], json!(db));
    assert_eq!(r.json["context"]["reason"], Value::Null);

    // A corrupt table: readiness fails, the metrics say so, B stays.
    let mut bad = b.clone();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    replace(&path, &bad);
    wait_for(&s, "not ready", |a| a.status == 503, "/ready").await;
    let r = s.get("/ready").await;
    assert_eq!(r.json["ready"], json!(false));
    assert_eq!(r.json["tableDigest"], json!(db));
    assert_eq!(r.json["reloadFailures"], json!(1));
    assert!(
        r.json["lastReloadError"]
            .as_str()
            .unwrap()
            .starts_with(&format!("{}: ", path.display())),
        "{}",
        r.text
    );
    let m = s.get("/metrics").await.text;
    assert!(m.contains("toolgate_reload_failures_total 1\n"), "{m}");
    assert!(m.contains("toolgate_last_reload_failed 1\n"));
    assert!(m.contains(&format!("toolgate_table_info{{digest=\"{db}\"}} 1\n")));
    let r = s.post_json("/access/v1/evaluation", &single("a")).await;
    assert_eq!(r.json["context"]["tableDigest"], json!(db));

    // A good table again: ready, serving it.
    replace(&path, &a);
    wait_for(
        &s,
        "ready on A",
        |r| r.status == 200 && r.json["tableDigest"] == json!(da),
        "/ready",
    )
    .await;
    let m = s.get("/metrics").await.text;
    assert!(
        m.contains(&format!("toolgate_table_info{{digest=\"{da}\"}} 1\n")),
        "{m}"
    );
    assert!(!m.contains(&format!("digest=\"{db}\"")), "{m}");
    assert!(m.contains("toolgate_last_reload_failed 0\n"));
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_with_errors_never_replaces_the_table_compiled_from_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("toolgate.toml"),
        "registry = \"registry.toml\"\npolicies = [\"policy.tg\"]\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("registry.toml"), REG).unwrap();
    std::fs::write(dir.path().join("policy.tg"), POLICY_A).unwrap();
    let source = Source::Project(dir.path().to_path_buf());
    let t = source.load().unwrap();
    let da = t.digest_hex();
    let s = start(t, Some(source), RequestLimits::default(), None).await;
    std::fs::write(
        dir.path().join("policy.tg"),
        "configuration c { provider nowhere }",
    )
    .unwrap();
    let e = s.service.shared.reload().unwrap_err();
    assert!(
        matches!(&e, toolgate_serve::CoreError::Table(m) if m.contains("the project has errors")),
        "{e:?}"
    );
    assert_eq!(s.digest(), da);
    assert_eq!(s.get("/ready").await.status, 503);
    std::fs::write(dir.path().join("policy.tg"), POLICY_B).unwrap();
    assert_eq!(s.service.shared.reload(), Ok(true));
    let db = Source::Project(dir.path().to_path_buf())
        .load()
        .unwrap()
        .digest_hex();
    assert_ne!(db, da);
    assert_eq!(s.digest(), db);
    assert_eq!(s.service.shared.reload(), Ok(false));
    assert_eq!(s.get("/ready").await.status, 200);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_decision_log_has_opa_field_names_and_toolgate_stats_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("decisions.jsonl");
    let t = Table::load(&table_bytes(REG, POLICY_A)).unwrap();
    let digest = t.digest_hex();
    let s = start(
        t,
        None,
        RequestLimits::default(),
        Some((LogTarget::File(log.clone()), 1024)),
    )
    .await;
    let r = s
        .client
        .post(format!("{}/access/v1/evaluation", s.base))
        .header("content-type", "application/json")
        .header("x-request-id", "req-7")
        .body(single("a").to_string())
        .send()
        .await
        .unwrap();
    let first: Value = serde_json::from_str(&r.text().await.unwrap()).unwrap();
    let batch = json!({"subject": {"type": "user", "id": "u", "properties": {"role": "admin"}},
        "action": {"name": "offer"}, "context": {"configuration": "c", "run": {"allowedToolNames": ["b"]}},
        "evaluations": [{"resource": {"type": "tool", "id": "b"}}, {"resource": {"type": "tool", "id": "c"}},
            {"resource": {"type": "tool", "id": "b"}, "context": {"configuration": "nope"}}]});
    let r = s.post_json("/access/v1/evaluations", &batch).await;
    assert_eq!(
        r.json["evaluations"][2]["context"]["error"]["code"],
        json!("unknownConfiguration")
    );
    let service = s.service.clone();
    s.stop().await;
    let text = std::fs::read_to_string(&log).unwrap();
    let records: Vec<ServiceRecord> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a service record"))
        .collect();
    // Errors are not decisions: two in the batch, one before.
    assert_eq!(records.len(), 3);
    let r0 = &records[0];
    assert_eq!(first["context"]["decisionId"], json!(r0.decision_id));
    assert_eq!(r0.path, "access/v1/evaluation");
    assert_eq!(r0.request_id.as_deref(), Some("req-7"));
    assert_eq!(r0.table_digest, digest);
    assert_eq!(r0.stage, "call");
    assert_eq!(r0.input.resource.id, "a");
    assert_eq!(r0.input.subject.properties.role, "user");
    assert_eq!(r0.input.context.configuration, "c");
    assert_eq!(r0.input.context.run, None);
    assert!(!r0.result.decision);
    assert_eq!(
        r0.result.context.reason.as_deref(),
        Some("configurationExcluded")
    );
    assert_eq!(r0.timestamp.len(), 30, "{}", r0.timestamp);
    assert!(r0.timestamp.ends_with('Z'));
    let r1 = &records[1];
    assert_eq!(
        (r1.path.as_str(), r1.stage.as_str()),
        ("access/v1/evaluations", "offer")
    );
    assert_eq!(r1.input.subject.properties.role, "admin");
    assert_eq!(
        r1.input.context.run,
        Some(json!({"allowedToolNames": ["b"]}))
    );
    assert!(r1.result.decision);
    assert_eq!(
        records[2].result.context.reason.as_deref(),
        Some("configurationGroup")
    );
    assert_ne!(records[1].decision_id, records[2].decision_id);
    // The raw lines carry OPA's names.
    let raw: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    for key in [
        "decision_id",
        "timestamp",
        "path",
        "input",
        "result",
        "table_digest",
        "stage",
    ] {
        assert!(raw.get(key).is_some(), "{key}");
    }
    let stats = LogStats::read(&text).unwrap();
    assert_eq!((stats.decisions, stats.refused), (3, 2));
    assert_eq!(
        stats.by_reason,
        vec![
            ("configurationGroup".to_string(), 1),
            ("configurationExcluded".to_string(), 1)
        ]
    );
    assert_eq!(service.shared.metrics.log_written.get(), 3);
    assert_eq!(service.shared.metrics.log_dropped.get(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_log_buffer_drops_and_counts_and_never_holds_a_decision() {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    // The log is a FIFO that nobody reads until the decisions are made: the
    // writer blocks once the pipe and its buffer are full, the queue (one
    // record) fills, and every record after that is dropped. Deterministic.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("decisions.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    const O_NONBLOCK: i32 = 0o4000;
    let mut reader = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    let t = Table::load(&table_bytes(REG, POLICY_A)).unwrap();
    let s = start(
        t,
        None,
        RequestLimits::default(),
        Some((LogTarget::File(fifo.clone()), 1)),
    )
    .await;
    let items: Vec<Value> = (0..1000)
        .map(|i| json!({"resource": {"type": "tool", "id": (["a", "b", "c"][i % 3])}}))
        .collect();
    let batch = json!({"subject": {"type": "user", "id": "u"}, "action": {"name": "call"},
        "context": {"configuration": "c"}, "evaluations": items});
    let r = s.post_json("/access/v1/evaluations", &batch).await;
    // Every decision was answered, whatever the log did.
    assert_eq!(r.json["evaluations"].as_array().map(Vec::len), Some(1000));
    let service = s.service.clone();
    let dropped = service.shared.metrics.log_dropped.get();
    assert!(dropped >= 500, "{dropped} dropped");
    // Now drain the pipe (to its end: the writer closes it at shutdown).
    let drain = std::thread::spawn(move || {
        let mut text = Vec::new();
        let mut chunk = [0u8; 65536];
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match reader.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) => text.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    assert!(Instant::now() < deadline, "the log was never closed");
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(e) => panic!("{e}"),
            }
        }
        text
    });
    s.stop().await;
    let text = String::from_utf8(drain.join().unwrap()).unwrap();
    let (written, dropped) = (
        service.shared.metrics.log_written.get(),
        service.shared.metrics.log_dropped.get(),
    );
    assert_eq!(written + dropped, 1000);
    assert_eq!(text.lines().count() as u64, written);
    for line in text.lines() {
        let _: ServiceRecord = serde_json::from_str(line).expect("a whole record");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graceful_shutdown_finishes_and_then_refuses_connections() {
    let s = start(
        Table::load(&table_bytes(REG, POLICY_A)).unwrap(),
        None,
        RequestLimits::default(),
        None,
    )
    .await;
    let base = s.base.clone();
    let client = s.client.clone();
    assert_eq!(s.get("/health").await.status, 200);
    s.stop().await;
    assert!(client.get(format!("{base}/health")).send().await.is_err());
}

/// A Kubernetes ConfigMap or Secret volume, written as the kubelet's
/// AtomicWriter (pkg/volume/util/atomic_writer.go) writes it: the payload
/// in a new timestamped directory, a `..data_tmp` link to it renamed over
/// `..data`, the user-visible `policy.tgt` a link to `..data/policy.tgt`
/// (created once), and the previous timestamped directory removed.
struct ConfigMapVolume {
    dir: std::path::PathBuf,
    current: Option<String>,
    writes: u32,
}

impl ConfigMapVolume {
    fn new(dir: &std::path::Path) -> ConfigMapVolume {
        ConfigMapVolume {
            dir: dir.to_path_buf(),
            current: None,
            writes: 0,
        }
    }

    fn write(&mut self, table: &[u8]) {
        use std::os::unix::fs::symlink;
        self.writes += 1;
        let ts = format!(
            "..2026_12_01_20_0{}_00.12345678{}",
            self.writes, self.writes
        );
        std::fs::create_dir(self.dir.join(&ts)).unwrap();
        std::fs::write(self.dir.join(&ts).join("policy.tgt"), table).unwrap();
        symlink(&ts, self.dir.join("..data_tmp")).unwrap();
        std::fs::rename(self.dir.join("..data_tmp"), self.dir.join("..data")).unwrap();
        let visible = self.dir.join("policy.tgt");
        if std::fs::symlink_metadata(&visible).is_err() {
            symlink("..data/policy.tgt", &visible).unwrap();
        }
        if let Some(old) = self.current.replace(ts) {
            std::fs::remove_dir_all(self.dir.join(old)).unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_in_a_configmap_volume_is_reloaded_when_the_kubelet_swaps_its_data() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (table_bytes(REG, POLICY_A), table_bytes(REG, POLICY_B));
    let (da, db) = (
        Table::load(&a).unwrap().digest_hex(),
        Table::load(&b).unwrap().digest_hex(),
    );
    let mut volume = ConfigMapVolume::new(dir.path());
    volume.write(&a);
    let path = dir.path().join("policy.tgt");
    assert!(std::fs::symlink_metadata(&path)
        .unwrap()
        .file_type()
        .is_symlink());
    let source = Source::Table(path.clone());
    let s = start(
        source.load().unwrap(),
        Some(source),
        RequestLimits::default(),
        None,
    )
    .await;
    let _watch = s.service.watch(Duration::from_secs(30)).expect("watch");
    assert_eq!(s.digest(), da);

    volume.write(&b);
    wait_for(
        &s,
        "table B from the swapped ..data",
        |r| r.status == 200 && r.json["tableDigest"] == json!(db),
        "/ready",
    )
    .await;
    let r = s.post_json("/access/v1/evaluation", &single("a")).await;
    assert_eq!(r.json["context"]["tableDigest"], json!(db));
    let r = s.get("/ready").await;
    assert_eq!((r.status, &r.json["ready"]), (200, &json!(true)));

    // The same table written again (a new timestamped directory): read,
    // found unchanged by its digest, not swapped.
    let loaded = s.service.shared.reload_status().loaded_at;
    volume.write(&b);
    wait_for(
        &s,
        "the unchanged reload",
        |r| {
            r.text
                .contains("toolgate_reloads_total{result=\"unchanged\"} 1\n")
        },
        "/metrics",
    )
    .await;
    let m = s.get("/metrics").await.text;
    assert!(
        m.contains("toolgate_reloads_total{result=\"swapped\"} 1\n"),
        "{m}"
    );
    assert_eq!(s.service.shared.reload_status().loaded_at, loaded);
    assert_eq!(s.digest(), db);
    assert_eq!(s.get("/ready").await.status, 200);

    // And back to A.
    volume.write(&a);
    wait_for(
        &s,
        "table A again",
        |r| r.status == 200 && r.json["tableDigest"] == json!(da),
        "/ready",
    )
    .await;
    s.stop().await;
}

/// A reload that failed is tried again, without another change: the table
/// is reached through a link into a directory nobody watches, the link is
/// pointed at a file written partially (the reload fails, /ready 503), and
/// the file is then completed in place, which the watched directory never
/// hears of. The retries (1 s, doubling) load it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_reload_is_retried_until_the_table_loads_without_another_change() {
    use std::os::unix::fs::symlink;
    let watched = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let (a, b) = (table_bytes(REG, POLICY_A), table_bytes(REG, POLICY_B));
    let (da, db) = (
        Table::load(&a).unwrap().digest_hex(),
        Table::load(&b).unwrap().digest_hex(),
    );
    std::fs::write(elsewhere.path().join("a.tgt"), &a).unwrap();
    let path = watched.path().join("policy.tgt");
    symlink(elsewhere.path().join("a.tgt"), &path).unwrap();
    let source = Source::Table(path.clone());
    let s = start(
        source.load().unwrap(),
        Some(source),
        RequestLimits::default(),
        None,
    )
    .await;
    let _watch = s.service.watch(Duration::from_secs(30)).expect("watch");
    assert_eq!(s.digest(), da);

    // Table B, half written, and the link pointed at it (renamed into place).
    let partial = elsewhere.path().join("b.tgt");
    std::fs::write(&partial, &b[..b.len() / 2]).unwrap();
    let tmp = watched.path().join("policy.tgt.tmp-link");
    symlink(&partial, &tmp).unwrap();
    std::fs::rename(&tmp, &path).unwrap();
    wait_for(&s, "the failed reload", |r| r.status == 503, "/ready").await;
    assert_eq!(s.digest(), da);
    // Completed in place, outside the watched directory: no event.
    std::fs::write(&partial, &b).unwrap();
    let fixed = Instant::now();
    wait_for(
        &s,
        "table B, from a retry",
        |r| r.status == 200 && r.json["tableDigest"] == json!(db),
        "/ready",
    )
    .await;
    // Within the backoff: the tries come at 1, 3, 7, 15 s after the failure.
    assert!(
        fixed.elapsed() < Duration::from_secs(16),
        "{:?}",
        fixed.elapsed()
    );
    let r = s.get("/ready").await;
    assert_eq!(r.json["lastReloadError"], Value::Null);
    let m = s.get("/metrics").await.text;
    assert!(m.contains("toolgate_last_reload_failed 0\n"), "{m}");
    let r = s.post_json("/access/v1/evaluation", &single("a")).await;
    assert_eq!(r.json["context"]["tableDigest"], json!(db));
    s.stop().await;
}
