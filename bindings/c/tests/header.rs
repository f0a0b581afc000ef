//! The checked-in header is what cbindgen generates from the source now.
//! `UPDATE_HEADER=1 cargo test -p toolgate-c --test header` rewrites it and
//! the PHP package's FFI declarations derived from it.

use std::path::{Path, PathBuf};

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn generate() -> String {
    let dir = crate_dir();
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut out = Vec::new();
    cbindgen::Builder::new()
        .with_crate(&dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut out);
    String::from_utf8(out).expect("UTF-8 header")
}

/// The declarations PHP's FFI parser takes: the header without preprocessor
/// lines and `extern "C"` guards (PHP's FFI reads plain C declarations).
fn php_declarations(header: &str) -> String {
    let mut out = String::from(
        "/* FFI declarations of libtoolgate for PHP, derived from bindings/c/include/toolgate.h. Do not edit: run UPDATE_HEADER=1 cargo test -p toolgate-c --test header */\n",
    );
    let mut skip_depth = 0;
    for line in header.lines() {
        let t = line.trim_start();
        if t.starts_with("#if") {
            skip_depth += usize::from(t.contains("__cplusplus"));
            continue;
        }
        if t.starts_with("#endif") {
            skip_depth = skip_depth.saturating_sub(1);
            continue;
        }
        if t.starts_with('#') || skip_depth > 0 {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn check(path: &Path, want: &str) {
    if std::env::var_os("UPDATE_HEADER").is_some() {
        std::fs::write(path, want).expect("write");
        return;
    }
    let have = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        have == want,
        "{} is not current: run UPDATE_HEADER=1 cargo test -p toolgate-c --test header",
        path.display()
    );
}

#[test]
fn the_checked_in_header_is_current() {
    let header = generate();
    assert!(header.contains("int32_t toolgate_decide_packed("));
    check(&crate_dir().join("include/toolgate.h"), &header);
    check(
        &crate_dir().join("../php/src/toolgate.ffi.h"),
        &php_declarations(&header),
    );
}
