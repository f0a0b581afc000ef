//! The harness every CLI test file shares: the binary, the repository root,
//! scratch directories, and the text of an output.
#![allow(dead_code)]

pub mod serve;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The four hand-written example projects (`real-servers`, imported from
/// live MCP servers, has its own tests in mcp_live.rs).
pub const EXAMPLES: [&str; 4] = [
    "policies/demo",
    "policies/exclusions",
    "policies/trust-zones",
    "policies/mcp-profiles",
];

/// A policy with a typo in an exclusion (`delete_recrod`): an error.
pub const TYPO: &str = "configuration editor-chat {\n  exclude [delete_recrod]\n}\n";
/// A policy excluding a tool that is no longer registered: a warning.
pub const WARN: &str = "configuration editor-chat {\n  exclude [retired_tool]\n}\n";

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

/// `COMMAND -p PROJECT -c CONFIGURATION REST`: the arguments of a command
/// about one configuration of a project.
pub fn with_configuration<'a>(
    command: &[&'a str],
    project: &'a str,
    configuration: &'a str,
    rest: &[&'a str],
) -> Vec<&'a str> {
    [command, &["-p", project, "-c", configuration], rest].concat()
}

/// `COMMAND -p policies/demo -c demo-chat REST`: the demo project's chat
/// configuration, which most command tests ask about.
pub fn demo_chat<'a>(command: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    with_configuration(&[command], "policies/demo", "demo-chat", rest)
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Assert that `text` contains `part`, showing `text` when it does not.
#[track_caller]
pub fn assert_contains(text: &str, part: &str) {
    assert!(text.contains(part), "{part:?} is not in:\n{text}");
}

/// Assert that `text` starts with `part`, showing `text` when it does not.
#[track_caller]
pub fn assert_starts_with(text: &str, part: &str) {
    assert!(text.starts_with(part), "{part:?} does not start:\n{text}");
}

/// Assert that `text` ends with `part`, showing `text` when it does not.
#[track_caller]
pub fn assert_ends_with(text: &str, part: &str) {
    assert!(text.ends_with(part), "{part:?} does not end:\n{text}");
}

/// An empty scratch directory of this test process.
pub fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("toolgate-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A scratch project `name`: a manifest naming `registry.toml` and
/// `policy.tg`, with these contents.
pub fn scratch_project(name: &str, registry: &str, policy: &str) -> PathBuf {
    let dir = temp(name);
    write_project(&dir, registry, policy);
    dir
}

/// Write a project into `dir`: a manifest naming `registry.toml` and
/// `policy.tg`, with these contents.
pub fn write_project(dir: &Path, registry: &str, policy: &str) {
    std::fs::write(
        dir.join("toolgate.toml"),
        "registry = \"registry.toml\"\npolicies = [\"policy.tg\"]\n",
    )
    .unwrap();
    std::fs::write(dir.join("registry.toml"), registry).unwrap();
    std::fs::write(dir.join("policy.tg"), policy).unwrap();
}

/// A `--live` file in `dir` with two tools the demo does not register:
/// `new_tool` (group content) and the remote `mcp_crm_new` (server crm).
pub fn live_tools(dir: &Path) -> String {
    let live = dir.join("live.toml");
    std::fs::write(
        &live,
        "[[tool]]\nname = \"new_tool\"\ngroup = \"content\"\n\n[[tool]]\nname = \"mcp_crm_new\"\ngroup = \"mcp_crm\"\nserver = \"crm\"\n",
    )
    .unwrap();
    live.to_str().unwrap().to_string()
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

/// A scratch project with the given policy over the exclusions registry.
pub fn scratch(name: &str, policy: &str) -> PathBuf {
    let registry =
        std::fs::read_to_string(root().join("policies/exclusions/registry.toml")).unwrap();
    scratch_project(name, &registry, policy)
}

/// A scratch copy of the example project `policies/EXAMPLE`.
pub fn scratch_example(name: &str, example: &str) -> PathBuf {
    let dir = temp(name);
    copy_dir(&root().join("policies").join(example), &dir);
    dir
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

/// `git ARGS` in `dir`, which must succeed.
pub fn git(dir: &Path, args: &[&str]) -> Output {
    let o = Command::new("git")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// A git repository of `dir` on branch `main` with everything in it
/// committed as "base".
pub fn git_base(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "."]);
    let who = ["-c", "user.name=t", "-c", "user.email=t@t"];
    git(dir, &[&who[..], &["commit", "-qm", "base"]].concat());
}

/// Why `instance` does not validate against `docs/schemas/NAME.schema.json`
/// (nothing when it does), each reason with where in the instance.
pub fn schema_errors(name: &str, instance: &serde_json::Value) -> Vec<String> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    static VALIDATORS: OnceLock<Mutex<HashMap<String, Arc<jsonschema::Validator>>>> =
        OnceLock::new();
    let validator = VALIDATORS
        .get_or_init(Default::default)
        .lock()
        .unwrap()
        .entry(name.to_string())
        .or_insert_with(|| {
            let path = root().join(format!("docs/schemas/{name}.schema.json"));
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
            Arc::new(jsonschema::validator_for(&schema).unwrap())
        })
        .clone();
    validator
        .iter_errors(instance)
        .map(|e| format!("{name} at `{}`: {e}", e.instance_path()))
        .collect()
}
