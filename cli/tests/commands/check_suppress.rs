//! Suppressions through the CLI: `[lints]` levels in the manifest and
//! `# toolgate: allow` comments, their effect on the exit code, and the
//! `suppressed` list of `--format json`.

use crate::common::*;

/// The exclusions example with a stale exclusion (TG1009, a warning), a
/// near miss (TG1010, an error) and `lints` appended to the manifest.
fn project(name: &str, lints: &str, comment: &str) -> std::path::PathBuf {
    let dir = scratch_example(name, "exclusions");
    let cfg = dir.join("configurations.tg");
    let text = std::fs::read_to_string(&cfg).unwrap().replace(
        "  exclude [delete_record]\n}",
        &format!("  exclude [delete_record, old_export, delete_recrd]{comment}\n}}"),
    );
    std::fs::write(&cfg, text).unwrap();
    let manifest = dir.join("toolgate.toml");
    let m = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, format!("{m}\n[lints]\n{lints}")).unwrap();
    dir
}

fn codes(out: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| {
            l.split_once("[TG")
                .map(|(sev, r)| format!("{sev} TG{}", &r[..4]))
        })
        .collect()
}

/// `toolgate check --format plain` on [`project`] with these `[lints]`.
fn check_with(name: &str, lints: &str) -> (Option<i32>, String) {
    let o = toolgate(&project(name, lints, ""), &["check", "--format", "plain"]);
    (o.status.code(), stdout(&o))
}

#[test]
fn manifest_levels_allow_raise_and_refuse_to_lower_errors() {
    // TG1009 raised to an error; TG1010 left an error: exit 1.
    let (code, out) = check_with("lints-raise", "TG1009 = \"error\"\n");
    assert_eq!(code, Some(1));
    assert_eq!(codes(&out), vec!["error TG1009", "error TG1010"], "{out}");
    assert!(out.ends_with("2 errors, 0 warnings\n"));

    // Both allowed (TG1010 is the one error that may be): exit 0, nothing shown.
    let (code, out) = check_with("lints-allow", "TG1009 = \"allow\"\nTG1010 = \"allow\"\n");
    assert_eq!((code, out.as_str()), (Some(0), "0 errors, 0 warnings\n"));

    // Lowering another error is refused (TG0007) and changes nothing.
    let (code, out) = check_with(
        "lints-refused",
        "TG1010 = \"warn\"\nTG1001 = \"allow\"\nTG1009 = \"alow\"\n",
    );
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        codes(&out),
        vec![
            "warning TG0007",
            "warning TG0007",
            "warning TG1009",
            "warning TG1010"
        ],
        "{out}"
    );
    assert!(out.contains(
        "warning[TG0007]: `[lints]` would lower TG1001, an error that cannot be suppressed\n   ┌─ toolgate.toml:10:1\n"
    ));
    assert!(out.contains("= help: did you mean `allow`? (levels: allow, warn, error)"));
}

#[test]
fn json_lists_what_was_suppressed_and_by_what() {
    let dir = project(
        "lints-json",
        "TG1010 = \"allow\"\n",
        " # toolgate: allow TG1009 -- kept until the export returns",
    );
    let o = toolgate(&dir, &["check", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["diagnostics"], serde_json::json!([]));
    assert_eq!(
        v["summary"],
        serde_json::json!({"errors": 0, "warnings": 0})
    );
    assert_eq!(
        v["suppressed"],
        serde_json::json!([
            {
                // The example project keeps its group class on purpose.
                "code": "TG3009",
                "message": "`class systemDiagnostics` in group `system` has no effect",
                "file": "zones.tg", "line": 13, "column": 16,
                "by": "comment",
                "at": {"file": "zones.tg", "line": 13, "column": 43},
                "project": "."
            },
            {
                "code": "TG1009",
                "message": "`old_export` is no longer registered",
                "file": "configurations.tg", "line": 14, "column": 27,
                "by": "comment",
                "at": {"file": "configurations.tg", "line": 14, "column": 53},
                "project": "."
            },
            {
                "code": "TG1010",
                "message": "excluded tool `delete_recrd` is not registered; did you mean `delete_record`?",
                "file": "configurations.tg", "line": 14, "column": 39,
                "by": "manifest",
                "at": {"file": "toolgate.toml", "line": 9, "column": 1},
                "project": "."
            }
        ])
    );
    // The acknowledged near miss compiles, as a stale exclusion.
    let o = toolgate(&dir, &["show", "config", "editor-chat", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["noLongerRegistered"],
        serde_json::json!(["old_export", "delete_recrd"])
    );
}
