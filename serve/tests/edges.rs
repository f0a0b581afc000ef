//! The service's edges as a standard AuthZEN client, a careless operator and
//! an attacker meet them: what is ignored, what is refused, and every
//! bound, over real HTTP and raw TCP on 127.0.0.1.

mod common;

use std::time::Duration;

use common::*;
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolgate_serve::{LogTarget, RequestLimits};

fn ask(consumer: Value, tool: &str) -> Value {
    json!({
        "subject": {"type": "user", "id": "alice", "properties": {"consumer": consumer}},
        "action": {"name": "call"},
        "resource": {"type": "tool", "id": tool},
        "context": {"configuration": "support-chat"},
    })
}

fn code(a: &Answer) -> (u16, Value) {
    (a.status, a.json["error"]["code"].clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn members_a_standard_client_sends_are_ignored_and_near_misses_refused() {
    let s = start_profiles().await;
    let plain = s
        .post_json(
            "/access/v1/evaluation",
            &ask(json!("support-bot"), "refund.issue"),
        )
        .await;
    assert_eq!(
        (plain.status, &plain.json["decision"]),
        (200, &json!(false))
    );
    // What a gateway usually forwards, and members of later revisions.
    let mut b = ask(json!("support-bot"), "refund.issue");
    b["subject"]["properties"]["department"] = json!("support");
    b["context"]["traceparent"] = json!("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    b["resource"]["owner"] = json!("crm");
    b["x-vendor"] = json!({"anything": 1});
    let a = s.post_json("/access/v1/evaluation", &b).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.json["decision"], plain.json["decision"]);
    assert_eq!(a.json["context"]["reason"], plain.json["context"]["reason"]);
    // A slip of a member toolgate reads would widen: refused, naming it.
    for (path, slip, meant) in [
        ("subject.properties", "consumr", "consumer"),
        ("subject.properties", "Role", "role"),
        ("context", "enforcment", "enforcement"),
        ("context", "Run", "run"),
        ("", "contxt", "context"),
    ] {
        let mut b = ask(json!("support-bot"), "refund.issue");
        let target = match path {
            "subject.properties" => &mut b["subject"]["properties"],
            "context" => &mut b["context"],
            _ => &mut b,
        };
        target[slip] = json!("x");
        let a = s.post_json("/access/v1/evaluation", &b).await;
        assert_eq!(
            code(&a),
            (400, json!("unknownMember")),
            "{slip}: {}",
            a.text
        );
        let message = a.json["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(&format!("did you mean `{meant}`?")),
            "{message}"
        );
    }
    // An unknown option is ignored (AuthZEN's own example sends
    // `another_option`), but a near miss of one toolgate reads is a 400.
    let batch = json!({
        "subject": {"type": "user", "id": "alice"},
        "action": {"name": "call"},
        "context": {"configuration": "support-chat"},
        "evaluations": [{"resource": {"type": "tool", "id": "refund.issue"}}],
        "options": {"evaluations_semantics": "deny_on_first_deny"},
    });
    let a = s.post_json("/access/v1/evaluations", &batch).await;
    assert_eq!(code(&a), (400, json!("unknownMember")), "{}", a.text);
    assert!(
        a.text.contains(
            "has no member `evaluations_semantics`; did you mean `evaluations_semantic`?"
        ),
        "{}",
        a.text
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_near_miss_of_a_consumer_never_drops_its_profile() {
    let s = start_profiles().await;
    // support-bot's profile refuses refund.issue; the policy leaves
    // consumers without a profile unrestricted.
    let a = s
        .post_json(
            "/access/v1/evaluation",
            &ask(json!("support-bot"), "refund.issue"),
        )
        .await;
    assert_eq!(a.json["context"]["reason"], json!("notInProfile"));
    for slip in [
        "Support-bot",
        "support-bot ",
        "support_bot",
        "support-bot\u{200b}",
        "",
    ] {
        let a = s
            .post_json("/access/v1/evaluation", &ask(json!(slip), "refund.issue"))
            .await;
        assert_eq!(
            code(&a),
            (400, json!("unknownConsumer")),
            "{slip:?}: {}",
            a.text
        );
        assert_eq!(a.json["decision"], Value::Null);
        if !slip.is_empty() {
            assert!(a.text.contains("did you mean `support-bot`?"), "{}", a.text);
        }
    }
    // A consumer the policy does not know at all is refused too: the policy
    // does not say `unknown-consumers admitted`.
    let a = s
        .post_json(
            "/access/v1/evaluation",
            &ask(json!("stranger"), "refund.issue"),
        )
        .await;
    assert_eq!(code(&a), (400, json!("unknownConsumer")), "{}", a.text);
    assert_eq!(a.json["decision"], Value::Null);
    assert!(
        a.text
            .contains("the policy knows no consumer `stranger`; bind it to a profile"),
        "{}",
        a.text
    );
    // Names are bounded: an answer stays proportional to the request.
    let a = s
        .post_json(
            "/access/v1/evaluation",
            &ask(json!("x".repeat(2000)), "refund.issue"),
        )
        .await;
    assert_eq!(code(&a), (400, json!("nameTooLong")), "{}", a.text);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_without_context_takes_the_default_configuration() {
    let s = start_profiles().await;
    let mut b = ask(json!("support-bot"), "refund.issue");
    b.as_object_mut().map(|o| o.remove("context"));
    let a = s.post_json("/access/v1/evaluation", &b).await;
    assert_eq!(code(&a), (400, json!("noConfiguration")));
    assert_eq!(
        a.json["error"]["message"],
        "context.configuration is required (this service has no --default-configuration)"
    );
    s.stop().await;
    let source = profiles_source();
    let t = source.load().expect("compiles");
    let s = start_with(t, Some(source), RequestLimits::default(), None, |svc| {
        svc.with_default_configuration(Some("support-chat".into()))
    })
    .await;
    let a = s.post_json("/access/v1/evaluation", &b).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.json["context"]["reason"], json!("notInProfile"));
    s.stop().await;
    let t = profiles_source().load().expect("compiles");
    let svc =
        toolgate_serve::Service::new(t, None, RequestLimits::default(), "http://x".into(), None);
    let e = svc
        .with_default_configuration(Some("suport-chat".into()))
        .build()
        .err()
        .expect("an unknown default is an error at start");
    assert_eq!(
        e,
        toolgate_serve::Error::Configuration(
            "--default-configuration: unknown configuration `suport-chat`; did you mean `support-chat`?"
                .into()
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_token_works_only_for_the_search_that_made_it() {
    let s = start_profiles().await;
    let search = |id: &str, page: Value| {
        json!({
            "subject": {"type": "user", "id": id},
            "action": {"name": "offer"},
            "resource": {"type": "tool"},
            "context": {"configuration": "support-chat"},
            "page": page,
        })
    };
    let a = s
        .post_json(
            "/access/v1/search/resource",
            &search("alice", json!({"limit": 2})),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.text);
    let token = a.json["page"]["next_token"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(!token.is_empty());
    let next = s
        .post_json(
            "/access/v1/search/resource",
            &search("alice", json!({"limit": 2, "token": token})),
        )
        .await;
    assert_eq!(next.status, 200, "{}", next.text);
    let other = s
        .post_json(
            "/access/v1/search/resource",
            &search("mallory", json!({"limit": 2, "token": token})),
        )
        .await;
    assert_eq!(code(&other), (400, json!("badPageToken")), "{}", other.text);
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_json_bodies_are_decided() {
    let s = start_profiles().await;
    let body = ask(json!("support-bot"), "refund.issue").to_string();
    for ct in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        None,
    ] {
        let mut r = s
            .client
            .post(format!("{}/access/v1/evaluation", s.base))
            .body(body.clone());
        if let Some(ct) = ct {
            r = r.header("content-type", ct);
        }
        let r = r.send().await.expect("request");
        assert_eq!(r.status().as_u16(), 415, "{ct:?}");
        assert!(r.headers().get("access-control-allow-origin").is_none());
    }
    let r = s
        .client
        .post(format!("{}/access/v1/evaluation", s.base))
        .header("content-type", "application/json; charset=utf-8")
        .body(body)
        .send()
        .await
        .expect("request");
    assert_eq!(r.status().as_u16(), 200);
    s.stop().await;
}

async fn closed_within(stream: &mut tokio::net::TcpStream, within: Duration) -> bool {
    let mut buf = [0u8; 512];
    matches!(
        tokio::time::timeout(within, async {
            loop {
                match stream.read(&mut buf).await {
                    Ok(0) | Err(_) => return true,
                    Ok(_) => continue,
                }
            }
        })
        .await,
        Ok(true)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stalled_idle_and_surplus_connections_are_closed() {
    let limits = RequestLimits {
        max_connections: 3,
        header_timeout: Duration::from_millis(300),
        ..RequestLimits::default()
    };
    let source = profiles_source();
    let t = source.load().expect("compiles");
    let s = start(t, Some(source), limits, None).await;
    let addr = s.base.trim_start_matches("http://").to_string();
    // Headers that never finish, and a connection that says nothing.
    let mut stalled = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    stalled
        .write_all(b"POST /access/v1/evaluation HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        .await
        .expect("write");
    let mut idle = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    let mut third = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    tokio::time::sleep(Duration::from_millis(50)).await;
    // A fourth is over the limit: closed at once.
    let mut surplus = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    assert!(closed_within(&mut surplus, Duration::from_millis(200)).await);
    assert!(closed_within(&mut stalled, Duration::from_secs(2)).await);
    assert!(closed_within(&mut idle, Duration::from_secs(2)).await);
    assert!(closed_within(&mut third, Duration::from_secs(2)).await);
    // The slots are free again, and the refusal was counted.
    let m = s.get("/metrics").await;
    assert_eq!(m.status, 200);
    assert!(
        m.text.contains("toolgate_connections_refused_total 1"),
        "{}",
        m.text
    );
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_trickles_past_the_deadline_is_408() {
    let limits = RequestLimits {
        request_timeout: Duration::from_millis(300),
        ..RequestLimits::default()
    };
    let source = profiles_source();
    let t = source.load().expect("compiles");
    let s = start(t, Some(source), limits, None).await;
    let addr = s.base.trim_start_matches("http://").to_string();
    let body = ask(json!("support-bot"), "refund.issue").to_string();
    let mut slow = tokio::net::TcpStream::connect(&addr)
        .await
        .expect("connect");
    let head = format!(
        "POST /access/v1/evaluation HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    slow.write_all(head.as_bytes()).await.expect("write");
    slow.write_all(&body.as_bytes()[..5]).await.expect("write");
    let mut answer = String::new();
    let read = tokio::time::timeout(Duration::from_secs(3), slow.read_to_string(&mut answer)).await;
    assert!(read.is_ok(), "no answer within the deadline");
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    s.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_is_capped_and_a_log_record_bounded() {
    let dir = tempfile::tempdir().expect("a directory");
    let log = dir.path().join("decisions.jsonl");
    let limits = RequestLimits {
        max_answer_bytes: 8 << 10,
        ..RequestLimits::default()
    };
    let source = profiles_source();
    let t = source.load().expect("compiles");
    let s = start(
        t,
        Some(source),
        limits,
        Some((LogTarget::File(log.clone()), 1000)),
    )
    .await;
    // A stored run of 40 KB in the defaults, and refusals in every answer.
    let names: Vec<String> = (0..2000).map(|i| format!("excluded_tool_{i:05}")).collect();
    let run = json!({"allowedToolNames": null, "excludedToolNames": names});
    let items: Vec<Value> = (0..40)
        .map(|_| json!({"resource": {"type": "tool", "id": "refund.issue"}}))
        .collect();
    let batch = json!({
        "subject": {"type": "user", "id": "alice", "properties": {"consumer": "support-bot"}},
        "action": {"name": "call"},
        "context": {"configuration": "support-chat", "run": run},
        "evaluations": items,
        "options": {"toolgate_context": true},
    });
    let a = s.post_json("/access/v1/evaluations", &batch).await;
    assert_eq!(
        code(&a),
        (400, json!("answerTooLarge")),
        "{}",
        &a.text[..a.text.len().min(300)]
    );
    assert_eq!(
        a.json["error"]["message"],
        "the answer would be over 8192 bytes: ask for fewer evaluations, or leave the refusals out (options.refusals: false)"
    );
    let mut few = batch.clone();
    few["evaluations"] = json!([{"resource": {"type": "tool", "id": "refund.issue"}}]);
    let a = s.post_json("/access/v1/evaluations", &few).await;
    assert_eq!(a.status, 200, "{}", &a.text[..a.text.len().min(300)]);
    s.stop().await;
    let text = std::fs::read_to_string(&log).expect("the log");
    let last: Value = serde_json::from_str(text.lines().last().expect("a record")).expect("JSON");
    assert!(text
        .lines()
        .all(|l| l.len() <= toolgate_serve::decision_log::MAX_RECORD_BYTES));
    let run = last["input"]["context"]["run"].as_str().unwrap_or_default();
    assert!(
        run.starts_with("[cut: ") && run.ends_with(" bytes, over the record cap of 16384]"),
        "{run}"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&log)
            .expect("metadata")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_default_a_caller_may_not_claim_admin_or_set_the_enforcement() {
    let s = start_profiles_default_trust().await;
    let mut b = ask(json!("support-bot"), "refund.issue");
    b["subject"]["properties"]["role"] = json!("admin");
    let a = s.post_json("/access/v1/evaluation", &b).await;
    assert_eq!(code(&a), (403, json!("roleNotAllowed")), "{}", a.text);
    assert_eq!(
        a.json["error"]["message"],
        "a caller may not claim the role `admin` here (the service lets callers claim: user, none; see --pep-roles)"
    );
    let mut b = ask(json!("support-bot"), "refund.issue");
    b["context"]["enforcement"] = json!("observe");
    let a = s.post_json("/access/v1/evaluation", &b).await;
    assert_eq!(
        code(&a),
        (403, json!("enforcementNotAllowed")),
        "{}",
        a.text
    );
    // The same lists: a hidden remote name cannot be had by claiming admin.
    let u = json!({"subject": {"type": "user", "id": "alice", "properties": {"role": "admin"}},
                   "context": {"configuration": "support-chat"}});
    let a = s.post_json("/toolgate/v1/unavailable", &u).await;
    assert_eq!(code(&a), (403, json!("roleNotAllowed")), "{}", a.text);
    let a = s
        .post_json(
            "/access/v1/evaluation",
            &ask(json!("support-bot"), "refund.issue"),
        )
        .await;
    assert_eq!(a.status, 200);
    s.stop().await;
}

/// The request and answer shapes the OpenID AuthZEN interop harnesses
/// check (openid/authzen, interop/*/test: members beside `type` and `id` in
/// the subject and the resource, no `context`, `{"decision": bool}` back;
/// batches and searches likewise), written here in toolgate's vocabulary.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shapes_the_authzen_interop_harnesses_send_are_answered() {
    let source = profiles_source();
    let t = source.load().expect("compiles");
    let s = start_with(t, Some(source), RequestLimits::default(), None, |svc| {
        svc.with_default_configuration(Some("support-chat".into()))
    })
    .await;
    let one = json!({
        "subject": {"type": "user", "id": "rick@example.com", "identity": "CiRmZDA2MTRk"},
        "action": {"name": "call"},
        "resource": {"type": "tool", "id": "get_help_article", "ownerID": "rick@example.com"},
    });
    let a = s.post_json("/access/v1/evaluation", &one).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.json["decision"], json!(true));
    let batch = json!({
        "subject": {"type": "user", "id": "rick@example.com", "identity": "CiRmZDA2MTRk"},
        "action": {"name": "call"},
        "evaluations": [
            {"resource": {"type": "tool", "id": "get_help_article", "userID": "x"}},
            {"resource": {"type": "tool", "id": "no_such_tool"}},
        ],
    });
    let a = s.post_json("/access/v1/evaluations", &batch).await;
    assert_eq!(a.status, 200, "{}", a.text);
    let decisions: Vec<Value> = a.json["evaluations"]
        .as_array()
        .map(|v| v.iter().map(|e| e["decision"].clone()).collect())
        .unwrap_or_default();
    assert_eq!(decisions, vec![json!(true), json!(false)]);
    let search = json!({
        "subject": {"type": "user", "id": "rick@example.com"},
        "action": {"name": "offer"},
        "resource": {"type": "tool"},
        "page": {"limit": 1},
    });
    let a = s.post_json("/access/v1/search/resource", &search).await;
    assert_eq!(a.status, 200, "{}", a.text);
    assert_eq!(a.json["results"].as_array().map(Vec::len), Some(1));
    assert!(a.json["page"]["next_token"].is_string());
    // Their subject and resource types are another application's: refused
    // by name, never decided.
    let todo = json!({"subject": {"type": "identity", "id": "x"}, "action": {"name": "GET"},
                      "resource": {"type": "route", "id": "/todos"}});
    let a = s.post_json("/access/v1/evaluation", &todo).await;
    assert_eq!(a.status, 400);
    assert_eq!(a.json["decision"], Value::Null);
    s.stop().await;
}
