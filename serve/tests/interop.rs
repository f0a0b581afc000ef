//! The AuthZEN harnesses' own request files, replayed as they replay them
//! (serve/tests/fixtures/authzen): the specification's batch examples and
//! the openid/authzen todo-backend harness's decisions, in toolgate's
//! vocabulary. The harness compares `JSON.stringify(expected) ===
//! JSON.stringify(data.evaluations)`: the answer's `evaluations` must be
//! those bytes exactly, with nothing added to an item.

mod common;

use common::*;
use serde_json::value::RawValue;
use serde_json::{json, Value};
use toolgate_serve::RequestLimits;

const SPEC: &str = include_str!("fixtures/authzen/spec-batch-examples.json");
const TODO: &str = include_str!("fixtures/authzen/todo-backend-decisions.json");

/// The profiles example with `--default-configuration support-chat` (the
/// harnesses send no context) under the service's default trust.
async fn start_for_harness(answer_context: bool) -> Running {
    let source = profiles_source();
    let t = source.load().expect("compiles");
    start_with(t, Some(source), RequestLimits::default(), None, |svc| {
        svc.with_default_configuration(Some("support-chat".into()))
            .with_answer_context(answer_context)
    })
    .await
}

/// The `evaluations` member of an answer, as the bytes the service wrote.
fn raw_evaluations(text: &str) -> String {
    #[derive(serde::Deserialize)]
    struct Answer<'a> {
        #[serde(borrow)]
        evaluations: &'a RawValue,
    }
    let a: Answer = serde_json::from_str(text).expect("an answer with evaluations");
    a.evaluations.get().to_string()
}

fn cases<'a>(file: &'a Value, endpoint: &str) -> &'a [Value] {
    file[endpoint].as_array().map(Vec::as_slice).unwrap_or(&[])
}

/// Replay one harness file as runner.ts does; the failures, each with its
/// request and what came back.
async fn replay(s: &Running, file: &Value) -> Vec<String> {
    let mut failures = Vec::new();
    for case in cases(file, "evaluation") {
        let a = s.post_json("/access/v1/evaluation", &case["request"]).await;
        // `data.decision || false`
        let got = a.json["decision"].as_bool().unwrap_or(false);
        if a.status != 200 || Value::Bool(got) != case["expected"] {
            failures.push(format!(
                "evaluation {}: {} {}",
                case["request"], a.status, a.text
            ));
        }
    }
    for case in cases(file, "evaluations") {
        let a = s
            .post_json("/access/v1/evaluations", &case["request"])
            .await;
        let expected = serde_json::to_string(&case["expected"]).expect("JSON");
        if a.status != 200 || raw_evaluations(&a.text) != expected {
            failures.push(format!(
                "evaluations {}: {} {} (expected {expected})",
                case["request"], a.status, a.text
            ));
        }
    }
    failures
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_specifications_batch_examples_are_answered_byte_for_byte() {
    let s = start_for_harness(false).await;
    let digest = s.digest();
    let file: Value = serde_json::from_str(SPEC).expect("the fixture is JSON");
    assert_eq!(cases(&file, "evaluations").len(), 5);
    let failures = replay(&s, &file).await;
    assert!(failures.is_empty(), "{failures:#?}");
    // The whole answer of the options example, as written.
    let a = s
        .post_json("/access/v1/evaluations", &file["evaluations"][0]["request"])
        .await;
    assert_eq!(
        a.text,
        format!(
            r#"{{"evaluations":[{{"decision":true}}],"context":{{"tableDigest":"{digest}"}}}}"#
        )
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_todo_backend_harness_decisions_pass_as_it_compares_them() {
    let s = start_for_harness(false).await;
    let file: Value = serde_json::from_str(TODO).expect("the fixture is JSON");
    assert!(cases(&file, "evaluation").len() >= 10);
    assert!(cases(&file, "evaluations").len() >= 3);
    let failures = replay(&s, &file).await;
    assert!(failures.is_empty(), "{failures:#?}");
    s.stop().await;
    // An operator who wants the context in every item (--answer-context)
    // makes the literal comparison fail, as it should: the harness is run
    // against the default.
    let s = start_for_harness(true).await;
    let failures = replay(&s, &file).await;
    assert_eq!(failures.len(), cases(&file, "evaluations").len());
    s.stop().await;
}

/// A batch of the profiles example, its options set to `options`.
fn batch(options: Value) -> Value {
    json!({
        "subject": {"type": "mcp_consumer", "id": "support-bot"},
        "action": {"name": "call"},
        "evaluations": [
            {"resource": {"type": "tool", "id": "payment.status"}},
            {"resource": {"type": "tool", "id": "refund.issue"}},
        ],
        "options": options,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_options_are_ignored_and_near_misses_of_read_ones_refused() {
    let s = start_for_harness(false).await;
    // The specification's own unknown option, and others.
    for options in [
        json!({"evaluations_semantic": "deny_on_first_deny", "another_option": "value"}),
        json!({"evaluations_semantic": "deny_on_first_deny", "x-trace": {"id": 7}, "page_size": 3}),
    ] {
        let a = s.post_json("/access/v1/evaluations", &batch(options)).await;
        assert_eq!(a.status, 200, "{}", a.text);
        assert_eq!(
            raw_evaluations(&a.text),
            r#"[{"decision":true},{"decision":false}]"#
        );
    }
    // A near miss of an option toolgate reads is a 400 naming the option
    // meant: never execute_all (or the default) by accident.
    for (sent, meant) in [
        ("evaluation_semantic", "evaluations_semantic"),
        ("evaluations_semantics", "evaluations_semantic"),
        ("Evaluations_Semantic", "evaluations_semantic"),
        ("evaluations-semantic", "evaluations_semantic"),
        ("refusal", "refusals"),
        ("toolgate_contexts", "toolgate_context"),
    ] {
        let a = s
            .post_json(
                "/access/v1/evaluations",
                &batch(json!({sent: "deny_on_first_deny"})),
            )
            .await;
        assert_eq!(a.status, 400, "{sent}: {}", a.text);
        assert_eq!(a.json["error"]["code"], json!("unknownMember"), "{sent}");
        let message = a.json["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(&format!("`{sent}`")) && message.contains(&format!("`{meant}`")),
            "{sent}: {message}"
        );
    }
    // An option toolgate reads, of the wrong type, is a 400 too.
    let a = s
        .post_json(
            "/access/v1/evaluations",
            &batch(json!({"toolgate_context": "yes"})),
        )
        .await;
    assert_eq!(a.status, 400);
    assert_eq!(a.json["error"]["code"], json!("malformedRequest"));
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_items_context_is_given_when_the_caller_or_the_operator_asks() {
    let s = start_for_harness(false).await;
    // By default: the decisions alone.
    let a = s
        .post_json("/access/v1/evaluations", &batch(json!({})))
        .await;
    assert_eq!(
        raw_evaluations(&a.text),
        r#"[{"decision":true},{"decision":false}]"#
    );
    // The caller asks.
    let a = s
        .post_json(
            "/access/v1/evaluations",
            &batch(json!({"toolgate_context": true})),
        )
        .await;
    assert_eq!(a.json["evaluations"][0]["context"]["reason"], Value::Null);
    assert_eq!(
        a.json["evaluations"][1]["context"]["reason"],
        json!("notInProfile")
    );
    assert_eq!(
        a.json["evaluations"][1]["context"]["refusal"]["kind"],
        json!("notInProfile")
    );
    // With the refusals left out, as before.
    let a = s
        .post_json(
            "/access/v1/evaluations",
            &batch(json!({"toolgate_context": true, "refusals": false})),
        )
        .await;
    assert_eq!(
        a.json["evaluations"][1],
        json!({"decision": false, "context": {"reason": "notInProfile", "observedOnly": false}})
    );
    // An item that could not be decided says why, asked or not.
    let mut b = batch(json!({}));
    b["evaluations"][1]["resource"]["type"] = json!("todo");
    let a = s.post_json("/access/v1/evaluations", &b).await;
    assert_eq!(a.json["evaluations"][0], json!({"decision": true}));
    assert_eq!(
        a.json["evaluations"][1]["context"]["error"]["code"],
        json!("unknownResourceType")
    );
    // A single evaluation keeps its context (the harness reads `decision`).
    let one = json!({"subject": {"type": "mcp_consumer", "id": "support-bot"},
        "action": {"name": "call"}, "resource": {"type": "tool", "id": "refund.issue"}});
    let a = s.post_json("/access/v1/evaluation", &one).await;
    assert_eq!(a.json["context"]["reason"], json!("notInProfile"));
    s.stop().await;
    // The operator asks (--answer-context); a caller may still decline.
    let s = start_for_harness(true).await;
    let a = s
        .post_json("/access/v1/evaluations", &batch(json!({})))
        .await;
    assert_eq!(
        a.json["evaluations"][1]["context"]["reason"],
        json!("notInProfile")
    );
    let a = s
        .post_json(
            "/access/v1/evaluations",
            &batch(json!({"toolgate_context": false})),
        )
        .await;
    assert_eq!(
        raw_evaluations(&a.text),
        r#"[{"decision":true},{"decision":false}]"#
    );
    s.stop().await;
}
