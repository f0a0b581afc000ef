//! The harness every CLI test file shares: the binary, the repository root,
//! scratch directories, and the text of an output.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
}

pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `toolgate ARGS` in `dir`, without colour or a GitHub step summary.
pub fn toolgate(dir: &Path, args: &[&str]) -> Output {
    bin()
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_STEP_SUMMARY")
        .args(args)
        .output()
        .unwrap()
}

/// `toolgate ARGS` at the repository root.
pub fn run(args: &[&str]) -> Output {
    toolgate(&root(), args)
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// An empty scratch directory of this test process.
pub fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("toolgate-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A scratch project with the given policy over the exclusions registry.
pub fn scratch(name: &str, policy: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolgate-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("toolgate.toml"),
        "registry = \"registry.toml\"\npolicies = [\"policy.tg\"]\n",
    )
    .unwrap();
    std::fs::copy(
        root().join("policies/exclusions/registry.toml"),
        dir.join("registry.toml"),
    )
    .unwrap();
    std::fs::write(dir.join("policy.tg"), policy).unwrap();
    dir
}

/// `toolgate ARGS` at the repository root with `input` on standard input.
pub fn with_stdin(args: &[&str], input: &[u8]) -> Output {
    use std::io::Write as _;
    use std::process::Stdio;
    let mut child = bin()
        .current_dir(root())
        .env("NO_COLOR", "1")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

/// Copy the files (not subdirectories) of `from` into `to`.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}
