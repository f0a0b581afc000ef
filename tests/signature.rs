//! Signed tables: a table signed by a trusted key loads; unsigned, signed by
//! an untrusted key, with a forged signature, or edited after signing is
//! refused with its own error, and a handle that requires a signature keeps
//! its current table.

use toolgate_compiler::{lower, signing};
use toolgate_reference::model;
use toolgate_runtime::format::{self, HEADER_LEN, SIGNATURE_LEN};
use toolgate_runtime::{LoadError, Table, TableHandle, TrustedKeys};

const REG: &str = "[[tool]]\nname = \"a\"\ngroup = \"g\"\n[[tool]]\nname = \"b\"\ngroup = \"g\"\n";

fn table(policy: &str) -> Vec<u8> {
    lower::compile(&model(REG, &[policy]))
}

fn unsigned() -> Vec<u8> {
    table("configuration c { exclude [a] }")
}

struct Key {
    pair: signing::KeyPair,
}

impl Key {
    fn new() -> Key {
        Key {
            pair: signing::generate().unwrap(),
        }
    }
    fn sign(&self, table: &[u8]) -> Vec<u8> {
        let key = signing::read_secret_key(&self.pair.secret_pem).unwrap();
        signing::sign(table, &key).unwrap()
    }
    fn trusted(&self) -> TrustedKeys {
        TrustedKeys::from_pem(&self.pair.public_pem).unwrap()
    }
    fn id(&self) -> String {
        self.pair.key_id.clone()
    }
    /// Loading `table` with this key trusted fails as signed by it but not
    /// over these bytes; the error, for its message.
    #[track_caller]
    fn refuses(&self, table: &[u8]) -> LoadError {
        let e = Table::load_verified(table, &self.trusted()).unwrap_err();
        assert_eq!(e, LoadError::BadSignature { key_id: self.id() });
        e
    }
}

#[test]
fn a_table_signed_by_a_trusted_key_loads_and_keeps_its_digest() {
    let k = Key::new();
    let plain = unsigned();
    let signed = k.sign(&plain);
    assert_eq!(signed.len(), plain.len() + SIGNATURE_LEN);
    assert_eq!(&signed[..plain.len()], &plain[..]);
    assert_eq!(k.trusted().verify(&signed).unwrap(), k.id());
    let t = Table::load_verified(&signed, &k.trusted()).unwrap();
    // The digest is the payload's: signing does not change a table's identity.
    assert_eq!(t.digest(), Table::load(&plain).unwrap().digest());
    // Without a key required, a signed table loads like any other.
    assert_eq!(Table::load(&signed).unwrap().digest(), t.digest());
}

#[test]
fn an_unsigned_table_is_refused_when_a_signature_is_required() {
    let k = Key::new();
    let e = Table::load_verified(&unsigned(), &k.trusted()).unwrap_err();
    assert_eq!(e, LoadError::Unsigned);
    assert_eq!(
        e.to_string(),
        "table is not signed, and a signature by a trusted key is required; sign it with `toolgate compile --sign KEY`"
    );
}

#[test]
fn a_table_signed_by_an_untrusted_key_is_refused_naming_the_key() {
    let (trusted, other) = (Key::new(), Key::new());
    let e = Table::load_verified(&other.sign(&unsigned()), &trusted.trusted()).unwrap_err();
    assert_eq!(e, LoadError::UntrustedKey { key_id: other.id() });
    assert_eq!(
        e.to_string(),
        format!(
            "table is signed by key {}, which is not trusted; sign it with a trusted key or add its public key to the trusted keys",
            other.id()
        )
    );
}

#[test]
fn a_wrong_signature_is_refused() {
    let k = Key::new();
    let mut signed = k.sign(&unsigned());
    let last = signed.len() - 1;
    signed[last] ^= 0x01;
    let e = k.refuses(&signed);
    assert!(e.to_string().contains("altered after it was signed"), "{e}");
}

#[test]
fn a_signature_moved_onto_another_table_is_refused() {
    let k = Key::new();
    let a = k.sign(&unsigned());
    let b = table("configuration c { exclude [b] }");
    let mut forged = b.clone();
    forged.extend_from_slice(&a[a.len() - SIGNATURE_LEN..]);
    // Without a key, the framing is fine and the table loads ...
    assert!(Table::load(&forged).is_ok());
    // ... with one, the signature is of another header.
    k.refuses(&forged);
}

#[test]
fn a_payload_edited_after_signing_with_crc_and_digest_fixed_up_is_refused() {
    let k = Key::new();
    let signed = k.sign(&unsigned());
    let (plain, block) = signed.split_at(signed.len() - SIGNATURE_LEN);
    // Edit one payload byte (a tool name: "a" -> "c") and recompute the
    // digest and the CRC, as a forger would.
    let at = plain.len() - 1 - plain.iter().rev().position(|&b| b == b'a').unwrap();
    let mut payload = plain[HEADER_LEN..].to_vec();
    payload[at - HEADER_LEN] = b'c';
    let mut edited = format::frame(&payload, format::payload_digest(&payload));
    assert!(Table::load(&edited).is_ok(), "the forgery is a valid table");
    edited.extend_from_slice(block);
    k.refuses(&edited);
}

#[test]
fn every_single_byte_edit_of_a_signed_table_is_refused() {
    let k = Key::new();
    let keys = k.trusted();
    let signed = k.sign(&unsigned());
    for i in 0..signed.len() {
        let mut c = signed.clone();
        c[i] ^= 0x01;
        assert!(
            Table::load_verified(&c, &keys).is_err(),
            "edit of byte {i} loaded"
        );
    }
}

#[test]
fn during_a_rotation_both_keys_are_trusted() {
    let (old, new) = (Key::new(), Key::new());
    let both = TrustedKeys::from_pem(&format!(
        "# old\n{}\n# new\n{}",
        old.pair.public_pem, new.pair.public_pem
    ))
    .unwrap();
    assert_eq!(both.key_ids(), vec![old.id(), new.id()]);
    assert_eq!(both.verify(&old.sign(&unsigned())).unwrap(), old.id());
    assert_eq!(both.verify(&new.sign(&unsigned())).unwrap(), new.id());
    // Re-signing replaces the signature.
    let resigned = new.sign(&old.sign(&unsigned()));
    assert_eq!(
        old.trusted().verify(&resigned).unwrap_err(),
        LoadError::UntrustedKey { key_id: new.id() }
    );
}

#[test]
fn a_handle_that_requires_a_signature_keeps_its_table_on_a_refused_reload() {
    let k = Key::new();
    let first = k.sign(&unsigned());
    let h = TableHandle::load_verified(&first, k.trusted()).unwrap();
    let digest = h.current().digest();
    let next = table("configuration c { exclude [b] }");
    assert_eq!(h.reload(&next).unwrap_err(), LoadError::Unsigned);
    let other = Key::new();
    assert_eq!(
        h.reload(&other.sign(&next)).unwrap_err(),
        LoadError::UntrustedKey { key_id: other.id() }
    );
    assert_eq!(h.current().digest(), digest);
    let old = h.reload(&k.sign(&next)).unwrap();
    assert_eq!(old.digest(), digest);
    assert_ne!(h.current().digest(), digest);
    // An unsigned handle still takes unsigned tables.
    let plain = TableHandle::new(Table::load(&unsigned()).unwrap());
    assert!(plain.reload(&next).is_ok());
}

#[test]
fn bad_key_lists_are_refused_with_a_clear_error() {
    assert_eq!(
        TrustedKeys::from_pem("").unwrap_err().to_string(),
        "no public key found: expected one or more `-----BEGIN PUBLIC KEY-----` blocks (toolgate keygen writes them)"
    );
    let e = TrustedKeys::from_pem("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("public key 1: not an Ed25519 public key in PEM"),
        "{e}"
    );
    // A secret key where a public one is expected finds no public block.
    let k = Key::new();
    assert!(TrustedKeys::from_pem(&k.pair.secret_pem).is_err());
}

#[test]
fn a_malformed_signature_block_is_refused_even_without_a_key() {
    let k = Key::new();
    let signed = k.sign(&unsigned());
    let mut longer = signed.clone();
    longer.push(0);
    assert_eq!(
        Table::load(&longer).unwrap_err(),
        LoadError::Corrupt(format!(
            "the signature block is {} bytes, expected {SIGNATURE_LEN}",
            SIGNATURE_LEN + 1
        ))
    );
    let mut algo = signed.clone();
    let at = signed.len() - SIGNATURE_LEN + 8;
    algo[at] = 2;
    assert_eq!(
        Table::load(&algo).unwrap_err(),
        LoadError::Corrupt(
            "signature algorithm 2 is not supported (this runtime knows 1, Ed25519)".into()
        )
    );
    // Bytes after the payload that are not a signature block stay trailing bytes.
    let mut plain = unsigned();
    plain.extend_from_slice(b"xyz");
    assert_eq!(
        Table::load(&plain).unwrap_err(),
        LoadError::TrailingBytes { extra: 3 }
    );
}

/// The signed-table fixtures every host replays (conformance/signed/): the
/// test keys (test-only, never a deployment's) and tables signed with them;
/// `expect.json` gives each file's outcome under `trusted.pub`. Ed25519
/// signatures are deterministic, so the files are regenerated identically;
/// `UPDATE_CONFORMANCE=1` writes them (and the keys, when absent).
#[test]
fn signed_fixtures_are_current() {
    use std::path::Path;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/signed");
    let update = std::env::var_os("UPDATE_CONFORMANCE").is_some();
    let key = |name: &str| -> String {
        let path = dir.join(format!("{name}.key"));
        if update && !path.exists() {
            let pair = signing::generate().unwrap();
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, pair.secret_pem.as_bytes()).unwrap();
            std::fs::write(dir.join(format!("{name}.pub")), &pair.public_pem).unwrap();
        }
        std::fs::read_to_string(&path).unwrap()
    };
    let (trusted, untrusted) = (key("trusted"), key("untrusted"));
    let sign = |t: &[u8], k: &str| signing::sign(t, &signing::read_secret_key(k).unwrap()).unwrap();
    let plain = std::fs::read(dir.join("../tables/acceptance-edit.tgt")).unwrap();
    let signed = sign(&plain, &trusted);
    let mut edited = signed.clone();
    edited[HEADER_LEN + 3] ^= 0x01;
    let mut bad = signed.clone();
    let last = bad.len() - 1;
    bad[last] ^= 0x01;
    let keys =
        TrustedKeys::from_pem(&std::fs::read_to_string(dir.join("trusted.pub")).unwrap()).unwrap();
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("signed.tgt", signed),
        // Another table by the same key: what a reload moves to.
        (
            "signed-next.tgt",
            sign(
                &std::fs::read(dir.join("../tables/acceptance-edit-exclusion-removed.tgt"))
                    .unwrap(),
                &trusted,
            ),
        ),
        ("unsigned.tgt", plain),
        (
            "untrusted.tgt",
            sign(
                &std::fs::read(dir.join("../tables/acceptance-edit.tgt")).unwrap(),
                &untrusted,
            ),
        ),
        ("edited.tgt", edited),
        ("bad-signature.tgt", bad),
    ];
    let mut expect = serde_json::Map::new();
    for (name, bytes) in &files {
        let outcome = match Table::load_verified(bytes, &keys) {
            Ok(t) => serde_json::json!({"ok": true, "digest": t.digest_hex()}),
            Err(e) => {
                serde_json::json!({"ok": false, "error": e.code(), "message": e.to_string()})
            }
        };
        expect.insert(name.to_string(), outcome);
    }
    let mut expect_text = serde_json::to_string_pretty(&expect).unwrap();
    expect_text.push('\n');
    let mut all: Vec<(String, Vec<u8>)> =
        files.into_iter().map(|(n, b)| (n.to_string(), b)).collect();
    all.push(("expect.json".into(), expect_text.into_bytes()));
    for (name, bytes) in all {
        let path = dir.join(&name);
        if update {
            std::fs::write(&path, &bytes).unwrap();
        } else {
            assert_eq!(
                std::fs::read(&path).ok().as_ref(),
                Some(&bytes),
                "conformance/signed/{name} is stale: run UPDATE_CONFORMANCE=1 cargo test -p toolgate-reference --test signature"
            );
        }
    }
}
