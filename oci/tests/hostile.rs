//! What a registry can make a pull spend is bounded: the manifest by
//! MAX_MANIFEST_BYTES (its declared length, and the bytes read), the time by
//! the deadline (a trickle restarts a read timeout, not the deadline), and a
//! plain-HTTP registry spoken to over TLS names the fix.

mod common;

use std::time::{Duration, Instant};

use common::hostile::{Hostile, Mode, HUGE_DECLARED, OTHER_DIGEST};
use common::registry::{fixture, TestRegistry};
use toolgate_oci::{ErrorKind, Registry, RegistryOptions, MAX_MANIFEST_BYTES};

fn client(host: String, deadline: Duration) -> Registry {
    Registry::new(&RegistryOptions {
        plain_http: vec![host],
        deadline,
        ..RegistryOptions::default()
    })
}

/// Bytes a client that stops at the cap can have been sent: the cap and
/// what the loopback socket buffers hold. Without a cap the server sends
/// 256 MiB.
const SENT_BOUND: u64 = MAX_MANIFEST_BYTES + 28 * 1024 * 1024;

#[tokio::test]
async fn the_hostile_registry_serves_a_table_that_pulls_when_it_behaves() {
    let table = fixture("signed.tgt");
    let h = Hostile::start(&table);
    let c = client(h.host(), Duration::from_secs(10));
    let pulled = c.pull(&h.reference("live")).await.unwrap();
    assert_eq!(pulled.bytes, table);
    assert_eq!(pulled.artifact.manifest_digest, h.manifest_digest);
    assert_eq!(
        c.resolve(&h.reference("live")).await.unwrap(),
        h.manifest_digest
    );
}

#[tokio::test]
async fn an_endless_manifest_is_cut_off_at_the_cap() {
    let h = Hostile::start(&fixture("signed.tgt"));
    h.set(Mode::Endless);
    let c = client(h.host(), Duration::from_secs(30));
    let reference = h.reference("live");
    assert_eq!(c.resolve(&reference).await.unwrap(), OTHER_DIGEST);
    let e = c.pull(&reference).await.unwrap_err();
    assert_eq!(e.kind, ErrorKind::Other);
    assert_eq!(
        e.message,
        format!("{reference}: the manifest is over the limit of 4194304 bytes")
    );
    // The server notices the hang-up at its next write.
    std::thread::sleep(Duration::from_millis(200));
    assert!(h.sent() < SENT_BOUND, "{} bytes sent", h.sent());
}

#[tokio::test]
async fn a_manifest_declaring_700_mib_is_refused_before_its_body_is_read() {
    let h = Hostile::start(&fixture("signed.tgt"));
    h.set(Mode::Huge);
    let c = client(h.host(), Duration::from_secs(30));
    let reference = h.reference("live");
    let e = c.pull(&reference).await.unwrap_err();
    assert_eq!(
        e.message,
        format!(
            "{reference}: the manifest is {HUGE_DECLARED} bytes (Content-Length), over the limit of 4194304 bytes"
        )
    );
    assert_eq!(HUGE_DECLARED, 734_003_200);
    std::thread::sleep(Duration::from_millis(200));
    assert!(h.sent() < SENT_BOUND, "{} bytes sent", h.sent());
}

#[tokio::test]
async fn a_trickling_registry_meets_the_deadline_in_a_pull_and_a_resolve() {
    let h = Hostile::start(&fixture("signed.tgt"));
    h.set(Mode::Trickle);
    let c = client(h.host(), Duration::from_secs(1));
    let reference = h.reference("live");
    for what in ["pull", "resolve"] {
        let started = Instant::now();
        let e = match what {
            "pull" => c.pull(&reference).await.map(|_| ()),
            _ => c.resolve(&reference).await.map(|_| ()),
        }
        .unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5), "{what}");
        // Kind and message together, so a failure shows which error won.
        assert_eq!(
            (e.kind, e.message.as_str()),
            (
                ErrorKind::Timeout,
                format!("{reference}: the {what} did not finish within 1 s (the registry stalled or is too slow; the deadline is --registry-timeout)").as_str()
            ),
            "{what}"
        );
    }
}

#[tokio::test]
async fn a_deadline_bounds_the_whole_pull_not_each_read() {
    // Each byte arrives well within the 30 s read timeout; only the
    // deadline ends the pull.
    let h = Hostile::start(&fixture("signed.tgt"));
    h.set(Mode::Trickle);
    let c = client(h.host(), Duration::from_millis(1500));
    let started = Instant::now();
    let e = c.pull(&h.reference("live")).await.unwrap_err();
    let took = started.elapsed();
    assert_eq!(e.kind, ErrorKind::Timeout);
    assert!(
        took >= Duration::from_millis(1500) && took < Duration::from_secs(4),
        "{took:?}"
    );
    assert!(e.message.contains("did not finish within 1.5 s"), "{e}");
}

#[tokio::test]
async fn a_plain_http_registry_spoken_to_over_tls_names_plain_http() {
    let reg = TestRegistry::start();
    let c = Registry::new(&RegistryOptions::default());
    let reference = format!("{}/policies/demo:v1", reg.host());
    let e = c.pull(&reference).await.unwrap_err();
    assert_eq!(
        e.message,
        format!(
            "{reference}: cannot reach the registry: error sending request for url (https://{host}/v2/): client error (Connect): received corrupt message of type InvalidContentType; {host} answers plain HTTP, not HTTPS: pass --plain-http if it is on this machine or a private network",
            host = reg.host()
        )
    );
    // Nothing listening: no hint (there is nothing to tell).
    let (_dir, addr) = reg.stop();
    let e = c
        .resolve(&format!("{addr}/policies/demo:v1"))
        .await
        .unwrap_err();
    assert!(!e.message.contains("--plain-http"), "{e}");
}
