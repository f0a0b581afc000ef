//! The `toolgate` binary end to end: every check format and exit code, and
//! the runtime commands on the shipped example projects.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn run(args: &[&str]) -> Output {
    bin()
        .current_dir(root())
        .env("NO_COLOR", "1")
        .env_remove("GITHUB_STEP_SUMMARY")
        .args(args)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A scratch project with the given policy over the exclusions registry.
fn scratch(name: &str, policy: &str) -> PathBuf {
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

const TYPO: &str = "configuration editor-chat {\n  exclude [delete_recrod]\n}\n";
const WARN: &str = "configuration editor-chat {\n  exclude [retired_tool]\n}\n";

#[test]
fn check_passes_on_every_example_and_exits_0() {
    for p in [
        "policies/demo",
        "policies/exclusions",
        "policies/trust-zones",
        "policies/mcp-profiles",
    ] {
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
    assert!(out.contains("error[TG1010]: excluded tool `delete_recrod` is not registered; did you mean `delete_record`?"), "{out}");
    assert!(out.contains("policy.tg:2:12"), "{out}");
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
    let o = run(&[
        "decide",
        "-p",
        "policies/exclusions",
        "-c",
        "editor-caht",
        "delete_record",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("did you mean `editor-chat`"));
}

#[test]
fn human_format_is_miette_without_colour_when_not_a_terminal() {
    let dir = scratch("human", TYPO);
    let out = stdout(&run(&["check", dir.to_str().unwrap()]));
    assert!(out.contains("× excluded tool `delete_recrod`"), "{out}");
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
    assert!(out.starts_with("::error file="), "{out}");
    assert!(out.contains(",line=2,col=12,endLine=2,endColumn=25,title=TG1010 exclusion-typo::excluded tool `delete_recrod`"), "{out}");
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
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["projects"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        v["projects"][1]["result"]["diagnostics"][0]["code"],
        "TG1009"
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
    let o = run(&[
        "decide",
        "-p",
        "policies/exclusions",
        "-c",
        "editor-chat",
        "delete_record",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), "{\"tool\":\"delete_record\",\"allowed\":false,\"reason\":\"configurationExcluded\",\"observedOnly\":false}\n");
    let o = run(&[
        "decide",
        "-p",
        "policies/exclusions",
        "-c",
        "reviewer-chat",
        "delete_record",
        "--format",
        "json",
    ]);
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
    let from_project = run(&[
        "unavailable",
        "-p",
        "policies/exclusions",
        "-c",
        "editor-chat",
        "--format",
        "json",
    ]);
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
    let o = run(&[
        "unavailable",
        "-p",
        "policies/demo",
        "-c",
        "demo-chat",
        "--format",
        "prompt",
    ]);
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 17);
    assert!(out.starts_with("Tools that exist but are not available in this conversation, and why:\n- read_source: not among the tools this configuration allows\n"), "{out}");
}

#[test]
fn explain_goes_gate_by_gate_and_stops_at_the_first_refusal() {
    let out = stdout(&run(&[
        "explain",
        "-p",
        "policies/exclusions",
        "-c",
        "editor-chat",
        "delete_record",
        "no_such_tool",
    ]));
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
    assert!(out.contains("no longer registered  retired_tool"), "{out}");
}

#[test]
fn run_start_and_resume_store_and_narrow() {
    let o = run(&[
        "run",
        "start",
        "-p",
        "policies/exclusions",
        "-c",
        "editor-chat",
    ]);
    assert_eq!(
        stdout(&o),
        "{\"allowedToolNames\":null,\"excludedToolNames\":[\"delete_record\"]}\n"
    );
    let dir = std::env::temp_dir().join(format!("toolgate-cli-{}-run", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let stored = dir.join("run.json");
    std::fs::write(&stored, stdout(&o)).unwrap();
    // Resumed under a configuration without the exclusion: the stored one holds.
    let o = run(&[
        "run",
        "resume",
        "-p",
        "policies/exclusions",
        "-c",
        "reviewer-chat",
        stored.to_str().unwrap(),
    ]);
    assert_eq!(
        stdout(&o),
        "{\"allowedToolNames\":null,\"excludedToolNames\":[\"delete_record\"]}\n"
    );
    let o = run(&[
        "decide",
        "-p",
        "policies/exclusions",
        "-c",
        "reviewer-chat",
        "--run",
        stored.to_str().unwrap(),
        "delete_record",
    ]);
    assert_eq!(o.status.code(), Some(1));
    // A stored value that is not a list admits nothing.
    std::fs::write(&stored, "{\"excludedToolNames\": \"delete_record\"}").unwrap();
    let o = run(&[
        "simulate",
        "-p",
        "policies/exclusions",
        "-c",
        "reviewer-chat",
        "--admin",
        "--run",
        stored.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v.as_array().unwrap().iter().all(|d| d["allowed"] == false));
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
    assert!(
        text.contains("configurationExcluded        2  ████████████████████████████████████████"),
        "{text}"
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
    let o = run(&[
        "offered",
        "-p",
        "policies/mcp-profiles",
        "-c",
        "support-chat",
        "--consumer",
        "support-bot",
        "--format",
        "json",
    ]);
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
    let o = run(&[
        "decide",
        "-p",
        "policies/mcp-profiles",
        "-c",
        "support-chat",
        "--consumer",
        "support-bot",
        "refund.issue",
        "--refusal",
    ]);
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
            let mut args = vec![
                "unavailable",
                "-p",
                "policies/demo",
                "-c",
                "demo-chat",
                "--format",
                fmt,
            ];
            args.extend_from_slice(role);
            let out = stdout(&run(&args));
            assert!(!out.contains(remote), "unavailable {fmt} {role:?}: {out}");
        }
        let mut args = vec![
            "explain",
            "-p",
            "policies/demo",
            "-c",
            "demo-chat",
            remote,
            "--format",
            "json",
        ];
        args.extend_from_slice(role);
        let v: serde_json::Value = serde_json::from_slice(&run(&args).stdout).unwrap();
        assert_eq!(
            v[0]["reason"], "notRegistered",
            "explain answers a hidden name like a missing one"
        );
        let mut args = vec!["simulate", "-p", "policies/demo", "-c", "demo-chat"];
        args.extend_from_slice(role);
        assert!(!stdout(&run(&args)).contains(remote));
        let mut args = vec!["offered", "-p", "policies/demo", "-c", "demo-chat"];
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
    let out = stdout(&run(&[
        "unavailable",
        "-p",
        "policies/demo",
        "-c",
        "demo-chat",
        "--admin",
    ]));
    assert!(
        out.contains("mcp_deepwiki_ask_question configurationGroup"),
        "{out}"
    );
}

#[test]
fn an_earlier_refusal_never_reveals_a_later_gate() {
    // get_env_raw is admin-only AND above the zone's ceiling in the demo: a user learns only the first.
    let o = run(&[
        "explain",
        "-p",
        "policies/demo",
        "-c",
        "developer-chat",
        "get_env_raw",
        "--format",
        "json",
    ]);
    let text = stdout(&o);
    assert!(text.contains("\"reason\": \"requiresAdmin\""), "{text}");
    for later in ["trustZone", "zone\": \"", "ceiling\": \"", "secretAdjacent"] {
        assert!(!text.contains(later), "{later} leaks: {text}");
    }
    let o = run(&[
        "decide",
        "-p",
        "policies/demo",
        "-c",
        "developer-chat",
        "get_env_raw",
        "--refusal",
    ]);
    let text = stdout(&o).to_lowercase();
    assert!(
        !text.contains("zone") && !text.contains("ceiling"),
        "{text}"
    );
}
