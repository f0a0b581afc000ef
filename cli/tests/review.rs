//! Policy-as-code review end to end: diff, test, snapshot, fmt, and every
//! command of docs/examples/ run against policies/.

use std::path::Path;
use std::process::Command;

mod common;
use common::*;

#[test]
fn removing_one_exclusion_is_exactly_one_widening_and_nothing_else() {
    let d = scratch_example("widen", "exclusions");
    let f = d.join("configurations.tg");
    let text = std::fs::read_to_string(&f).unwrap();
    // editor-chat's exclusion line, and only that one.
    let start = text.find("configuration editor-chat").unwrap();
    let line = text[start..]
        .find("exclude [delete_record]\n")
        .map(|i| i + start)
        .unwrap();
    let new = format!(
        "{}{}",
        &text[..line],
        &text[line + "exclude [delete_record]\n".len()..]
    );
    std::fs::write(&f, new).unwrap();
    let o = run(&[
        "diff",
        "policies/exclusions",
        d.to_str().unwrap(),
        "--format",
        "json",
        "--fail-on-widen",
    ]);
    assert_eq!(o.status.code(), Some(1), "--fail-on-widen exits 1");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["summary"]["widened"], 1);
    assert_eq!(v["summary"]["narrowed"], 0);
    assert_eq!(v["summary"]["reasonChanged"], 0);
    let c = &v["changes"][0];
    assert_eq!(
        (
            c["kind"].as_str(),
            c["configuration"].as_str(),
            c["tool"].as_str(),
            c["everywhere"].as_bool()
        ),
        (
            Some("widened"),
            Some("editor-chat"),
            Some("delete_record"),
            Some(true)
        )
    );
    assert_eq!(c["old"]["reason"], "configurationExcluded");
    assert_eq!(c["new"]["allowed"], true);
    // Without --fail-on-widen the diff itself is not a failure.
    assert_eq!(
        run(&["diff", "policies/exclusions", d.to_str().unwrap()])
            .status
            .code(),
        Some(0)
    );
}

#[test]
fn moving_a_tool_between_groups_reports_every_affected_configuration() {
    let d = temp("move");
    let reg = |g: &str| {
        format!("[[tool]]\nname = \"t\"\ngroup = \"{g}\"\n[[tool]]\nname = \"a\"\ngroup = \"one\"\n[[tool]]\nname = \"b\"\ngroup = \"two\"\n")
    };
    let policy = "provider p { zone local }\nconfiguration only-one { provider p  groups [one] }\nconfiguration only-two { provider p  groups [two] }\nconfiguration all { provider p }\n";
    for (dir, g) in [("old", "one"), ("new", "two")] {
        let p = d.join(dir);
        std::fs::create_dir_all(&p).unwrap();
        std::fs::write(
            p.join("toolgate.toml"),
            "registry = \"registry.toml\"\npolicies = [\"p.tg\"]\n",
        )
        .unwrap();
        std::fs::write(p.join("registry.toml"), reg(g)).unwrap();
        std::fs::write(p.join("p.tg"), policy).unwrap();
    }
    let o = toolgate(&d, &["diff", "old", "new"]);
    assert_eq!(
        stdout(&o),
        "1 widened, 1 narrowed, 0 reason changed (162 decisions compared)\n\
         WIDENED        only-two: t: refused: configurationGroup -> offered (every role, consumer and mode)\n\
         narrowed       only-one: t: offered -> refused: configurationGroup (every role, consumer and mode)\n"
    );
}

#[test]
fn a_reformatted_project_diffs_as_no_change() {
    let d = scratch_example("fmt", "trust-zones");
    let f = d.join("policy.tg");
    let text = std::fs::read_to_string(&f).unwrap();
    // Same meaning, another layout: blocks opened over several lines, padded braces.
    let messy: String = text
        .lines()
        .map(|l| {
            if l.trim_start().starts_with('#') {
                format!("{l}\n")
            } else {
                format!("{l}\n")
                    .replace(" { ", "   {\n      ")
                    .replace(" }\n", "\n  }\n")
                    .replace("[", "[ ")
                    .replace(",\n", " ,\n")
            }
        })
        .collect();
    assert_ne!(messy, text);
    std::fs::write(&f, messy).unwrap();
    let o = toolgate(&d, &["fmt", "--check", "."]);
    assert_eq!(o.status.code(), Some(1));
    // The unified diff on stdout, the count and the fix on stderr.
    assert_starts_with(&stdout(&o), "--- policy.tg\n+++ policy.tg (formatted)\n@@ ");
    assert_eq!(stderr(&o), "1 file not formatted: run `toolgate fmt -w`\n");
    let o = run(&[
        "diff",
        "policies/trust-zones",
        d.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["changes"].as_array().map(Vec::len), Some(0));
    assert_eq!(v["summary"]["widened"], 0);
    // fmt -w restores the canonical file byte for byte.
    assert_eq!(toolgate(&d, &["fmt", "-w", "."]).status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&f).unwrap(), text);
    // Windows line endings are accepted and kept.
    std::fs::write(&f, text.replace('\n', "\r\n")).unwrap();
    let o = toolgate(&d, &["fmt", "--check", "."]);
    assert_eq!((o.status.code(), stdout(&o).as_str()), (Some(0), ""));
    assert_eq!(
        toolgate(&d, &["check", "--format", "plain"]).status.code(),
        Some(0)
    );
}

#[test]
fn diff_git_compares_with_a_revision() {
    let d = temp("git");
    copy_dir(
        &root().join("policies/exclusions"),
        &d.join("policies/exclusions"),
    );
    git_base(&d);
    let f = d.join("policies/exclusions/configurations.tg");
    let text = std::fs::read_to_string(&f).unwrap();
    std::fs::write(
        &f,
        text.replacen(
            "exclude [delete_record]\n",
            "exclude [delete_record, update_record]\n",
            1,
        ),
    )
    .unwrap();
    let o = toolgate(
        &d,
        &[
            "diff",
            "--git",
            "HEAD",
            "policies/exclusions",
            "--fail-on-widen",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_starts_with(&stdout(&o), "0 widened, 1 narrowed, 0 reason changed");
}

#[test]
fn policy_tests_of_the_examples_pass_with_full_coverage() {
    let o = run(&[
        "test",
        "--coverage",
        "--threshold",
        "100",
        "--format",
        "json",
        "policies/demo",
        "policies/exclusions",
        "policies/trust-zones",
        "policies/mcp-profiles",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["failed"], 0, "{}", stdout(&o));
    assert!(v["passed"].as_u64().unwrap() >= 40);
    let cov = &v["coverage"];
    assert_eq!(
        cov["covered"], cov["reachable"],
        "missed: {}",
        cov["missed"]
    );
    assert_eq!(o.status.code(), Some(0));
}

/// The exclusions example without its policy tests, in a scratch directory.
fn exclusions_without_tests(name: &str) -> std::path::PathBuf {
    let d = scratch_example(name, "exclusions");
    for e in std::fs::read_dir(&d).unwrap() {
        let p = e.unwrap().path();
        if p.to_string_lossy().ends_with(".test.toml") {
            std::fs::remove_file(p).unwrap();
        }
    }
    d
}

#[test]
fn a_failing_policy_test_names_file_line_expected_and_actual() {
    let d = exclusions_without_tests("failing");
    std::fs::write(
        d.join("wrong.test.toml"),
        "[[case]]\nname = \"right\"\nconfiguration = \"editor-chat\"\ntool = \"delete_record\"\nexpect = \"configurationExcluded\"\n\n[[case]]\nname = \"wrong\"\nconfiguration = \"editor-chat\"\ntool = \"delete_record\"\nexpect = \"offered\"\n",
    )
    .unwrap();
    let o = toolgate(&d, &["test", "--coverage", "--threshold", "50"]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert_contains(
        &out,
        "FAIL ./wrong.test.toml:7: wrong\n  expected: offered\n  actual:   configurationExcluded\n",
    );
    assert_contains(&out, "1 passed, 1 failed\ncoverage: 1 of 15 reachable rows");
    let junit = stdout(&toolgate(&d, &["test", "--format", "junit"]));
    assert_contains(
        &junit,
        "<testcase name=\"wrong\" classname=\"./wrong.test.toml\" time=\"",
    );
    assert_contains(&junit, "<failure message=\"expected offered, got configurationExcluded\">./wrong.test.toml:7: wrong\nexpected: offered\nactual:   configurationExcluded</failure>");
    // Under --threshold, the coverage is a test case of its own.
    let junit = stdout(&toolgate(
        &d,
        &["test", "--format", "junit", "--threshold", "50"],
    ));
    assert_contains(&junit, "<testcase name=\"threshold\" classname=\"coverage\">\n            <failure message=\"coverage 6.7% is below the threshold 50.0%\">not exercised: editor-chat notRegistered\n");
}

#[test]
fn an_unknown_expectation_is_a_test_file_error_not_a_failing_test() {
    let d = exclusions_without_tests("expectation");
    std::fs::write(
        d.join("t.test.toml"),
        "[[case]]\nname = \"typo\"\nconfiguration = \"editor-chat\"\ntool = \"delete_record\"\nexpect = \"configurationExclude\"\n\n[[case]]\nname = \"answer\"\nanswer = \"a.json\"\nexpect = \"not_in_profile\"\n",
    )
    .unwrap();
    let o = toolgate(&d, &["test"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stdout(&o),
        "error: ./t.test.toml:5:1: case `typo`: unknown expectation `configurationExclude`\n  help: did you mean `configurationExcluded`? (a `tool` case expects: offered, observed, refused, notRegistered, toolDisabled, requiresAdmin, notInProfile, configurationGroup, configurationExcluded, trustZone)\n\
error: ./t.test.toml:10:1: case `answer`: unknown expectation `not_in_profile`\n  help: did you mean `notInProfile`? (an `answer` case expects: success, toolFailure, notRegistered, toolDisabled, requiresAdmin, notInProfile, configurationGroup, configurationExcluded, trustZone, contentPolicy, policy, definitionChanged)\n\
0 passed, 0 failed\n2 test-file errors (not run)\n"
    );
}

#[test]
fn snapshots_of_the_examples_are_up_to_date_and_check_detects_drift() {
    for p in EXAMPLES {
        let o = run(&["snapshot", "--check", p]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{p}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    let d = scratch_example("snap", "exclusions");
    let f = d.join("configurations.tg");
    let text = std::fs::read_to_string(&f).unwrap();
    std::fs::write(&f, text.replacen("exclude [delete_record]\n", "", 1)).unwrap();
    let o = toolgate(&d, &["snapshot", "--check", "."]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("+ editor-chat user delete_record offered")
            && err.contains("- editor-chat user delete_record refused configurationExcluded"),
        "{err}"
    );
}

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
