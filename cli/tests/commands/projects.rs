//! Paths that mean projects, for every command: `snapshot` over a directory
//! holding projects, a missing file named in the manifest reported at its
//! line, manifest paths that leave the project, and only regular files read
//! (never echoed when they are not policies).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;

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

// ----------------------------- files (docs/registry.md, "Project files")

/// A scratch project whose manifest is `manifest` (registry and policy files
/// are written beside it).
pub(crate) fn scratch_manifest(name: &str, manifest: &str) -> PathBuf {
    let dir = scratch(
        name,
        "configuration editor-chat {\n  exclude [delete_record]\n}\n",
    );
    std::fs::write(dir.join("toolgate.toml"), manifest).unwrap();
    dir
}

#[test]
fn manifest_paths_that_leave_the_project_are_refused_unless_opted_in() {
    let outside = std::env::temp_dir().join(format!("toolgate-outside-{}.tg", std::process::id()));
    std::fs::write(&outside, "configuration editor-chat {\n}\n").unwrap();
    let abs = outside.display().to_string();
    let dir = scratch_manifest("escape", "");
    #[cfg(unix)]
    {
        let _ = std::fs::remove_file(dir.join("link.tg"));
        std::os::unix::fs::symlink(&outside, dir.join("link.tg")).unwrap();
    }
    let cases = [
        (
            format!("registry = \"registry.toml\"\npolicies = [{abs:?}]\n"),
            "absolute",
        ),
        (
            "registry = \"../registry.toml\"\npolicies = [\"policy.tg\"]\n".to_string(),
            "`..`",
        ),
        (
            "registry = \"registry.toml\"\npolicies = [\"sub/../policy.tg\"]\n".to_string(),
            "`..`",
        ),
        #[cfg(unix)]
        (
            "registry = \"registry.toml\"\npolicies = [\"link.tg\"]\n".to_string(),
            "symlink",
        ),
    ];
    for (manifest, why) in cases {
        std::fs::write(dir.join("toolgate.toml"), &manifest).unwrap();
        let o = run(&["check", dir.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{manifest}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains("toolgate.toml"), "names the manifest: {e}");
        assert_contains(&e, why);
        assert!(
            e.contains("allow-outside-project = true"),
            "says what to do: {e}"
        );
    }
    // The documented opt-in reads it.
    std::fs::write(
        dir.join("toolgate.toml"),
        format!(
            "registry = \"registry.toml\"\npolicies = [{abs:?}]\nallow-outside-project = true\n"
        ),
    )
    .unwrap();
    let o = run(&["check", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    // A manifest that is itself a symlink out of its directory is refused.
    #[cfg(unix)]
    {
        let d2 = std::env::temp_dir().join(format!("toolgate-cli-{}-mlink", std::process::id()));
        std::fs::create_dir_all(&d2).unwrap();
        let _ = std::fs::remove_file(d2.join("toolgate.toml"));
        std::os::unix::fs::symlink(dir.join("toolgate.toml"), d2.join("toolgate.toml")).unwrap();
        let o = run(&["check", d2.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("symlink"), "{}", stderr(&o));
    }
}

#[cfg(unix)]
#[test]
fn only_regular_files_are_read() {
    let dir = scratch_manifest("special", "");
    let fifo = dir.join("fifo.toml");
    let _ = std::fs::remove_file(&fifo);
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    std::fs::create_dir_all(dir.join("adir")).unwrap();
    for (manifest, what) in [
        // Before: read until memory ran out.
        (
            "registry = \"/dev/zero\"\npolicies = [\"policy.tg\"]\nallow-outside-project = true\n",
            "special file",
        ),
        // Before: blocked forever waiting for a writer.
        (
            "registry = \"fifo.toml\"\npolicies = [\"policy.tg\"]\n",
            "special file",
        ),
        (
            "registry = \"registry.toml\"\npolicies = [\"adir\"]\n",
            "directory",
        ),
    ] {
        std::fs::write(dir.join("toolgate.toml"), manifest).unwrap();
        let mut child = bin()
            .current_dir(root())
            .args(["check", dir.to_str().unwrap()])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let start = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if start.elapsed() > std::time::Duration::from_secs(20) {
                let _ = child.kill();
                panic!("{manifest}: still reading after 20 s");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{manifest}");
        assert!(stderr(&o).contains(what), "{manifest}: {}", stderr(&o));
        assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
    }
}

#[test]
fn a_file_that_is_not_a_policy_is_never_echoed() {
    let secret = "TOOLGATE_TEST_SECRET_a8f3e1c9d2b7";
    let dir = scratch_manifest(
        "environ",
        "registry = \"registry.toml\"\npolicies = [\"/proc/self/environ\"]\nallow-outside-project = true\n",
    );
    if !Path::new("/proc/self/environ").exists() {
        return;
    }
    for format in ["human", "plain", "json", "sarif", "github"] {
        let o = bin()
            .current_dir(root())
            .env("NO_COLOR", "1")
            .env("LEAK_ME", secret)
            .env_remove("GITHUB_STEP_SUMMARY")
            .args(["check", "--format", format, dir.to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{format}");
        let all = format!("{}{}", stdout(&o), stderr(&o));
        assert!(
            !all.contains(secret),
            "{format} echoes the environment:\n{all}"
        );
        assert!(!all.contains("LEAK_ME"), "{format}:\n{all}");
        assert!(all.contains("TG0001"), "{format}:\n{all}");
    }
    // A registry (inside the project) that is not a registry: the parse
    // error names the schema, not the file's content.
    let dir = scratch_manifest(
        "notreg",
        "registry = \"secrets.toml\"\npolicies = [\"policy.tg\"]\n",
    );
    std::fs::write(
        dir.join("secrets.toml"),
        format!("api_token = \"{secret}\"\n"),
    )
    .unwrap();
    for format in ["human", "plain", "github", "sarif"] {
        let o = run(&["check", "--format", format, dir.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{format}");
        let all = format!("{}{}", stdout(&o), stderr(&o));
        assert!(!all.contains(secret), "{format}:\n{all}");
        assert!(!all.contains("api_token"), "{format}:\n{all}");
        assert!(all.contains("TG0004"), "{format}:\n{all}");
    }
}
