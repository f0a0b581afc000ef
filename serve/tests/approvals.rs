//! `needs-approval` at the decision service: a tool a person approves call
//! by call is offered (stage `offer`: true, `needsApproval`), and a call of
//! it is refused (stage `call`: false, reason `approvalRequired`, the typed
//! refusal of the approval class); a resource search for calls leaves it out.

mod common;

use common::*;
use serde_json::{json, Value};
use toolgate_runtime::Table;
use toolgate_serve::RequestLimits;

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
    let s = start(table, None, RequestLimits::default(), None).await;
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

/// A person's grant at stage `call` (`context.grant` with the call's
/// `context.arguments`): allowed once when signed by an `--approver-key`
/// and bound to this call and table; every other grant refused with its
/// code, the decision log keeping the grant and its outcome.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_with_a_grant_signed_by_an_approver_key_runs_once() {
    use toolgate_compiler::signing;
    use toolgate_runtime::approval::Grant;
    let table = Table::load(&table_bytes(REG, POLICY)).expect("loads");
    let digest = table.digest_hex();
    let approver = signing::generate().unwrap();
    let mallory = signing::generate().unwrap();
    let keys = toolgate_runtime::TrustedKeys::from_pem(&approver.public_pem).unwrap();
    let dir = std::env::temp_dir().join(format!("toolgate-serve-grants-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log_path = dir.join("decisions.jsonl");
    let _ = std::fs::remove_file(&log_path);
    let s = start_with(
        table,
        None,
        RequestLimits::default(),
        Some((toolgate_serve::LogTarget::File(log_path.clone()), 1024)),
        |s| {
            s.with_trust(toolgate_serve::Trust::everything())
                .with_approver_keys(Some(keys))
        },
    )
    .await;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let args = json!({"order": 17});
    let grant = |id: &str, pem: &str, args: &Value, expires_at: u64| {
        let g = Grant {
            request: toolgate_runtime::approval::ApprovalRequest {
                tool: "b".into(),
                arguments_digest: toolgate_runtime::approval::arguments_digest(Some(args)),
                configuration: "c".into(),
                consumer: None,
                role: "user".into(),
                table_digest: digest.clone(),
                request_id: "q-1".into(),
            },
            approver: "alice".into(),
            grant_id: id.into(),
            expires_at,
        };
        serde_json::to_value(signing::sign_grant(
            g,
            &signing::read_secret_key(pem).unwrap(),
        ))
        .unwrap()
    };
    let call = |grant: Value, arguments: &Value| {
        json!({"subject": {"type": "user", "id": "alice"}, "action": {"name": "call"},
               "resource": {"type": "tool", "id": "b"},
               "context": {"configuration": "c", "arguments": arguments, "grant": grant}})
    };
    let outcome = |v: &Value| {
        (
            v["decision"].clone(),
            v["context"]["reason"].clone(),
            v["context"]["approval"]["outcome"].clone(),
            v["context"]["approval"]["grantError"].clone(),
        )
    };
    let good = grant("g-1", &approver.secret_pem, &args, now + 300);
    let r = s
        .post_json("/access/v1/evaluation", &call(good.clone(), &args))
        .await;
    assert_eq!(
        outcome(&r.json),
        (json!(true), Value::Null, json!("granted"), Value::Null),
        "{}",
        r.text
    );
    // Used once.
    let r = s
        .post_json("/access/v1/evaluation", &call(good, &args))
        .await;
    assert_eq!(
        outcome(&r.json),
        (
            json!(false),
            json!("approvalRequired"),
            json!("refused"),
            json!("grantReplayed")
        ),
        "{}",
        r.text
    );
    assert_eq!(r.json["context"]["refusal"]["grantError"], "grantReplayed");
    // Other arguments, a foreign key, an expired grant, something else.
    for (g, arguments, code) in [
        (
            grant("g-2", &approver.secret_pem, &args, now + 300),
            json!({"order": 18}),
            "grantOtherArguments",
        ),
        (
            grant("g-3", &mallory.secret_pem, &args, now + 300),
            args.clone(),
            "grantUntrustedKey",
        ),
        (
            grant("g-4", &approver.secret_pem, &args, now - 1),
            args.clone(),
            "grantExpired",
        ),
        (json!({"grant": "nothing"}), args.clone(), "grantMalformed"),
    ] {
        let r = s
            .post_json("/access/v1/evaluation", &call(g, &arguments))
            .await;
        assert_eq!(
            outcome(&r.json),
            (
                json!(false),
                json!("approvalRequired"),
                json!("refused"),
                json!(code)
            ),
            "{}",
            r.text
        );
    }
    // Arguments that are not an object: a bad question.
    let r = s
        .post_json(
            "/access/v1/evaluation",
            &call(
                grant("g-5", &approver.secret_pem, &args, now + 300),
                &json!([1]),
            ),
        )
        .await;
    assert_eq!(
        (r.status, &r.json["error"]["code"]),
        (400, &json!("badArguments")),
        "{}",
        r.text
    );
    s.stop().await;
    let logged: Vec<Value> = std::fs::read_to_string(&log_path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let approvals: Vec<(Value, Value, Value)> = logged
        .iter()
        .map(|r| {
            let a = &r["result"]["context"]["approval"];
            (
                a["outcome"].clone(),
                a["grantId"].clone(),
                a["approver"].clone(),
            )
        })
        .collect();
    assert_eq!(
        approvals[0],
        (json!("granted"), json!("g-1"), json!("alice"))
    );
    assert_eq!(
        approvals[1],
        (json!("refused"), json!("g-1"), json!("alice"))
    );
    assert_eq!(approvals.len(), 6, "{logged:?}");
}
