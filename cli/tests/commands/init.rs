//! `toolgate init`: a new project that passes check, test and fmt, never over
//! an existing one.

use crate::common::*;

#[test]
fn init_makes_a_project_that_passes_check_test_and_fmt() {
    let dir = temp("init").join("new");
    let d = dir.to_str().unwrap();
    let o = run(&["init", d]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    for f in [
        "toolgate.toml",
        "registry.toml",
        "policy.tg",
        "policy.test.toml",
    ] {
        assert!(dir.join(f).is_file(), "{f}");
    }
    let o = run(&["check", "--format", "plain", "--deny-warnings", d]);
    assert_eq!(
        (o.status.code(), stdout(&o).as_str()),
        (Some(0), "0 errors, 0 warnings\n")
    );
    let o = run(&["test", d]);
    assert_eq!(
        (o.status.code(), stdout(&o).as_str()),
        (Some(0), "2 passed, 0 failed\n")
    );
    assert_eq!(run(&["fmt", "--check", d]).status.code(), Some(0));
    // Never over an existing project.
    let o = run(&["init", d]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        format!("error: {d}/toolgate.toml: already exists; `toolgate init` writes only into a directory without a project\n")
    );
}
