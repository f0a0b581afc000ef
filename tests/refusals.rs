//! Issue 4: typed refusals, MCP access profiles, discovery scoping,
//! descriptor accounting, and classification of gateway answers A to G.

use serde_json::Value;
use toolgate_runtime::classify::classify_with;
use toolgate_runtime::{
    classify, classify_raw, Action, Answer, Classified, Envelope, Reason, RefusalClass,
    RefusalKind, Role, Table,
};
use toolgate_tests::table;

fn envelope(name: &str) -> Envelope {
    let path = format!("{}/fixtures/gateway/{name}", env!("CARGO_MANIFEST_DIR"));
    Envelope::read(&std::fs::read(&path).unwrap())
}

fn fixture(name: &str) -> (Value, Option<u16>, Option<String>) {
    let e = envelope(name);
    let body = toolgate_runtime::json::parse_strict(&e.body).unwrap();
    (body, e.http_status, e.origin)
}

/// Through the one reader of answer files, as the CLI and policy tests read them.
fn run(name: &str, t: Option<&Table>) -> Classified {
    let e = envelope(name);
    let a = e.answer(None, None, Some("refund.issue"));
    match t {
        Some(t) => t.classify_raw(&a),
        None => classify_raw(&a),
    }
}

fn refusal_kind(c: &Classified) -> (RefusalKind, RefusalClass) {
    match c {
        Classified::Refusal { refusal } => (refusal.kind, refusal.class),
        other => panic!("not a refusal: {other:?}"),
    }
}

fn mcp_profiles() -> Table {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../policies/mcp-profiles");
    let project = toolgate_compiler::project::Project::load(std::path::Path::new(dir)).unwrap();
    toolgate_compiler::lower::table(&project.check().model.expect("compiles")).unwrap()
}

#[test]
fn shapes_a_b_d_f_g_are_configuration_refusals() {
    use RefusalClass::Configuration;
    assert_eq!(
        refusal_kind(&run("A-agentgateway-unknown-tool.json", None)),
        (RefusalKind::Gate(Reason::NotRegistered), Configuration)
    );
    assert_eq!(
        refusal_kind(&run("B-contextforge-rbac.json", None)),
        (RefusalKind::Gate(Reason::NotInProfile), Configuration)
    );
    assert_eq!(
        refusal_kind(&run("D-agentgateway-guardrail.json", None)),
        (RefusalKind::Policy, Configuration)
    );
    assert_eq!(
        refusal_kind(&run("F-docker-policy-denied.json", None)),
        (RefusalKind::Gate(Reason::NotInProfile), Configuration)
    );
    assert_eq!(
        refusal_kind(&run("G-mulesoft-flex-403.json", None)),
        (RefusalKind::Gate(Reason::NotInProfile), Configuration)
    );
}

#[test]
fn shape_c_is_a_runtime_content_policy_refusal_naming_the_plugin() {
    let c = run("C-contextforge-plugin-violation.json", None);
    let Classified::Refusal { refusal } = c else {
        panic!()
    };
    assert_eq!(
        (
            refusal.kind,
            refusal.class,
            refusal.retryable,
            refusal.action
        ),
        (
            RefusalKind::ContentPolicy,
            RefusalClass::Runtime,
            true,
            Action::Rephrase
        )
    );
    assert_eq!(refusal.policy.as_deref(), Some("ContentModerationPlugin"));
}

#[test]
fn shape_e_is_a_tool_failure_unless_a_rule_for_that_origin_says_otherwise() {
    assert!(matches!(
        run("E-fastmcp-isError-denial.json", None),
        Classified::ToolFailure { .. }
    ));
    let t = mcp_profiles();
    assert_eq!(
        refusal_kind(&run("E-fastmcp-isError-denial.json", Some(&t))),
        (
            RefusalKind::Gate(Reason::NotInProfile),
            RefusalClass::Configuration
        )
    );
    // The same body from another origin: the fastmcp rule does not apply.
    let (body, status, _) = fixture("E-fastmcp-isError-denial.json");
    let a = Answer {
        body: &body,
        http_status: status,
        origin: Some("other-gateway"),
        tool: None,
    };
    assert!(matches!(t.classify(&a), Classified::ToolFailure { .. }));
}

#[test]
fn a_genuine_tool_failure_and_a_success() {
    let t = mcp_profiles();
    for table in [None, Some(&t)] {
        match run("tool-failure-isError.json", table) {
            Classified::ToolFailure { text } => assert!(text.contains("timeout"), "{text}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(run("success.json", table), Classified::Success);
    }
}

#[test]
fn an_unknown_shape_is_the_generic_policy_refusal_never_success() {
    let c = run("unknown-shape.json", None);
    let Classified::Refusal { refusal } = c else {
        panic!()
    };
    assert_eq!(
        (refusal.kind, refusal.retryable, refusal.action),
        (RefusalKind::Policy, false, Action::Escalate)
    );
    for body in [
        serde_json::json!(null),
        serde_json::json!([]),
        serde_json::json!({"result": "ok"}),
        serde_json::json!({"error": "x"}),
    ] {
        let a = Answer {
            body: &body,
            http_status: Some(200),
            origin: None,
            tool: None,
        };
        assert_eq!(refusal_kind(&classify(&a)).0, RefusalKind::Policy, "{body}");
    }
}

#[test]
fn the_same_denial_classifies_the_same_whatever_server_is_behind() {
    let t = mcp_profiles();
    for table in [None, Some(&t)] {
        let a = serde_json::to_value(run("G-mulesoft-flex-403.json", table)).unwrap();
        let b =
            serde_json::to_value(run("G-mulesoft-flex-403-framework-server.json", table)).unwrap();
        assert_eq!(a, b);
    }
}

#[test]
fn declared_rules_are_tried_before_the_built_in_ones() {
    let t = mcp_profiles();
    match run("G-mulesoft-flex-403.json", Some(&t)) {
        Classified::Refusal { refusal } => assert_eq!(
            (refusal.origin.as_deref(), refusal.rule.as_deref()),
            (Some("mulesoft"), Some("tool-blocked"))
        ),
        other => panic!("{other:?}"),
    }
    // A rule that turns a built-in refusal into a tool failure wins too.
    let rules = vec![toolgate_runtime::spec::RuleSpec {
        name: "not-really".into(),
        http_status: None,
        error_code: Some(-32001),
        message: None,
        data: vec![],
        result_text: None,
        outcome: toolgate_runtime::spec::RuleOutcome::ToolFailure,
    }];
    let (body, status, origin) = fixture("D-agentgateway-guardrail.json");
    let a = Answer {
        body: &body,
        http_status: status,
        origin: origin.as_deref(),
        tool: None,
    };
    assert!(matches!(
        classify_with(&rules, &a),
        Classified::ToolFailure { .. }
    ));
}

#[test]
fn retryable_never_for_the_configuration_class() {
    for k in RefusalKind::all() {
        if k.class() == RefusalClass::Configuration {
            assert!(!k.retryable(), "{k:?}");
            assert_ne!(k.action(), Action::Rephrase);
        }
    }
    assert_eq!(RefusalKind::ContentPolicy.class(), RefusalClass::Runtime);
}

// ---------------------------------------------------------------- seed 003 end to end

#[test]
fn seed_003_support_bot_is_not_offered_refund_issue_and_is_told_why() {
    let t = mcp_profiles();
    let ctx = t
        .context("support-chat")
        .unwrap()
        .role(Role::User)
        .consumer(Some("support-bot"));
    let set = ctx.tool_set();
    assert_eq!(set.profile, Some("support-readonly"));
    assert!(!set.offered.contains(&"refund.issue"));
    assert!(set.offered.contains(&"mcp_crm_customer-360_lookup"));
    let held: Vec<(&str, Reason)> = set.excluded.iter().map(|u| (u.tool, u.reason)).collect();
    assert!(
        held.contains(&("refund.issue", Reason::NotInProfile)),
        "{held:?}"
    );
    // A call to it is refused with a configuration-class refusal naming the profile.
    let d = ctx.check_call("refund.issue").unwrap_err();
    let r = ctx.refusal(&d).unwrap();
    assert_eq!(
        (r.kind, r.class, r.retryable, r.action),
        (
            RefusalKind::Gate(Reason::NotInProfile),
            RefusalClass::Configuration,
            false,
            Action::Stop
        )
    );
    assert_eq!(
        (
            r.tool.as_deref(),
            r.profile.as_deref(),
            r.consumer.as_deref()
        ),
        (
            Some("refund.issue"),
            Some("support-readonly"),
            Some("support-bot")
        )
    );
    assert!(
        r.remediation
            .starts_with("widen access profile `support-readonly` (in "),
        "{}",
        r.remediation
    );
    assert!(
        r.remediation.contains("policies/mcp-profiles/policy.tg"),
        "{}",
        r.remediation
    );
    assert!(!r.model_text.contains("retry") || r.model_text.contains("Retrying will not help"));
    // The billing bot's profile holds it.
    let billing = t
        .context("support-chat")
        .unwrap()
        .role(Role::User)
        .consumer(Some("billing-bot"));
    assert!(billing.decide("refund.issue").allowed);
}

#[test]
fn the_refusal_serializes_for_hosts_in_other_languages() {
    let t = mcp_profiles();
    let ctx = t
        .context("support-chat")
        .unwrap()
        .role(Role::User)
        .consumer(Some("support-bot"));
    let r = ctx.refusal(&ctx.decide("refund.issue")).unwrap();
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["kind"], "notInProfile");
    assert_eq!(v["class"], "configuration");
    assert_eq!(v["retryable"], false);
    assert_eq!(v["action"], "stop");
    assert_eq!(v["profile"], "support-readonly");
    assert!(v["modelText"]
        .as_str()
        .unwrap()
        .contains("not in this consumer's access profile"));
    let back: toolgate_runtime::Refusal = serde_json::from_value(v).unwrap();
    assert_eq!(back, r);
}

#[test]
fn a_profile_refusal_reveals_no_later_gate() {
    // refund.issue is outside support-readonly AND (in support-chat-eu) above the zone's ceiling.
    let t = mcp_profiles();
    let ctx = t
        .context("support-chat-eu")
        .unwrap()
        .role(Role::User)
        .consumer(Some("support-bot"));
    let d = ctx.decide("refund.issue");
    assert_eq!(d.reason, Some(Reason::NotInProfile));
    assert_eq!((d.class, d.zone, d.ceiling), (None, None, None));
    let r = ctx.refusal(&d).unwrap();
    let json = serde_json::to_string(&r).unwrap();
    for later in ["zone", "ceiling", "exclu", "group"] {
        assert!(
            !json.to_lowercase().contains(later),
            "{later} leaks: {json}"
        );
    }
}

#[test]
fn unprofiled_consumers_follow_the_policy_setting() {
    let reg = "[[tool]]\nname = \"a\"\ngroup = \"g\"\n";
    let base = "provider p { zone local } configuration c { provider p } profile only-a { allow [a] } consumer known { profile only-a }";
    let open = table(reg, &[base]);
    assert!(
        open.context("c")
            .unwrap()
            .consumer(Some("stranger"))
            .decide("a")
            .allowed
    );
    let closed = table(reg, &[&format!("{base} consumers-without-profile refused")]);
    assert_eq!(
        closed
            .context("c")
            .unwrap()
            .consumer(Some("stranger"))
            .decide("a")
            .reason,
        Some(Reason::NotInProfile)
    );
    // Not an MCP consumer at all (a chat): the profile gate does not apply.
    assert!(closed.context("c").unwrap().decide("a").allowed);
    assert!(
        closed
            .context("c")
            .unwrap()
            .consumer(Some("known"))
            .decide("a")
            .allowed
    );
}

#[test]
fn descriptor_accounting_counts_the_offered_descriptors() {
    let reg = r#"
[[tool]]
name = "abcd"
group = "g"
description = "12345678"
input_schema = { type = "object" }
[[tool]]
name = "hidden"
group = "h"
description = "this one is not offered"
"#;
    let t = table(
        reg,
        &["provider p { zone local } configuration c { provider p groups [g] }"],
    );
    let set = t.context("c").unwrap().tool_set();
    // name 4 + description 8 + {"type":"object"} 17 = 29 bytes; ceil(29 / 4) = 8 tokens.
    assert_eq!(
        (
            set.offered.clone(),
            set.descriptor_bytes,
            set.estimated_tokens
        ),
        (vec!["abcd"], 29, 8)
    );
}

#[test]
fn an_error_of_any_shape_rules_out_success() {
    for body in [
        serde_json::json!({"error": "denied", "result": {}}),
        serde_json::json!({"error": 5, "result": {"content": []}}),
    ] {
        let a = Answer {
            body: &body,
            http_status: Some(200),
            origin: None,
            tool: None,
        };
        assert_eq!(refusal_kind(&classify(&a)).0, RefusalKind::Policy, "{body}");
    }
    // Even `"error": null` beside a result is ambiguous (issue 10): a refusal.
    let body =
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "error": null, "result": {"content": []}});
    let c = classify(&Answer {
        body: &body,
        http_status: None,
        origin: None,
        tool: None,
    });
    assert_eq!(refusal_kind(&c).0, RefusalKind::Policy);
}
