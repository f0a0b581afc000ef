//! What goes between a client and an upstream besides tools, relayed only
//! for servers the caller sees: resources, templates and prompts;
//! progress under the client's token and cancels; an upstream's
//! elicitation, sampling and roots requests; completions, log levels and
//! subscriptions; and a 2026-07-28 upstream's input requests.

use std::process::Command;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::RoleClient;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{json, Value};

use crate::common::*;
use crate::support::*;

/// Resources, templates and prompts are relayed under the same governance
/// as tools: a caller sees a server's only when it is offered one of the
/// server's tools, and a hidden one answers exactly as a nonexistent one.
#[test]
fn resources_and_prompts_are_relayed_only_for_servers_the_caller_sees() {
    use rmcp::model::{GetPromptRequestParams, ReadResourceRequestParams};
    let dir = temp("gw-resources");
    let project = crm_project("gw-resources-project");
    // support-bot is offered no crm tool; billing-bot all of them.
    let policy = CRM_POLICY.replace(
        "consumer support-bot { profile support-readonly }",
        "profile nothing { allow [] }\nconsumer support-bot { profile nothing }",
    );
    assert_ne!(policy, CRM_POLICY);
    std::fs::write(project.join("policy.tg"), policy).unwrap();
    let log = dir.join("calls.log");
    let upstream = crm_upstream_logged(&log);
    let cfg = config(&dir, &project, &upstream, "");
    let gw = start(&cfg).unwrap_or_else(|e| panic!("the gateway did not start:\n{e}"));
    runtime().block_on(async {
        let seen = client(&gw.url, BILLING_KEY, ProtocolVersion::V_2026_07_28).await;
        let p = seen.peer();
        let uris: Vec<String> = p
            .list_all_resources()
            .await
            .unwrap()
            .into_iter()
            .map(|r| r.uri)
            .collect();
        assert_eq!(uris, ["crm://policy/refunds"]);
        let templates: Vec<String> = p
            .list_all_resource_templates()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.uri_template)
            .collect();
        assert_eq!(templates, ["crm://customers/{id}"]);
        let prompts: Vec<String> = p
            .list_all_prompts()
            .await
            .unwrap()
            .into_iter()
            .map(|p| p.name)
            .collect();
        assert_eq!(prompts, ["mcp_crm_summary"]);
        for uri in ["crm://policy/refunds", "crm://customers/42"] {
            let r = p
                .read_resource(ReadResourceRequestParams::new(uri))
                .await
                .unwrap();
            let v = serde_json::to_value(&r.contents).unwrap();
            assert_eq!(v[0]["text"], json!(format!("contents of {uri}")), "{v}");
        }
        let args = json!({"id": "7"}).as_object().cloned().unwrap();
        let g = p
            .get_prompt(GetPromptRequestParams::new("mcp_crm_summary").with_arguments(args.clone()))
            .await
            .unwrap();
        assert_eq!(
            serde_json::to_value(&g.messages).unwrap()[0]["content"]["text"],
            json!("Summarise customer 7")
        );
        // Resource subscriptions over `subscriptions/listen`: acknowledged
        // as asked, and the server's update of a URI the caller sees relayed.
        let mut sub = p.listen(listened()).await.expect("subscriptions/listen");
        assert_eq!(
            sub.acknowledged().resource_subscriptions,
            listened().resource_subscriptions
        );
        let note = tokio::time::timeout(Duration::from_secs(20), sub.next())
            .await
            .expect("an update within 20 s")
            .expect("the subscription is open")
            .expect("a notification");
        let note = serde_json::to_value(&note).unwrap();
        assert_eq!(
            (note["method"].clone(), note["params"]["uri"].clone()),
            (
                json!("notifications/resources/updated"),
                json!("crm://policy/refunds")
            ),
            "{note}"
        );
        drop(sub);
        let _ = seen.cancel().await;

        let hidden = client(&gw.url, SUPPORT_KEY, ProtocolVersion::V_2026_07_28).await;
        let p = hidden.peer();
        assert!(p.list_all_resources().await.unwrap().is_empty());
        assert!(p.list_all_resource_templates().await.unwrap().is_empty());
        assert!(p.list_all_prompts().await.unwrap().is_empty());
        let error_of = |e: rmcp::ServiceError| match e {
            rmcp::ServiceError::McpError(e) => serde_json::to_value(e).unwrap(),
            other => panic!("{other}"),
        };
        let hidden_read = error_of(
            p.read_resource(ReadResourceRequestParams::new("crm://policy/refunds"))
                .await
                .unwrap_err(),
        );
        let nobodys = error_of(
            p.read_resource(ReadResourceRequestParams::new("nobody://policy/refunds"))
                .await
                .unwrap_err(),
        );
        assert_eq!(
            hidden_read,
            json!({"code": -32602, "message": "Resource not found: crm://policy/refunds"})
        );
        assert_eq!(
            nobodys,
            json!({"code": -32602, "message": "Resource not found: nobody://policy/refunds"})
        );
        let hidden_prompt = error_of(
            p.get_prompt(
                GetPromptRequestParams::new("mcp_crm_summary").with_arguments(args.clone()),
            )
            .await
            .unwrap_err(),
        );
        let no_prompt = error_of(
            p.get_prompt(GetPromptRequestParams::new("mcp_crm_summarx").with_arguments(args))
                .await
                .unwrap_err(),
        );
        assert_eq!(hidden_prompt["code"], no_prompt["code"]);
        assert_eq!(
            hidden_prompt["message"],
            json!("Unknown prompt: mcp_crm_summary")
        );
        assert_eq!(
            no_prompt["message"],
            json!("Unknown prompt: mcp_crm_summarx")
        );
        // The same acknowledgment for a caller who may not know of the
        // server, and nothing relayed to it.
        let mut sub = p.listen(listened()).await.expect("subscriptions/listen");
        assert_eq!(
            sub.acknowledged().resource_subscriptions,
            listened().resource_subscriptions
        );
        let quiet = tokio::time::timeout(Duration::from_secs(2), sub.next()).await;
        assert!(
            quiet.is_err(),
            "a hidden server's update was relayed: {quiet:?}"
        );
        drop(sub);
        let _ = hidden.cancel().await;
    });
    // Only the seeing caller's listen subscribed at the server (a URI
    // nobody lists goes to the one upstream that serves resources).
    let subscribed: Vec<String> = calls_seen(&log)
        .into_iter()
        .filter(|l| l.starts_with("subscribe "))
        .collect();
    assert_eq!(
        subscribed,
        ["subscribe crm://policy/refunds", "subscribe nobody://x"]
    );
    // Only the seeing caller's reads and prompt reached the server.
    let seen: Vec<String> = calls_seen(&log)
        .into_iter()
        .filter(|l| l.starts_with("read ") || l.starts_with("prompt "))
        .collect();
    assert_eq!(
        seen,
        [
            "read crm://policy/refunds",
            "read crm://customers/42",
            "prompt summary"
        ]
    );
    drop(gw);
}

/// What a listener asks for: a resource the crm server lists, and one
/// nobody serves.
fn listened() -> rmcp::model::SubscriptionFilter {
    rmcp::model::SubscriptionFilter::builder()
        .resource_subscriptions(vec![
            "crm://policy/refunds".to_string(),
            "nobody://x".to_string(),
        ])
        .build()
}

/// A client that declared elicitation and never answers: it reports when
/// the question it was asked is cancelled.
struct Pondering {
    config: ClientConfig,
    cancelled: tokio::sync::mpsc::UnboundedSender<()>,
}

impl rmcp::ClientHandler for Pondering {
    async fn create_elicitation(
        &self,
        _: rmcp::model::ElicitRequestParams,
        context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::model::ErrorData> {
        context.ct.cancelled().await;
        let _ = self.cancelled.send(());
        Err(rmcp::model::ErrorData::internal_error("cancelled", None))
    }

    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }
}

/// A client handler that records the progress notifications it gets.
struct Progressed {
    tx: tokio::sync::mpsc::UnboundedSender<Value>,
    config: ClientConfig,
}

impl rmcp::ClientHandler for Progressed {
    fn on_progress(
        &self,
        params: rmcp::model::ProgressNotificationParam,
        _: rmcp::service::NotificationContext<RoleClient>,
    ) -> impl std::future::Future<Output = ()> + Send + '_ {
        let _ = self.tx.send(serde_json::to_value(params).unwrap());
        std::future::ready(())
    }

    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }
}

/// A long call keeps its side channel: the client's progress token reaches
/// the upstream (as one of the gateway's) and the upstream's progress comes
/// back under the client's token; a client that cancels cancels the
/// upstream's work.
#[test]
fn progress_comes_back_under_the_clients_token_and_a_cancel_reaches_the_upstream() {
    let dir = temp("gw-progress");
    let project = crm_project("gw-progress-project");
    let log = dir.join("calls.log");
    let upstream = crm_upstream_logged(&log);
    let cfg = config(&dir, &project, &upstream, "");
    let gw = start(&cfg).unwrap_or_else(|e| panic!("the gateway did not start:\n{e}"));
    runtime().block_on(async {
        progress_round_trips(&gw.url).await;
        // An upstream that asks the client for input or for a completion
        // of its model: refused with the spec's error when the client did
        // not declare the capability, never answered on the user's behalf.
        let ask = |id: &str| {
            let mut p = CallToolRequestParams::new("mcp_crm_customer-360_lookup");
            p.arguments = json!({"id": id}).as_object().cloned();
            p
        };
        let text_of = |r: rmcp::model::CallToolResponse| match r {
            rmcp::model::CallToolResponse::Complete(r) => {
                serde_json::to_value(&r.content).unwrap()[0]["text"].clone()
            }
            other => panic!("{other:?}"),
        };
        let c = client(&gw.url, SUPPORT_KEY, ProtocolVersion::V_2025_11_25).await;
        let r = c.peer().call_tool_once(ask("ask")).await.expect("the call");
        assert_eq!(text_of(r), json!("elicit error -32601"));
        let r = c
            .peer()
            .call_tool_once(ask("sample"))
            .await
            .expect("the call");
        assert_eq!(text_of(r), json!("sample error -32601"));
        let r = c
            .peer()
            .call_tool_once(ask("roots"))
            .await
            .expect("the call");
        assert_eq!(text_of(r), json!("roots error -32601"));
        let _ = c.cancel().await;
        // A client that declared both: the upstream's requests reach it, and
        // its answers reach the upstream as they are.
        let mut config = StreamableHttpClientTransportConfig::with_uri(gw.url.clone());
        config.auth_header = Some(SUPPORT_KEY.to_string());
        let mut capabilities = rmcp::model::ClientCapabilities::default();
        capabilities.elicitation = Some(Default::default());
        capabilities.sampling = Some(Default::default());
        capabilities.roots = Some(Default::default());
        let info = ClientConfig::new(capabilities, Implementation::new("asked", "1"))
            .with_protocol_version(ProtocolVersion::V_2025_11_25);
        let c = rmcp::service::serve_client_with_lifecycle(
            Asked { config: info },
            StreamableHttpClientTransport::from_config(config),
            rmcp::service::ClientLifecycleMode::Initialize,
        )
        .await
        .expect("the MCP handshake");
        let r = c.peer().call_tool_once(ask("ask")).await.expect("the call");
        assert_eq!(text_of(r), json!("elicit accept {\"region\": \"eu\"}"));
        let r = c
            .peer()
            .call_tool_once(ask("sample"))
            .await
            .expect("the call");
        assert_eq!(text_of(r), json!("sampled hello from the client's model"));
        let r = c
            .peer()
            .call_tool_once(ask("roots"))
            .await
            .expect("the call");
        assert_eq!(text_of(r), json!("roots file:///work/"));
        let _ = c.cancel().await;
        // A server that gives up on its question: the client is told so.
        let (tx, mut cancelled) = tokio::sync::mpsc::unbounded_channel();
        let mut config = StreamableHttpClientTransportConfig::with_uri(gw.url.clone());
        config.auth_header = Some(SUPPORT_KEY.to_string());
        let mut capabilities = rmcp::model::ClientCapabilities::default();
        capabilities.elicitation = Some(Default::default());
        let info = ClientConfig::new(capabilities, Implementation::new("pondering", "1"))
            .with_protocol_version(ProtocolVersion::V_2025_11_25);
        let c = rmcp::service::serve_client_with_lifecycle(
            Pondering {
                config: info,
                cancelled: tx,
            },
            StreamableHttpClientTransport::from_config(config),
            rmcp::service::ClientLifecycleMode::Initialize,
        )
        .await
        .expect("the MCP handshake");
        let r = c
            .peer()
            .call_tool_once(ask("ask-briefly"))
            .await
            .expect("the call");
        assert_eq!(text_of(r), json!("elicit abandoned"));
        tokio::time::timeout(Duration::from_secs(10), cancelled.recv())
            .await
            .expect("the client was told within 10 s")
            .expect("the question's cancellation");
        let _ = c.cancel().await;
        // A call the client gives up on: the upstream's work is cancelled.
        let c = client(&gw.url, SUPPORT_KEY, ProtocolVersion::V_2025_11_25).await;
        let mut p = CallToolRequestParams::new("mcp_crm_customer-360_lookup");
        p.arguments = json!({"id": "slow"}).as_object().cloned();
        let gave_up =
            tokio::time::timeout(Duration::from_secs(2), c.peer().call_tool_once(p)).await;
        assert!(gave_up.is_err(), "the slow call answered: {gave_up:?}");
        let deadline = Instant::now() + Duration::from_secs(10);
        while !calls_seen(&log).contains(&"cancelled".to_string()) {
            assert!(
                Instant::now() < deadline,
                "the upstream was not cancelled: {:?}",
                calls_seen(&log)
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let _ = c.cancel().await;
    });
    drop(gw);
}

/// Both client revisions' calls get the upstream's two progress
/// notifications back under the token the client sent.
async fn progress_round_trips(url: &str) {
    for version in [ProtocolVersion::V_2025_11_25, ProtocolVersion::V_2026_07_28] {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
        config.auth_header = Some(SUPPORT_KEY.to_string());
        let info = ClientConfig::new(
            Default::default(),
            Implementation::new("progress-client", "1"),
        )
        .with_protocol_version(version.clone());
        let lifecycle = if version == ProtocolVersion::V_2026_07_28 {
            rmcp::service::ClientLifecycleMode::Discover {
                preferred_versions: vec![version.clone()],
            }
        } else {
            rmcp::service::ClientLifecycleMode::Initialize
        };
        let c = rmcp::service::serve_client_with_lifecycle(
            Progressed { tx, config: info },
            StreamableHttpClientTransport::from_config(config),
            lifecycle,
        )
        .await
        .expect("the MCP handshake");
        let mut p = CallToolRequestParams::new("mcp_crm_customer-360_lookup");
        p.arguments = json!({"id": "7"}).as_object().cloned();
        // The SDK gives each request a progress token of its own: the
        // one it sent is the one progress must come back under.
        let handle = c
            .peer()
            .send_cancellable_request(
                rmcp::model::ClientRequest::CallToolRequest(rmcp::model::CallToolRequest::new(p)),
                rmcp::service::PeerRequestOptions::no_options(),
            )
            .await
            .expect("sent");
        let sent = serde_json::to_value(&handle.progress_token).unwrap();
        let r = handle.await_response().await.expect("the call");
        assert!(
            format!("{r:?}").contains("customer-360_lookup(7) done"),
            "{r:?}"
        );
        let mut got = Vec::new();
        while got.len() < 2 {
            match tokio::time::timeout(Duration::from_secs(10), rx.recv()).await {
                Ok(Some(v)) => got.push(v),
                _ => panic!("{version:?}: progress {got:?}"),
            }
        }
        assert_eq!(
            got,
            [
                json!({"progressToken": sent, "progress": 1.0, "total": 2.0, "message": "half"}),
                json!({"progressToken": sent, "progress": 2.0, "total": 2.0, "message": "done"}),
            ],
            "{version:?}"
        );
        let _ = c.cancel().await;
    }
}

/// An upstream reached on 2026-07-28 relays its progress too. (Over HTTP
/// the crm fixture answers JSON, which carries no notification: a server
/// on 2026-07-28 that sends progress answers a call with an SSE stream.)
#[test]
fn progress_comes_back_from_an_upstream_on_2026_07_28_too() {
    let dir = temp("gw-progress-modern");
    let project = crm_project("gw-progress-modern-project");
    let log = dir.join("calls.log");
    let upstream = format!("{}protocol = \"2026-07-28\"\n", crm_upstream_logged(&log));
    let cfg = config(&dir, &project, &upstream, "");
    let gw = start(&cfg).unwrap_or_else(|e| panic!("the gateway did not start:\n{e}"));
    runtime().block_on(progress_round_trips(&gw.url));
    drop(gw);
}

/// A client handler that records the log messages and resource updates it
/// is sent, as `log DATA` and `updated URI`.
struct Heard {
    tx: tokio::sync::mpsc::UnboundedSender<String>,
    config: ClientConfig,
}

impl rmcp::ClientHandler for Heard {
    #[allow(deprecated)]
    fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _: rmcp::service::NotificationContext<RoleClient>,
    ) -> impl std::future::Future<Output = ()> + Send + '_ {
        let data = params.data.as_str().unwrap_or_default().to_string();
        let _ = self.tx.send(format!("log {data}"));
        std::future::ready(())
    }

    fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _: rmcp::service::NotificationContext<RoleClient>,
    ) -> impl std::future::Future<Output = ()> + Send + '_ {
        let _ = self.tx.send(format!("updated {}", params.uri));
        std::future::ready(())
    }

    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }
}

/// Completions, log levels and subscriptions go to the server only for a
/// caller who sees it, and what the server says outside an answer (a log
/// message, a resource update) reaches only the sessions that see it; a
/// hidden server's prompt or resource answers as one nobody serves.
#[test]
#[allow(deprecated)]
fn completions_logs_and_subscriptions_are_relayed_only_for_servers_the_caller_sees() {
    use rmcp::model::{
        CompleteRequestParams, LoggingLevel, SetLevelRequestParams, SubscribeRequestParams,
        UnsubscribeRequestParams,
    };
    let dir = temp("gw-notify");
    let project = crm_project("gw-notify-project");
    // support-bot is offered no crm tool; billing-bot all of them.
    let policy = CRM_POLICY.replace(
        "consumer support-bot { profile support-readonly }",
        "profile nothing { allow [] }\nconsumer support-bot { profile nothing }",
    );
    std::fs::write(project.join("policy.tg"), policy).unwrap();
    let log = dir.join("calls.log");
    let upstream = crm_upstream_logged(&log);
    let cfg = config(&dir, &project, &upstream, "");
    let gw = start(&cfg).unwrap_or_else(|e| panic!("the gateway did not start:\n{e}"));
    let session = |token: &'static str, tx| {
        let mut config = StreamableHttpClientTransportConfig::with_uri(gw.url.clone());
        config.auth_header = Some(token.to_string());
        let info = ClientConfig::new(Default::default(), Implementation::new("heard", "1"))
            .with_protocol_version(ProtocolVersion::V_2025_11_25);
        rmcp::service::serve_client_with_lifecycle(
            Heard { tx, config: info },
            StreamableHttpClientTransport::from_config(config),
            rmcp::service::ClientLifecycleMode::Initialize,
        )
    };
    let error_of = |e: rmcp::ServiceError| match e {
        rmcp::ServiceError::McpError(e) => serde_json::to_value(e).unwrap(),
        other => panic!("{other}"),
    };
    runtime().block_on(async {
        let (hidden_tx, mut hidden_rx) = tokio::sync::mpsc::unbounded_channel();
        let hidden = session(SUPPORT_KEY, hidden_tx)
            .await
            .expect("the MCP handshake");
        let (seen_tx, mut seen_rx) = tokio::sync::mpsc::unbounded_channel();
        let seen = session(BILLING_KEY, seen_tx)
            .await
            .expect("the MCP handshake");

        // The hidden caller: each answer is the one for a thing nobody serves.
        let h = hidden.peer();
        for uri in ["crm://policy/refunds", "nobody://x"] {
            let e = error_of(
                h.subscribe(SubscribeRequestParams::new(uri))
                    .await
                    .unwrap_err(),
            );
            assert_eq!(
                e,
                json!({"code": -32002, "message": format!("Resource not found: {uri}")})
            );
        }
        let argument = rmcp::model::ArgumentInfo::new("id", "4");
        for name in ["mcp_crm_summary", "mcp_crm_summarx"] {
            let e = error_of(
                h.complete(CompleteRequestParams::new(
                    rmcp::model::Reference::for_prompt(name),
                    argument.clone(),
                ))
                .await
                .unwrap_err(),
            );
            assert_eq!(
                e,
                json!({"code": -32602, "message": format!("Unknown prompt: {name}")})
            );
        }
        h.set_level(SetLevelRequestParams::new(LoggingLevel::Debug))
            .await
            .expect("a level is the session's own");

        // The seeing caller: each reaches the server, under its own names.
        let s = seen.peer();
        let done = s
            .complete(CompleteRequestParams::new(
                rmcp::model::Reference::for_prompt("mcp_crm_summary"),
                argument.clone(),
            ))
            .await
            .expect("a completion");
        assert_eq!(done.completion.values, ["7", "42"]);
        let done = s
            .complete(CompleteRequestParams::new(
                rmcp::model::Reference::for_resource("crm://customers/{id}"),
                argument,
            ))
            .await
            .expect("a completion of a template");
        assert_eq!(done.completion.values, ["7", "42"]);
        s.set_level(SetLevelRequestParams::new(LoggingLevel::Info))
            .await
            .expect("setLevel");
        s.subscribe(SubscribeRequestParams::new("crm://policy/refunds"))
            .await
            .expect("subscribe");
        let mut heard = Vec::new();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        while heard.len() < 2 {
            match tokio::time::timeout_at(deadline, seen_rx.recv()).await {
                Ok(Some(n)) => heard.push(n),
                _ => panic!("the seeing session heard only {heard:?}"),
            }
        }
        heard.sort();
        assert_eq!(
            heard,
            ["log level set to info", "updated crm://policy/refunds"]
        );
        s.unsubscribe(UnsubscribeRequestParams::new("crm://policy/refunds"))
            .await
            .expect("unsubscribe");
        // The hidden session heard nothing of the server.
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert_eq!(hidden_rx.try_recv().ok(), None);
        let _ = hidden.cancel().await;
        let _ = seen.cancel().await;
    });
    let reached: Vec<String> = calls_seen(&log)
        .into_iter()
        .filter(|l| l != "start")
        .collect();
    assert_eq!(
        reached,
        [
            "complete summary",
            "complete crm://customers/{id}",
            "level info",
            "subscribe crm://policy/refunds",
            "unsubscribe crm://policy/refunds"
        ]
    );
    drop(gw);
}

/// An upstream on 2026-07-28 asks for input with an `InputRequiredResult`:
/// a 2026-07-28 client gets it as it is and retries with its answer and
/// the server's sealed `requestState`, untouched; a 2025-11-25 client is
/// asked through `elicitation/create` by the gateway, which retries for it;
/// a client that declared no elicitation gets the spec's `-32601`. The
/// gateway never answers for the user.
#[test]
fn an_upstream_on_2026_07_28_asks_for_input_through_the_gateway() {
    let dir = temp("gw-mrtr");
    let project = bank_project("gw-mrtr-project");
    let log = dir.join("calls.log");
    let upstream = format!(
        "[[upstream]]\nname = \"bank\"\nprotocol = \"2026-07-28\"\ncommand = [{:?}, {:?}]\nenv = {{ BANK_CALL_LOG = {{ value = {:?} }} }}\n",
        python(),
        bank_server(),
        log.to_string_lossy()
    );
    let cfg = config(&dir, &project, &upstream, "");
    let gw = start(&cfg).unwrap_or_else(|e| panic!("the gateway did not start:\n{e}"));
    let transfer = || {
        let mut p = CallToolRequestParams::new("mcp_bank_transfer");
        p.arguments = json!({"amount": "7"}).as_object().cloned();
        p
    };
    let text_of = |r: rmcp::model::CallToolResponse| match r {
        rmcp::model::CallToolResponse::Complete(r) => {
            serde_json::to_value(&r.content).unwrap()[0]["text"].clone()
        }
        other => panic!("{other:?}"),
    };
    let asked = |version| asked_client(&gw.url, BILLING_KEY, version);
    runtime().block_on(async {
        // 2026-07-28: the server's question, as it asked it.
        let c = asked(ProtocolVersion::V_2026_07_28).await.expect("discover");
        let first = c.peer().call_tool_once(transfer()).await.expect("the call");
        let rmcp::model::CallToolResponse::InputRequired(question) = first else {
            panic!("not an InputRequiredResult: {first:?}")
        };
        let requests = serde_json::to_value(&question.input_requests).unwrap();
        assert_eq!(requests["confirm"]["method"], "elicitation/create", "{requests}");
        assert_eq!(requests["confirm"]["params"]["message"], "Transfer 7?");
        let state = question.request_state.clone().expect("a requestState");
        // The retry with the answer and the state as they came: done.
        let mut retry = transfer();
        retry.input_responses = Some(
            [(
                "confirm".to_string(),
                json!({"action": "accept", "content": {"ok": true}}),
            )]
            .into_iter()
            .collect(),
        );
        retry.request_state = Some(state.clone());
        let r = c.peer().call_tool_once(retry.clone()).await.expect("the retry");
        assert_eq!(
            text_of(r),
            json!("transfer 7: accept {\"ok\": true} (2026-07-28)")
        );
        // A state changed on the way is the server's to refuse (it sealed it).
        retry.request_state = Some(format!("{state}x"));
        let forged = c.peer().call_tool_once(retry).await;
        assert!(
            matches!(forged, Err(rmcp::ServiceError::McpError(_))),
            "a forged requestState was accepted: {forged:?}"
        );
        // The SDK's own driver answers through the client's handler.
        let r = c.call_tool(transfer()).await.expect("the rounds");
        assert_eq!(
            serde_json::to_value(&r.content).unwrap()[0]["text"],
            json!("transfer 7: accept {\"region\": \"eu\"} (2026-07-28)")
        );
        let _ = c.cancel().await;
        // 2025-11-25: asked through elicitation by the gateway, on the
        // call's own stream; the gateway retries with the client's answer.
        let c = asked(ProtocolVersion::V_2025_11_25).await.expect("initialize");
        let r = c.peer().call_tool_once(transfer()).await.expect("the call");
        assert_eq!(
            text_of(r),
            json!("transfer 7: accept {\"region\": \"eu\"} (2026-07-28)")
        );
        let _ = c.cancel().await;
        // A 2025-11-25 client that declared no elicitation: refused.
        let c = client(&gw.url, BILLING_KEY, ProtocolVersion::V_2025_11_25).await;
        match c.peer().call_tool_once(transfer()).await {
            Err(rmcp::ServiceError::McpError(e)) => assert_eq!(
                (e.code.0, e.message.as_ref()),
                (
                    -32601,
                    "elicitation/create: the client of this call does not offer it through this gateway"
                )
            ),
            other => panic!("{other:?}"),
        }
        let _ = c.cancel().await;
    });
    // The official Python client on both revisions: its own round driver
    // on 2026-07-28, the gateway's elicitation on 2025-11-25; each answer
    // from its callback.
    let script = fixture("python_input_client.py");
    for (mode, protocol) in [("auto", "2026-07-28"), ("legacy", "2025-11-25")] {
        let o = Command::new(python())
            .arg(&script)
            .args([&gw.url, BILLING_KEY, mode])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{mode}: {}", stderr(&o));
        assert_eq!(
            serde_json::from_str::<Value>(stdout(&o).trim()).unwrap(),
            json!({"protocol": protocol, "asked": ["Transfer 7?"],
                   "text": ["transfer 7: accept {\"ok\": true} (2026-07-28)"]}),
            "{mode}"
        );
    }
    // Every answer came from a client: six first rounds, five second.
    let rounds = calls_seen(&log);
    assert_eq!(
        rounds.iter().filter(|l| l.starts_with("round 1 7")).count(),
        6,
        "{rounds:?}"
    );
    assert_eq!(
        rounds.iter().filter(|l| *l == "round 2 7 accept").count(),
        5,
        "{rounds:?}"
    );
    drop(gw);
}
