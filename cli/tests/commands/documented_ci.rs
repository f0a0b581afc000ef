//! Policy-as-code review end to end: every command of docs/examples/ (the
//! documented CI jobs: diff, test, snapshot, fmt) run against policies/.

use std::path::Path;
use std::process::Command;

use crate::common::*;

/// Every `toolgate` command line in docs/examples runs against policies/.
#[test]
fn the_documented_ci_commands_run() {
    let mut commands = Vec::new();
    for f in [
        "docs/examples/github-workflow.yml",
        "docs/examples/pre-commit-config.yaml",
    ] {
        let text = std::fs::read_to_string(root().join(f)).unwrap();
        for line in text.lines() {
            let l = line
                .trim()
                .trim_start_matches("run: ")
                .trim_start_matches("entry: ");
            // A command line: it starts with `toolgate `, or a loop runs it.
            let start = if l.starts_with("toolgate ") {
                Some(0)
            } else {
                l.find("do toolgate ").map(|i| i + 3)
            };
            if let Some(i) = start {
                let mut cmd = l[i..].to_string();
                if cmd == "toolgate fmt --check" {
                    // pre-commit appends the staged file names.
                    cmd.push_str(" policies/exclusions/zones.tg policies/demo/policy.tg");
                }
                commands.push(cmd);
            }
        }
    }
    assert!(commands.len() >= 8, "{commands:?}");
    let bin = env!("CARGO_BIN_EXE_toolgate");
    let bin_dir = Path::new(bin).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let d = temp("ci");
    copy_dir(
        &root().join("policies/exclusions"),
        &d.join("policies/exclusions"),
    );
    copy_dir(&root().join("policies/demo"), &d.join("policies/demo"));
    copy_dir(
        &root().join("policies/trust-zones"),
        &d.join("policies/trust-zones"),
    );
    copy_dir(
        &root().join("policies/mcp-profiles"),
        &d.join("policies/mcp-profiles"),
    );
    copy_dir(
        &root().join("policies/mcp-profiles/mcp"),
        &d.join("policies/mcp-profiles/mcp"),
    );
    std::fs::create_dir_all(d.join("tests/fixtures")).unwrap();
    copy_dir(
        &root().join("tests/fixtures/gateway"),
        &d.join("tests/fixtures/gateway"),
    );
    git_base(&d);
    git(&d, &["update-ref", "refs/remotes/origin/main", "HEAD"]);
    // What the workflow's fetch script provides: the deployed table and a
    // decision log it wrote (the runtime's writer).
    let deployed = d.join("deployed.tgt");
    let o = Command::new(bin)
        .args(["compile", "policies/exclusions", "-o"])
        .arg(&deployed)
        .current_dir(&d)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let table = toolgate_runtime::Table::load(&std::fs::read(&deployed).unwrap()).unwrap();
    let mut log = toolgate_runtime::log::DecisionLog::new(Vec::new());
    for cfg in table.configuration_names() {
        let ctx = table.context(cfg).unwrap();
        for d in ctx.decisions() {
            log.record(&ctx, &d).unwrap();
        }
    }
    std::fs::write(d.join("decisions.jsonl"), log.into_inner()).unwrap();
    for cmd in commands {
        // The workflow's expression for the base branch.
        let cmd = cmd
            .replace("${{ github.base_ref }}", "main")
            .replace("\"$p\"", "policies/exclusions")
            .replace("'", "");
        let cmd = cmd
            .trim_end_matches("|| exit 1; done")
            .trim_end_matches("; done")
            .replace(" >> diff.md || status=$?", "")
            .replace(" > toolgate.sarif", "")
            .replace(" > toolgate-junit.xml", "");
        let o = Command::new("sh")
            .arg("-c")
            .arg(&cmd)
            .current_dir(&d)
            .env("PATH", &path)
            .env_remove("GITHUB_STEP_SUMMARY")
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{cmd}\n{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
}
