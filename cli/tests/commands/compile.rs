//! `toolgate compile`: the table is deterministic, the same bytes from any
//! working directory, and answers as the project does.

use std::path::Path;

use crate::common::*;

#[test]
fn compile_is_deterministic_and_the_table_answers_the_same() {
    let dir = std::env::temp_dir().join(format!("toolgate-cli-{}-tables", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let a = dir.join("a.tgt");
    let b = dir.join("b.tgt");
    assert_eq!(
        run(&["compile", "policies/exclusions", "-o", a.to_str().unwrap()])
            .status
            .code(),
        Some(0)
    );
    assert_eq!(
        run(&["compile", "policies/exclusions", "-o", b.to_str().unwrap()])
            .status
            .code(),
        Some(0)
    );
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let from_table = run(&[
        "unavailable",
        "--table",
        a.to_str().unwrap(),
        "-c",
        "editor-chat",
        "--format",
        "json",
    ]);
    let from_project = run(&with_configuration(
        &["unavailable"],
        "policies/exclusions",
        "editor-chat",
        &["--format", "json"],
    ));
    assert_eq!(stdout(&from_table), stdout(&from_project));
    // A damaged table is refused (exit 2), not half-read.
    let mut bytes = std::fs::read(&a).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&b, &bytes).unwrap();
    let o = run(&[
        "decide",
        "--table",
        b.to_str().unwrap(),
        "-c",
        "editor-chat",
        "update_record",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("checksum mismatch"));
}

#[test]
fn a_table_is_the_same_bytes_from_any_working_directory() {
    let dir = temp("cwd-tables");
    let a = dir.join("a.tgt");
    let b = dir.join("b.tgt");
    let project = root().join("policies/exclusions");
    let project = std::fs::canonicalize(&project).unwrap();
    let o = toolgate(
        Path::new("/"),
        &[
            "compile",
            project.to_str().unwrap(),
            "-o",
            a.to_str().unwrap(),
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = toolgate(
        &root().join("policies"),
        &["compile", "./exclusions/", "-o", b.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    // The file a refusal names is the project's own name for it.
    let o = run(&[
        "decide",
        "--table",
        a.to_str().unwrap(),
        "-c",
        "editor-chat",
        "--refusal",
        "delete_record",
    ]);
    let r: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(r["file"], "configurations.tg");
}
