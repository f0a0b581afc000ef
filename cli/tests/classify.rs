//! `classify --format`: the vocabulary every command has (`text`, `json`),
//! JSON by default (the typed outcome programs read), text for a person.

mod common;

use common::{run, stderr, stdout};

const REFUSAL: &str = "tests/fixtures/gateway/G-mulesoft-flex-403.json";

#[test]
fn classify_takes_format_text_or_json_and_json_is_the_default() {
    let default = run(&["classify", REFUSAL, "--tool", "refund.issue"]);
    let json = run(&[
        "classify",
        REFUSAL,
        "--tool",
        "refund.issue",
        "--format",
        "json",
    ]);
    assert_eq!(json.status.code(), Some(0));
    assert_eq!(stdout(&json), stdout(&default));
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let r = &v["refusal"];

    let text = run(&[
        "classify",
        REFUSAL,
        "--tool",
        "refund.issue",
        "--format",
        "text",
    ]);
    assert_eq!(text.status.code(), Some(0), "{}", stderr(&text));
    assert_eq!(
        stdout(&text),
        format!(
            "refusal: notInProfile (configuration, stop, not retryable)\n  tool: refund.issue\n  origin: mulesoft\n  rule: {}\n  detail: {}\n  model text: {}\n  fix: {}\n",
            r["rule"].as_str().unwrap(),
            r["detail"].as_str().unwrap(),
            r["modelText"].as_str().unwrap(),
            r["remediation"].as_str().unwrap(),
        )
    );
    assert_eq!(
        (
            r["kind"].as_str(),
            r["class"].as_str(),
            r["action"].as_str()
        ),
        (Some("notInProfile"), Some("configuration"), Some("stop"))
    );

    let o = run(&[
        "classify",
        "tests/fixtures/gateway/success.json",
        "--format",
        "text",
    ]);
    assert_eq!(stdout(&o), "success\n");
    let o = run(&[
        "classify",
        "tests/fixtures/gateway/tool-failure-isError.json",
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let o = run(&[
        "classify",
        "tests/fixtures/gateway/tool-failure-isError.json",
        "--format",
        "text",
    ]);
    assert_eq!(
        stdout(&o),
        format!("tool failure: {}\n", v["text"].as_str().unwrap())
    );

    // The same values as every other command's --format.
    let o = run(&["classify", REFUSAL, "--format", "yaml"]);
    assert_eq!(o.status.code(), Some(2));
    common::assert_contains(&stderr(&o), "[possible values: text, json]");
    let o = run(&["stats", "-", "--format", "yaml"]);
    common::assert_contains(&stderr(&o), "[possible values: text, json]");
}
