//! Paths that mean projects: `snapshot` over a directory holding projects,
//! and a missing file named in the manifest reported at its line.

mod common;

use common::{copy_dir, root, run, scratch_example, stderr, stdout, temp, toolgate};

#[test]
fn snapshot_checks_every_project_below_a_directory() {
    let o = run(&["snapshot", "policies", "--check"]);
    assert_eq!((stderr(&o).as_str(), o.status.code()), ("", Some(0)));
    // Two copies of the demo, one out of date: exit 1, that one named.
    let dir = temp("snapshots");
    copy_dir(&root().join("policies/demo"), &dir.join("a"));
    copy_dir(&root().join("policies/demo"), &dir.join("b"));
    std::fs::write(dir.join("b/effective-access.txt"), "stale\n").unwrap();
    let o = toolgate(&dir, &["snapshot", "--check"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o)
            .starts_with("b/effective-access.txt is out of date; run `toolgate snapshot b`\n"),
        "{}",
        stderr(&o)
    );
    // Written for both; then up to date.
    let o = toolgate(&dir, &["snapshot"]);
    assert_eq!(o.status.code(), Some(0));
    let o = toolgate(&dir, &["snapshot", "--check"]);
    assert_eq!((stderr(&o).as_str(), o.status.code()), ("", Some(0)));
    // -o names one file: refused for several projects.
    let o = toolgate(&dir, &["snapshot", "-o", "x.txt"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "error: -o names one file, and 2 projects were found; give one project with -o, or none\n"
    );
}

#[test]
fn a_missing_policy_file_is_reported_at_its_manifest_line() {
    let dir = scratch_example("manifest-line", "demo");
    let manifest = dir.join("toolgate.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, text.replace("\"policy.tg\"", "\"polcy.tg\"")).unwrap();
    let o = toolgate(&dir, &["check"]);
    assert_eq!((stdout(&o).as_str(), o.status.code()), ("", Some(2)));
    assert_eq!(
        stderr(&o),
        "error: ./polcy.tg: No such file or directory (os error 2) (named by `policies` at toolgate.toml:3; fix the name there, or create the file)\n"
    );
}
