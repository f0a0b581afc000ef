//! `toolgate decide`: its JSON fields, its exit codes, and what a refusal
//! reveals.

use crate::common::*;

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

/// A project given where a context command wants a tool: the error's tip
/// names `-p`.
#[test]
fn a_project_given_in_a_tools_place_is_told_to_use_dash_p() {
    let o = run(&["decide", "policies/demo", "-c", "demo-chat", "list_pages"]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.starts_with("error: unexpected argument 'list_pages' found"),
        "{err}"
    );
    assert!(
        err.ends_with(
            "tip: `decide` takes the project with -p: toolgate decide -p policies/demo ...\n"
        ),
        "{err}"
    );
    let o = run(&[
        "decide",
        "-p",
        "policies/demo",
        "-c",
        "demo-chat",
        "list_pages",
    ]);
    assert_eq!(o.status.code(), Some(0));
}

/// `needs-approval`: `decide` and `explain` say the tool is offered and a
/// person approves each call; `decide --refusal` of it is the call's
/// `approvalRequired` refusal, and the exit code says a call may not run.
#[test]
fn decide_and_explain_say_a_tool_needs_approval() {
    let dir = scratch_project(
        "decide-approval",
        "[[tool]]\nname = \"refund\"\ngroup = \"g\"\n[[tool]]\nname = \"read\"\ngroup = \"g\"\n",
        "provider p { zone local }\ngroup g { class publicContent }\nconfiguration c {\n  provider p\n  needs-approval [refund]\n}\n",
    );
    let project = dir.to_str().unwrap();
    let o = run(&["decide", "-p", project, "-c", "c", "refund"]);
    assert_eq!(
        stdout(&o),
        "refund: offered; needs approval (a person approves each call first)\n"
    );
    assert_eq!(o.status.code(), Some(0));
    let o = run(&[
        "decide", "-p", project, "-c", "c", "refund", "--format", "json",
    ]);
    assert_eq!(
        stdout(&o),
        "{\"tool\":\"refund\",\"allowed\":true,\"reason\":null,\"observedOnly\":false,\"needsApproval\":true,\"class\":\"publicContent\",\"zone\":\"local\",\"ceiling\":\"secretAdjacent\"}\n"
    );
    let o = run(&["explain", "-p", project, "-c", "c", "refund"]);
    assert_ends_with(&stdout(&o), "  pass    trustZone\n  ask     approval\n");
    let o = run(&[
        "unavailable",
        "-p",
        project,
        "-c",
        "c",
        "--format",
        "prompt",
    ]);
    assert_eq!(
        stdout(&o),
        "Tools you may call, but a person is asked to approve each call before it runs:\n- refund\n"
    );
}
