//! `toolgate classify`: its `--format` vocabulary (`text`, `json`; JSON by
//! default, the typed outcome programs read), and gateway answers read from
//! files or from raw bodies and headers on the command line
//! (docs/refusals.md, "Transport-level denials").

use crate::common::*;
use crate::drift::PROJECT;

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
    crate::common::assert_contains(&stderr(&o), "[possible values: text, json]");
    let o = run(&["stats", "-", "--format", "yaml"]);
    crate::common::assert_contains(&stderr(&o), "[possible values: text, json]");
}

#[test]
fn classify_reads_raw_bodies_and_headers_from_the_command_line() {
    let dir = std::env::temp_dir().join(format!("toolgate-drift-{}-raw", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("page.html");
    std::fs::write(&page, "<html><body><h1>403 Forbidden</h1></body></html>").unwrap();
    let page = page.to_str().unwrap();
    // The page as a raw body with HTTP status 403, and what classify reads.
    let forbidden = |extra: &[&str]| -> serde_json::Value {
        let o = run(&[&["classify", page, "--raw", "--http-status", "403"], extra].concat());
        serde_json::from_slice(&o.stdout).unwrap()
    };
    // The nginx rule of the project: `http-status 403` alone.
    let v = forbidden(&["--origin", "nginx", "-p", PROJECT]);
    assert_eq!(
        (v["refusal"]["kind"].as_str(), v["refusal"]["rule"].as_str()),
        (Some("notInProfile"), Some("forbidden"))
    );
    // Built in: a 403 with an insufficient_scope challenge, whatever the body.
    let v = forbidden(&[
        "--header",
        "WWW-Authenticate: Bearer error=\"insufficient_scope\", scope=\"crm:write\"",
    ]);
    assert_eq!(v["refusal"]["rule"], "mcp-insufficient-scope");
    assert_eq!(
        v["refusal"]["detail"],
        "<html><body><h1>403 Forbidden</h1></body></html>"
    );
    // Headers from the command line are added to an envelope's.
    let o = run(&[
        "classify",
        "tests/fixtures/gateway/T-corp-api-empty-vendor-headers.json",
        "-p",
        PROJECT,
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (
            v["refusal"]["tool"].as_str(),
            v["refusal"]["profile"].as_str()
        ),
        (Some("refund.issue"), Some("support-readonly"))
    );
    let o = run(&["classify", page, "--raw", "--header", "no colon"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "error: --header `no colon` is not `NAME: VALUE`\n"
    );
}

#[test]
fn classify_prints_the_outcome_as_json() {
    let f = "tests/fixtures/gateway/G-mulesoft-flex-403.json";
    let o = run(&["classify", f, "--tool", "refund.issue"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (
            v["outcome"].as_str(),
            v["refusal"]["kind"].as_str(),
            v["refusal"]["class"].as_str()
        ),
        (Some("refusal"), Some("notInProfile"), Some("configuration"))
    );
    // With the project's declared rules, the fastmcp isError denial is a refusal too.
    let e = "tests/fixtures/gateway/E-fastmcp-isError-denial.json";
    let v: serde_json::Value = serde_json::from_slice(&run(&["classify", e]).stdout).unwrap();
    assert_eq!(v["outcome"], "toolFailure");
    let v: serde_json::Value =
        serde_json::from_slice(&run(&["classify", e, "-p", "policies/mcp-profiles"]).stdout)
            .unwrap();
    assert_eq!(
        (v["outcome"].as_str(), v["refusal"]["rule"].as_str()),
        (Some("refusal"), Some("authorization-failed"))
    );
    // A bare body with flags.
    let dir = std::env::temp_dir().join(format!("toolgate-cli-{}-classify", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let body = dir.join("body.json");
    std::fs::write(&body, r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32003,"message":"Access denied to: refund.issue"}}"#).unwrap();
    let v: serde_json::Value = serde_json::from_slice(
        &run(&[
            "classify",
            body.to_str().unwrap(),
            "--http-status",
            "403",
            "--origin",
            "mulesoft",
        ])
        .stdout,
    )
    .unwrap();
    assert_eq!(v["refusal"]["rule"], "mulesoft-access-denied");
}
