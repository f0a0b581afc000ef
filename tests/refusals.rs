//! Typed refusals (docs/gate-semantics.md §15, docs/refusals.md), MCP access
//! profiles (§4), discovery scoping, descriptor accounting (§9), and
//! classification of gateway answers A to G.

use serde_json::Value;
use toolgate_reference::table;
use toolgate_runtime::classify::classify_with;
use toolgate_runtime::{
    classify, classify_raw, Action, Answer, Classified, Envelope, Reason, RefusalClass,
    RefusalKind, Role, Table,
};

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
    // The two answers differ as the stacks do: a Mule app's correlation id
    // header and error data, a string id; a framework server's session and
    // server headers, compact JSON received as text, no error data.
    let mule = envelope("G-mulesoft-flex-403.json");
    let framework = envelope("G-mulesoft-flex-403-framework-server.json");
    assert_ne!(mule.body, framework.body);
    assert_ne!(mule.headers, framework.headers);
    let t = mcp_profiles();
    for table in [None, Some(&t)] {
        for tool in [Some("refund.issue"), None] {
            let classify = |e: &Envelope| {
                let a = e.answer(None, None, tool);
                let c = match table {
                    Some(t) => t.classify_raw(&a),
                    None => classify_raw(&a),
                };
                serde_json::to_value(c).unwrap()
            };
            let (a, b) = (classify(&mule), classify(&framework));
            assert_eq!(a, b);
            assert_eq!(a["refusal"]["kind"], "notInProfile");
            // The tool is named whether the caller said it or not: captured from the message.
            assert_eq!(a["refusal"]["tool"], "refund.issue");
        }
    }
}

/// Classify a fixture with the mcp-profiles table, without telling it the tool.
fn refused(name: &str) -> toolgate_runtime::Refusal {
    let e = envelope(name);
    match mcp_profiles().classify_raw(&e.answer(None, None, None)) {
        Classified::Refusal { refusal } => *refusal,
        other => panic!("{name}: not a refusal: {other:?}"),
    }
}

#[test]
fn transport_denials_are_recognised_by_status_header_and_body() {
    let not_in_profile = RefusalKind::Gate(Reason::NotInProfile);
    // Plain text (Envoy RBAC): `http-status` and `body`.
    let r = refused("T-envoy-rbac-plain-text.json");
    assert_eq!(
        (
            r.kind,
            r.rule.as_deref(),
            r.detail.as_deref(),
            r.tool.as_deref()
        ),
        (
            not_in_profile,
            Some("rbac-denied"),
            Some("RBAC: access denied"),
            None
        )
    );
    assert_eq!(
        r.model_text,
        "This tool cannot be used here: not in this consumer's access profile. Retrying will not help; tell the user that a person must change the configuration."
    );
    // HTML (nginx): `http-status` alone.
    let r = refused("T-nginx-html-403.json");
    assert_eq!(
        (r.kind, r.rule.as_deref()),
        (not_in_profile, Some("forbidden"))
    );
    assert!(
        r.detail.as_deref().unwrap().starts_with("<html>"),
        "{:?}",
        r.detail
    );
    // Empty body, tool and profile in vendor headers (names in any case).
    let r = refused("T-corp-api-empty-vendor-headers.json");
    assert_eq!(
        (
            r.rule.as_deref(),
            r.tool.as_deref(),
            r.profile.as_deref(),
            r.detail.as_deref()
        ),
        (
            Some("denied-in-headers"),
            Some("refund.issue"),
            Some("support-readonly"),
            Some("X-Denied-Tool: refund.issue")
        )
    );
    assert_eq!(
        r.remediation,
        "add `refund.issue` to plan `support-readonly` in the corporate API portal"
    );
    assert_eq!(
        r.model_text,
        "The tool `refund.issue` cannot be used here: not in this consumer's access profile `support-readonly`. Retrying will not help; tell the user that a person must change the configuration."
    );
    // A JSON problem document: `body` over its text, captures, its `detail`.
    let r = refused("T-corp-api-problem-json.json");
    assert_eq!(
        (
            r.rule.as_deref(),
            r.tool.as_deref(),
            r.profile.as_deref(),
            r.detail.as_deref()
        ),
        (
            Some("tool-not-in-plan"),
            Some("refund.issue"),
            Some("support-basic"),
            Some("Tool refund.issue is not in plan support-basic.")
        )
    );
    // MCP authorization (built in): 403 with an insufficient_scope Bearer challenge.
    let r = refused("H-mcp-insufficient-scope.json");
    assert_eq!(
        (r.kind, r.rule.as_deref()),
        (not_in_profile, Some("mcp-insufficient-scope"))
    );
    assert!(r
        .detail
        .as_deref()
        .unwrap()
        .starts_with("WWW-Authenticate: Bearer error=\"insufficient_scope\""));
    assert!(
        r.remediation
            .starts_with("the consumer's token lacks the scope that the tool needs"),
        "{}",
        r.remediation
    );
}

#[test]
fn a_transport_denial_no_rule_knows_is_a_policy_refusal_and_a_header_alone_decides_nothing() {
    // Without the project's rules, the plain-text 403 is unreadable JSON: policy refusal.
    let e = envelope("T-envoy-rbac-plain-text.json");
    let c = classify_raw(&e.answer(None, None, None));
    let Classified::Refusal { refusal } = c else {
        panic!()
    };
    assert_eq!(refusal.kind, RefusalKind::Policy);
    assert!(refusal
        .detail
        .unwrap()
        .starts_with("the answer is not one JSON value"));
    // The insufficient_scope challenge needs the 403: on a 200 success it is not a refusal.
    let headers = vec![(
        "www-authenticate".to_string(),
        "Bearer error=\"insufficient_scope\"".to_string(),
    )];
    let ok = br#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#;
    let a = toolgate_runtime::RawAnswer {
        body: ok,
        http_status: Some(200),
        headers: &headers,
        origin: None,
        tool: None,
    };
    assert_eq!(classify_raw(&a), Classified::Success);
    let a = toolgate_runtime::RawAnswer {
        http_status: Some(403),
        ..a
    };
    assert_eq!(
        refusal_kind(&classify_raw(&a)).0,
        RefusalKind::Gate(Reason::NotInProfile)
    );
    // A body over the glob limit never matches a `body` rule.
    let big = format!(
        "RBAC: access denied{}",
        " ".repeat(toolgate_runtime::classify::BODY_GLOB_LIMIT)
    );
    let t = mcp_profiles();
    let a = toolgate_runtime::RawAnswer {
        body: big.as_bytes(),
        http_status: Some(403),
        headers: &[],
        origin: Some("envoy"),
        tool: None,
    };
    assert_eq!(refusal_kind(&t.classify_raw(&a)).0, RefusalKind::Policy);
}

#[test]
fn newer_mulesoft_shape_and_captured_tools_from_the_built_in_rules() {
    let r = refused("G-mulesoft-omni-gateway-32008.json");
    assert_eq!(
        (r.kind, r.tool.as_deref(), r.rule.as_deref()),
        (
            RefusalKind::Gate(Reason::NotInProfile),
            Some("refund.issue"),
            Some("mulesoft-access-denied")
        )
    );
    // Built-in: the Mule remediation, with and without a profile.
    assert_eq!(
        r.remediation,
        "allow `refund.issue` for this client in the gateway's MCP access policies (MCP Global Access, MCP Attribute-Based Access Control) in API Manager, or widen the access profile there"
    );
    // The declared mulesoft rule's own remediation wins over the built-in one.
    let r = refused("G-mulesoft-flex-403.json");
    assert_eq!(
        (r.rule.as_deref(), r.remediation.as_str()),
        (
            Some("tool-blocked"),
            "widen the consumer's tool mapping in API Manager (MCP Attribute-Based Access Control) so that it allows `refund.issue`"
        )
    );
    for (name, tool) in [
        ("A-agentgateway-unknown-tool.json", "echo"),
        ("F-docker-policy-denied.json", "refund.issue"),
    ] {
        assert_eq!(refused(name).tool.as_deref(), Some(tool), "{name}");
    }
    // What the caller says it called wins over what the gateway shows (a mapped name).
    let e = envelope("G-mulesoft-flex-403.json");
    let Classified::Refusal { refusal } = classify_raw(&e.answer(None, None, Some("refunds_v2")))
    else {
        panic!()
    };
    assert_eq!(refusal.tool.as_deref(), Some("refunds_v2"));
}

#[test]
fn a_data_field_captures_the_profile() {
    let t = toolgate_reference::table(
        "[[tool]]\nname = \"a\"\ngroup = \"g\"\n",
        &[r#"provider p { zone local } configuration c { provider p }
gateway kong { rule acl { error-code -32003 data scope = "{profile}" message "Access denied to: {tool}" => not-in-profile } }"#],
    );
    let body = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32003,"message":"Access denied to: crm.delete","data":{"scope":"crm:read"}}}"#;
    let a = toolgate_runtime::RawAnswer {
        body,
        http_status: None,
        headers: &[],
        origin: Some("kong"),
        tool: None,
    };
    let Classified::Refusal { refusal } = t.classify_raw(&a) else {
        panic!()
    };
    assert_eq!(
        (
            refusal.tool.as_deref(),
            refusal.profile.as_deref(),
            refusal.rule.as_deref()
        ),
        (Some("crm.delete"), Some("crm:read"), Some("acl"))
    );
    assert_eq!(
        refusal.remediation,
        "widen access profile `crm:read` to allow `crm.delete`, or bind the consumer to a profile that does"
    );
}

#[test]
fn every_refusal_text_reads_with_and_without_tool_and_profile() {
    use toolgate_runtime::refusal::Facts;
    let names = [None, Some("refund.issue")];
    let profiles = [None, Some("support-readonly")];
    for kind in RefusalKind::all() {
        for tool in names {
            for profile in profiles {
                let facts = Facts {
                    tool: tool.map(str::to_string),
                    profile: profile.map(str::to_string),
                    ..Facts::default()
                };
                let r = toolgate_runtime::Refusal::new(kind, facts);
                for text in [&r.model_text, &r.remediation] {
                    for bad in [
                        "the tool the tool",
                        "None",
                        "``",
                        "  ",
                        " .",
                        "configuration the",
                        "policy of the",
                        "class its class",
                        "ceiling of the zone of",
                    ] {
                        assert!(
                            !text.contains(bad),
                            "{kind:?} {tool:?} {profile:?}: {bad:?} in {text:?}"
                        );
                    }
                    assert_eq!(
                        text.contains("refund.issue"),
                        tool.is_some(),
                        "{kind:?}: {text}"
                    );
                }
                assert!(
                    r.model_text.starts_with("The tool `")
                        || r.model_text.starts_with("This tool ")
                        || r.model_text.starts_with("The call "),
                    "{}",
                    r.model_text
                );
                assert!(r.model_text.ends_with('.'), "{}", r.model_text);
                let names_profile =
                    kind == RefusalKind::Gate(Reason::NotInProfile) && profile.is_some();
                assert_eq!(
                    r.model_text.contains("support-readonly"),
                    names_profile,
                    "{}",
                    r.model_text
                );
                assert_eq!(
                    r.remediation.contains("support-readonly"),
                    names_profile,
                    "{}",
                    r.remediation
                );
            }
        }
    }
    // Exactly, for the kinds a gateway answers with.
    let text = |kind, tool: Option<&str>| {
        toolgate_runtime::Refusal::new(
            kind,
            Facts {
                tool: tool.map(str::to_string),
                ..Facts::default()
            },
        )
    };
    assert_eq!(
        text(RefusalKind::ContentPolicy, None).model_text,
        "The call was refused by a content policy. You may rephrase or redact the request and try again, or ask the user to involve a person."
    );
    assert_eq!(
        text(RefusalKind::ContentPolicy, None).remediation,
        "rephrase or redact the request to the tool so that it passes the gateway's content policy; escalate to a person if it must go through as is"
    );
    assert_eq!(
        text(RefusalKind::Policy, Some("x")).model_text,
        "The call to `x` was refused by a policy. Do not retry it unchanged; tell the user a person needs to look at it."
    );
    assert_eq!(
        text(RefusalKind::Gate(Reason::TrustZone), None).remediation,
        "the tool has a data class above the ceiling of the provider's trust zone: use a configuration whose provider may receive that class, or reclassify the tool"
    );
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
        headers: vec![],
        body: None,
        remediation: None,
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

// ------------- access profiles end to end (docs/gate-semantics.md §4, §15)

#[test]
fn support_bot_is_not_offered_refund_issue_and_is_told_why() {
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
        // The project's own name of the file, whatever the working directory.
        r.remediation.contains("(in policy.tg)"),
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
fn unknown_consumers_are_refused_unless_the_policy_admits_them() {
    let reg = "[[tool]]\nname = \"a\"\ngroup = \"g\"\n";
    let base = "provider p { zone local } configuration c { provider p } profile only-a { allow [a] } consumer known { profile only-a }";
    let t = table(reg, &[base]);
    // The default: a name no block binds is an error for every caller that
    // takes names from outside, and a closed profile gate for one that does not check.
    let err = t
        .context("c")
        .unwrap()
        .known_consumer(Some("zz-other-app"))
        .err();
    assert_eq!(
        err,
        Some(toolgate_runtime::ContextError::UnknownConsumer {
            name: "zz-other-app".into(),
            suggestion: None
        })
    );
    assert_eq!(
        err.map(|e| e.to_string()).as_deref(),
        Some("the policy knows no consumer `zz-other-app`; bind it to a profile (`consumer NAME { profile P }`) or admit unknown consumers (`unknown-consumers admitted`)")
    );
    let d = t
        .context("c")
        .unwrap()
        .consumer(Some("zz-other-app"))
        .decide("a");
    assert_eq!((d.allowed, d.reason), (false, Some(Reason::NotInProfile)));
    assert_eq!(t.check_consumer("known"), Ok(()));
    assert!(t.context("c").unwrap().known_consumer(None).is_ok());
    // Admitted: a genuinely other name is a consumer without a profile; a
    // slip for a bound one is still refused.
    let admitted = table(reg, &[&format!("{base} unknown-consumers admitted")]);
    assert_eq!(admitted.check_consumer("zz-other-app"), Ok(()));
    for slip in ["Known", "known ", "", "kn\u{200b}own", "known\u{2028}"] {
        assert!(admitted.check_consumer(slip).is_err(), "{slip:?}");
        let d = admitted
            .context("c")
            .unwrap()
            .consumer(Some(slip))
            .decide("a");
        assert_eq!(d.reason, Some(Reason::NotInProfile), "{slip:?}");
    }
    assert_eq!(admitted.check_consumer("Known"), Err(Some("known")));
}

#[test]
fn unprofiled_consumers_follow_the_policy_setting() {
    let reg = "[[tool]]\nname = \"a\"\ngroup = \"g\"\n";
    let base = "provider p { zone local } configuration c { provider p } profile only-a { allow [a] } consumer known { profile only-a } unknown-consumers admitted";
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
    // Even `"error": null` beside a result is ambiguous: a refusal.
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

/// Every refusal of every example project, in every configuration, for
/// every role and consumer (none, and each the policy names), in both
/// enforcement modes: it carries exactly the facts its gate's row of the
/// gate table names (`Reason::facts`), each one filled, and no other (a
/// profile refusal only for a consumer held to a profile).
#[test]
fn a_refusal_carries_exactly_the_facts_of_its_gate() {
    use toolgate_runtime::Fact;
    let mut seen = std::collections::BTreeSet::new();
    for project in [
        "demo",
        "exclusions",
        "mcp-profiles",
        "real-servers",
        "trust-zones",
    ] {
        let dir = format!("{}/../policies/{project}", env!("CARGO_MANIFEST_DIR"));
        let p = toolgate_compiler::project::Project::load(std::path::Path::new(&dir)).unwrap();
        let t = toolgate_compiler::lower::table(&p.check().model.expect("compiles")).unwrap();
        let spec = t.spec();
        let consumers: Vec<Option<&str>> = std::iter::once(None)
            .chain(spec.consumers.iter().map(|c| Some(c.name.as_str())))
            .collect();
        for cfg in &spec.configurations {
            for role in [Role::None, Role::User, Role::Admin] {
                for &consumer in &consumers {
                    for mode in ["observe", "enforce"] {
                        let ctx = t
                            .context(&cfg.name)
                            .unwrap()
                            .role(role)
                            .consumer(consumer)
                            .enforcement(Some(mode));
                        for d in ctx.decisions().filter(|d| !d.allowed && !d.hidden) {
                            let reason = d.reason.unwrap();
                            let r = ctx.refusal(&d).unwrap();
                            let facts = reason.facts();
                            let has = |f: Fact| facts.contains(&f);
                            let file = has(Fact::Profile) || has(Fact::ConfigurationFile);
                            // The group, class and ceiling reach the host
                            // in the remediation text.
                            let got = [
                                r.profile.is_some(),
                                r.configuration.is_some(),
                                r.remediation.contains("add group `"),
                                r.remediation.contains(" class `"),
                                r.remediation.contains("the ceiling `"),
                                r.file.is_some(),
                            ];
                            let want = [
                                has(Fact::Profile),
                                has(Fact::Configuration),
                                has(Fact::Group),
                                has(Fact::Class),
                                has(Fact::Ceiling),
                                file,
                            ];
                            assert_eq!(got, want, "{project} {} {}: {r:?}", cfg.name, d.tool);
                            seen.insert(reason);
                        }
                    }
                }
            }
        }
    }
    // The examples reach every gate but `notRegistered` (a decision over
    // the registered tools never gives it).
    assert_eq!(
        seen.len(),
        toolgate_runtime::GATE_ORDER.len() - 1,
        "{seen:?}"
    );
}

#[test]
fn refusal_texts_repeat_at_most_1024_bytes_of_a_callers_name() {
    let reg = "[[tool]]\nname = \"a\"\ngroup = \"g\"\n";
    let t = table(
        reg,
        &["provider p { zone local } configuration c { provider p }"],
    );
    let ctx = t.context("c").unwrap();
    // A 5 MiB name (multibyte, so the cut falls inside a character).
    let name = "é".repeat(5 << 19);
    let d = ctx.decide(&name);
    let r = ctx.refusal(&d).unwrap();
    for text in [&r.model_text, &r.remediation] {
        assert!(text.len() < 2600, "{} bytes", text.len());
    }
    assert!(
        r.model_text.contains(&format!("… ({} bytes)", name.len())),
        "{}",
        r.model_text
    );
    let e = toolgate_runtime::mcp::unknown_tool_error(&name);
    assert!(e.message.len() < 1100, "{} bytes", e.message.len());
    let e = t.context(&name).err().unwrap().to_string();
    assert!(e.len() < 1200, "{} bytes", e.len());
    // A short name is unchanged.
    assert_eq!(toolgate_runtime::names::shown("a\nb"), "a\\u000ab");
}
