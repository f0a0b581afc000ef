//! `toolgate unavailable`: the prompt section that names the tools a
//! model may not use, and the remote names it (and `offered`, `explain`,
//! `simulate`) never shows a non-admin where the policy hides them.

use crate::common::*;

#[test]
fn unavailable_prompt_for_the_demo() {
    let o = run(&demo_chat("unavailable", &["--format", "prompt"]));
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 17);
    assert_starts_with(&out, "Tools that exist but are not available in this conversation, and why:\n- read_source: not among the tools this configuration allows\n");
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
