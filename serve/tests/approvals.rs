//! `needs-approval` at the decision service: a tool a person approves call
//! by call is offered (stage `offer`: true, `needsApproval`), and a call of
//! it is refused (stage `call`: false, reason `approvalRequired`, the typed
//! refusal of the approval class); a resource search for calls leaves it out.

mod common;

use common::*;
use serde_json::{json, Value};
use toolgate_runtime::Table;
use toolgate_serve::Limits;

const POLICY: &str = "provider p { zone local }
group g { class publicContent }
configuration c {
  provider p
  needs-approval [b]
}";

fn ask(action: &str, tool: &str) -> Value {
    json!({"subject": {"type": "user", "id": "alice"}, "action": {"name": action},
           "resource": {"type": "tool", "id": tool}, "context": {"configuration": "c"}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_needs_approval_is_refused_and_its_offer_is_marked() {
    let table = Table::load(&table_bytes(REG, POLICY)).expect("loads");
    let s = start(table, None, Limits::default(), None).await;
    let offered = s
        .post_json("/access/v1/evaluation", &ask("offer", "b"))
        .await;
    assert_eq!(offered.status, 200, "{}", offered.text);
    assert_eq!(
        (
            &offered.json["decision"],
            &offered.json["context"]["reason"],
            &offered.json["context"]["needsApproval"]
        ),
        (&json!(true), &Value::Null, &json!(true)),
        "{}",
        offered.text
    );
    let called = s
        .post_json("/access/v1/evaluation", &ask("call", "b"))
        .await;
    assert_eq!(called.status, 200, "{}", called.text);
    let c = &called.json["context"];
    assert_eq!(
        (&called.json["decision"], &c["reason"], &c["needsApproval"]),
        (&json!(false), &json!("approvalRequired"), &json!(true)),
        "{}",
        called.text
    );
    assert_eq!(
        (
            &c["refusal"]["kind"],
            &c["refusal"]["class"],
            &c["refusal"]["action"],
            &c["refusal"]["retryable"]
        ),
        (
            &json!("approvalRequired"),
            &json!("approval"),
            &json!("askPerson"),
            &json!(false)
        ),
        "{}",
        called.text
    );
    // A tool without approval is decided alike at both stages.
    let a = s
        .post_json("/access/v1/evaluation", &ask("call", "a"))
        .await;
    assert_eq!(
        (&a.json["decision"], a.json["context"].get("needsApproval")),
        (&json!(true), None)
    );
    // Searching what may be called leaves `b` out; what is offered holds it.
    let search = |action: &str| {
        json!({"subject": {"type": "user", "id": "alice"}, "action": {"name": action},
               "resource": {"type": "tool"}, "context": {"configuration": "c"}})
    };
    let calls = s
        .post_json("/access/v1/search/resource", &search("call"))
        .await;
    let offers = s
        .post_json("/access/v1/search/resource", &search("offer"))
        .await;
    let ids = |v: &Value| -> Vec<String> {
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(ids(&calls.json), ["a", "c"], "{}", calls.text);
    assert_eq!(ids(&offers.json), ["a", "b", "c"], "{}", offers.text);
    s.stop().await;
}
