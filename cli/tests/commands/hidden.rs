//! docs/gate-semantics.md §11: a remote tool whose name a user may not see is, in
//! everything rendered for that user or their model, word for word an
//! unregistered name; hosts still get the true gate, flagged.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::{
    assert_contains, assert_starts_with, scratch_project, stdout as out, toolgate,
};

const REGISTRY: &str = r#"
[[tool]]
name = "read_page"
group = "content"

[[tool]]
name = "mcp_crm_lookup"
group = "mcp_crm"
server = "crm"
class = "editorContent"

[[tool]]
name = "mcp_crm_wipe"
group = "mcp_crm"
server = "crm"
class = "editorContent"
"#;

const POLICY: &str = r#"
remote-tools visible-to admins
group content { class editorContent }
tool mcp_crm_lookup { enabled  not admin-only }
provider p { zone local }
configuration c { provider p }
"#;

fn project(name: &str, policy: &str) -> PathBuf {
    scratch_project(&format!("hidden-{name}"), REGISTRY, policy)
}

/// `toolgate COMMAND -p DIR -c c REST…`
fn run(dir: &Path, args: &[&str]) -> Output {
    let p = dir.to_str().unwrap();
    let mut all = vec![args[0], "-p", p, "-c", "c"];
    all.extend_from_slice(&args[1..]);
    toolgate(dir, &all)
}

#[test]
fn a_hidden_refused_remote_tool_reads_exactly_like_a_missing_one() {
    let dir = project("oracle", POLICY);
    let hidden = out(&run(&dir, &["decide", "mcp_crm_wipe", "--refusal"]));
    let missing = out(&run(&dir, &["decide", "mcp_crm_wipf", "--refusal"]));
    assert_eq!(
        hidden.replace("mcp_crm_wipe", "NAME"),
        missing.replace("mcp_crm_wipf", "NAME")
    );
    assert_contains(&hidden, "\"kind\": \"notRegistered\"");
    // Text for a person, and explain, say the same.
    assert_eq!(
        out(&run(&dir, &["decide", "mcp_crm_wipe"])),
        "mcp_crm_wipe: refused, notRegistered (no tool of this name is registered)\n"
    );
    let hidden = out(&run(&dir, &["explain", "mcp_crm_wipe"]));
    let missing = out(&run(&dir, &["explain", "mcp_crm_wipf"]));
    assert_eq!(
        hidden.replace("mcp_crm_wipe", "NAME"),
        missing.replace("mcp_crm_wipf", "NAME")
    );
    // The host's JSON decision keeps the true gate (audit logs need it).
    let v: serde_json::Value =
        serde_json::from_slice(&run(&dir, &["decide", "mcp_crm_wipe", "--format", "json"]).stdout)
            .unwrap();
    assert_eq!(v["reason"], "toolDisabled");
    // An administrator sees the truth everywhere.
    let admin = out(&run(&dir, &["decide", "mcp_crm_wipe", "--admin"]));
    assert_eq!(
        admin,
        "mcp_crm_wipe: refused, toolDisabled (switched off by an administrator)\n"
    );
}

#[test]
fn explain_agrees_with_decide_and_offered_for_an_offered_remote_tool() {
    let dir = project("agree", POLICY);
    assert_eq!(
        out(&run(&dir, &["decide", "mcp_crm_lookup"])),
        "mcp_crm_lookup: offered\n"
    );
    let explained = out(&run(&dir, &["explain", "mcp_crm_lookup"]));
    assert_starts_with(&explained, "mcp_crm_lookup: offered\n");
    assert_eq!(
        out(&run(&dir, &["offered"]))
            .lines()
            .take(2)
            .collect::<Vec<_>>(),
        ["read_page", "mcp_crm_lookup"]
    );
}

#[test]
fn the_host_tool_set_lists_every_refused_tool_and_the_person_facing_one_none_hidden() {
    let dir = project("toolset", POLICY);
    let v: serde_json::Value =
        serde_json::from_slice(&run(&dir, &["offered", "--format", "json"]).stdout).unwrap();
    assert_eq!(v["audience"], "host");
    assert_eq!(
        v["excluded"],
        serde_json::json!([{"tool": "mcp_crm_wipe", "reason": "toolDisabled", "nameVisible": false}])
    );
    let text = out(&run(&dir, &["offered"]));
    assert!(
        !text.contains("mcp_crm_wipe") && !text.contains("held back"),
        "{text}"
    );
    for fmt in ["text", "json", "prompt"] {
        let u = out(&run(&dir, &["unavailable", "--format", fmt]));
        assert!(!u.contains("mcp_crm_wipe"), "{fmt}: {u}");
    }
}

#[test]
fn simulate_notes_the_rule_never_a_count() {
    // One project hides a refused remote tool, the other has none to hide:
    // what a user is told on stderr is the same.
    let with = project("sim-with", POLICY);
    let without = project(
        "sim-without",
        &POLICY.replace(
            "tool mcp_crm_lookup",
            "tool mcp_crm_wipe { enabled  not admin-only }\ntool mcp_crm_lookup",
        ),
    );
    let a = run(&with, &["simulate"]);
    let b = run(&without, &["simulate"]);
    assert_eq!(
        String::from_utf8_lossy(&a.stderr),
        String::from_utf8_lossy(&b.stderr)
    );
    assert!(!out(&a).contains("mcp_crm_wipe"));
    assert!(out(&b).contains("mcp_crm_wipe"));
}

/// A misspelt tool gets the runtime's did-you-mean on standard error, never
/// naming a remote tool hidden from the caller: to a user, `mcp_crm_wip`
/// is near nothing (`mcp_crm_wipe` is hidden), while an admin, who sees
/// remote tools, is told of it.
#[test]
fn a_misspelt_tool_is_told_the_nearest_name_it_may_see() {
    let dir = project("hint", POLICY);
    let o = run(&dir, &["decide", "read_pag"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "hint: `read_pag` is not a registered tool; did you mean `read_page`?\n"
    );
    let o = run(&dir, &["decide", "mcp_crm_wip"]);
    assert_eq!(
        out(&o),
        "mcp_crm_wip: refused, notRegistered (no tool of this name is registered)\n"
    );
    assert_eq!(String::from_utf8_lossy(&o.stderr), "");
    let o = run(&dir, &["decide", "mcp_crm_wip", "--admin"]);
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "hint: `mcp_crm_wip` is not a registered tool; did you mean `mcp_crm_wipe`?\n"
    );
    let o = run(&dir, &["explain", "read_pag"]);
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "hint: `read_pag` is not a registered tool; did you mean `read_page`?\n"
    );
}
