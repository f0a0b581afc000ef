//! Through the CLI: one reader of gateway answer files for `classify` and
//! `test`, and stored runs that cannot be read (docs/gate-semantics.md §13).

use crate::common::*;

#[test]
fn classify_and_policy_tests_read_the_same_answer_file_the_same_way() {
    let d = temp("inputs-answers");
    // Looks like an envelope but has a `result` beside `body`: a bare body,
    // ambiguous, so a refusal for both readers (it was success for one and
    // notInProfile for the other).
    let answer = d.join("odd.json");
    std::fs::write(
        &answer,
        r#"{"body":{"jsonrpc":"2.0","id":1,"error":{"code":-32003,"message":"Access denied"}},"result":{}}"#,
    )
    .unwrap();
    let o = run(&["classify", answer.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["outcome"], "refusal");
    assert_eq!(v["refusal"]["kind"], "policy");
    assert_eq!(
        v["refusal"]["detail"],
        "a `result` with members other than `jsonrpc` and `id` beside it"
    );
    let project =
        std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../policies/demo"));
    for f in ["toolgate.toml", "registry.toml", "policy.tg"] {
        std::fs::copy(project.join(f), d.join(f)).unwrap();
    }
    std::fs::write(
        d.join("answers.test.toml"),
        "[[case]]\nname = \"odd\"\nanswer = \"odd.json\"\nexpect = \"policy\"\n",
    )
    .unwrap();
    let o = run(&["test", d.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
}

#[test]
fn a_stored_run_that_cannot_be_read_is_reported_and_admits_nothing() {
    let d = temp("inputs-runs");
    let stored = d.join("run.json");
    std::fs::write(&stored, r#"{"allowed_tool_names":["get_page_content"]}"#).unwrap();
    let o = run(&demo_chat(
        "decide",
        &["--run", stored.to_str().unwrap(), "get_page_content"],
    ));
    // An input error (exit 2), never an answer: nothing on standard output.
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&o.stdout), "");
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        format!(
            "error: {}: unreadable stored run: unknown key `allowed_tool_names` (a stored run has `allowedToolNames` and `excludedToolNames`); a run stored like this admits no tool (fix the file, or start the run again with `toolgate run start`)\n",
            stored.display()
        )
    );
}
