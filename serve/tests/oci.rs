//! `serve --oci`: a running service polls a real registry (Debian's
//! distribution registry, started on 127.0.0.1 by the test), swaps in a new
//! signed version with no failed or torn decision, keeps its table when the
//! registry goes away (readiness says so) and when the tag moves to a table
//! that fails verification. A hostile registry (a tiny server in the test)
//! that stalls or sends an endless manifest fails the poll within its
//! deadline and its cap, and readiness and the metrics say so.

#[path = "../../oci/tests/common/distribution.rs"]
mod distribution;
#[path = "../../oci/tests/common/hostile.rs"]
mod hostile;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use distribution::{fixture, keys, trusted, TestDistribution};
use hostile::{Hostile, Mode, OTHER_DIGEST};
use serde_json::{json, Value};
use toolgate_oci::{Distribution, DistributionOptions};
use toolgate_runtime::{Role, Table};
use toolgate_serve::{BuiltService, RequestLimits, Service, Source};

struct Served {
    base: String,
    service: BuiltService,
    client: reqwest::Client,
    _poll: toolgate_serve::Watch,
}

impl Served {
    async fn get(&self, path: &str) -> (u16, Value) {
        let r = self
            .client
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        (status, r.json().await.unwrap())
    }
    async fn metrics(&self) -> String {
        let r = self
            .client
            .get(format!("{}/metrics", self.base))
            .send()
            .await
            .unwrap();
        r.text().await.unwrap()
    }
    fn digest(&self) -> String {
        self.service.shared.handle.current().digest_hex()
    }
}

/// The service as `toolgate serve --oci REF --trusted-key trusted.pub` runs it.
async fn serve(reg: &TestDistribution, reference: &str) -> Served {
    serve_from(reg.host(), reference, Duration::from_secs(60)).await
}

/// [`serve`] from the registry at `host`, each poll under `deadline`
/// (`--registry-timeout`).
async fn serve_from(host: String, reference: &str, deadline: Duration) -> Served {
    let source = Source::Oci {
        reference: reference.to_string(),
        registry: DistributionOptions {
            plain_http: vec![host],
            deadline,
            ..DistributionOptions::default()
        },
    };
    let keys = trusted();
    let s2 = source.clone();
    let k2 = keys.clone();
    let table = tokio::task::spawn_blocking(move || s2.load_with(Some(&k2)))
        .await
        .unwrap()
        .expect("the first table pulls and verifies");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let service = Service::with_trusted_keys(
        table,
        Some(source),
        RequestLimits::default(),
        base.clone(),
        None,
        Some(keys),
    )
    .build()
    .unwrap();
    let poll = service.watch(Duration::from_millis(100)).unwrap();
    let s = service.clone();
    tokio::spawn(async move { s.serve(listener, std::future::pending()).await });
    Served {
        base,
        service,
        client: reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap(),
        _poll: poll,
    }
}

/// A registry with `signed.tgt` pushed as `policies/edit:live`, the tag,
/// the table, and the service serving the tag.
async fn serving_signed() -> (TestDistribution, String, Vec<u8>, Served) {
    let reg = TestDistribution::start();
    let reference = format!("{}/policies/edit:live", reg.host());
    let v1 = fixture("signed.tgt");
    push(&reg, &reference, &v1).await;
    let s = serve(&reg, &reference).await;
    (reg, reference, v1, s)
}

async fn push(reg: &TestDistribution, reference: &str, table: &[u8]) -> String {
    Distribution::new(&DistributionOptions {
        plain_http: vec![reg.host()],
        ..DistributionOptions::default()
    })
    .push(reference, table)
    .await
    .unwrap()
    .manifest_digest
}

async fn wait_until(what: &str, mut ok: impl AsyncFnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !ok().await {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn expected(table: &[u8]) -> (String, bool, Value) {
    let t = Table::load(table).unwrap();
    let d = t
        .context("editor-chat")
        .unwrap()
        .role(Role::User)
        .decide("delete_record");
    (t.digest_hex(), d.allowed, json!(d.reason.map(|r| r.code())))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_moved_tag_is_picked_up_with_no_failed_or_torn_decision() {
    let (reg, reference, v1, s) = serving_signed().await;
    let s = Arc::new(s);
    let v2 = fixture("signed-next.tgt");
    let (e1, e2) = (expected(&v1), expected(&v2));
    assert_ne!(e1, e2, "the two versions answer differently");
    assert_eq!(s.digest(), e1.0);

    // Clients decide all the while; every answer must be one version's, whole.
    let done = Arc::new(AtomicBool::new(false));
    let answers = Arc::new(AtomicU64::new(0));
    let mut clients = Vec::new();
    for _ in 0..2 {
        let (s, done, answers) = (s.clone(), done.clone(), answers.clone());
        let (e1, e2) = (e1.clone(), e2.clone());
        clients.push(tokio::spawn(async move {
            let mut seen = [0u64; 2];
            while !done.load(Ordering::Relaxed) {
                let r = s
                    .client
                    .post(format!("{}/access/v1/evaluation", s.base))
                    .header("content-type", "application/json")
                    .body(
                        json!({"subject": {"type": "user", "id": "u"}, "action": {"name": "call"},
                            "resource": {"type": "tool", "id": "delete_record"},
                            "context": {"configuration": "editor-chat"}})
                        .to_string(),
                    )
                    .send()
                    .await
                    .unwrap();
                assert_eq!(r.status().as_u16(), 200);
                let v: Value = r.json().await.unwrap();
                let got = (
                    v["context"]["tableDigest"].as_str().unwrap().to_string(),
                    v["decision"].as_bool().unwrap(),
                    v["context"]["reason"].clone(),
                );
                if got == e1 {
                    seen[0] += 1;
                } else if got == e2 {
                    seen[1] += 1;
                } else {
                    panic!("torn answer {got:?}");
                }
                answers.fetch_add(1, Ordering::Relaxed);
            }
            seen
        }));
    }
    wait_until("answers under v1", async || {
        answers.load(Ordering::Relaxed) > 20
    })
    .await;
    let d2 = push(&reg, &reference, &v2).await;
    wait_until("the poll to swap in v2", async || s.digest() == e2.0).await;
    let after = answers.load(Ordering::Relaxed);
    wait_until("answers under v2", async || {
        answers.load(Ordering::Relaxed) > after + 20
    })
    .await;
    done.store(true, Ordering::Relaxed);
    let mut seen = [0u64; 2];
    for c in clients {
        let n = c.await.unwrap();
        seen[0] += n[0];
        seen[1] += n[1];
    }
    assert!(seen[0] > 0 && seen[1] > 0, "{seen:?}");
    let (code, ready) = s.get("/ready").await;
    assert_eq!(code, 200, "{ready}");
    assert_eq!(ready["tableDigest"], json!(e2.0));
    assert!(d2.starts_with("sha256:"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_registry_that_goes_away_keeps_the_table_and_readiness_says_so() {
    let (reg, reference, v1, s) = serving_signed().await;
    let (code, _) = s.get("/ready").await;
    assert_eq!(code, 200);
    let (dir, addr) = reg.stop();
    wait_until("readiness to report the outage", async || {
        s.get("/ready").await.0 == 503
    })
    .await;
    let (_, ready) = s.get("/ready").await;
    assert_eq!(ready["ready"], json!(false));
    let error = ready["lastReloadError"].as_str().unwrap();
    assert!(error.starts_with(&format!("{reference}: ")), "{error}");
    // Decisions go on from the current table.
    assert_eq!(s.digest(), expected(&v1).0);
    let (code, health) = s.get("/health").await;
    assert_eq!(
        (code, &health["tableDigest"]),
        (200, &json!(expected(&v1).0))
    );
    // The registry comes back with the same version: ready again, nothing swapped.
    let _back = TestDistribution::start_in(dir, Some(addr));
    wait_until("readiness after the outage", async || {
        s.get("/ready").await.0 == 200
    })
    .await;
    assert_eq!(s.digest(), expected(&v1).0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tag_moved_to_a_table_that_fails_verification_is_refused_and_the_current_kept() {
    let (reg, reference, v1, s) = serving_signed().await;
    let untrusted = keys("untrusted.pub").key_ids()[0].clone();
    let trusted_id = trusted().key_ids()[0].clone();
    for (name, message) in [
        (
            "unsigned.tgt",
            "table is not signed, and a signature by a trusted key is required; sign it with `toolgate compile --sign KEY`".to_string(),
        ),
        (
            "untrusted.tgt",
            format!("table is signed by key {untrusted}, which is not trusted; sign it with a trusted key or add its public key to the trusted keys"),
        ),
        (
            "bad-signature.tgt",
            format!("table signature by key {trusted_id} does not verify: the table was altered after it was signed; recompile and sign it again"),
        ),
    ] {
        push(&reg, &reference, &fixture(name)).await;
        wait_until(name, async || s.get("/ready").await.0 == 503).await;
        let (_, ready) = s.get("/ready").await;
        assert_eq!(ready["lastReloadError"], json!(message), "{name}");
        assert_eq!(s.digest(), expected(&v1).0, "{name}: the current table stays");
        // The tag back on a good version: ready again.
        push(&reg, &reference, &v1).await;
        wait_until("ready again", async || s.get("/ready").await.0 == 200).await;
    }
    assert_eq!(s.digest(), expected(&v1).0);
}

/// The value of the metric line that starts with `name` (labels included).
fn metric(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
        .and_then(|v| v.parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stalled_registry_fails_the_poll_at_its_deadline_and_readiness_and_metrics_say_so() {
    let v1 = fixture("signed.tgt");
    let h = Hostile::start(&v1);
    let reference = h.reference("live");
    let s = serve_from(h.host(), &reference, Duration::from_secs(1)).await;
    assert_eq!(s.get("/ready").await.0, 200);
    h.set(Mode::Trickle);
    wait_until("readiness to report the stall", async || {
        s.get("/ready").await.0 == 503
    })
    .await;
    let (_, ready) = s.get("/ready").await;
    assert_eq!(ready["ready"], json!(false));
    assert_eq!(
        ready["lastReloadError"],
        json!(format!("{reference}: the poll did not finish within 1 s (the registry stalled or is too slow; the deadline is --registry-timeout)"))
    );
    assert_eq!(ready["tableDigest"], json!(expected(&v1).0));
    let m = s.metrics().await;
    assert!(
        metric(&m, "toolgate_registry_polls_total{result=\"timeout\"}") >= Some(1.0),
        "{m}"
    );
    assert_eq!(metric(&m, "toolgate_last_reload_failed"), Some(1.0), "{m}");
    let took = metric(&m, "toolgate_registry_poll_duration_seconds").unwrap();
    assert!((1.0..3.0).contains(&took), "{took}");
    // The registry behaves again: ready, the same table.
    h.set(Mode::Good);
    wait_until("ready again", async || s.get("/ready").await.0 == 200).await;
    assert_eq!(s.digest(), expected(&v1).0);
    let m = s.metrics().await;
    assert!(
        metric(&m, "toolgate_registry_polls_total{result=\"unchanged\"}") >= Some(1.0),
        "{m}"
    );
    assert_eq!(metric(&m, "toolgate_last_reload_failed"), Some(0.0), "{m}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_manifest_fails_the_poll_at_the_cap_and_the_table_stays() {
    let v1 = fixture("signed.tgt");
    let h = Hostile::start(&v1);
    let reference = h.reference("live");
    let s = serve_from(h.host(), &reference, Duration::from_secs(30)).await;
    h.set(Mode::Endless);
    wait_until("readiness to report the manifest", async || {
        s.get("/ready").await.0 == 503
    })
    .await;
    let (_, ready) = s.get("/ready").await;
    assert_eq!(
        ready["lastReloadError"],
        json!(format!(
            "{}/policies/hostile@{OTHER_DIGEST}: the manifest is over the limit of 4194304 bytes",
            h.host()
        ))
    );
    assert_eq!(s.digest(), expected(&v1).0);
    let m = s.metrics().await;
    assert!(
        metric(&m, "toolgate_registry_polls_total{result=\"failed\"}") >= Some(1.0),
        "{m}"
    );
    // At most the cap and the socket buffers per poll; unbounded, 256 MiB each.
    let polls = metric(&m, "toolgate_registry_polls_total{result=\"failed\"}").unwrap() + 2.0;
    assert!(
        (h.sent() as f64) < polls * 32.0 * 1024.0 * 1024.0,
        "{} bytes sent in {polls} polls",
        h.sent()
    );
}
