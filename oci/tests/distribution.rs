//! Push and pull against a real registry (common/distribution.rs): the table
//! comes back byte for byte, the manifest digest is the artifact's
//! identity, and what is not a table is refused.

mod common;

use common::distribution::{fixture, keys, trusted, TestDistribution};
use toolgate_oci::{Distribution, DistributionOptions};
use toolgate_runtime::{LoadError, Table};

fn client(reg: &TestDistribution) -> Distribution {
    Distribution::new(&DistributionOptions {
        plain_http: vec![reg.host()],
        ..DistributionOptions::default()
    })
}

#[tokio::test]
async fn a_pushed_table_is_pulled_back_byte_for_byte_and_its_digest_names_it() {
    let reg = TestDistribution::start();
    let c = client(&reg);
    let signed = fixture("signed.tgt");
    let reference = format!("{}/policies/demo:v1", reg.host());
    let pushed = c.push(&reference, &signed).await.unwrap();
    assert!(pushed.manifest_digest.starts_with("sha256:"), "{pushed:?}");
    assert_eq!(pushed.manifest_digest.len(), 7 + 64);
    assert_eq!(
        pushed.table_digest,
        Table::load(&signed).unwrap().digest_hex()
    );
    assert_eq!(pushed.signed_by, Some(trusted().key_ids()[0].clone()));
    assert_eq!(c.resolve(&reference).await.unwrap(), pushed.manifest_digest);

    let pulled = c.pull(&reference).await.unwrap();
    assert_eq!(pulled.bytes, signed);
    assert_eq!(pulled.artifact, pushed);
    Table::load_verified(&pulled.bytes, &trusted()).unwrap();

    // The digest is the identity: pulled by digest, the same artifact.
    let by_digest = format!("{}/policies/demo@{}", reg.host(), pushed.manifest_digest);
    let again = c.pull(&by_digest).await.unwrap();
    assert_eq!(again.bytes, signed);
    assert_eq!(again.artifact.manifest_digest, pushed.manifest_digest);

    // The same table pushed again (another tag) is the same artifact; another table is another.
    let same = c
        .push(&format!("{}/policies/demo:v1-again", reg.host()), &signed)
        .await
        .unwrap();
    assert_eq!(same.manifest_digest, pushed.manifest_digest);
    let next = c
        .push(
            &format!("{}/policies/demo:v2", reg.host()),
            &fixture("signed-next.tgt"),
        )
        .await
        .unwrap();
    assert_ne!(next.manifest_digest, pushed.manifest_digest);
    assert_ne!(next.table_digest, pushed.table_digest);
}

#[tokio::test]
async fn verification_after_a_pull_refuses_what_the_keys_do_not_vouch_for() {
    let reg = TestDistribution::start();
    let c = client(&reg);
    for (name, expected) in [
        ("unsigned.tgt", LoadError::Unsigned),
        (
            "untrusted.tgt",
            LoadError::UntrustedKey {
                key_id: keys("untrusted.pub").key_ids()[0].clone(),
            },
        ),
        (
            "bad-signature.tgt",
            LoadError::BadSignature {
                key_id: trusted().key_ids()[0].clone(),
            },
        ),
    ] {
        let reference = format!("{}/policies/refused:{}", reg.host(), name.replace('.', "-"));
        c.push(&reference, &fixture(name)).await.unwrap();
        let pulled = c.pull(&reference).await.unwrap();
        assert_eq!(pulled.bytes, fixture(name), "{name}");
        assert_eq!(
            Table::load_verified(&pulled.bytes, &trusted()).unwrap_err(),
            expected,
            "{name}"
        );
    }
}

#[tokio::test]
async fn what_is_not_a_table_is_neither_pushed_nor_pulled() {
    let reg = TestDistribution::start();
    let c = client(&reg);
    let reference = format!("{}/policies/bad:v1", reg.host());
    // A table edited after signing does not even load: never published.
    let e = c
        .push(&reference, &fixture("edited.tgt"))
        .await
        .unwrap_err()
        .message;
    assert!(e.starts_with("table checksum mismatch"), "{e}");
    let e = c.push(&reference, b"not a table").await.unwrap_err();
    assert_eq!(e.message, "not a toolgate table (bad magic bytes)");
    // Nothing under that tag: the registry's own explanation.
    let e = c.pull(&reference).await.unwrap_err();
    assert_eq!(
        e.message,
        format!(
            "{reference}: the registry answered 404 Not Found (MANIFEST_UNKNOWN: manifest unknown)"
        )
    );
    let e = c.pull("not a reference!").await.unwrap_err().message;
    assert!(e.contains("is not an OCI reference"), "{e}");
}

#[tokio::test]
async fn a_registry_that_is_not_there_is_an_error_not_a_hang() {
    let reg = TestDistribution::start();
    let (_dir, addr) = reg.stop();
    let c = Distribution::new(&DistributionOptions {
        plain_http: vec![addr.to_string()],
        ..DistributionOptions::default()
    });
    let started = std::time::Instant::now();
    let e = c
        .resolve(&format!("{addr}/policies/demo:v1"))
        .await
        .unwrap_err()
        .message;
    assert!(e.starts_with(&format!("{addr}/policies/demo:v1: ")), "{e}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
}
