//! Fail closed, one case at a time: a table of another version, truncated at
//! every length, or with any single byte flipped is refused at load; an
//! enforcement setting that is missing, empty or misspelt enforces.

use toolgate_compiler::lower;
use toolgate_reference::model;
use toolgate_runtime::format::{FORMAT_VERSION, HEADER_LEN};
use toolgate_runtime::{LoadError, Mode, Reason, Role, Table};

use toolgate_reference::fixtures::{FC_POL as POL, FC_REG as REG};

fn bytes() -> Vec<u8> {
    lower::compile(&model(REG, &[POL]))
}

#[test]
fn the_intact_table_loads() {
    let t = Table::load(&bytes()).unwrap();
    assert_eq!(t.tool_count(), 2);
}

#[test]
fn every_truncation_is_refused() {
    let b = bytes();
    for len in 0..b.len() {
        let r = Table::load(&b[..len]);
        assert!(r.is_err(), "truncated to {len} bytes loaded");
        if len >= HEADER_LEN {
            assert!(
                matches!(r, Err(LoadError::Truncated { .. })),
                "{len}: {r:?}"
            );
        }
    }
}

#[test]
fn every_single_byte_flip_is_refused() {
    let b = bytes();
    for i in 0..b.len() {
        for bit in 0..8 {
            let mut c = b.clone();
            c[i] ^= 1 << bit;
            assert!(
                Table::load(&c).is_err(),
                "flip of bit {bit} in byte {i} loaded"
            );
        }
    }
}

#[test]
fn another_format_version_is_refused_with_a_clear_error() {
    let mut b = bytes();
    b[8..12].copy_from_slice(&(FORMAT_VERSION + 1).to_le_bytes());
    let e = Table::load(&b).unwrap_err();
    assert_eq!(
        e,
        LoadError::Version {
            found: FORMAT_VERSION + 1,
            supported: FORMAT_VERSION
        }
    );
    assert!(e.to_string().contains("recompile"));
    assert_eq!(
        Table::load(b"PK\x03\x04 not a table").unwrap_err(),
        LoadError::NotATable
    );
    let mut long = bytes();
    long.push(0);
    assert_eq!(
        Table::load(&long).unwrap_err(),
        LoadError::TrailingBytes { extra: 1 }
    );
}

#[test]
fn a_corrupt_payload_with_a_valid_checksum_is_refused() {
    // Re-frame a payload whose configuration points at a zone that does not exist.
    let m = model(REG, &[POL]);
    let mut spec = lower::lower(&m);
    spec.configurations[0].zone = 99;
    let payload = toolgate_runtime::format::encode_payload(&spec);
    let framed = toolgate_runtime::format::frame(
        &payload,
        toolgate_runtime::format::payload_digest(&payload),
    );
    assert!(matches!(Table::load(&framed), Err(LoadError::Corrupt(_))));
    // A count far larger than the bytes left cannot make the loader allocate.
    let mut payload = toolgate_runtime::format::encode_payload(&lower::lower(&m));
    payload.truncate(payload.len() / 2);
    payload.extend_from_slice(&u32::MAX.to_le_bytes());
    assert!(Table::load(&toolgate_runtime::format::frame(&payload, [0; 32])).is_err());
}

#[test]
fn an_edited_payload_with_a_fixed_up_checksum_is_refused_by_the_digest() {
    let good = bytes();
    assert!(Table::load(&good).is_ok());
    // Flip one payload byte, then recompute the CRC as an editor would: only
    // the header's sha256 of the payload catches it.
    for at in [HEADER_LEN, HEADER_LEN + 7, good.len() - 1] {
        let mut t = good.clone();
        t[at] ^= 0x01;
        let mut h = crc32fast::Hasher::new();
        h.update(&t[8..52]);
        h.update(&t[HEADER_LEN..]);
        t[52..56].copy_from_slice(&h.finalize().to_le_bytes());
        assert_eq!(Table::load(&t).unwrap_err(), LoadError::Digest, "byte {at}");
    }
    // Re-framing an edited spec with the old digest is refused the same way.
    let m = model(REG, &[POL]);
    let mut spec = lower::lower(&m);
    spec.tools[0].admin_only = !spec.tools[0].admin_only;
    let payload = toolgate_runtime::format::encode_payload(&spec);
    let old = Table::load(&good).unwrap().digest();
    let framed = toolgate_runtime::format::frame(&payload, old);
    assert_eq!(Table::load(&framed).unwrap_err(), LoadError::Digest);
    assert!(LoadError::Digest.to_string().contains("recompile"));
}

#[test]
fn missing_empty_or_misspelt_enforcement_enforces() {
    for s in [
        "",
        " ",
        "observ",
        "obsrve",
        "enforce",
        "off",
        "0",
        "\u{0}",
        "o b s e r v e",
        "observe!",
    ] {
        assert_eq!(Mode::parse(s), Mode::Enforce, "{s:?}");
    }
    for s in ["observe", " OBSERVE", "Observe\n"] {
        assert_eq!(Mode::parse(s), Mode::Observe, "{s:?}");
    }
    // No setting given to the context: the policy's (here no `enforcement` line = enforce).
    let t = Table::load(&bytes()).unwrap();
    let d = t.context("c").unwrap().role(Role::Admin).decide("b");
    assert_eq!((d.allowed, d.reason), (false, Some(Reason::TrustZone)));
}

#[test]
fn an_unknown_zone_is_the_least_trusted() {
    // A configuration without a provider, and a provider without a zone.
    let pol = "provider nozone { } configuration none { } configuration pz { provider nozone }
               zone top { ceiling secretAdjacent } zone low { ceiling publicContent } zone mid { ceiling sourceCode }";
    let reg = "[[tool]]\nname = \"a\"\ngroup = \"g\"\nclass = \"editorContent\"\n";
    let t = Table::load(&lower::compile(&model(reg, &[pol]))).unwrap();
    for c in ["none", "pz"] {
        let d = t.context(c).unwrap().role(Role::Admin).decide("a");
        assert_eq!(
            (d.reason, d.zone, d.ceiling),
            (Some(Reason::TrustZone), Some("low"), Some("publicContent")),
            "{c}"
        );
    }
}

#[test]
fn a_tool_without_any_class_is_the_most_sensitive() {
    let reg = "[[tool]]\nname = \"a\"\ngroup = \"g\"\n";
    let t = Table::load(&lower::compile(&model(
        reg,
        &["provider p { zone privateHosted } configuration c { provider p }"],
    )))
    .unwrap();
    let d = t.context("c").unwrap().decide("a");
    assert_eq!(
        (d.allowed, d.reason, d.class),
        (false, Some(Reason::TrustZone), Some("secretAdjacent"))
    );
}
