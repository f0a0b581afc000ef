//! The published JSON Schemas (docs/schemas/): they are what `toolgate
//! schema` prints (`UPDATE_SCHEMAS=1` writes them again), and the real
//! outputs of every command on the example projects and the fixtures
//! validate against them.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::common::*;

#[test]
fn docs_schemas_are_what_toolgate_schema_prints() {
    let docs = root().join("docs/schemas");
    let update = std::env::var_os("UPDATE_SCHEMAS").is_some();
    let out = if update {
        docs.clone()
    } else {
        temp("schemas")
    };
    let o = run(&["schema", "--all", "-o", out.to_str().unwrap()]);
    assert_eq!((o.status.code(), stderr(&o).as_str()), (Some(0), ""));
    let names = |dir: &Path| -> BTreeSet<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".schema.json"))
            .collect()
    };
    assert_eq!(
        names(&docs),
        names(&out),
        "docs/schemas/ holds other schemas than `toolgate schema --all` writes (UPDATE_SCHEMAS=1 writes them; remove the others)"
    );
    for n in names(&out) {
        let printed = std::fs::read_to_string(out.join(&n)).unwrap();
        let published = std::fs::read_to_string(docs.join(&n)).unwrap();
        assert!(
            printed == published,
            "docs/schemas/{n} is not what `toolgate schema` prints: run UPDATE_SCHEMAS=1 cargo test -p toolgate --test commands schema::"
        );
    }
    // One schema printed is the same text as its file.
    let o = run(&["schema", "decide"]);
    assert_eq!(
        stdout(&o),
        std::fs::read_to_string(docs.join("decide.schema.json")).unwrap()
    );
    let o = run(&["schema", "decid"]);
    assert_eq!(
        (o.status.code(), stderr(&o).as_str()),
        (
            Some(2),
            "error: no JSON output is named `decid`; did you mean `decide`? (`toolgate schema` lists them)\n"
        )
    );
}

#[test]
fn every_schema_has_an_id_title_and_description() {
    for e in std::fs::read_dir(root().join("docs/schemas")).unwrap() {
        let path = e.unwrap().path();
        let Some(name) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".schema.json"))
        else {
            continue;
        };
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            v["$id"],
            format!(
                "https://raw.githubusercontent.com/toolgate/toolgate/main/docs/schemas/{name}.schema.json"
            )
        );
        assert_eq!(v["$schema"], "https://json-schema.org/draft/2020-12/schema");
        assert!(v["title"]
            .as_str()
            .is_some_and(|t| t.starts_with("toolgate ")));
        assert!(v["description"].as_str().is_some_and(|d| !d.is_empty()));
    }
}

/// Real outputs, each with the schema it must validate against.
struct Outputs {
    dir: PathBuf,
    seen: Vec<(&'static str, Value)>,
}

impl Outputs {
    /// `toolgate ARGS` at the repository root; its standard output is one
    /// JSON document of `schema`.
    fn json(&mut self, schema: &'static str, args: &[&str]) -> Value {
        let o = run(args);
        let v: Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: {e}: {}{}", stdout(&o), stderr(&o)));
        self.seen.push((schema, v.clone()));
        v
    }

    /// Each line of a JSON-lines file, as a document of `schema`.
    fn lines(&mut self, schema: &'static str, path: &Path) {
        let text = std::fs::read_to_string(path).unwrap();
        assert!(!text.is_empty(), "{}", path.display());
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let v: Value = serde_json::from_str(line).unwrap();
            // A log may mix the service's records in (stats reads both).
            let schema = if v.get("decision_id").is_some() {
                "decision-log-service"
            } else {
                schema
            };
            self.seen.push((schema, v));
        }
    }

    fn path(&self, name: &str) -> String {
        self.dir.join(name).to_str().unwrap().to_string()
    }
}

const PROJECTS: [(&str, &[&str]); 5] = [
    ("demo", &["demo-chat", "developer-chat"]),
    (
        "exclusions",
        &[
            "editor-chat",
            "reviewer-chat",
            "intern-chat",
            "translator-chat",
        ],
    ),
    ("mcp-profiles", &["support-chat", "support-chat-eu"]),
    ("real-servers", &["developer-chat", "cloud-chat"]),
    (
        "trust-zones",
        &[
            "local-chat",
            "private-chat",
            "eu-chat",
            "global-chat",
            "failover-chat",
            "private-failover-chat",
        ],
    ),
];

/// The query commands on every configuration of every example project,
/// as a user and as an admin, enforced and observed.
fn queries(out: &mut Outputs) {
    let log = out.path("decisions.jsonl");
    for (project, configs) in PROJECTS {
        let table = out.path(&format!("{project}.tgt"));
        let o = run(&["compile", &format!("policies/{project}"), "-o", &table]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        // The readouts in bulk.
        for (what, schema) in [
            ("configs", "show-configs"),
            ("tools", "show-tools"),
            ("exclusions", "show-exclusions"),
        ] {
            out.json(
                schema,
                &["show", what, "--table", &table, "--format", "json"],
            );
        }
        for config in configs {
            for extra in [&[][..], &["--admin", "--enforcement", "observe"][..]] {
                let q = |cmd: &'static str| -> Vec<&str> {
                    let mut v = vec![cmd, "--table", &table, "-c", config, "--format", "json"];
                    v.extend_from_slice(extra);
                    v
                };
                let mut simulate = q("simulate");
                simulate.extend(["--log", &log]);
                let decisions = out.json("simulate", &simulate);
                out.json("unavailable", &q("unavailable"));
                out.json("offered", &q("offered"));
                let tools: Vec<String> = decisions
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|d| d["tool"].as_str().unwrap().to_string())
                    .collect();
                let mut explain = q("explain");
                explain.extend(tools.iter().map(String::as_str));
                explain.push("no_such_tool");
                out.json("explain", &explain);
                // An allowed and a refused tool, when there are.
                let pick = |allowed: bool| {
                    decisions
                        .as_array()
                        .unwrap()
                        .iter()
                        .find(|d| d["allowed"] == allowed)
                        .map(|d| d["tool"].as_str().unwrap().to_string())
                };
                for tool in [pick(true), pick(false), Some("no_such_tool".into())]
                    .into_iter()
                    .flatten()
                {
                    let mut decide = q("decide");
                    decide.extend(["--log", &log, &tool]);
                    out.json("decide", &decide);
                    let mut refusal = q("decide");
                    refusal.extend(["--refusal", &tool]);
                    out.json("refusal", &refusal);
                }
            }
            let mut show = vec![
                "show", "config", config, "--table", &table, "--format", "json",
            ];
            out.json("show-config", &show);
            show[1] = "tool";
            let sim = out.json(
                "simulate",
                &[
                    "simulate", "--table", &table, "-c", config, "--admin", "--format", "json",
                ],
            );
            for d in sim.as_array().unwrap().iter().take(3) {
                show[2] = d["tool"].as_str().unwrap();
                out.json("show-tool", &show);
            }
        }
    }
    // A consumer with a profile, and live tools.
    let live = live_tools(&out.dir);
    let admin_live = ["--admin", "--live", &live, "--format", "json"];
    out.json(
        "simulate",
        &demo_chat("simulate", &[&admin_live[..], &["--log", &log]].concat()),
    );
    out.json("unavailable", &demo_chat("unavailable", &admin_live));
    out.json(
        "decide",
        &demo_chat("decide", &[&admin_live[..], &["new_tool"]].concat()),
    );
    let profiles = [
        "-p",
        "policies/mcp-profiles",
        "-c",
        "support-chat",
        "--consumer",
        "support-bot",
    ];
    out.json(
        "simulate",
        &[&["simulate", "--format", "json"][..], &profiles].concat(),
    );
    out.json(
        "offered",
        &[&["offered", "--format", "json"][..], &profiles].concat(),
    );
    out.json(
        "refusal",
        &[
            &["decide", "--refusal"][..],
            &profiles,
            &["mcp_crm_case_create"],
        ]
        .concat(),
    );
    out.lines("decision-log", Path::new(&log));
    out.json("stats", &["stats", "--format", "json", &log]);
}

fn run_state(out: &mut Outputs) {
    let stored = out.path("run.json");
    let start = run(&with_configuration(
        &["run", "start"],
        "policies/exclusions",
        "editor-chat",
        &["--skill", "page-translation"],
    ));
    assert_eq!(start.status.code(), Some(0), "{}", stderr(&start));
    std::fs::write(&stored, &start.stdout).unwrap();
    out.seen
        .push(("run-state", serde_json::from_slice(&start.stdout).unwrap()));
    out.json(
        "run-state",
        &with_configuration(&["run", "start"], "policies/demo", "demo-chat", &[]),
    );
    out.json(
        "run-state",
        &with_configuration(
            &["run", "resume"],
            "policies/exclusions",
            "editor-chat",
            &[&stored],
        ),
    );
}

fn gateways_and_logs(out: &mut Outputs) {
    let mut fixtures: Vec<PathBuf> = std::fs::read_dir(root().join("tests/fixtures/gateway"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    fixtures.sort();
    assert!(fixtures.len() > 10);
    for f in &fixtures {
        let f = f.to_str().unwrap();
        out.json("classify", &["classify", f, "--tool", "refund.issue"]);
        out.json("classify", &["classify", f, "-p", "policies/mcp-profiles"]);
    }
    out.json(
        "drift",
        &[
            "drift",
            "-p",
            "policies/mcp-profiles",
            "--consumer",
            "support-bot",
            "--tools-list",
            "crm=tests/fixtures/drift/support-bot.crm.tools-list.json",
            "--decision-log",
            "tests/fixtures/drift/support-bot.decisions.jsonl",
            "--format",
            "json",
        ],
    );
    out.lines(
        "decision-log",
        &root().join("tests/fixtures/drift/support-bot.decisions.jsonl"),
    );
    out.json(
        "stats",
        &[
            "stats",
            "--format",
            "json",
            "tests/fixtures/drift/support-bot.decisions.jsonl",
        ],
    );
    out.json(
        "registry-sync",
        &[
            "registry",
            "sync",
            "-p",
            "policies/real-servers",
            "--server",
            "git",
            "cli/tests/fixtures/mcp/git-upgraded.tools-list.json",
            "--format",
            "json",
        ],
    );
}

/// `check`, `test`, `diff` and `diff --replay` on the example projects, a
/// project with errors, and a widened copy of the demo.
fn reviews(out: &mut Outputs) {
    let broken = out.dir.join("broken");
    copy_dir(&root().join("policies/demo"), &broken);
    let policy = std::fs::read_to_string(broken.join("policy.tg")).unwrap();
    std::fs::write(
        broken.join("policy.tg"),
        format!("{policy}\nconfiguration typo-chat {{ exclude [read_sorce, gone_tool] }}\n"),
    )
    .unwrap();
    let v = out.json(
        "check",
        &[
            "check",
            "--format",
            "json",
            "policies",
            broken.to_str().unwrap(),
        ],
    );
    assert!(v["summary"]["errors"].as_u64() > Some(0), "{v}");
    assert!(!v["suppressed"].as_array().unwrap().is_empty(), "{v}");
    out.json(
        "test",
        &["test", "--coverage", "--format", "json", "policies"],
    );

    // NEW: the demo with every exclusion of demo-chat dropped (a widening).
    let new = out.dir.join("new");
    copy_dir(&root().join("policies/demo"), &new);
    std::fs::write(
        new.join("policy.tg"),
        format!("{policy}\nconfiguration extra-chat {{ }}\n"),
    )
    .unwrap();
    let new = new.to_str().unwrap().to_string();
    let v = out.json("diff", &["diff", "policies/demo", &new, "--format", "json"]);
    assert!(
        !v["changes"].as_array().unwrap().is_empty()
            || !v["configurationsAdded"].as_array().unwrap().is_empty(),
        "{v}"
    );
    let log = out.path("demo.jsonl");
    let old = out.path("demo.tgt");
    out.json(
        "simulate",
        &[
            "simulate",
            "--table",
            &old,
            "-c",
            "demo-chat",
            "--log",
            &log,
            "--format",
            "json",
        ],
    );
    out.json(
        "diff-replay",
        &["diff", &old, &new, "--replay", &log, "--format", "json"],
    );
}

#[test]
fn real_outputs_validate_against_their_schemas() {
    let mut out = Outputs {
        dir: temp("schema-outputs"),
        seen: Vec::new(),
    };
    queries(&mut out);
    run_state(&mut out);
    gateways_and_logs(&mut out);
    reviews(&mut out);
    let errors: Vec<String> = out
        .seen
        .iter()
        .flat_map(|(schema, v)| schema_errors(schema, v))
        .collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    // Every schema met output (the service log's: the fixture's record here,
    // and a real one in cli/tests/commands/serve.rs).
    let covered: BTreeSet<&str> = out.seen.iter().map(|(s, _)| *s).collect();
    let o = run(&["schema"]);
    let all: BTreeSet<&str> = stdout(&o)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(|n| &*n.to_string().leak())
        .collect();
    let missing: Vec<_> = all.difference(&covered).collect();
    assert!(missing.is_empty(), "no real output checked for {missing:?}");
    assert!(out.seen.len() > 300, "{}", out.seen.len());
}

/// The schemas are not vacuous: outputs with a field missing, of the wrong
/// type or outside an enumeration fail.
#[test]
fn wrong_outputs_fail_validation() {
    let decide = serde_json::from_slice::<Value>(
        &run(&demo_chat("decide", &["--format", "json", "read_source"])).stdout,
    )
    .unwrap();
    assert_eq!(schema_errors("decide", &decide), Vec::<String>::new());
    let mut wrong = decide.clone();
    wrong["allowed"] = json!("no");
    assert_eq!(
        schema_errors("decide", &wrong),
        ["decide at `/allowed`: \"no\" is not of type \"boolean\""]
    );
    let mut wrong = decide.clone();
    wrong["reason"] = json!("configurationGroups");
    assert_eq!(schema_errors("decide", &wrong).len(), 1);
    let mut wrong = decide;
    wrong.as_object_mut().unwrap().remove("tool");
    assert_eq!(
        schema_errors("decide", &wrong),
        ["decide at ``: \"tool\" is a required property"]
    );

    let check = serde_json::from_slice::<Value>(
        &run(&["check", "--format", "json", "policies/real-servers"]).stdout,
    )
    .unwrap();
    assert_eq!(schema_errors("check", &check), Vec::<String>::new());
    let mut wrong = check;
    wrong["suppressed"][0]["by"] = json!("pragma");
    assert_eq!(schema_errors("check", &wrong).len(), 1);

    let run_state = json!({"allowedToolNames": null, "excluded": []});
    assert_eq!(
        schema_errors("run-state", &run_state),
        ["run-state at ``: Additional properties are not allowed ('excluded' was unexpected)"]
    );
}
