//! `toolgate drift`, end to end on the mcp-profiles example and the drift
//! fixtures.

use crate::common::*;

pub(crate) const PROJECT: &str = "policies/mcp-profiles";
const LIST: &str = "crm=tests/fixtures/drift/support-bot.crm.tools-list.json";
const LOG: &str = "tests/fixtures/drift/support-bot.decisions.jsonl";

/// `toolgate drift -p PROJECT --consumer CONSUMER --tools-list …` with `rest`
/// after `--tools-list`.
fn drift(consumer: &str, rest: &[&str]) -> std::process::Output {
    let mut args = vec![
        "drift",
        "-p",
        PROJECT,
        "--consumer",
        consumer,
        "--tools-list",
    ];
    args.extend_from_slice(rest);
    run(&args)
}

#[test]
fn drift_reports_both_directions_and_the_log_and_exits_1() {
    let o = drift("support-bot", &[LIST, "--decision-log", LOG]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        "consumer `support-bot`, profile `support-readonly`
listed by the gateway, refused by the profile (1):
  mcp_crm_case_create
allowed by the profile, not listed by the gateway (1):
  mcp_crm_customer-360_contacts
listed by the gateway, not in the registry (1):
  mcp_crm_case_escalate
refused notInProfile in the log, yet listed (1):
  mcp_crm_case_create  3 decisions
allowed in the log, yet not listed (1):
  mcp_crm_customer-360_contacts  1 decision
drift: the profile and the gateway disagree
"
    );
    let o = drift("support-bot", &[LIST, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v,
        serde_json::json!({
            "consumer": "support-bot",
            "profile": "support-readonly",
            "listedButRefused": ["mcp_crm_case_create"],
            "allowedButNotListed": ["mcp_crm_customer-360_contacts"],
            "listedUnregistered": ["mcp_crm_case_escalate"],
            "refusedInLogButListed": [],
            "allowedInLogButNotListed": []
        })
    );
}

#[test]
fn drift_is_quiet_and_exits_0_when_the_gateway_lists_exactly_the_profile() {
    // billing-agent allows the whole billing server; its list is the server's.
    let o = drift(
        "billing-bot",
        &["billing=policies/mcp-profiles/mcp/billing.tools-list.json"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert_eq!(
        stdout(&o),
        "consumer `billing-bot`, profile `billing-agent`
listed by the gateway, refused by the profile (0)
allowed by the profile, not listed by the gateway (0)
listed by the gateway, not in the registry (0)
no drift
"
    );
}

#[test]
fn drift_refuses_what_is_not_a_tools_list_with_exit_2() {
    let o = drift(
        "support-bot",
        &["crm=tests/fixtures/gateway/B-contextforge-rbac.json"],
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "error: tests/fixtures/gateway/B-contextforge-rbac.json: not an MCP tools/list result (`tools`, each with a `name`)\n"
    );
    let o = drift(
        "support-bot",
        &[
            LIST,
            "--decision-log",
            "tests/fixtures/drift/support-bot.crm.tools-list.json",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
}
