//! What a registry can make a pull spend is bounded: the manifest by
//! MAX_MANIFEST_BYTES (its declared length, and the bytes read), the time by
//! the deadline (a trickle restarts a read timeout, not the deadline), and a
//! plain-HTTP registry spoken to over TLS names the fix.

mod common;

use std::time::{Duration, Instant};

use common::distribution::{fixture, TestDistribution};
use common::hostile::{Hostile, Mode, HUGE_DECLARED, OTHER_DIGEST};
use toolgate_oci::{Distribution, DistributionOptions, ErrorKind, MAX_MANIFEST_BYTES};

fn client(host: String, deadline: Duration) -> Distribution {
    Distribution::new(&DistributionOptions {
        plain_http: vec![host],
        deadline,
        ..DistributionOptions::default()
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
    let reg = TestDistribution::start();
    let c = Distribution::new(&DistributionOptions::default());
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

/// The process's peak resident memory so far (VmHWM), in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .expect("VmHWM")
        * 1024
}

/// Issue 45: a table blob whose stream goes on past the size the manifest
/// declares was read up to the 256 MiB cap (570 MiB peak). The pull now
/// stops at the first bytes past the declared size, with or without a
/// Content-Length that admits them, and holds no more than that size.
#[tokio::test]
async fn a_blob_longer_than_its_manifest_declares_stops_at_the_declared_size() {
    let table = fixture("signed.tgt");
    let layer_digest = format!("sha256:{}", toolgate_runtime::format::sha256_hex(&table));
    for mode in [Mode::LongBlob, Mode::LongBlobDeclared] {
        let h = Hostile::start(&table);
        h.set(mode);
        let c = client(h.host(), Duration::from_secs(30));
        let reference = h.reference("live");
        let before = peak_rss();
        let e = c.pull(&reference).await.unwrap_err();
        let grown = peak_rss().saturating_sub(before);
        assert_eq!(
            (e.kind, e.message.as_str()),
            (
                ErrorKind::Other,
                format!(
                    "{reference}: the registry sent more than the {} bytes the manifest declares for the table blob {layer_digest}; the pull stopped there",
                    table.len()
                )
                .as_str()
            ),
            "{mode:?}"
        );
        // The server notices the hang-up at its next write: what it sent is
        // the table and what the loopback socket buffers hold, not 256 MiB.
        std::thread::sleep(Duration::from_millis(200));
        let sent_bound = table.len() as u64 + 28 * 1024 * 1024;
        assert!(h.sent() < sent_bound, "{mode:?}: {} bytes sent", h.sent());
        // The pull held the declared size (a few KiB) and a read or two of
        // the stream; without the stop it held 256 MiB. The bound leaves
        // room for the other tests of this binary running at the same time.
        assert!(
            grown < 48 * 1024 * 1024,
            "{mode:?}: peak grew by {grown} bytes"
        );
    }
}

#[tokio::test]
async fn a_blob_of_the_declared_size_with_other_bytes_is_refused_by_its_digest() {
    let table = fixture("signed.tgt");
    let h = Hostile::start(&table);
    h.set(Mode::AlteredBlob);
    let c = client(h.host(), Duration::from_secs(30));
    let reference = h.reference("live");
    let e = c.pull(&reference).await.unwrap_err();
    let mut altered = table.clone();
    if let Some(b) = altered.last_mut() {
        *b ^= 1;
    }
    let sha = |b: &[u8]| format!("sha256:{}", toolgate_runtime::format::sha256_hex(b));
    assert_eq!(
        (e.kind, e.message),
        (
            ErrorKind::Other,
            format!(
                "{reference}: pulling the table failed: Digest error: Invalid digest. Expected {}, got {}",
                sha(&table),
                sha(&altered)
            )
        )
    );
}
