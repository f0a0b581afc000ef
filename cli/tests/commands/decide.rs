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
