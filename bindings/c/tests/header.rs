//! The checked-in header is what cbindgen generates from the source now.
//! `UPDATE_HEADER=1 cargo test -p toolgate-c --test header` rewrites it.
//! (The PHP package reads this header at load time: `Toolgate\Native::declarations`.)

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
}
