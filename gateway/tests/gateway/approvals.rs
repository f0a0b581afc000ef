//! Calls a person approves (`needs-approval`): refused and never forwarded
//! until approved; approved out of band by an approver at `/approvals`, or
//! by the caller's own user through elicitation or a 2026-07-28 input
//! request; an answer voided by a table swapped meanwhile.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, ClientConfig, ProtocolVersion};
use rmcp::service::{RoleClient, RunningService};
use serde_json::{json, Value};

use crate::common::*;
use crate::support::*;

/// A tool a person approves call by call (`needs-approval`) is listed, and
/// its call is answered with the typed `approvalRequired` refusal, never
/// forwarded: the upstream never sees it.
#[test]
fn a_call_that_needs_approval_is_refused_and_never_forwarded() {
    let Approving { gw, log, .. } = approving("gw-approval", "");
    runtime().block_on(async {
        let c = client(&gw.url, BILLING_KEY, ProtocolVersion::V_2026_07_28).await;
        assert!(listed(&c).await.contains("mcp_crm_refund_issue"));
        let e = call(&c, "mcp_crm_refund_issue").await.expect_err("waits for approval");
        assert_eq!(e["code"], -31003, "{e}");
        assert_eq!(
            e["message"],
            "The call to `mcp_crm_refund_issue` needs a person's approval before it runs. Do not retry it on your own; a person will be asked to approve it."
        );
        let t = &e["data"]["toolgate"];
        assert_eq!(
            (&t["kind"], &t["class"], &t["action"], &t["configuration"]),
            (
                &json!("approvalRequired"),
                &json!("approval"),
                &json!("askPerson"),
                &json!("support-chat")
            ),
            "{e}"
        );
        assert!(call(&c, "mcp_crm_notes_append").await.is_ok());
        let _ = c.cancel().await;
    });
    let seen = calls_seen(&log);
    assert!(!seen.contains(&"refund_issue".to_string()), "{seen:?}");
    assert!(seen.contains(&"notes_append".to_string()), "{seen:?}");
    drop(gw);
}

/// A gateway over the crm project with `mcp_crm_refund_issue` approved
/// call by call.
struct Approving {
    gw: Running,
    project: PathBuf,
    /// The crm server's calls.
    log: PathBuf,
}

/// [`Approving`] in scratch directories named for `name`, with `extra`
/// top-level lines in the gateway's configuration.
fn approving(name: &str, extra: &str) -> Approving {
    let dir = temp(name);
    let project = crm_project(&format!("{name}-project"));
    std::fs::write(
        project.join("policy.tg"),
        CRM_POLICY.replace(
            "configuration support-chat {\n  groups [mcp_crm]\n}",
            "configuration support-chat {\n  groups [mcp_crm]\n  needs-approval [mcp_crm_refund_issue]\n}",
        ),
    )
    .unwrap();
    let log = dir.join("calls.log");
    let cfg = config(&dir, &project, &crm_upstream_logged(&log), extra);
    let gw = start(&cfg).unwrap_or_else(|e| panic!("the gateway did not start:\n{e}"));
    Approving { gw, project, log }
}

/// A refund's call with `amount`.
async fn refund(
    c: &RunningService<RoleClient, ClientConfig>,
    amount: &str,
) -> Result<String, Value> {
    let mut p = CallToolRequestParams::new("mcp_crm_refund_issue");
    p.arguments = json!({"id": "7", "amount": amount}).as_object().cloned();
    match c.peer().call_tool(p).await {
        Ok(r) => Ok(serde_json::to_value(&r.content).unwrap()[0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string()),
        Err(rmcp::ServiceError::McpError(e)) => Err(serde_json::to_value(&e).unwrap()),
        Err(e) => panic!("refund: {e}"),
    }
}

/// `p` made again with the user's accepted `{"approve": true}` to the
/// gateway's question, under the question's `state`.
fn approved(p: &CallToolRequestParams, state: Option<String>) -> CallToolRequestParams {
    let mut retry = p.clone();
    retry.input_responses = Some(
        [(
            "toolgate-approval".to_string(),
            json!({"action": "accept", "content": {"approve": true}}),
        )]
        .into_iter()
        .collect(),
    );
    retry.request_state = state;
    retry
}

/// The error object of a call answered with an error (any other answer fails the test).
fn refused(answer: Result<rmcp::model::CallToolResponse, rmcp::ServiceError>) -> Value {
    match answer {
        Err(rmcp::ServiceError::McpError(e)) => serde_json::to_value(&e).unwrap(),
        other => panic!("{other:?}"),
    }
}

/// `GET` or `POST` (with `body`) at `url` with a bearer `token`: the status and the JSON.
async fn approvals_http(url: &str, token: &str, body: Option<&str>) -> (u16, Value) {
    let client = reqwest::Client::new();
    let req = match body {
        Some(b) => client
            .post(url)
            .header("content-type", "application/json")
            .body(b.to_string()),
        None => client.get(url),
    };
    let r = req
        .header("authorization", format!("Bearer {token}"))
        .send()
        .await
        .expect("an answer");
    let status = r.status().as_u16();
    let text = r.text().await.unwrap_or_default();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// The approval records of the decision log: (outcome, approver, grant id present).
fn approvals_logged(log: &Path) -> Vec<(String, Option<String>, bool)> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|r| {
            let a = r["result"]["context"]["approval"].clone();
            a.is_object().then(|| {
                (
                    a["outcome"].as_str().unwrap_or_default().to_string(),
                    a["approver"].as_str().map(str::to_string),
                    a["grantId"].is_string(),
                )
            })
        })
        .collect()
}

/// A client that cannot ask its user waits for an approver: its call is
/// refused `approvalRequired` with the question's id, an approver (never
/// the caller, never a plain key) approves it at `/approvals`, and the
/// call made again runs once; a declined call is refused as declined; the
/// decision log keeps the question, the approver and the grant.
#[test]
fn an_approver_approves_a_waiting_call_out_of_band_and_it_runs_once() {
    let decisions = temp("gw-approver-log").join("decisions.jsonl");
    let extra = format!("decision-log = {:?}", decisions.to_string_lossy());
    let Approving { gw, log, .. } = approving("gw-approver", &extra);
    let base = gw.url.trim_end_matches("/mcp").to_string();
    let refunds = || {
        calls_seen(&log)
            .iter()
            .filter(|l| *l == "refund_issue")
            .count()
    };
    runtime().block_on(async {
        // A client that declared no elicitation: the question waits.
        let c = client(&gw.url, BILLING_KEY, ProtocolVersion::V_2025_11_25).await;
        let e = refund(&c, "12.50").await.expect_err("waits for an approver");
        assert_eq!(e["code"], -31003, "{e}");
        assert_eq!(
            e["message"],
            "The call to `mcp_crm_refund_issue` needs a person's approval before it runs. Do not retry it on your own; a person will be asked to approve it."
        );
        let a = &e["data"]["approval"];
        assert_eq!(a["outcome"], "pending", "{e}");
        let qid = a["requestId"].as_str().expect("a question id").to_string();
        assert_eq!(a["approveAt"], json!(format!("{base}/approvals/{qid}")));
        // The same call again is the same question, not a second one.
        let again = refund(&c, "12.50").await.expect_err("still waits");
        assert_eq!(again["data"]["approval"]["requestId"], json!(qid));
        assert_eq!(refunds(), 0);
        // Only an approver sees and answers questions.
        let (status, body) = approvals_http(&format!("{base}/approvals"), BILLING_KEY, None).await;
        assert_eq!((status, &body["error"]), (403, &json!("notAnApprover")));
        let (status, _) = approvals_http(&format!("{base}/approvals"), "no-such-key", None).await;
        assert_eq!(status, 401);
        let (status, body) = approvals_http(&format!("{base}/approvals"), APPROVER_KEY, None).await;
        assert_eq!(status, 200);
        let pending = body["pending"].as_array().expect("a list");
        assert_eq!(pending.len(), 1, "{body}");
        let p = &pending[0];
        assert_eq!(
            (&p["requestId"], &p["caller"], &p["arguments"], &p["request"]["tool"], &p["request"]["consumer"]),
            (&json!(qid), &json!("billing"), &json!({"amount": "12.50", "id": "7"}), &json!("mcp_crm_refund_issue"), &json!("billing-bot")),
            "{p}"
        );
        assert_eq!(
            p["message"],
            "Approve this call?\nTool: mcp_crm_refund_issue\nArguments: {\"amount\":\"12.50\",\"id\":\"7\"}\nFor: consumer billing-bot, role user, configuration support-chat\nPolicy: configuration `support-chat` (policy.tg) asks a person to approve each call of this tool"
        );
        let answer_url = format!("{base}/approvals/{qid}");
        let (status, body) = approvals_http(&answer_url, BILLING_KEY, Some(r#"{"approve": true}"#)).await;
        assert_eq!((status, &body["error"]), (403, &json!("notAnApprover")));
        for bad in [r#"{"approve": "yes"}"#, r#"{"approve": true, "as": "root"}"#, "approve"] {
            let (status, body) = approvals_http(&answer_url, APPROVER_KEY, Some(bad)).await;
            assert_eq!((status, &body["error"]), (400, &json!("badAnswer")), "{bad}");
        }
        let (status, body) = approvals_http(&format!("{base}/approvals/nope"), APPROVER_KEY, Some(r#"{"approve": true}"#)).await;
        assert_eq!((status, &body["error"]), (404, &json!("unknownQuestion")));
        assert_eq!(refunds(), 0, "nothing ran while the question waited");
        let (status, body) = approvals_http(&answer_url, APPROVER_KEY, Some(r#"{"approve": true}"#)).await;
        assert_eq!((status, &body["outcome"], &body["approver"]), (200, &json!("granted"), &json!("alice")), "{body}");
        assert!(body["grantId"].is_string());
        let (status, body) = approvals_http(&answer_url, APPROVER_KEY, Some(r#"{"approve": false}"#)).await;
        assert_eq!((status, &body["error"]), (409, &json!("alreadyAnswered")));
        // Other arguments are another call: a question of their own.
        let other = refund(&c, "1250.00").await.expect_err("another call");
        assert_eq!(other["data"]["approval"]["outcome"], "pending");
        assert_ne!(other["data"]["approval"]["requestId"], json!(qid));
        // The approved call, made again, runs: once.
        assert_eq!(refund(&c, "12.50").await, Ok("refund_issue(7) done".into()));
        assert_eq!(refunds(), 1);
        let once_more = refund(&c, "12.50").await.expect_err("a grant is used once");
        assert_eq!(once_more["data"]["approval"]["outcome"], "pending");
        assert_eq!(refunds(), 1);
        // An approver never approves their own call.
        let own = client(&gw.url, CAROL_KEY, ProtocolVersion::V_2025_11_25).await;
        let e = refund(&own, "3.00").await.expect_err("waits");
        let own_qid = e["data"]["approval"]["requestId"].as_str().unwrap().to_string();
        let (status, body) = approvals_http(&format!("{base}/approvals/{own_qid}"), CAROL_KEY, Some(r#"{"approve": true}"#)).await;
        assert_eq!((status, &body["error"]), (403, &json!("ownCall")));
        // Declined: the call made again is refused as declined, and nothing ran.
        let (status, body) = approvals_http(&format!("{base}/approvals/{own_qid}"), APPROVER_KEY, Some(r#"{"approve": false}"#)).await;
        assert_eq!((status, &body["outcome"]), (200, &json!("declined")));
        let e = refund(&own, "3.00").await.expect_err("declined");
        assert_eq!(
            (&e["code"], &e["message"], &e["data"]["approval"]["outcome"], &e["data"]["approval"]["approver"]),
            (&json!(-31003), &json!("A person declined this call: it did not run. Do not retry it on your own."), &json!("declined"), &json!("alice")),
            "{e}"
        );
        assert_eq!(refunds(), 1);
        let _ = own.cancel().await;
        let _ = c.cancel().await;
    });
    gw.stop();
    let logged = approvals_logged(&decisions);
    assert!(
        logged.contains(&("granted".into(), Some("alice".into()), true)),
        "{logged:?}"
    );
    assert!(
        logged.contains(&("declined".into(), Some("alice".into()), false)),
        "{logged:?}"
    );
    assert_eq!(
        logged.iter().filter(|l| l.0 == "granted").count(),
        1,
        "{logged:?}"
    );
    assert!(
        logged.iter().filter(|l| l.0 == "pending").count() >= 4,
        "{logged:?}"
    );
}

/// The caller's own user approves through its client: on 2025-11-25 the
/// gateway asks by elicitation on the call's stream, on 2026-07-28 it
/// answers an `InputRequiredResult` and decides the retried call; only an
/// accepted `{"approve": true}` lets the call run, once; the gateway's
/// question state is never forwarded, and a replayed or forged one is refused.
#[test]
fn the_callers_user_approves_through_elicitation_or_an_input_request() {
    let Approving { gw, log, .. } = approving("gw-ask-caller", "");
    let refunds = || {
        calls_seen(&log)
            .iter()
            .filter(|l| *l == "refund_issue")
            .count()
    };
    let question = "Approve this call?\nTool: mcp_crm_refund_issue\nArguments: {\"amount\":\"12.50\",\"id\":\"7\"}\nFor: consumer billing-bot, role user, configuration support-chat\nPolicy: configuration `support-chat` (policy.tg) asks a person to approve each call of this tool";
    let script = fixture("python_approval_client.py");
    let python_client = |mode: &str, answer: &str| {
        let o = Command::new(python())
            .arg(&script)
            .args([
                &gw.url,
                BILLING_KEY,
                mode,
                "mcp_crm_refund_issue",
                r#"{"id": "7", "amount": "12.50"}"#,
                answer,
            ])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{mode}: {}", stderr(&o));
        serde_json::from_str::<Value>(stdout(&o).trim()).unwrap()
    };
    let schema = json!({"type": "object", "properties": {"approve": {"type": "boolean", "title": "Approve", "description": "Let this one call run, with these arguments"}}, "required": ["approve"]});
    // The official Python client, each revision, approving: the call runs.
    for (mode, protocol, n) in [("auto", "2026-07-28", 1), ("legacy", "2025-11-25", 2)] {
        assert_eq!(
            python_client(mode, "approve"),
            json!({"protocol": protocol, "asked": [{"message": question, "schema": schema}], "text": ["refund_issue(7) done"]}),
            "{mode}"
        );
        assert_eq!(refunds(), n, "{mode}");
    }
    // Declining: refused as declined, nothing runs.
    for (mode, protocol) in [("auto", "2026-07-28"), ("legacy", "2025-11-25")] {
        assert_eq!(
            python_client(mode, "decline"),
            json!({"protocol": protocol, "asked": [{"message": question, "schema": schema}],
                   "error": {"code": -31003, "message": "A person declined this call: it did not run. Do not retry it on your own."}}),
            "{mode}"
        );
    }
    assert_eq!(refunds(), 2);
    runtime().block_on(async {
        // A 2025-11-25 client whose answer is not `approve: true` (another
        // form's content) does not approve.
        let c = asked_client(&gw.url, BILLING_KEY, ProtocolVersion::V_2025_11_25)
            .await
            .expect("initialize");
        let mut p = CallToolRequestParams::new("mcp_crm_refund_issue");
        p.arguments = json!({"id": "7", "amount": "12.50"}).as_object().cloned();
        match c.peer().call_tool(p.clone()).await {
            Err(rmcp::ServiceError::McpError(e)) => assert_eq!(
                (e.code.0, e.message.as_ref()),
                (
                    -31003,
                    "A person declined this call: it did not run. Do not retry it on your own."
                )
            ),
            other => panic!("{other:?}"),
        }
        let _ = c.cancel().await;
        // 2026-07-28 by hand: the question, the answer, the retry.
        let c = asked_client(&gw.url, BILLING_KEY, ProtocolVersion::V_2026_07_28)
            .await
            .expect("discover");
        let first = c.peer().call_tool_once(p.clone()).await.expect("the call");
        let rmcp::model::CallToolResponse::InputRequired(asked) = first else {
            panic!("not an InputRequiredResult: {first:?}")
        };
        let requests = serde_json::to_value(&asked.input_requests).unwrap();
        assert_eq!(
            requests["toolgate-approval"]["method"], "elicitation/create",
            "{requests}"
        );
        assert_eq!(requests["toolgate-approval"]["params"]["message"], question);
        let state = asked.request_state.clone().expect("a requestState");
        assert!(state.starts_with("toolgate-approval:"), "{state}");
        let mut retry = approved(&p, Some(state.clone()));
        // Other arguments under the answer: another call, not approved.
        let mut moved = retry.clone();
        moved.arguments = json!({"id": "7", "amount": "9999"}).as_object().cloned();
        let e = refused(c.peer().call_tool_once(moved).await);
        assert_eq!(
            (&e["code"], &e["data"]["approval"]["grantError"]),
            (&json!(-31003), &json!("grantOtherCall")),
            "{e}"
        );
        // The question was spent on the moved call: ask again, answer, run.
        let first = c.peer().call_tool_once(p.clone()).await.expect("the call");
        let rmcp::model::CallToolResponse::InputRequired(asked) = first else {
            panic!("{first:?}")
        };
        retry.request_state = asked.request_state.clone();
        match c
            .peer()
            .call_tool_once(retry.clone())
            .await
            .expect("the retry")
        {
            rmcp::model::CallToolResponse::Complete(r) => {
                assert_eq!(
                    serde_json::to_value(&r.content).unwrap()[0]["text"],
                    "refund_issue(7) done"
                )
            }
            other => panic!("{other:?}"),
        }
        // The same answer again: the question is spent.
        let e = refused(c.peer().call_tool_once(retry.clone()).await);
        assert_eq!(
            &e["data"]["approval"]["grantError"],
            &json!("approvalUnknown"),
            "{e}"
        );
        // A forged question id approves nothing.
        retry.request_state = Some("toolgate-approval:00000000-0000-4000-8000-000000000000".into());
        assert!(matches!(
            c.peer().call_tool_once(retry).await,
            Err(rmcp::ServiceError::McpError(_))
        ));
        let _ = c.cancel().await;
    });
    assert_eq!(refunds(), 3);
    drop(gw);
}

/// A table swapped while a call waits for its approval voids the answer:
/// the person approved under the old policy. The 2026-07-28 client's
/// answer is refused `grantOtherTable`, nothing runs, and the call made
/// again is asked again under the new table.
#[test]
fn a_table_swapped_while_a_call_waits_for_approval_voids_the_answer() {
    let Approving { gw, project, log } = approving("gw-approval-swap", "");
    runtime().block_on(async {
        let c = asked_client(&gw.url, BILLING_KEY, ProtocolVersion::V_2026_07_28)
            .await
            .expect("discover");
        let mut p = CallToolRequestParams::new("mcp_crm_refund_issue");
        p.arguments = json!({"id": "7"}).as_object().cloned();
        let rmcp::model::CallToolResponse::InputRequired(asked) =
            c.peer().call_tool_once(p.clone()).await.expect("the call")
        else {
            panic!("not asked")
        };
        // The administrator changes the policy while the person reads the question.
        let before = gw.gateway().table().digest_hex();
        let policy = std::fs::read_to_string(project.join("policy.tg")).unwrap();
        std::fs::write(
            project.join("policy.tg"),
            format!("{policy}\nconsumer late-bot {{ profile billing }}\n"),
        )
        .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while gw.gateway().table().digest_hex() == before {
            assert!(Instant::now() < deadline, "no reload: still table {before}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let retry = approved(&p, asked.request_state.clone());
        let e = refused(c.peer().call_tool_once(retry).await);
        assert_eq!(
            (&e["code"], &e["data"]["approval"]["grantError"]),
            (&json!(-31003), &json!("grantOtherTable")),
            "{e}"
        );
        // Made again, the call is asked again, under the new table.
        let again = c.peer().call_tool_once(p).await.expect("the call");
        assert!(
            matches!(again, rmcp::model::CallToolResponse::InputRequired(_)),
            "{again:?}"
        );
        let _ = c.cancel().await;
    });
    assert!(!calls_seen(&log).contains(&"refund_issue".to_string()));
}
