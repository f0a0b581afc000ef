//! `toolgate offered`: the tool set of a consumer, with `decide`'s refusal
//! for the tools it lacks.

use crate::common::*;

#[test]
fn offered_and_decide_refusal_for_the_support_bot_consumer() {
    let o = run(&with_configuration(
        &["offered"],
        "policies/mcp-profiles",
        "support-chat",
        &["--consumer", "support-bot", "--format", "json"],
    ));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(!v["offered"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t == "refund.issue"));
    assert!(v["excluded"]
        .as_array()
        .unwrap()
        .iter()
        .any(|u| u["tool"] == "refund.issue" && u["reason"] == "notInProfile"));
    assert!(v["estimatedTokens"].as_u64().unwrap() > 0);
    let o = run(&with_configuration(
        &["decide"],
        "policies/mcp-profiles",
        "support-chat",
        &["--consumer", "support-bot", "refund.issue", "--refusal"],
    ));
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (
            v["kind"].as_str(),
            v["profile"].as_str(),
            v["retryable"].as_bool()
        ),
        (Some("notInProfile"), Some("support-readonly"), Some(false))
    );
}
