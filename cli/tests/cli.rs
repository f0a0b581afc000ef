//! The `toolgate` binary end to end: every check format and exit code, and
//! the runtime commands on the shipped example projects.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::*;

const TYPO: &str = "configuration editor-chat {\n  exclude [delete_recrod]\n}\n";
const WARN: &str = "configuration editor-chat {\n  exclude [retired_tool]\n}\n";

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
        "policies/demo: 0 errors, 0 warnings\npolicies/exclusions: 0 errors, 0 warnings\npolicies/mcp-profiles: 0 errors, 0 warnings\npolicies/real-servers: 0 errors, 0 warnings\npolicies/trust-zones: 0 errors, 0 warnings\n5 projects: 0 errors, 0 warnings\n"
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
fn help_explains_each_subcommand() {
    let out = stdout(&run(&["--help"]));
    for cmd in [
        "check",
        "compile",
        "registry",
        "decide",
        "explain",
        "unavailable",
        "simulate",
        "show",
        "run",
        "stats",
        "report",
    ] {
        assert!(
            out.contains(&format!("  {cmd} ")),
            "{cmd} missing from --help:\n{out}"
        );
    }
}

// ---------------------------------------------------------------- runtime commands

#[test]
fn decide_json_uses_the_exact_field_names_and_exit_codes() {
    let decide = |configuration: &str| {
        let rest = ["delete_record", "--format", "json"];
        run(&with_configuration(
            &["decide"],
            "policies/exclusions",
            configuration,
            &rest,
        ))
    };
    let o = decide("editor-chat");
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), "{\"tool\":\"delete_record\",\"allowed\":false,\"reason\":\"configurationExcluded\",\"observedOnly\":false}\n");
    let o = decide("reviewer-chat");
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (v["allowed"].as_bool(), v["reason"].is_null()),
        (Some(true), true)
    );
}

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
fn unavailable_prompt_for_the_demo() {
    let o = run(&demo_chat("unavailable", &["--format", "prompt"]));
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 17);
    assert_starts_with(&out, "Tools that exist but are not available in this conversation, and why:\n- read_source: not among the tools this configuration allows\n");
}

#[test]
fn explain_goes_gate_by_gate_and_stops_at_the_first_refusal() {
    let out = stdout(&run(&with_configuration(
        &["explain"],
        "policies/exclusions",
        "editor-chat",
        &["delete_record", "no_such_tool"],
    )));
    assert_eq!(
        out,
        "delete_record: refused, configurationExcluded (excluded by this configuration)\n  pass    notRegistered\n  pass    toolDisabled\n  pass    requiresAdmin\n  pass    notInProfile\n  pass    configurationGroup\n  REFUSE  configurationExcluded\nno_such_tool: refused, notRegistered (no tool of this name is registered)\n  REFUSE  notRegistered\n"
    );
}

#[test]
fn show_readouts_name_excluding_configurations_and_stale_names() {
    let out = stdout(&run(&[
        "show",
        "tool",
        "delete_record",
        "-p",
        "policies/exclusions",
        "--format",
        "json",
    ]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["excludedBy"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c == "editor-chat"));
    let dir = scratch("stale", WARN);
    let out = stdout(&run(&[
        "show",
        "config",
        "editor-chat",
        "-p",
        dir.to_str().unwrap(),
    ]));
    assert_contains(&out, "no longer registered  retired_tool");
}

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

#[test]
fn stats_counts_refusals_per_reason_and_configuration() {
    let dir = std::env::temp_dir().join(format!("toolgate-cli-{}-stats", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("decisions.jsonl");
    let line = |cfg: &str, allowed: bool, reason: Option<&str>| {
        format!(
            "{{\"timeUnixMs\":1,\"table\":\"ab\",\"configuration\":\"{cfg}\",\"role\":\"user\",\"consumer\":null,\"tool\":\"t\",\"allowed\":{allowed},\"reason\":{},\"observedOnly\":false}}\n",
            reason.map(|r| format!("\"{r}\"")).unwrap_or("null".into())
        )
    };
    let text = [
        line("editor-chat", false, Some("configurationExcluded")),
        line("editor-chat", false, Some("configurationExcluded")),
        line("demo-chat", false, Some("configurationGroup")),
        line("demo-chat", true, None),
    ]
    .concat();
    std::fs::write(&log, text).unwrap();
    let o = run(&["stats", log.to_str().unwrap(), "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (v["decisions"].as_u64(), v["refused"].as_u64()),
        (Some(4), Some(3))
    );
    assert_eq!(v["byReason"]["configurationExcluded"], 2);
    assert_eq!(v["byConfiguration"]["demo-chat"]["configurationGroup"], 1);
    let text = stdout(&run(&["stats", log.to_str().unwrap()]));
    // comfy-table columns; the bars on a log scale (1 against 2: 25 3/8
    // columns against 40).
    assert_eq!(
        text,
        "4 decisions, 3 refused, 0 offered under observe\n\n\
         refusals by reason (bar: log scale)\n  \
         reason                 refusals\n  \
         configurationGroup            1  █████████████████████████▎\n  \
         configurationExcluded         2  ████████████████████████████████████████\n\n\
         refusals by configuration\n  \
         configuration  refusals  by reason\n  \
         demo-chat             1  configurationGroup 1\n  \
         editor-chat           2  configurationExcluded 2\n"
    );
}

#[test]
fn import_mcp_reports_bad_names_and_keeps_good_ones() {
    let dir = std::env::temp_dir().join(format!("toolgate-cli-{}-mcp", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("list.json");
    std::fs::write(&f, r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"lookup","inputSchema":{"type":"object"}},{"name":"bad name!","inputSchema":{"type":"object"}}]}}"#).unwrap();
    let o = run(&[
        "registry",
        "import-mcp",
        "--server",
        "crm",
        f.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(
        out.contains("name = \"mcp_crm_lookup\"")
            && out.contains("group = \"mcp_crm\"")
            && !out.contains("bad name"),
        "{out}"
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("TG4001") && err.contains("mcp_crm_bad name!"),
        "{err}"
    );
}

#[test]
fn classify_prints_the_outcome_as_json() {
    let f = "tests/fixtures/gateway/G-mulesoft-flex-403.json";
    let o = run(&["classify", f, "--tool", "refund.issue"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (
            v["outcome"].as_str(),
            v["refusal"]["kind"].as_str(),
            v["refusal"]["class"].as_str()
        ),
        (Some("refusal"), Some("notInProfile"), Some("configuration"))
    );
    // With the project's declared rules, the fastmcp isError denial is a refusal too.
    let e = "tests/fixtures/gateway/E-fastmcp-isError-denial.json";
    let v: serde_json::Value = serde_json::from_slice(&run(&["classify", e]).stdout).unwrap();
    assert_eq!(v["outcome"], "toolFailure");
    let v: serde_json::Value =
        serde_json::from_slice(&run(&["classify", e, "-p", "policies/mcp-profiles"]).stdout)
            .unwrap();
    assert_eq!(
        (v["outcome"].as_str(), v["refusal"]["rule"].as_str()),
        (Some("refusal"), Some("authorization-failed"))
    );
    // A bare body with flags.
    let dir = std::env::temp_dir().join(format!("toolgate-cli-{}-classify", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let body = dir.join("body.json");
    std::fs::write(&body, r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32003,"message":"Access denied to: refund.issue"}}"#).unwrap();
    let v: serde_json::Value = serde_json::from_slice(
        &run(&[
            "classify",
            body.to_str().unwrap(),
            "--http-status",
            "403",
            "--origin",
            "mulesoft",
        ])
        .stdout,
    )
    .unwrap();
    assert_eq!(v["refusal"]["rule"], "mulesoft-access-denied");
}

#[test]
fn offered_and_decide_refusal_for_the_seed_003_consumer() {
    let o = run(&with_configuration(
        &["offered"],
        "policies/mcp-profiles",
        "support-chat",
        &["--consumer", "support-bot", "--format", "json"],
    ));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(!v["offered"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t == "refund.issue"));
    assert!(v["excluded"]
        .as_array()
        .unwrap()
        .iter()
        .any(|u| u["tool"] == "refund.issue" && u["reason"] == "notInProfile"));
    assert!(v["estimatedTokens"].as_u64().unwrap() > 0);
    let o = run(&with_configuration(
        &["decide"],
        "policies/mcp-profiles",
        "support-chat",
        &["--consumer", "support-bot", "refund.issue", "--refusal"],
    ));
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (
            v["kind"].as_str(),
            v["profile"].as_str(),
            v["retryable"].as_bool()
        ),
        (Some("notInProfile"), Some("support-readonly"), Some(false))
    );
}

#[test]
fn remote_names_never_reach_a_non_admin_where_the_policy_hides_them() {
    let remote = "mcp_deepwiki_ask_question";
    for role in [&["--no-user"][..], &[][..]] {
        for fmt in ["text", "json", "prompt"] {
            let mut args = demo_chat("unavailable", &["--format", fmt]);
            args.extend_from_slice(role);
            let out = stdout(&run(&args));
            assert!(!out.contains(remote), "unavailable {fmt} {role:?}: {out}");
        }
        let mut args = demo_chat("explain", &[remote, "--format", "json"]);
        args.extend_from_slice(role);
        let v: serde_json::Value = serde_json::from_slice(&run(&args).stdout).unwrap();
        assert_eq!(
            v[0]["reason"], "notRegistered",
            "explain answers a hidden name like a missing one"
        );
        let mut args = demo_chat("simulate", &[]);
        args.extend_from_slice(role);
        assert!(!stdout(&run(&args)).contains(remote));
        let mut args = demo_chat("offered", &[]);
        args.extend_from_slice(role);
        assert!(!stdout(&run(&args)).contains(remote));
        // The JSON tool set is for the host: every refused tool, flagged.
        args.extend_from_slice(&["--format", "json"]);
        let v: serde_json::Value = serde_json::from_slice(&run(&args).stdout).unwrap();
        assert_eq!(v["audience"], "host");
        let entry = v["excluded"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["tool"] == remote)
            .unwrap();
        assert_eq!(entry["nameVisible"], false);
        assert_eq!(entry["reason"], "requiresAdmin");
    }
    // An administrator sees it, with its reason.
    let out = stdout(&run(&demo_chat("unavailable", &["--admin"])));
    assert_contains(&out, "mcp_deepwiki_ask_question configurationGroup");
}

#[test]
fn an_earlier_refusal_never_reveals_a_later_gate() {
    // get_env_raw is admin-only AND above the zone's ceiling in the demo: a user learns only the first.
    let o = run(&with_configuration(
        &["explain"],
        "policies/demo",
        "developer-chat",
        &["get_env_raw", "--format", "json"],
    ));
    let text = stdout(&o);
    assert_contains(&text, "\"reason\": \"requiresAdmin\"");
    for later in ["trustZone", "zone\": \"", "ceiling\": \"", "secretAdjacent"] {
        assert!(!text.contains(later), "{later} leaks: {text}");
    }
    let o = run(&with_configuration(
        &["decide"],
        "policies/demo",
        "developer-chat",
        &["get_env_raw", "--refusal"],
    ));
    let text = stdout(&o).to_lowercase();
    assert!(
        !text.contains("zone") && !text.contains("ceiling"),
        "{text}"
    );
}

// ----------------------------- files (docs/registry.md, "Project files")

/// A scratch project whose manifest is `manifest` (registry and policy files
/// are written beside it).
fn scratch_manifest(name: &str, manifest: &str) -> PathBuf {
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

#[test]
fn writers_replace_files_atomically() {
    let dir = scratch(
        "atomic",
        "configuration editor-chat {\n  exclude [delete_record]\n}\n",
    );
    let out = dir.join("out.tgt");
    let target = dir.join("elsewhere.tgt");
    std::fs::write(&target, "not to be touched").unwrap();
    // A symlink at the output path is replaced, never written through.
    #[cfg(unix)]
    {
        let _ = std::fs::remove_file(&out);
        std::os::unix::fs::symlink(&target, &out).unwrap();
        let o = run(&[
            "compile",
            dir.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(
            std::fs::read_to_string(&target).unwrap(),
            "not to be touched"
        );
        assert!(!std::fs::symlink_metadata(&out)
            .unwrap()
            .file_type()
            .is_symlink());
    }
    // A concurrent reader sees the old table or the new one, never a part.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (out, stop) = (out.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut reads = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if let Ok(bytes) = std::fs::read(&out) {
                    assert!(
                        toolgate_runtime::Table::load(&bytes).is_ok(),
                        "a reader saw {} bytes of a table being written",
                        bytes.len()
                    );
                    reads += 1;
                }
            }
            reads
        })
    };
    for _ in 0..40 {
        let o = run(&[
            "compile",
            dir.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(reader.join().unwrap() > 0);
    // A write that fails (the output path is a non-empty directory) leaves
    // what was there, and no temporary file behind.
    let blocker = dir.join("blocker.tgt");
    std::fs::create_dir_all(blocker.join("keep")).unwrap();
    let o = run(&[
        "compile",
        dir.to_str().unwrap(),
        "-o",
        blocker.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(blocker.join("keep").is_dir());
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".toolgate-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // Every writer goes through the same path: snapshot, fmt -w, import-mcp -o.
    let o = run(&["snapshot", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    std::fs::write(
        dir.join("policy.tg"),
        "configuration   editor-chat   {exclude [delete_record]}\n",
    )
    .unwrap();
    let o = run(&["fmt", "-w", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(dir.join("policy.tg")).unwrap(),
        "configuration editor-chat { exclude [delete_record] }\n"
    );
}

#[test]
fn fmt_never_writes_outside_the_project() {
    let outside = std::env::temp_dir().join(format!("toolgate-fmt-out-{}.tg", std::process::id()));
    let ugly = "configuration editor-chat {exclude [delete_record]}\n";
    std::fs::write(&outside, ugly).unwrap();
    let dir = scratch_manifest(
        "fmtout",
        &format!(
            "registry = \"registry.toml\"\npolicies = [{:?}]\nallow-outside-project = true\n",
            outside.display().to_string()
        ),
    );
    let o = run(&["fmt", "-w", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("outside the project"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), ugly);
}

/// Run with standard output (or error) a pipe whose reader is already gone:
/// the read end is closed before the child starts, so its first write fails
/// whatever the scheduling.
fn with_closed(stream: &str, args: &[&str]) -> Output {
    let mut cmd = bin();
    cmd.current_dir(root()).env("NO_COLOR", "1").args(args);
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    if stream == "stdout" {
        cmd.stdout(writer).stderr(std::process::Stdio::piped());
    } else {
        cmd.stdout(std::process::Stdio::null()).stderr(writer);
    }
    cmd.output().unwrap()
}

#[test]
fn a_closed_stdout_or_stderr_ends_quietly_never_with_a_panic() {
    let table = std::env::temp_dir().join(format!("toolgate-pipe-{}.tgt", std::process::id()));
    for args in [
        demo_chat("simulate", &[]),
        vec!["check", "--format", "sarif", "policies/demo"],
        demo_chat("unavailable", &["--format", "prompt"]),
        vec!["--help"],
    ] {
        let o = with_closed("stdout", &args);
        assert_eq!(o.status.code(), Some(141), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{args:?}: {}", stderr(&o));
    }
    // A closed standard error drops the message; the status is the command's.
    let o = with_closed(
        "stderr",
        &["compile", "policies/demo", "-o", table.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(0));
    let o = with_closed("stderr", &["check", "/nonexistent/project"]);
    assert_eq!(o.status.code(), Some(2));
    let o = with_closed("stderr", &demo_chat("simulate", &[]));
    assert_eq!(o.status.code(), Some(0));
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

#[test]
fn text_outputs_escape_control_characters_in_names() {
    let o = run(&demo_chat("decide", &["get_page_content\n- x: offered"]));
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        "get_page_content\\u000a- x: offered: refused, notRegistered (no tool of this name is registered)\n"
    );
}

#[test]
fn the_prompt_section_includes_refused_live_tools() {
    let dir = temp("live-prompt");
    let live = live_tools(&dir);
    let json = run(&demo_chat(
        "unavailable",
        &["--admin", "--live", &live, "--format", "json"],
    ));
    let list: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    let prompt = stdout(&run(&demo_chat(
        "unavailable",
        &["--admin", "--live", &live, "--format", "prompt"],
    )));
    let without = stdout(&run(&demo_chat(
        "unavailable",
        &["--admin", "--format", "prompt"],
    )));
    let tools: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["tool"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"mcp_crm_new"), "{tools:?}");
    assert_eq!(prompt.lines().count(), tools.len() + 1);
    assert!(prompt.starts_with(&without));
    assert_contains(&prompt, "\n- mcp_crm_new: ");
}
