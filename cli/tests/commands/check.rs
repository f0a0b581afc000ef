//! `toolgate check`: every report format (human, plain, SARIF, GitHub,
//! JSON), its exit codes, and the paths it reads as projects.

use crate::common::*;

#[test]
fn check_passes_on_every_example_and_exits_0() {
    for p in EXAMPLES {
        let o = run(&["check", "--deny-warnings", p]);
        assert_eq!(o.status.code(), Some(0), "{p}: {}", stdout(&o));
        assert_eq!(stdout(&o), "0 errors, 0 warnings\n");
    }
}

#[test]
fn check_typo_in_exclusion_fails_with_code_span_and_suggestion() {
    let dir = scratch("typo", TYPO);
    let o = run(&["check", "--format", "plain", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert_contains(&out, "error[TG1010]: excluded tool `delete_recrod` is not registered; did you mean `delete_record`?");
    assert_contains(&out, "policy.tg:2:12");
    let o = run(&["check", "--format", "json", dir.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let d = &v["diagnostics"][0];
    assert_eq!(
        (
            d["code"].as_str(),
            d["line"].as_u64(),
            d["column"].as_u64(),
            d["endColumn"].as_u64()
        ),
        (Some("TG1010"), Some(2), Some(12), Some(25))
    );
}

#[test]
fn warnings_exit_0_unless_denied() {
    let dir = scratch("warn", WARN);
    assert_eq!(
        run(&["check", dir.to_str().unwrap()]).status.code(),
        Some(0)
    );
    assert_eq!(
        run(&["check", "--deny-warnings", dir.to_str().unwrap()])
            .status
            .code(),
        Some(1)
    );
}

#[test]
fn usage_and_io_errors_exit_2() {
    assert_eq!(
        run(&["check", "/nonexistent/project"]).status.code(),
        Some(2)
    );
    assert_eq!(run(&["check", "--format", "yaml"]).status.code(), Some(2));
    assert_eq!(run(&["frobnicate"]).status.code(), Some(2));
    let o = run(&with_configuration(
        &["decide"],
        "policies/exclusions",
        "editor-caht",
        &["delete_record"],
    ));
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("did you mean `editor-chat`"));
}

#[test]
fn human_format_is_miette_without_colour_when_not_a_terminal() {
    let dir = scratch("human", TYPO);
    let out = stdout(&run(&["check", dir.to_str().unwrap()]));
    assert_contains(&out, "× excluded tool `delete_recrod`");
    assert!(!out.contains('\u{1b}'), "no escape codes off a terminal");
}

#[test]
fn sarif_format_has_rules_and_fingerprints() {
    let dir = scratch("sarif", TYPO);
    let o = run(&["check", "--format", "sarif", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["version"], "2.1.0");
    let run0 = &v["runs"][0];
    let r = &run0["results"][0];
    assert_eq!(r["ruleId"], "TG1010");
    let idx = r["ruleIndex"].as_u64().unwrap() as usize;
    assert_eq!(run0["tool"]["driver"]["rules"][idx]["id"], "TG1010");
    assert_eq!(
        r["locations"][0]["physicalLocation"]["region"]["startLine"],
        2
    );
    assert_eq!(
        r["partialFingerprints"]["toolgateDiagnostic/v1"]
            .as_str()
            .map(str::len),
        Some(32)
    );
}

#[test]
fn github_format_annotates_and_writes_the_step_summary() {
    let dir = scratch("github", TYPO);
    let summary = dir.join("summary.md");
    let o = bin()
        .current_dir(root())
        .env("GITHUB_STEP_SUMMARY", &summary)
        .args(["check", "--format", "github", dir.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert_starts_with(&out, "::error file=");
    assert_contains(&out, ",line=2,col=12,endLine=2,endColumn=25,title=TG1010 exclusion-typo::excluded tool `delete_recrod`");
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(md.contains("| 1 | 0 |") && md.contains("TG1010"), "{md}");
}

#[test]
fn json_format_lists_several_projects() {
    let dir = scratch("multi", WARN);
    let o = run(&[
        "check",
        "--format",
        "json",
        "policies/demo",
        dir.to_str().unwrap(),
    ]);
    // One shape whatever the number of projects: every diagnostic names its
    // project, the summary is the total, `projects` has each one's.
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let name = dir.to_str().unwrap();
    assert_eq!(
        v["projects"],
        serde_json::json!([
            {"path": "policies/demo", "summary": {"errors": 0, "warnings": 0}},
            {"path": name, "summary": {"errors": 0, "warnings": 1}},
        ])
    );
    assert_eq!(v["diagnostics"][0]["code"], "TG1009");
    assert_eq!(v["diagnostics"][0]["project"], name);
    assert_eq!(
        v["summary"],
        serde_json::json!({"errors": 0, "warnings": 1})
    );
    // Text: each project's summary line names it, then the total.
    let o = run(&["check", "--format", "plain", "policies/demo", name]);
    let out = stdout(&o);
    assert_starts_with(&out, "policies/demo: 0 errors, 0 warnings\nwarning[TG1009]");
    assert!(
        out.ends_with(&format!(
            "{name}: 0 errors, 1 warning\n2 projects: 0 errors, 1 warning\n"
        )),
        "{out}"
    );
}

#[test]
fn paths_mean_projects_as_ruff_and_cargo_read_them() {
    // A directory holding projects: every project below it.
    let o = run(&["check", "--format", "plain", "policies"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stdout(&o),
        "policies/approvals: 0 errors, 0 warnings\npolicies/demo: 0 errors, 0 warnings\npolicies/exclusions: 0 errors, 0 warnings\npolicies/mcp-profiles: 0 errors, 0 warnings\npolicies/real-servers: 0 errors, 0 warnings\npolicies/trust-zones: 0 errors, 0 warnings\n6 projects: 0 errors, 0 warnings\n"
    );
    // No path inside a project's subdirectory: the project above, as cargo.
    let sub = root().join("policies/exclusions/sub-for-test");
    std::fs::create_dir_all(&sub).unwrap();
    let o = toolgate(&sub, &["check", "--format", "plain"]);
    let _ = std::fs::remove_dir(&sub);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), "0 errors, 0 warnings\n");
    // A policy file names the project that holds it.
    let o = run(&["check", "policies/exclusions/zones.tg"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "error: policies/exclusions/zones.tg: is a policy file, not a project: it belongs to the project in `policies/exclusions` (run `toolgate check policies/exclusions`)\n"
    );
    // A directory with no project in it or below it.
    let o = run(&["check", "docs"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "error: docs: holds no toolgate project (no toolgate.toml in it or below it); a project is a directory with a toolgate.toml (`toolgate init DIR` makes one)\n"
    );
}

#[test]
fn a_syntax_error_quotes_at_most_forty_characters_of_the_token() {
    let long = "x".repeat(500);
    let dir = scratch("longtoken", &format!("configuration a {{}}\n{long}\n"));
    let o = run(&["check", "--format", "json", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let msg = v["diagnostics"][0]["message"].as_str().unwrap();
    assert!(msg.contains(&format!("`{}…`", "x".repeat(40))), "{msg}");
    assert!(!msg.contains(&"x".repeat(41)), "{msg}");
}

/// Issue 45: `delete_record` and `delete_record` followed by U+2028 LINE
/// SEPARATOR in one registry. The second is TG1012 (an error), so `check`
/// fails with and without `--deny-warnings`, and every rendering escapes it.
#[test]
fn a_line_separator_in_a_registry_name_fails_check() {
    let registry = "[[tool]]\nname = \"delete_record\"\ngroup = \"g\"\n\n\
                    [[tool]]\nname = \"delete_record\u{2028}\"\ngroup = \"g\"\n";
    let dir = scratch_project(
        "line-separator",
        registry,
        "configuration editor-chat {\n  exclude [delete_record]\n}\n",
    );
    let d = dir.to_str().unwrap();
    for args in [
        &["check", "--deny-warnings", "--format", "plain", d][..],
        &["check", "--format", "plain", d][..],
    ] {
        let o = run(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stdout(&o));
        let out = stdout(&o);
        assert_contains(
            &out,
            "error[TG1012]: a line or paragraph separator U+2028 in the tool name of registry tool `delete_record\\u2028`",
        );
        assert_contains(&out, "registry.toml:6:8");
        assert!(
            !out.contains('\u{2028}'),
            "a raw U+2028 in the output: {out}"
        );
    }
    // JSON: the exact span, the name escaped by JSON itself.
    let o = run(&["check", "--deny-warnings", "--format", "json", d]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let hit: Vec<&serde_json::Value> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["code"] == "TG1012")
        .collect();
    assert_eq!(hit.len(), 1, "{v}");
    assert_eq!(
        (
            hit[0]["line"].as_u64(),
            hit[0]["column"].as_u64(),
            hit[0]["endLine"].as_u64(),
            hit[0]["endColumn"].as_u64()
        ),
        // `"delete_record\u{2028}"`: 16 characters from column 8.
        (Some(6), Some(8), Some(6), Some(24)),
        "{}",
        hit[0]
    );
}
