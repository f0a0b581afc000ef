//! `check --format sarif` as SARIF consumers read it: valid against the
//! official SARIF 2.1.0 schema (tests/fixtures/sarif/, see its README),
//! readable as `serde-sarif`'s types, paths relative to the repository root
//! with `%SRCROOT%`, catalogue links that exist, and what GitHub code
//! scanning needs of a result and a rule.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::common::*;

const POLICY: &str =
    "configuration editor-chat {\n  exclude [delete_recrod]\n}\nconfiguration editor-chat {\n}\n";

/// A repository (a directory holding `.git`) with one project in `proj/`.
fn repository(name: &str) -> PathBuf {
    let repo = temp(name);
    std::fs::create_dir(repo.join(".git")).unwrap();
    let proj = repo.join("proj");
    std::fs::create_dir(&proj).unwrap();
    let registry =
        std::fs::read_to_string(root().join("policies/exclusions/registry.toml")).unwrap();
    write_project(&proj, &registry, POLICY);
    repo
}

fn sarif(dir: &Path, args: &[&str]) -> Value {
    let o = toolgate(dir, &[&["check", "--format", "sarif"][..], args].concat());
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stderr(&o)))
}

/// Why `log` is not valid SARIF 2.1.0 (nothing when it is).
fn sarif_errors(log: &Value) -> Vec<String> {
    let path = root().join("cli/tests/fixtures/sarif/sarif-schema-2.1.0.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    validator
        .iter_errors(log)
        .map(|e| format!("at `{}`: {e}", e.instance_path()))
        .collect()
}

#[test]
fn results_are_relative_to_the_repository_root_with_related_locations() {
    let repo = repository("sarif-repo");
    // Run from a subdirectory: the root is still the directory with .git.
    let v = sarif(&repo.join("proj"), &["."]);
    let canonical = std::fs::canonicalize(&repo).unwrap();
    let run = &v["runs"][0];
    assert_eq!(v["runs"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        run["originalUriBaseIds"],
        json!({"%SRCROOT%": {"uri": format!("file://{}/", canonical.display())}})
    );
    assert_eq!(run["columnKind"], "unicodeCodePoints");
    let at = |line: usize, column: usize, end: Option<(usize, usize)>| {
        let mut region = json!({"startLine": line, "startColumn": column});
        if let Some((l, c)) = end {
            region["endLine"] = json!(l);
            region["endColumn"] = json!(c);
        }
        json!({
            "artifactLocation": {"uri": "proj/policy.tg", "uriBaseId": "%SRCROOT%"},
            "region": region,
        })
    };
    let mut results = run["results"].clone();
    for r in results.as_array_mut().unwrap() {
        let fp = r["partialFingerprints"]["toolgateDiagnostic/v1"].take();
        assert_eq!(fp.as_str().map(str::len), Some(32), "{r}");
    }
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let index = |code: &str| rules.iter().position(|r| r["id"] == code).unwrap();
    assert_eq!(
        results,
        json!([
            {
                "ruleId": "TG1010",
                "ruleIndex": index("TG1010"),
                "level": "error",
                "message": {"text": "excluded tool `delete_recrod` is not registered; did you mean `delete_record`?\nhelp: as written, configuration `editor-chat` still offers `delete_record`; write `delete_record`, or, if `delete_recrod` is kept on purpose (a tool renamed in the registry), acknowledge it with `# toolgate: allow TG1010`"},
                "locations": [{"physicalLocation": at(2, 12, Some((2, 25)))}],
                "partialFingerprints": {"toolgateDiagnostic/v1": null},
            },
            {
                "ruleId": "TG2001",
                "ruleIndex": index("TG2001"),
                "level": "error",
                "message": {"text": "configuration `editor-chat` is defined twice\nhelp: merge the two `configuration` blocks into one"},
                "locations": [{"physicalLocation": at(4, 15, Some((4, 26)))}],
                "partialFingerprints": {"toolgateDiagnostic/v1": null},
                "relatedLocations": [{
                    "id": 1,
                    "message": {"text": "first defined here"},
                    "physicalLocation": at(1, 15, None),
                }],
            },
        ])
    );
    // The same fingerprints whichever directory check runs from.
    let from_root = sarif(&repo, &["proj"]);
    assert_eq!(from_root["runs"][0]["results"], v["runs"][0]["results"]);
    assert_eq!(sarif_errors(&v), Vec::<String>::new());
}

#[test]
fn without_a_repository_the_root_is_the_current_directory() {
    let dir = temp("sarif-norepo");
    copy_dir(&root().join("policies/demo"), &dir.join("demo"));
    // Not a repository (unless the temporary directory is inside one).
    if dir.ancestors().any(|d| d.join(".git").exists()) {
        panic!("{} is inside a repository", dir.display());
    }
    let v = sarif(&dir, &["demo"]);
    let canonical = std::fs::canonicalize(&dir).unwrap();
    assert_eq!(
        v["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"],
        format!("file://{}/", canonical.display())
    );
}

#[test]
fn every_project_in_one_valid_run_github_can_read() {
    // The repository holds the broken project, one with a warning, and two examples.
    let repo = repository("sarif-all");
    copy_dir(&repo.join("proj"), &repo.join("warn"));
    std::fs::write(
        repo.join("warn/policy.tg"),
        "configuration editor-chat {\n  exclude [retired_tool]\n}\n",
    )
    .unwrap();
    for p in ["demo", "exclusions"] {
        copy_dir(&root().join("policies").join(p), &repo.join(p));
    }
    let o = toolgate(&repo, &["check", "--format", "sarif", "."]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let log: serde_sarif::sarif::Sarif = serde_json::from_value(v.clone()).unwrap();
    assert_eq!(log.runs.len(), 1);
    assert_eq!(sarif_errors(&v), Vec::<String>::new());

    let run = &v["runs"][0];
    let driver = &run["tool"]["driver"];
    assert_eq!(driver["name"], "toolgate");
    assert_eq!(driver["semanticVersion"], env!("CARGO_PKG_VERSION"));
    let rules = driver["rules"].as_array().unwrap();
    // GitHub: rule metadata (descriptions, help, level); the help link is an
    // anchor of docs/diagnostics.md.
    let catalogue = std::fs::read_to_string(root().join("docs/diagnostics.md")).unwrap();
    let anchors: Vec<String> = catalogue
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .map(|h| h.to_lowercase().replace(' ', "-"))
        .collect();
    for r in rules {
        let id = r["id"].as_str().unwrap();
        for field in ["shortDescription", "fullDescription", "help"] {
            assert!(
                r[field]["text"].as_str().is_some_and(|t| !t.is_empty()),
                "{r}"
            );
        }
        assert!(
            r["help"]["markdown"]
                .as_str()
                .is_some_and(|t| t.contains(id)),
            "{r}"
        );
        assert!(
            ["error", "warning"].contains(&r["defaultConfiguration"]["level"].as_str().unwrap())
        );
        let uri = r["helpUri"].as_str().unwrap();
        let anchor = uri
            .strip_prefix("https://github.com/toolgate/toolgate/blob/main/docs/diagnostics.md#")
            .unwrap_or_else(|| panic!("{uri}"));
        assert!(anchor.starts_with(&id.to_lowercase()), "{uri}");
        assert!(
            anchors.iter().any(|a| a == anchor),
            "{uri}: no such heading"
        );
    }
    // GitHub: results with a rule, a location relative to the root, a fingerprint.
    let results = run["results"].as_array().unwrap();
    assert!(results.len() >= 2, "{results:?}");
    let projects: std::collections::BTreeSet<&str> = results
        .iter()
        .map(|r| {
            let idx = r["ruleIndex"].as_u64().unwrap() as usize;
            assert_eq!(rules[idx]["id"], r["ruleId"]);
            assert!(r["partialFingerprints"]["toolgateDiagnostic/v1"].is_string());
            for l in r["locations"]
                .as_array()
                .unwrap()
                .iter()
                .chain(r["relatedLocations"].as_array().into_iter().flatten())
            {
                let a = &l["physicalLocation"]["artifactLocation"];
                assert_eq!(a["uriBaseId"], "%SRCROOT%");
                let uri = a["uri"].as_str().unwrap();
                assert!(repo.join(uri).is_file(), "{uri}");
                assert!(l["physicalLocation"]["region"]["startLine"].as_u64() >= Some(1));
            }
            let uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap();
            uri.rsplit_once('/').map(|(d, _)| d).unwrap()
        })
        .collect();
    assert_eq!(
        projects.into_iter().collect::<Vec<_>>(),
        ["proj", "warn"],
        "one run covers every project"
    );
}

#[test]
fn a_wrong_sarif_log_fails_the_official_schema() {
    let mut v = sarif(&repository("sarif-wrong"), &["proj"]);
    assert_eq!(sarif_errors(&v), Vec::<String>::new());
    v["runs"][0]["results"][0]["level"] = json!("fatal");
    v["runs"][0]["results"][1]["locations"][0]["physicalLocation"]["region"]["startLine"] =
        json!(0);
    assert_eq!(sarif_errors(&v).len(), 2, "{:?}", sarif_errors(&v));
}
