//! `toolgate run`: stored runs, started and resumed.

use crate::common::*;

#[test]
fn run_start_and_resume_store_and_narrow() {
    let o = run(&with_configuration(
        &["run", "start"],
        "policies/exclusions",
        "editor-chat",
        &[],
    ));
    assert_eq!(
        stdout(&o),
        "{\"allowedToolNames\":null,\"excludedToolNames\":[\"delete_record\"]}\n"
    );
    let dir = std::env::temp_dir().join(format!("toolgate-cli-{}-run", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let stored = dir.join("run.json");
    std::fs::write(&stored, stdout(&o)).unwrap();
    // Resumed under a configuration without the exclusion: the stored one holds.
    let o = run(&with_configuration(
        &["run", "resume"],
        "policies/exclusions",
        "reviewer-chat",
        &[stored.to_str().unwrap()],
    ));
    assert_eq!(
        stdout(&o),
        "{\"allowedToolNames\":null,\"excludedToolNames\":[\"delete_record\"]}\n"
    );
    let o = run(&with_configuration(
        &["decide"],
        "policies/exclusions",
        "reviewer-chat",
        &["--run", stored.to_str().unwrap(), "delete_record"],
    ));
    assert_eq!(o.status.code(), Some(1));
    // A stored value that is not a list cannot be read: an input error
    // (exit 2) with nothing on standard output, so nothing reads as allowed.
    std::fs::write(&stored, "{\"excludedToolNames\": \"delete_record\"}").unwrap();
    let o = run(&with_configuration(
        &["simulate"],
        "policies/exclusions",
        "reviewer-chat",
        &[
            "--admin",
            "--run",
            stored.to_str().unwrap(),
            "--format",
            "json",
        ],
    ));
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stdout(&o), "");
}
