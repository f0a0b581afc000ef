//! The service as a client sees it: every endpoint and every error path, over
//! real HTTP on 127.0.0.1, against the shipped `mcp-profiles` example.

mod common;

use common::*;
use serde_json::{json, Value};
use toolgate_runtime::{Role, Table};
use toolgate_serve::RequestLimits;

fn user(consumer: Option<&str>) -> Value {
    match consumer {
        Some(c) => json!({"type": "user", "id": "alice", "properties": {"consumer": c}}),
        None => json!({"type": "user", "id": "alice"}),
    }
}

fn eval(subject: Value, action: &str, tool: &str, context: Value) -> Value {
    json!({
        "subject": subject,
        "action": {"name": action},
        "resource": {"type": "tool", "id": tool},
        "context": context,
    })
}

fn table() -> Table {
    profiles_source().load().expect("compiles")
}

/// The runtime's own refusal for the same question, as JSON.
fn runtime_refusal(t: &Table, cfg: &str, consumer: Option<&str>, tool: &str) -> Value {
    let ctx = t
        .context(cfg)
        .expect("configuration")
        .role(Role::User)
        .consumer(consumer);
    let d = ctx.decide(tool);
    serde_json::to_value(ctx.refusal(&d).expect("refused")).expect("json")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evaluation_answers_with_the_runtimes_decision_reason_refusal_and_digest() {
    let s = start_profiles().await;
    let t = table();
    let digest = t.digest_hex();
    assert_eq!(s.digest(), digest);

    // Allowed.
    let a = s
        .post_json(
            "/access/v1/evaluation",
            &eval(
                user(Some("support-bot")),
                "call",
                "search_help_center",
                json!({"configuration": "support-chat"}),
            ),
        )
        .await;
    assert_eq!(a.status, 200);
    assert_eq!(
        a.json,
        json!({"decision": true, "context": {"reason": null, "observedOnly": false, "tableDigest": digest}})
    );
    assert_eq!(
        a.headers["x-toolgate-table-digest"].to_str().unwrap(),
        digest
    );
    assert_eq!(
        a.headers["content-type"].to_str().unwrap(),
        "application/json"
    );

    // Refused by the consumer's profile: the typed refusal is the runtime's.
    let a = s
        .post_json(
            "/access/v1/evaluation",
            &eval(
                user(Some("support-bot")),
                "tools/call",
                "refund.issue",
                json!({"configuration": "support-chat"}),
            ),
        )
        .await;
    assert_eq!(a.status, 200);
    assert_eq!(a.json["decision"], json!(false));
    assert_eq!(a.json["context"]["reason"], json!("notInProfile"));
    assert_eq!(a.json["context"]["refusal"]["kind"], json!("notInProfile"));
    assert_eq!(
        a.json["context"]["refusal"]["profile"],
        json!("support-readonly")
    );
    assert_eq!(
        a.json["context"]["refusal"],
        runtime_refusal(&t, "support-chat", Some("support-bot"), "refund.issue")
    );

    // A remote tool whose name this user may not see: the host gets the true
    // reason, the refusal (for the model and the person) masks the name.
    let a = s
        .post_json(
            "/access/v1/evaluation",
            &eval(
                user(Some("support-bot")),
                "call",
                "mcp_billing_invoice_list",
                json!({"configuration": "support-chat"}),
            ),
        )
        .await;
    assert_eq!(a.json["decision"], json!(false));
    assert_eq!(a.json["context"]["reason"], json!("notInProfile"));
    assert_eq!(a.json["context"]["refusal"]["kind"], json!("notRegistered"));
    assert_eq!(a.json["context"]["refusal"]["profile"], Value::Null);

    // A name that does not exist.
    let a = s
        .post_json(
            "/access/v1/evaluation",
            &eval(
                user(None),
                "offer",
                "no_such_tool",
                json!({"configuration": "support-chat"}),
            ),
        )
        .await;
    assert_eq!(a.json["decision"], json!(false));
    assert_eq!(a.json["context"]["reason"], json!("notRegistered"));
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subjects_roles_consumers_enforcement_and_live_tools_map_to_the_context() {
    let s = start_profiles().await;
    let t = table();
    let post = |body: Value| {
        let s = &s;
        async move { s.post_json("/access/v1/evaluation", &body).await.json }
    };
    // Trust zone enforced, then observed by the host's setting.
    let a = post(eval(
        user(None),
        "call",
        "payment.status",
        json!({"configuration": "support-chat-eu"}),
    ))
    .await;
    assert_eq!(
        (
            &a["decision"],
            &a["context"]["reason"],
            &a["context"]["observedOnly"]
        ),
        (&json!(false), &json!("trustZone"), &json!(false))
    );
    assert_eq!(a["context"]["refusal"]["kind"], json!("trustZone"));
    let a = post(eval(
        user(None),
        "call",
        "payment.status",
        json!({"configuration": "support-chat-eu", "enforcement": " Observe\n"}),
    ))
    .await;
    assert_eq!(
        a,
        json!({"decision": true, "context": {"reason": "trustZone", "observedOnly": true, "tableDigest": t.digest_hex()}})
    );
    // An MCP consumer as the subject (no user: role none).
    let a = post(eval(
        json!({"type": "mcp_consumer", "id": "billing-bot"}),
        "call",
        "refund.issue",
        json!({"configuration": "support-chat"}),
    ))
    .await;
    assert_eq!(a["decision"], json!(true));
    let a = post(eval(
        json!({"type": "mcp_consumer", "id": "billing-bot"}),
        "call",
        "search_help_center",
        json!({"configuration": "support-chat"}),
    ))
    .await;
    assert_eq!(a["context"]["reason"], json!("notInProfile"));
    // Roles: an admin sees remote names; `none` is not an admin.
    let admin = json!({"type": "user", "id": "root", "properties": {"role": "admin", "consumer": "support-bot"}});
    let a = post(eval(
        admin,
        "call",
        "mcp_billing_invoice_list",
        json!({"configuration": "support-chat"}),
    ))
    .await;
    assert_eq!(a["context"]["refusal"]["kind"], json!("notInProfile"));
    // A live tool (registered after compilation) is decided on its metadata,
    // as Context::decide_live decides it.
    let live = |enabled: bool| {
        json!({
            "subject": user(None),
            "action": {"name": "call"},
            "resource": {"type": "tool", "id": "mcp_crm_case_merge", "properties": {
                "group": "mcp_crm", "remote": true, "enabled": enabled, "adminOnly": false}},
            "context": {"configuration": "support-chat"},
        })
    };
    let a = post(live(true)).await;
    assert_eq!(
        (&a["decision"], &a["context"]["reason"]),
        (&json!(true), &Value::Null)
    );
    let a = post(live(false)).await;
    assert_eq!(
        (&a["decision"], &a["context"]["reason"]),
        (&json!(false), &json!("toolDisabled"))
    );
    // Live metadata of a name the table knows: the table's facts win.
    let mut body = live(false);
    body["resource"]["id"] = json!("search_help_center");
    body["resource"]["properties"]["remote"] = json!(false);
    let a = post(body).await;
    assert_eq!(a["decision"], json!(true));
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_run_is_read_strictly_and_an_unreadable_one_admits_nothing() {
    let s = start_profiles().await;
    let ctx = |run: Value| json!({"configuration": "support-chat", "run": run});
    let decide = |tool: &str, run: Value| {
        let body = eval(user(None), "call", tool, ctx(run));
        let s = &s;
        async move { s.post_json("/access/v1/evaluation", &body).await.json }
    };
    let run =
        json!({"allowedToolNames": ["get_help_article"], "excludedToolNames": ["payment.status"]});
    let a = decide("get_help_article", run.clone()).await;
    assert_eq!(a["decision"], json!(true));
    let a = decide("search_help_center", run.clone()).await;
    assert_eq!(a["context"]["reason"], json!("configurationGroup"));
    let a = decide("payment.status", run).await;
    assert_eq!(a["context"]["reason"], json!("configurationGroup"));
    let a = decide(
        "payment.status",
        json!({"allowedToolNames": null, "excludedToolNames": ["payment.status"]}),
    )
    .await;
    assert_eq!(a["context"]["reason"], json!("configurationExcluded"));
    // A misspelt key: the whole run is unreadable; nothing passes.
    let a = decide(
        "get_help_article",
        json!({"allowed_tool_names": ["get_help_article"]}),
    )
    .await;
    assert_eq!(a["decision"], json!(false));
    assert_eq!(a["context"]["reason"], json!("configurationGroup"));
    assert_eq!(
        a["context"]["runError"],
        json!("unreadable stored run: unknown key `allowed_tool_names` (a stored run has `allowedToolNames` and `excludedToolNames`)")
    );
    // A key named twice is refused by the strict reader (serde_json's
    // Value would keep the last one).
    let body = r#"{"subject":{"type":"user","id":"u"},"action":{"name":"call"},
        "resource":{"type":"tool","id":"get_help_article"},
        "context":{"configuration":"support-chat","run":{"allowedToolNames":null,"allowedToolNames":["get_help_article"]}}}"#;
    let a = s.post("/access/v1/evaluation", body).await;
    assert_eq!(a.json["decision"], json!(false));
    assert_eq!(
        a.json["context"]["runError"],
        json!("unreadable stored run: duplicate key `allowedToolNames` at line 1 column 43")
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn evaluations_apply_defaults_and_all_three_semantics() {
    let s = start_profiles().await;
    let digest = s.digest();
    let batch = |semantic: Option<&str>| {
        let mut b = json!({
            "subject": user(Some("support-bot")),
            "action": {"name": "call"},
            "context": {"configuration": "support-chat"},
            "evaluations": [
                {"resource": {"type": "tool", "id": "search_help_center"}},
                {"resource": {"type": "tool", "id": "refund.issue"}},
                {"resource": {"type": "tool", "id": "get_help_article"}},
                {"resource": {"type": "tool", "id": "refund.issue"}, "subject": {"type": "mcp_consumer", "id": "billing-bot"}},
                {"resource": {"type": "tool", "id": "x"}, "context": {"configuration": "nope"}},
            ],
            // Each item's context, asked for (by default an item is its decision alone).
            "options": {"toolgate_context": true},
        });
        if let Some(sem) = semantic {
            b["options"]["evaluations_semantic"] = json!(sem);
        }
        b
    };
    let decisions = |a: &Value| -> Vec<Value> {
        a["evaluations"]
            .as_array()
            .expect("evaluations")
            .iter()
            .map(|e| e["decision"].clone())
            .collect()
    };
    let a = s.post_json("/access/v1/evaluations", &batch(None)).await;
    assert_eq!(a.status, 200);
    assert_eq!(
        decisions(&a.json),
        [true, false, true, true, false].map(Value::from)
    );
    assert_eq!(a.json["evaluations"][3]["context"]["reason"], Value::Null);
    // An evaluation that cannot be made is a refusal with its error, never an allow.
    assert_eq!(
        a.json["evaluations"][4],
        json!({"decision": false, "context": {"reason": null, "observedOnly": false,
            "error": {"status": 400, "code": "unknownConfiguration", "message": "unknown configuration `nope`"}}})
    );
    // One table made the whole batch: its digest is the answer's, once.
    assert_eq!(a.json["context"], json!({"tableDigest": digest}));
    assert_eq!(
        a.headers["x-toolgate-table-digest"].to_str().unwrap(),
        digest
    );
    assert_eq!(a.json["evaluations"][0]["context"].get("tableDigest"), None);
    let a = s
        .post_json("/access/v1/evaluations", &batch(Some("execute_all")))
        .await;
    assert_eq!(a.json["evaluations"].as_array().map(Vec::len), Some(5));
    let a = s
        .post_json("/access/v1/evaluations", &batch(Some("deny_on_first_deny")))
        .await;
    assert_eq!(decisions(&a.json), [true, false].map(Value::from));
    let a = s
        .post_json(
            "/access/v1/evaluations",
            &batch(Some("permit_on_first_permit")),
        )
        .await;
    assert_eq!(decisions(&a.json), [true].map(Value::from));
    // toolgate's option: the decisions without the refusals.
    let mut b = batch(None);
    b["options"] = json!({"refusals": false, "toolgate_context": true});
    let a = s.post_json("/access/v1/evaluations", &b).await;
    assert_eq!(
        a.json["evaluations"][1],
        json!({"decision": false, "context": {"reason": "notInProfile", "observedOnly": false}})
    );
    let a = s
        .post_json("/access/v1/evaluations", &batch(Some("first_match")))
        .await;
    assert_eq!(a.status, 400);
    assert_eq!(a.json["error"]["code"], json!("unknownSemantic"));
    // Without evaluations the request is one evaluation, answered as one.
    let a = s
        .post_json(
            "/access/v1/evaluations",
            &eval(
                user(None),
                "call",
                "get_help_article",
                json!({"configuration": "support-chat"}),
            ),
        )
        .await;
    assert_eq!(
        a.json,
        json!({"decision": true, "context": {"reason": null, "observedOnly": false, "tableDigest": digest}})
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_error_path_is_a_4xx_with_an_error_body_never_an_allow() {
    let t = table();
    let limits = RequestLimits {
        max_body_bytes: 4096,
        max_evaluations: 3,
        max_concurrency: 8,
        ..RequestLimits::default()
    };
    let s = start(t, Some(profiles_source()), limits, None).await;
    let good = eval(
        user(None),
        "call",
        "get_help_article",
        json!({"configuration": "support-chat"}),
    );
    let error = |a: &Answer| (a.status, a.json["error"]["code"].clone());
    let cases: Vec<(&str, Value, u16, &str)> = vec![
        (
            "unknown configuration",
            {
                let mut b = good.clone();
                b["context"]["configuration"] = json!("support-chatt");
                b
            },
            400,
            "unknownConfiguration",
        ),
        (
            "no context",
            {
                let mut b = good.clone();
                b.as_object_mut().unwrap().remove("context");
                b
            },
            400,
            "noConfiguration",
        ),
        (
            "misspelt context member",
            {
                let mut b = good.clone();
                b["context"]["rn"] = json!({});
                b
            },
            400,
            "unknownMember",
        ),
        (
            "unknown action",
            {
                let mut b = good.clone();
                b["action"]["name"] = json!("read");
                b
            },
            400,
            "unknownAction",
        ),
        (
            "unknown subject type",
            {
                let mut b = good.clone();
                b["subject"]["type"] = json!("group");
                b
            },
            400,
            "unknownSubjectType",
        ),
        (
            "unknown role",
            {
                let mut b = good.clone();
                b["subject"]["properties"] = json!({"role": "Admin"});
                b
            },
            400,
            "unknownRole",
        ),
        (
            "unknown resource type",
            {
                let mut b = good.clone();
                b["resource"]["type"] = json!("document");
                b
            },
            400,
            "unknownResourceType",
        ),
        (
            "resource without id",
            {
                let mut b = good.clone();
                b["resource"].as_object_mut().unwrap().remove("id");
                b
            },
            400,
            "badResource",
        ),
        (
            "live tool without adminOnly",
            {
                let mut b = good.clone();
                b["resource"]["properties"] =
                    json!({"group": "g", "remote": false, "enabled": true});
                b
            },
            400,
            "malformedRequest",
        ),
        (
            "a consumer subject with a consumer",
            json!({
            "subject": {"type": "mcp_consumer", "id": "support-bot", "properties": {"consumer": "billing-bot"}},
            "action": {"name": "call"}, "resource": {"type": "tool", "id": "x"},
            "context": {"configuration": "support-chat"}}),
            400,
            "badSubject",
        ),
    ];
    for (what, body, status, code) in cases {
        let a = s.post_json("/access/v1/evaluation", &body).await;
        assert_eq!(error(&a), (status, json!(code)), "{what}: {}", a.text);
        assert_eq!(a.json["decision"], Value::Null, "{what}");
    }
    let a = s
        .post_json("/access/v1/evaluation", &{
            let mut b = good.clone();
            b["context"]["configuration"] = json!("support-chatt");
            b
        })
        .await;
    assert_eq!(
        a.json,
        json!({"error": {"status": 400, "code": "unknownConfiguration",
            "message": "unknown configuration `support-chatt`; did you mean `support-chat`?"}})
    );
    // Malformed JSON, and not JSON at all.
    for body in ["{\"subject\":", "not json", ""] {
        let a = s.post("/access/v1/evaluation", body).await;
        assert_eq!(error(&a), (400, json!("malformedRequest")), "{body:?}");
    }
    // Oversized body.
    let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(5000));
    let a = s.post("/access/v1/evaluation", big.clone()).await;
    assert_eq!(error(&a), (413, json!("bodyTooLarge")));
    let a = s.post("/access/v1/evaluations", big).await;
    assert_eq!(error(&a), (413, json!("bodyTooLarge")));
    // Too many evaluations.
    let four = json!({"subject": user(None), "action": {"name": "call"},
        "context": {"configuration": "support-chat"},
        "evaluations": [
            {"resource": {"type": "tool", "id": "a"}}, {"resource": {"type": "tool", "id": "b"}},
            {"resource": {"type": "tool", "id": "c"}}, {"resource": {"type": "tool", "id": "d"}}]});
    let a = s.post_json("/access/v1/evaluations", &four).await;
    assert_eq!(
        a.json,
        json!({"error": {"status": 400, "code": "tooManyEvaluations", "message": "4 evaluations, over the limit of 3"}})
    );
    // Unknown paths and methods.
    let a = s.get("/access/v1/nothing").await;
    assert_eq!(error(&a), (404, json!("notFound")));
    let a = s.get("/access/v1/evaluation").await;
    assert_eq!(error(&a), (405, json!("methodNotAllowed")));
    // Search and the native endpoint refuse the same way.
    let a = s
        .post_json(
            "/access/v1/search/resource",
            &json!({"subject": user(None), "action": {"name": "offer"},
                "resource": {"type": "tool"}, "context": {"configuration": "nope"}}),
        )
        .await;
    assert_eq!(error(&a), (400, json!("unknownConfiguration")));
    let a = s
        .post_json(
            "/toolgate/v1/unavailable",
            &json!({"subject": user(None), "context": {"configuration": "nope"}}),
        )
        .await;
    assert_eq!(error(&a), (400, json!("unknownConfiguration")));
    // Every one was counted by status.
    let m = s.get("/metrics").await.text;
    assert!(
        m.contains("toolgate_request_errors_total{status=\"400\"} 17\n"),
        "{m}"
    );
    assert!(m.contains("toolgate_request_errors_total{status=\"413\"} 2\n"));
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resource_search_returns_the_offered_set_page_by_page() {
    let s = start_profiles().await;
    let t = table();
    let offered: Vec<Value> = t
        .context("support-chat")
        .unwrap()
        .role(Role::User)
        .consumer(Some("support-bot"))
        .offered()
        .into_iter()
        .map(|id| json!({"type": "tool", "id": id}))
        .collect();
    assert_eq!(offered.len(), 6);
    let req = |page: Option<Value>| {
        let mut b = json!({"subject": user(Some("support-bot")), "action": {"name": "offer"},
            "resource": {"type": "tool"}, "context": {"configuration": "support-chat"}});
        if let Some(p) = page {
            b["page"] = p;
        }
        b
    };
    let a = s.post_json("/access/v1/search/resource", &req(None)).await;
    assert_eq!(
        a.json,
        json!({"results": offered, "context": {"tableDigest": t.digest_hex()}})
    );
    // Pages of four: the token leads to the rest.
    let a = s
        .post_json(
            "/access/v1/search/resource",
            &req(Some(json!({"limit": 4}))),
        )
        .await;
    assert_eq!(a.json["results"], json!(offered[..4]));
    let token = a.json["page"]["next_token"].as_str().unwrap().to_string();
    // Bound to the table and to what was asked.
    assert!(
        token.starts_with(&format!("4.{}.", &t.digest_hex()[..16])),
        "{token}"
    );
    assert_eq!(token.len(), 2 + 16 + 1 + 16);
    assert_eq!(
        (&a.json["page"]["count"], &a.json["page"]["total"]),
        (&json!(4), &json!(6))
    );
    let a = s
        .post_json(
            "/access/v1/search/resource",
            &req(Some(json!({"limit": 4, "token": token}))),
        )
        .await;
    assert_eq!(a.json["results"], json!(offered[4..]));
    assert_eq!(
        a.json["page"],
        json!({"next_token": "", "count": 2, "total": 6})
    );
    // A token of another table (or none at all) is refused.
    let a = s
        .post_json(
            "/access/v1/search/resource",
            &req(Some(json!({"token": "4.0000000000000000"}))),
        )
        .await;
    assert_eq!(
        (a.status, &a.json["error"]["code"]),
        (400, &json!("badPageToken"))
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_unavailable_health_readiness_and_request_ids() {
    let s = start_profiles().await;
    let t = table();
    let a = s.get("/.well-known/authzen-configuration").await;
    let base = &s.base;
    assert_eq!(
        a.json,
        json!({
            "policy_decision_point": base,
            "access_evaluation_endpoint": format!("{base}/access/v1/evaluation"),
            "access_evaluations_endpoint": format!("{base}/access/v1/evaluations"),
            "search_resource_endpoint": format!("{base}/access/v1/search/resource"),
        })
    );
    let a = s
        .post_json(
            "/toolgate/v1/unavailable",
            &json!({"subject": user(None), "context": {"configuration": "support-chat-eu"}}),
        )
        .await;
    let ctx = t.context("support-chat-eu").unwrap().role(Role::User);
    assert_eq!(
        a.json,
        json!({
            "configuration": "support-chat-eu",
            "unavailable": [
                {"tool": "payment.status", "reason": "trustZone"},
                {"tool": "refund.issue", "reason": "trustZone"}
            ],
            "prompt": ctx.unavailable_prompt(),
            "tableDigest": t.digest_hex(),
        })
    );
    assert_eq!(
        a.json["prompt"],
        json!("Tools that exist but are not available in this conversation, and why:\n- payment.status: its data is more sensitive than this provider may receive\n- refund.issue: its data is more sensitive than this provider may receive\n")
    );
    let a = s.get("/health").await;
    assert_eq!(
        a.json,
        json!({"status": "ok", "tableDigest": t.digest_hex()})
    );
    let a = s.get("/ready").await;
    assert_eq!(a.status, 200);
    assert_eq!(a.json["ready"], json!(true));
    assert_eq!(a.json["lastReloadError"], Value::Null);
    // X-Request-ID: echoed when sent, generated when not.
    let r = s
        .client
        .get(format!("{}/health", s.base))
        .header("x-request-id", "req-42")
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["x-request-id"].to_str().unwrap(), "req-42");
    let r = s
        .client
        .post(format!("{}/access/v1/evaluation", s.base))
        .body("{")
        .send()
        .await
        .unwrap();
    let id = r.headers()["x-request-id"].to_str().unwrap().to_string();
    assert_eq!(id.len(), 36, "{id}");
    assert_eq!(id.as_bytes()[14], b'4');
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_count_decisions_by_reason_and_configuration_with_latency_and_the_table() {
    let s = start_profiles().await;
    let digest = s.digest();
    for tool in ["search_help_center", "refund.issue", "refund.issue"] {
        s.post_json(
            "/access/v1/evaluation",
            &eval(
                user(Some("support-bot")),
                "call",
                tool,
                json!({"configuration": "support-chat"}),
            ),
        )
        .await;
    }
    s.post_json(
        "/access/v1/evaluation",
        &eval(
            user(None),
            "offer",
            "payment.status",
            json!({"configuration": "support-chat-eu", "enforcement": "observe"}),
        ),
    )
    .await;
    let a = s.get("/metrics").await;
    assert_eq!(
        a.headers["content-type"].to_str().unwrap(),
        "application/openmetrics-text; version=1.0.0; charset=utf-8"
    );
    let m = a.text;
    for line in [
        "toolgate_decisions_total{configuration=\"support-chat\",reason=\"allowed\",stage=\"call\"} 1\n".to_string(),
        "toolgate_decisions_total{configuration=\"support-chat\",reason=\"notInProfile\",stage=\"call\"} 2\n".to_string(),
        "toolgate_decisions_total{configuration=\"support-chat-eu\",reason=\"observedOnly\",stage=\"offer\"} 1\n".to_string(),
        "toolgate_request_duration_seconds_count{endpoint=\"evaluation\"} 4\n".to_string(),
        format!("toolgate_table_info{{digest=\"{digest}\"}} 1\n"),
        "toolgate_reload_failures_total 0\n".to_string(),
        "toolgate_last_reload_failed 0\n".to_string(),
    ] {
        assert!(m.contains(&line), "{line} not in\n{m}");
    }
    assert!(m.contains("# TYPE toolgate_table_age_seconds gauge\n"));
    assert!(m.ends_with("# EOF\n"));
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_beyond_the_concurrency_limit_wait_for_a_slot() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let limits = RequestLimits {
        max_concurrency: 1,
        ..RequestLimits::default()
    };
    let s = start(table(), None, limits, None).await;
    // The first request holds the only slot while its body is still coming.
    let body = eval(
        user(None),
        "call",
        "get_help_article",
        json!({"configuration": "support-chat"}),
    )
    .to_string();
    let addr = s.base.trim_start_matches("http://").to_string();
    let mut slow = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST /access/v1/evaluation HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    slow.write_all(head.as_bytes()).await.unwrap();
    slow.write_all(&body.as_bytes()[..10]).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    // A second decision waits...
    let second = {
        let (client, base) = (s.client.clone(), s.base.clone());
        let body = body.clone();
        tokio::spawn(async move {
            client
                .post(format!("{base}/access/v1/evaluation"))
                .header("content-type", "application/json")
                .body(body)
                .send()
                .await
        })
    };
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    if second.is_finished() {
        let r = second.await.unwrap().unwrap();
        panic!(
            "a second request ran beside the first: {} {:?}",
            r.status(),
            r.text().await
        );
    }
    // ...while health and readiness take no slot and answer at once.
    assert_eq!(s.get("/health").await.status, 200);
    assert_eq!(s.get("/ready").await.status, 200);
    // ...until the first is answered.
    slow.write_all(&body.as_bytes()[10..]).await.unwrap();
    let mut answer = String::new();
    slow.read_to_string(&mut answer).await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    let r = second.await.unwrap().unwrap();
    assert_eq!(r.status().as_u16(), 200);
    s.stop().await;
}
