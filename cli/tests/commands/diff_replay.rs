//! `toolgate diff OLD NEW --replay LOG` on a log written by the CLI itself:
//! `toolgate serve --table OLD --decision-log LOG` answers real HTTP
//! requests, then the log is replayed against a changed project, once with
//! the table that served it (compared) and once with another (reported, not
//! compared).

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Command, Output};

use crate::common::serve::{body_json, serve, Served};
use crate::common::{assert_contains, assert_starts_with};

fn toolgate(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .output()
        .expect("toolgate runs")
}

fn evaluate(served: &Served, role: &str, configuration: &str, tool: &str) -> serde_json::Value {
    let body = format!(
        r#"{{"subject":{{"type":"user","id":"alice","properties":{{"role":"{role}"}}}},"action":{{"name":"call"}},"resource":{{"type":"tool","id":"{tool}"}},"context":{{"configuration":"{configuration}"}}}}"#
    );
    let out = served.evaluate("", &body);
    assert_starts_with(&out, "HTTP/1.1 200 OK\r\n");
    body_json(&out)
}

/// Serve `table`, ask the decisions, stop, and return the log's text.
fn record(table: &Path, log: &Path) -> String {
    let served = serve(&[
        OsStr::new("--table"),
        table.as_os_str(),
        OsStr::new("--decision-log"),
        log.as_os_str(),
        // The test asks as an admin too: a claim the service allows only
        // when the operator says so.
        OsStr::new("--pep-roles"),
        OsStr::new("admin,user,none"),
    ]);
    let asked = [
        ("user", "demo-chat", "read_source", false),
        ("user", "demo-chat", "read_source", false),
        ("user", "demo-chat", "get_page_content", true),
        ("admin", "developer-chat", "read_source", true),
        ("user", "demo-chat", "no_such_tool", false),
    ];
    for (role, cfg, tool, allowed) in asked {
        let a = evaluate(&served, role, cfg, tool);
        assert_eq!(a["decision"], serde_json::json!(allowed), "{tool}: {a}");
    }
    served.stop();
    std::fs::read_to_string(log).unwrap()
}

fn copy_project(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for f in ["toolgate.toml", "registry.toml", "policy.tg"] {
        std::fs::copy(from.join(f), to.join(f)).unwrap();
    }
}

#[test]
fn replay_reports_the_recorded_decisions_the_change_would_alter() {
    let dir = tempfile::tempdir().unwrap();
    let demo = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../policies/demo"));
    let old = dir.path().join("old.tgt");
    let out = toolgate(&[
        "compile",
        demo.to_str().unwrap(),
        "-o",
        old.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let log = dir.path().join("decisions.jsonl");
    assert_eq!(record(&old, &log).lines().count(), 5);

    // The change: demo-chat gets the code group (read_source widens) and
    // excludes get_page_content (narrows).
    let new = dir.path().join("new");
    copy_project(demo, &new);
    let policy = std::fs::read_to_string(new.join("policy.tg")).unwrap();
    let changed = policy.replace(
        "  groups [content, editing, skills]",
        "  groups [content, editing, skills, code]\n  exclude [get_page_content]",
    );
    assert_ne!(changed, policy);
    std::fs::write(new.join("policy.tg"), changed).unwrap();

    let (old_s, new_s, log_s) = (
        old.to_str().unwrap(),
        new.to_str().unwrap(),
        log.to_str().unwrap(),
    );
    let out = toolgate(&["diff", old_s, new_s, "--replay", log_s, "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = &v["replay"];
    let digest = r["oldTable"].as_str().unwrap().to_string();
    assert_eq!(digest.len(), 64);
    assert_eq!(
        (
            &r["records"],
            &r["compared"],
            &r["notReproduced"],
            &r["otherTables"]
        ),
        (
            &serde_json::json!(5),
            &serde_json::json!(5),
            &serde_json::json!(0),
            &serde_json::json!({})
        )
    );
    assert_eq!(
        r["changed"],
        serde_json::json!({"widened": 2, "narrowed": 1, "reasonChanged": 0})
    );
    assert_eq!(
        r["byConfiguration"],
        serde_json::json!({"demo-chat": {"widened": 2, "narrowed": 1, "reasonChanged": 0}})
    );
    assert_eq!(
        r["byReason"],
        serde_json::json!([
            {"kind": "widened", "from": "configurationGroup", "to": null, "count": 2},
            {"kind": "narrowed", "from": null, "to": "configurationExcluded", "count": 1}
        ])
    );
    assert_eq!(
        r["topTools"],
        serde_json::json!([
            ["read_source", {"widened": 2, "narrowed": 0, "reasonChanged": 0}],
            ["get_page_content", {"widened": 0, "narrowed": 1, "reasonChanged": 0}]
        ])
    );
    assert_eq!(
        r["topConsumers"],
        serde_json::json!([["-", {"widened": 2, "narrowed": 1, "reasonChanged": 0}]])
    );
    let changed: Vec<(u64, &str, &str, &str)> = r["recordsChanged"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["line"].as_u64().unwrap(),
                c["tool"].as_str().unwrap(),
                c["kind"].as_str().unwrap(),
                c["role"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        changed,
        vec![
            (1, "read_source", "widened", "user"),
            (2, "read_source", "widened", "user"),
            (3, "get_page_content", "narrowed", "user")
        ]
    );
    assert_eq!(
        r["recordsChanged"][0]["new"],
        serde_json::json!({"allowed": true, "reason": null, "observedOnly": false})
    );

    // Widening seen in real traffic fails the review when asked to.
    let fail = toolgate(&[
        "diff",
        old_s,
        new_s,
        "--replay",
        log_s,
        "--fail-on-replay-widen",
    ]);
    assert_eq!(fail.status.code(), Some(1), "{fail:?}");
    let md = toolgate(&[
        "diff", old_s, new_s, "--replay", log_s, "--format", "markdown",
    ]);
    let md = String::from_utf8(md.stdout).unwrap();
    let section = md
        .split("## toolgate: this change replayed against recorded decisions\n\n")
        .nth(1)
        .expect("replay section");
    assert_eq!(
        section,
        "| records | compared | widened | narrowed | reason changed |\n\
         | ---: | ---: | ---: | ---: | ---: |\n\
         | 5 | 5 | **2** | 1 | 0 |\n\n\
         > [!WARNING]\n\
         > Recorded traffic would be **widened**: tools refused in these decisions would be offered.\n\n\
         | configuration | widened | narrowed | reason changed |\n\
         | --- | ---: | ---: | ---: |\n\
         | `demo-chat` | 2 | 1 | 0 |\n\n\
         | direction | from | to | decisions |\n\
         | --- | --- | --- | ---: |\n\
         | WIDENED | `configurationGroup` | `offered` | 2 |\n\
         | narrowed | `offered` | `configurationExcluded` | 1 |\n\n\
         **Most affected tools:** `read_source` (2, 2 widened), `get_page_content` (1, 0 widened)\n\n\
         **Most affected consumers:** `-` (3, 2 widened)\n"
    );

    // A log of another table than OLD: reported, not compared, and no failure.
    let other = toolgate(&[
        "diff",
        new_s,
        new_s,
        "--replay",
        log_s,
        "--format",
        "json",
        "--fail-on-replay-widen",
    ]);
    assert_eq!(other.status.code(), Some(0), "{other:?}");
    let v: serde_json::Value = serde_json::from_slice(&other.stdout).unwrap();
    assert_eq!(v["replay"]["compared"], serde_json::json!(0));
    assert_eq!(v["replay"]["otherTables"], serde_json::json!({ digest: 5 }));
    let err = String::from_utf8(other.stderr).unwrap();
    assert!(
        err.starts_with(&format!(
            "warning: {log_s}: no record was made by OLD's table ("
        )),
        "{err}"
    );
    // A line that is not a record: exit 2, naming the line.
    std::fs::write(&log, "{\"decision_id\": 1}\n").unwrap();
    let bad = toolgate(&["diff", old_s, new_s, "--replay", log_s]);
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8(bad.stderr).unwrap();
    assert_contains(&err, "line 1: not a decision record");
}
