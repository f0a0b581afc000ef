//! `keygen`, `compile --sign`, `push` and `pull` through the binary,
//! against a real registry (Debian's distribution registry on 127.0.0.1).

#[path = "../../../oci/tests/common/distribution.rs"]
mod distribution;
#[path = "../../../oci/tests/common/hostile.rs"]
mod hostile;
use crate::common::{
    assert_contains, assert_ends_with, assert_starts_with, stderr, stdout, toolgate,
};

#[test]
fn keygen_compile_sign_push_pull_verify() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let demo = crate::common::root().join("policies/demo");
    let demo = demo.to_str().unwrap();

    let o = toolgate(d, &["keygen", "-o", "release"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let key_id = stdout(&o).trim().to_string();
    assert!(
        key_id.starts_with("ed25519:") && key_id.len() == 8 + 16,
        "{key_id}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(d.join("release.key"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // Never overwritten.
    let o = toolgate(d, &["keygen", "-o", "release"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "error: release.key: already exists; keygen never overwrites a key (choose another -o)\n"
    );
    assert_eq!(
        toolgate(d, &["keygen", "-o", "other"]).status.code(),
        Some(0)
    );

    let o = toolgate(
        d,
        &["compile", demo, "-o", "signed.tgt", "--sign", "release.key"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_ends_with(&stderr(&o), &format!(", signed by {key_id})\n"));
    assert_eq!(
        toolgate(d, &["compile", demo, "-o", "plain.tgt"])
            .status
            .code(),
        Some(0)
    );

    let reg = distribution::TestDistribution::start();
    let reference = format!("{}/policies/demo:v1", reg.host());
    // Pushing an unsigned table under --trusted-key is refused before any upload.
    let o = toolgate(
        d,
        &[
            "push",
            "plain.tgt",
            &reference,
            "--plain-http",
            "--trusted-key",
            "release.pub",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "error: plain.tgt: table is not signed, and a signature by a trusted key is required; sign it with `toolgate compile --sign KEY`\n"
    );
    let o = toolgate(
        d,
        &[
            "push",
            "signed.tgt",
            &reference,
            "--plain-http",
            "--trusted-key",
            "release.pub",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let pinned = stdout(&o).trim().to_string();
    assert!(
        pinned.starts_with(&format!("{}/policies/demo@sha256:", reg.host())),
        "{pinned}"
    );

    let o = toolgate(
        d,
        &[
            "pull",
            &reference,
            "-o",
            "pulled.tgt",
            "--plain-http",
            "--trusted-key",
            "release.pub",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        format!("{}/policies/demo@{}", reg.host(), stdout(&o).trim()),
        pinned
    );
    assert_contains(&stderr(&o), &format!("signature by {key_id} verified"));
    assert_eq!(
        std::fs::read(d.join("pulled.tgt")).unwrap(),
        std::fs::read(d.join("signed.tgt")).unwrap()
    );
    // By digest, the same artifact.
    let o = toolgate(d, &["pull", &pinned, "-o", "by-digest.tgt", "--plain-http"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_contains(&stderr(&o), "(not verified: no --trusted-key)");

    // A key that did not sign it: refused, nothing written.
    let o = toolgate(
        d,
        &[
            "pull",
            &reference,
            "-o",
            "refused.tgt",
            "--plain-http",
            "--trusted-key",
            "other.pub",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).ends_with(&format!(
            "table is signed by key {key_id}, which is not trusted; sign it with a trusted key or add its public key to the trusted keys\n"
        )),
        "{}",
        stderr(&o)
    );
    assert!(!d.join("refused.tgt").exists());

    // A project pushed directly, signed on the way.
    let o = toolgate(
        d,
        &[
            "push",
            demo,
            &format!("{}/policies/demo:v2", reg.host()),
            "--plain-http",
            "--sign",
            "other.key",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_ne!(stdout(&o).trim(), pinned, "another key, another artifact");
}

#[test]
fn serve_oci_requires_trusted_keys() {
    let dir = tempfile::tempdir().unwrap();
    let o = toolgate(dir.path(), &["serve", "--oci", "127.0.0.1:1/p:v1"]);
    assert_eq!(o.status.code(), Some(2));
    assert_contains(&stderr(&o), "--trusted-key <FILE>");
    let o = toolgate(
        dir.path(),
        &["serve", "--project", "x", "--trusted-key", "missing.pub"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert_starts_with(&stderr(&o), "error: missing.pub: ");
}

#[test]
fn pull_without_plain_http_from_a_plain_http_registry_names_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let reg = distribution::TestDistribution::start();
    let reference = format!("{}/policies/demo:v1", reg.host());
    let o = toolgate(dir.path(), &["pull", &reference, "-o", "policy.tgt"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        format!(
            "error: {reference}: cannot reach the registry: error sending request for url (https://{host}/v2/): client error (Connect): received corrupt message of type InvalidContentType; {host} answers plain HTTP, not HTTPS: pass --plain-http if it is on this machine or a private network\n",
            host = reg.host()
        )
    );
    assert!(!dir.path().join("policy.tgt").exists());
}

#[test]
fn pull_refuses_an_endless_or_a_700_mib_manifest_at_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    let h = hostile::Hostile::start(&distribution::fixture("signed.tgt"));
    let reference = h.reference("live");
    // The hostile registry serves the artifact when it behaves.
    let o = toolgate(
        dir.path(),
        &["pull", &reference, "-o", "good.tgt", "--plain-http"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), format!("{}\n", h.manifest_digest));
    for (mode, message) in [
        (
            hostile::Mode::Endless,
            format!("error: {reference}: the manifest is over the limit of 4194304 bytes\n"),
        ),
        (
            hostile::Mode::Huge,
            format!("error: {reference}: the manifest is 734003200 bytes (Content-Length), over the limit of 4194304 bytes\n"),
        ),
    ] {
        h.set(mode);
        let before = h.sent();
        let o = toolgate(
            dir.path(),
            &["pull", &reference, "-o", "policy.tgt", "--plain-http"],
        );
        assert_eq!(o.status.code(), Some(2), "{mode:?}");
        assert_eq!(stderr(&o), message, "{mode:?}");
        assert!(!dir.path().join("policy.tgt").exists());
        std::thread::sleep(std::time::Duration::from_millis(200));
        // The cap and the loopback socket buffers; without a cap, 256 MiB.
        let sent = h.sent() - before;
        assert!(sent < 32 * 1024 * 1024, "{mode:?}: {sent} bytes sent");
    }
}

#[test]
fn pull_from_a_trickling_registry_stops_at_registry_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let h = hostile::Hostile::start(&distribution::fixture("signed.tgt"));
    h.set(hostile::Mode::Trickle);
    let reference = h.reference("live");
    let started = std::time::Instant::now();
    let o = toolgate(
        dir.path(),
        &[
            "pull",
            &reference,
            "-o",
            "policy.tgt",
            "--plain-http",
            "--registry-timeout",
            "1",
        ],
    );
    let took = started.elapsed();
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        format!("error: {reference}: the pull did not finish within 1 s (the registry stalled or is too slow; the deadline is --registry-timeout)\n")
    );
    assert!(took < std::time::Duration::from_secs(10), "{took:?}");
    assert!(!dir.path().join("policy.tgt").exists());
    let o = toolgate(
        dir.path(),
        &["pull", &reference, "-o", "x.tgt", "--registry-timeout", "0"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert_contains(&stderr(&o), "0 is not in 1..=86400");
}
