//! OpenTelemetry from `toolgate gateway` and `toolgate serve`
//! (docs/observability.md), sent to a real OTLP receiver on 127.0.0.1 built
//! on the official OpenTelemetry protobuf definitions
//! (gateway/tests/fixtures/otlp_receiver.py: opentelemetry-proto and grpcio, from
//! the venv `.ci/run` makes; without it these tests FAIL). What arrives is
//! asserted exactly: span names, kinds, attributes, the parent/child links
//! from a client's `traceparent` through the gateway to the upstream, the
//! decision findings, metrics and log records, and that no name the caller
//! may not see is in any of them.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{json, Value};

use super::gateway::{crm_project, start};
use crate::common::*;
use crate::support::{
    config, crm_upstream, fixture, free_port, post, python, runtime, ADMIN_KEY, SUPPORT_KEY,
};

/// The client's trace: `00-TRACE-SPAN-01`.
const TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN: &str = "00f067aa0ba902b7";

/// A receiver writing what it takes to `out`; killed when dropped.
struct Receiver {
    child: Child,
    port: u16,
    out: PathBuf,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn receiver(dir: &Path, kind: &str) -> Receiver {
    let out = dir.join(format!("otlp-{kind}.jsonl"));
    let script = fixture("otlp_receiver.py");
    let mut child = Command::new(python())
        .arg(&script)
        .arg(&out)
        .arg(kind)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the OTLP receiver (opentelemetry-proto, grpcio in TOOLGATE_MCP_BIN's venv)");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the receiver's port");
    let port = line
        .trim()
        .strip_prefix("listening ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("the receiver did not start: {line:?}"));
    Receiver { child, port, out }
}

/// Every export request the receiver took, as `(signal, body)`.
fn received(r: &Receiver) -> Vec<(String, Value)> {
    let text = std::fs::read_to_string(&r.out).unwrap_or_default();
    text.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("a JSON line");
            (v["signal"].as_str().unwrap().to_string(), v["body"].clone())
        })
        .collect()
}

/// Wait until `done` holds of what was received (at most 20 s).
fn wait_for(r: &Receiver, what: &str, done: impl Fn(&[(String, Value)]) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while Instant::now() < deadline {
        if done(&received(r)) {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("{what}: not received within 20 s:\n{:#?}", received(r));
}

/// The spans received, flattened.
fn spans(all: &[(String, Value)]) -> Vec<Value> {
    let mut out = Vec::new();
    for (signal, body) in all {
        if signal != "traces" {
            continue;
        }
        for rs in body["resourceSpans"].as_array().into_iter().flatten() {
            for ss in rs["scopeSpans"].as_array().into_iter().flatten() {
                for s in ss["spans"].as_array().into_iter().flatten() {
                    let mut s = s.clone();
                    s["resource"] = rs["resource"].clone();
                    out.push(s);
                }
            }
        }
    }
    out
}

/// An attribute list as a map of key to its value's JSON (string values
/// as plain strings).
fn attrs(list: &Value) -> serde_json::Map<String, Value> {
    let mut out = serde_json::Map::new();
    for a in list.as_array().into_iter().flatten() {
        let v = &a["value"];
        let v = v
            .get("stringValue")
            .or_else(|| v.get("boolValue"))
            .or_else(|| v.get("intValue"))
            .cloned()
            .unwrap_or_else(|| v.clone());
        out.insert(a["key"].as_str().unwrap().to_string(), v);
    }
    out
}

fn hex_id(b64: &Value) -> String {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64.as_str().unwrap_or_default())
        .expect("base64");
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn named<'a>(spans: &'a [Value], name: &str) -> &'a Value {
    spans.iter().find(|s| s["name"] == name).unwrap_or_else(|| {
        let names: Vec<_> = spans.iter().map(|s| s["name"].clone()).collect();
        panic!("no span {name:?} among {names:?}")
    })
}

fn call_request(id: u64, tool: &str, traceparent: Option<&str>) -> Value {
    let mut meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}});
    if let Some(t) = traceparent {
        meta["traceparent"] = json!(t);
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": tool, "arguments": {"id": "7"}, "_meta": meta}})
}

/// Fast export for the tests: batches every 100 ms, metrics every 200 ms.
fn fast() -> Vec<(&'static str, String)> {
    vec![
        ("OTEL_BSP_SCHEDULE_DELAY", "100".into()),
        ("OTEL_BLRP_SCHEDULE_DELAY", "100".into()),
        ("OTEL_METRIC_EXPORT_INTERVAL", "200".into()),
    ]
}

/// A project over the crm server whose remote tools only admins may see
/// by name: a refused remote tool is hidden from a user.
fn hidden_project(name: &str) -> PathBuf {
    let project = crm_project(name, &[]);
    let policy = std::fs::read_to_string(project.join("policy.tg")).unwrap();
    std::fs::write(
        project.join("policy.tg"),
        policy.replace(
            "remote-tools visible-to everyone",
            "remote-tools visible-to admins",
        ),
    )
    .unwrap();
    project
}

#[test]
fn a_call_through_the_gateway_is_one_trace_from_the_client_to_the_upstream_with_its_decision() {
    let dir = temp("otel-gw");
    let r = receiver(&dir, "http");
    let project = hidden_project("otel-gw-project");
    let traces = dir.join("upstream-traces.log");
    let upstream = crm_upstream().replace(
        "command = [",
        &format!(
            "env = {{ CRM_TRACE_LOG = {{ value = {:?} }} }}\ncommand = [",
            traces.to_string_lossy()
        ),
    );
    let cfg = config(
        &dir,
        &project,
        &upstream,
        &format!("[telemetry]\nendpoint = \"http://127.0.0.1:{}\"\n", r.port),
    );
    let gw = start(&cfg, &fast()).unwrap_or_else(|e| panic!("the gateway did not start:\n{e}"));
    // The digest of the table the gateway compiled, as `compile` reports it.
    let digest = {
        let out = dir.join("policy.tgt");
        let o = toolgate(&project, &["compile", ".", "-o", out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let e = stderr(&o);
        e.split("digest ").nth(1).unwrap()[..64].to_string()
    };
    let url = gw.url.clone();
    let support = format!("Bearer {SUPPORT_KEY}");
    let traceparent = format!("00-{TRACE}-{CLIENT_SPAN}-01");
    runtime().block_on(async {
        let (status, _, body) = post(
            &url,
            &[("authorization", &support)],
            call_request(1, "mcp_crm_customer-360_lookup", Some(&traceparent)),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        // refund_issue is not in support-bot's profile, and a user may not
        // see remote names: refused, and its name goes nowhere.
        let (status, _, body) = post(
            &url,
            &[("authorization", &support)],
            call_request(2, "mcp_crm_refund_issue", None),
        )
        .await;
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("-32602"), "{body}");
        let mut read = call_request(3, "", None);
        read["method"] = json!("resources/read");
        read["params"] = json!({"uri": "crm://policy/refunds", "_meta": read["params"]["_meta"]});
        let (status, _, body) = post(
            &url,
            &[
                ("authorization", &support),
                ("mcp-method", "resources/read"),
                ("mcp-name", "crm://policy/refunds"),
            ],
            read,
        )
        .await;
        assert_eq!(status, 200, "{body}");
        assert!(body.contains("crm://policy/refunds"), "{body}");
    });
    // Metrics go out every 200 ms here: wait for the export after both calls.
    wait_for(&r, "the two calls' spans and durations", |all| {
        spans(all)
            .iter()
            .filter(|s| s["kind"] == "SPAN_KIND_SERVER")
            .count()
            >= 3
            && all
                .iter()
                .any(|(s, b)| s == "metrics" && b.to_string().contains("-32602"))
    });
    gw.stop();

    let all = received(&r);
    let spans = spans(&all);
    // The SERVER span continues the client's trace.
    let server = named(&spans, "tools/call mcp_crm_customer-360_lookup");
    assert_eq!(server["kind"], "SPAN_KIND_SERVER");
    assert_eq!(hex_id(&server["traceId"]), TRACE);
    assert_eq!(hex_id(&server["parentSpanId"]), CLIENT_SPAN);
    let a = attrs(&server["attributes"]);
    assert_eq!(a["mcp.method.name"], "tools/call");
    assert_eq!(a["gen_ai.tool.name"], "mcp_crm_customer-360_lookup");
    assert_eq!(a["gen_ai.operation.name"], "execute_tool");
    assert_eq!(a["jsonrpc.request.id"], "1");
    assert_eq!(a["mcp.protocol.version"], "2026-07-28");
    assert_eq!(a["toolgate.configuration"], "support-chat");
    assert!(!a.contains_key("error.type"), "{a:?}");
    assert!(
        !a.contains_key("gen_ai.tool.call.arguments"),
        "arguments only when opted in"
    );
    let resource = attrs(&server["resource"]["attributes"]);
    assert_eq!(resource["service.name"], "toolgate-gateway");
    // The decision, a finding on it.
    let [finding] = server["events"].as_array().unwrap().as_slice() else {
        panic!("one event: {server:#}");
    };
    assert_eq!(finding["name"], "gen_ai.security.finding");
    let f = attrs(&finding["attributes"]);
    assert_eq!(f["gen_ai.security.decision.type"], "allow");
    assert_eq!(f["gen_ai.security.policy.id"], "support-chat");
    assert_eq!(f["gen_ai.security.policy.version"], digest.as_str());
    assert_eq!(f["gen_ai.security.target.type"], "tool_call");
    assert_eq!(
        f["gen_ai.security.target.id"],
        "mcp_crm_customer-360_lookup"
    );
    assert!(!f.contains_key("gen_ai.security.decision.reason"));
    // The CLIENT span toward the upstream is its child, under the
    // server's own name of the tool, and its context reached the server.
    let client = named(&spans, "tools/call customer-360_lookup");
    assert_eq!(client["kind"], "SPAN_KIND_CLIENT");
    assert_eq!(hex_id(&client["traceId"]), TRACE);
    assert_eq!(client["parentSpanId"], server["spanId"]);
    assert_eq!(attrs(&client["attributes"])["toolgate.upstream"], "crm");
    let seen = std::fs::read_to_string(&traces).unwrap();
    assert_eq!(
        seen.lines().collect::<Vec<_>>(),
        [format!("00-{TRACE}-{}-01", hex_id(&client["spanId"]))],
        "the upstream received the CLIENT span's traceparent"
    );
    // A read: named by its URI once the caller was let read it.
    let read = spans
        .iter()
        .find(|s| {
            s["name"] == "resources/read crm://policy/refunds" && s["kind"] == "SPAN_KIND_SERVER"
        })
        .expect("the read's SERVER span");
    let upstream_read = spans
        .iter()
        .find(|s| {
            s["name"] == "resources/read crm://policy/refunds" && s["kind"] == "SPAN_KIND_CLIENT"
        })
        .expect("the read's CLIENT span");
    assert_eq!(upstream_read["parentSpanId"], read["spanId"]);
    let a = attrs(&read["attributes"]);
    assert_eq!(
        (&a["mcp.method.name"], &a["mcp.resource.uri"]),
        (&json!("resources/read"), &json!("crm://policy/refunds"))
    );
    // The refused call: its SERVER span names no tool, a new trace.
    let refused = spans
        .iter()
        .find(|s| s["name"] == "tools/call" && s["kind"] == "SPAN_KIND_SERVER")
        .expect("the refused call's span");
    let a = attrs(&refused["attributes"]);
    assert!(!a.contains_key("gen_ai.tool.name"), "{a:?}");
    assert_eq!(a["error.type"], "-32602");
    assert_eq!(a["rpc.response.status_code"], "-32602");
    assert_eq!(refused["status"]["code"], "STATUS_CODE_ERROR");
    let f = attrs(&refused["events"][0]["attributes"]);
    assert_eq!(f["gen_ai.security.decision.type"], "deny");
    assert_eq!(f["gen_ai.security.decision.reason"], "notInProfile");
    assert!(!f.contains_key("gen_ai.security.target.id"), "{f:?}");
    // Metrics: the MCP durations and the decisions, no tool names.
    let metrics: Vec<&Value> = all
        .iter()
        .filter(|(s, _)| s == "metrics")
        .flat_map(|(_, b)| b["resourceMetrics"].as_array().unwrap())
        .flat_map(|rm| rm["scopeMetrics"].as_array().unwrap())
        .flat_map(|sm| sm["metrics"].as_array().unwrap())
        .collect();
    let duration = metrics
        .iter()
        .find(|m| m["name"] == "mcp.server.operation.duration")
        .expect("mcp.server.operation.duration");
    assert_eq!(duration["unit"], "s");
    let points = duration["histogram"]["dataPoints"].as_array().unwrap();
    assert!(points.iter().any(|p| {
        let a = attrs(&p["attributes"]);
        a.get("mcp.method.name") == Some(&json!("tools/call")) && !a.contains_key("error.type")
    }));
    assert!(points
        .iter()
        .any(|p| attrs(&p["attributes"]).get("error.type") == Some(&json!("-32602"))));
    assert!(metrics
        .iter()
        .any(|m| m["name"] == "mcp.client.operation.duration"));
    let decisions = metrics
        .iter()
        .filter(|m| m["name"] == "toolgate.decisions")
        .flat_map(|m| m["sum"]["dataPoints"].as_array().unwrap())
        .map(|p| attrs(&p["attributes"]))
        .collect::<Vec<_>>();
    assert!(decisions
        .iter()
        .any(|a| a["toolgate.stage"] == "call" && a["toolgate.reason"] == "allowed"));
    assert!(decisions
        .iter()
        .any(|a| a["toolgate.stage"] == "call" && a["toolgate.reason"] == "notInProfile"));
    // Logs: the decision records, the hidden tool as `(hidden)`.
    let records: Vec<Value> = all
        .iter()
        .filter(|(s, _)| s == "logs")
        .flat_map(|(_, b)| b["resourceLogs"].as_array().unwrap().clone())
        .flat_map(|rl| rl["scopeLogs"].as_array().unwrap().clone())
        .flat_map(|sl| sl["logRecords"].as_array().unwrap().clone())
        .collect();
    let bodies: Vec<Value> = records
        .iter()
        .map(|r| {
            assert_eq!(r["eventName"], "toolgate.decision");
            assert_eq!(r["severityText"], "INFO");
            serde_json::from_str(r["body"]["stringValue"].as_str().unwrap()).unwrap()
        })
        .collect();
    let calls: Vec<(&str, &str, bool)> = bodies
        .iter()
        .filter(|b| b["stage"] == "call")
        .map(|b| {
            (
                b["input"]["resource"]["id"].as_str().unwrap(),
                b["table_digest"].as_str().unwrap(),
                b["result"]["decision"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("mcp_crm_customer-360_lookup", digest.as_str(), true),
            ("(hidden)", digest.as_str(), false)
        ]
    );
    // Nothing anywhere names the tool the caller may not see.
    let everything = std::fs::read_to_string(&r.out).unwrap();
    assert!(
        !everything.contains("refund_issue"),
        "a hidden name was exported"
    );
}

#[test]
fn over_grpc_and_with_true_names_the_operator_receives_what_it_asked_for() {
    let dir = temp("otel-grpc");
    let r = receiver(&dir, "grpc");
    let project = hidden_project("otel-grpc-project");
    let cfg = config(
        &dir,
        &project,
        &crm_upstream(),
        &format!(
            "[telemetry]\nendpoint = \"http://127.0.0.1:{}\"\nprotocol = \"grpc\"\ntrue-names = true\nrecord-arguments = true\nservice-name = \"edge-gw\"\n",
            r.port
        ),
    );
    let gw = start(&cfg, &fast()).unwrap_or_else(|e| panic!("the gateway did not start:\n{e}"));
    let url = gw.url.clone();
    let support = format!("Bearer {SUPPORT_KEY}");
    runtime().block_on(async {
        let (status, _, body) = post(
            &url,
            &[("authorization", &support)],
            call_request(5, "mcp_crm_refund_issue", None),
        )
        .await;
        assert_eq!(status, 200, "{body}");
    });
    wait_for(&r, "the call's span over gRPC", |all| {
        !spans(all).is_empty()
    });
    gw.stop();
    let spans = spans(&received(&r));
    let s = named(&spans, "tools/call mcp_crm_refund_issue");
    let a = attrs(&s["attributes"]);
    assert_eq!(a["gen_ai.tool.name"], "mcp_crm_refund_issue");
    assert_eq!(a["gen_ai.tool.call.arguments"], r#"{"id":"7"}"#);
    assert_eq!(
        attrs(&s["resource"]["attributes"])["service.name"],
        "edge-gw"
    );
    let f = attrs(&s["events"][0]["attributes"]);
    assert_eq!(f["gen_ai.security.target.id"], "mcp_crm_refund_issue");
    let everything = std::fs::read_to_string(&r.out).unwrap();
    assert!(
        everything.contains("\\\"id\\\":\\\"mcp_crm_refund_issue\\\""),
        "the log record keeps the true name"
    );
}

#[test]
fn a_collector_that_is_down_costs_a_call_nothing_and_what_is_lost_is_counted() {
    let dir = temp("otel-down");
    let project = crm_project("otel-down-project", &[]);
    // Nothing listens there.
    let port = free_port();
    let cfg = config(
        &dir,
        &project,
        &crm_upstream(),
        &format!("[telemetry]\nendpoint = \"http://127.0.0.1:{port}\"\n"),
    );
    let gw = start(&cfg, &fast()).unwrap_or_else(|e| panic!("the gateway did not start:\n{e}"));
    let url = gw.url.clone();
    let support = format!("Bearer {SUPPORT_KEY}");
    let admin = format!("Bearer {ADMIN_KEY}");
    runtime().block_on(async {
        for i in 0..20 {
            let (status, _, body) = post(
                &url,
                &[("authorization", &support)],
                call_request(i, "mcp_crm_customer-360_lookup", None),
            )
            .await;
            assert_eq!(status, 200, "{body}");
            assert!(body.contains("\"result\""), "{body}");
        }
        let metrics_url = url.replace("/mcp", "/metrics");
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let text = reqwest::Client::new()
                .get(&metrics_url)
                .header("authorization", &admin)
                .send()
                .await
                .unwrap()
                .text()
                .await
                .unwrap();
            let dropped: u64 = text
                .lines()
                .find_map(|l| l.strip_prefix("toolgate_otel_dropped_spans_total "))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            if dropped >= 40 {
                // The one duration of each call, on /metrics too.
                for line in [
                    "toolgate_gateway_mcp_server_operation_duration_seconds_count{method=\"tools/call\",error_type=\"\"} 20",
                    "toolgate_gateway_mcp_client_operation_duration_seconds_count{method=\"tools/call\",error_type=\"\"} 20",
                ] {
                    assert!(text.lines().any(|l| l == line), "{line}\n{text}");
                }
                break;
            }
            assert!(
                Instant::now() < deadline,
                "spans lost were not counted:\n{text}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    gw.stop();
}

#[test]
fn serve_continues_its_callers_trace_from_the_standard_variables_and_reports_observe_mode_as_audit()
{
    let dir = temp("otel-serve");
    let r = receiver(&dir, "http");
    // Observe mode: read_source is above global-chat's ceiling, offered
    // only because the zone is observed.
    let project = root().join("policies/trust-zones");
    let mut env = fast();
    env.push((
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        format!("http://127.0.0.1:{}", r.port),
    ));
    env.push(("OTEL_SERVICE_NAME", "authz-1".into()));
    let served =
        crate::common::serve::serve_with_env(&["--project", project.to_str().unwrap()], &env);
    let ask = |tool: &str, traceparent: &str| {
        let body = format!(
            r#"{{"subject":{{"type":"user","id":"alice"}},"action":{{"name":"call"}},"resource":{{"type":"tool","id":"{tool}"}},"context":{{"configuration":"global-chat"}}}}"#
        );
        let answer = served.evaluate(&format!("traceparent: {traceparent}\r\n"), &body);
        assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
        crate::common::serve::body_json(&answer)
    };
    let audited = ask("read_source", &format!("00-{TRACE}-{CLIENT_SPAN}-01"));
    assert_eq!(audited["decision"], json!(true));
    let digest = audited["context"]["tableDigest"]
        .as_str()
        .unwrap()
        .to_string();
    let other_trace = "0af7651916cd43dd8448eb211c80319c";
    let refused = ask("get_env_raw", &format!("00-{other_trace}-{CLIENT_SPAN}-01"));
    assert_eq!(refused["decision"], json!(false));
    // A request the service cannot read: its span is an error, status 400.
    let bad_trace = "1af7651916cd43dd8448eb211c80319d";
    let answer = served.evaluate(
        &format!("traceparent: 00-{bad_trace}-{CLIENT_SPAN}-01\r\n"),
        "{\"subject\":",
    );
    assert!(answer.starts_with("HTTP/1.1 400 "), "{answer}");
    wait_for(&r, "the requests' spans and log records", |all| {
        spans(all).len() >= 3
            && all
                .iter()
                .filter(|(s, b)| s == "logs" && b.to_string().contains("get_env_raw"))
                .count()
                >= 1
    });
    assert_eq!(served.stop(), "toolgate serve: stopped\n");
    let all = received(&r);
    let spans = spans(&all);
    let of = |trace: &str| {
        spans
            .iter()
            .find(|s| hex_id(&s["traceId"]) == trace)
            .unwrap_or_else(|| panic!("no span of trace {trace}"))
            .clone()
    };
    let s = of(TRACE);
    assert_eq!(s["name"], "POST /access/v1/evaluation");
    assert_eq!(s["kind"], "SPAN_KIND_SERVER");
    assert_eq!(hex_id(&s["parentSpanId"]), CLIENT_SPAN);
    assert_eq!(
        attrs(&s["attributes"])["http.route"],
        "/access/v1/evaluation"
    );
    assert_eq!(
        attrs(&s["resource"]["attributes"])["service.name"],
        "authz-1"
    );
    let f = attrs(&s["events"][0]["attributes"]);
    assert_eq!(f["gen_ai.security.decision.type"], "audit");
    assert_eq!(f["gen_ai.security.decision.reason"], "trustZone");
    assert_eq!(f["gen_ai.security.policy.id"], "global-chat");
    assert_eq!(f["gen_ai.security.policy.version"], digest.as_str());
    assert_eq!(f["gen_ai.security.target.id"], "read_source");
    let bad = of(bad_trace);
    let a = attrs(&bad["attributes"]);
    assert_eq!(
        (&a["error.type"], &a["http.response.status_code"]),
        (&json!("400"), &json!("400"))
    );
    assert_eq!(bad["status"]["code"], "STATUS_CODE_ERROR");
    assert!(
        bad.get("events").is_none(),
        "no decision, no finding: {bad:#}"
    );
    assert_eq!(attrs(&s["attributes"])["http.response.status_code"], "200");
    let f = attrs(&of(other_trace)["events"][0]["attributes"]);
    assert_eq!(f["gen_ai.security.decision.type"], "deny");
    assert_eq!(f["gen_ai.security.decision.reason"], "requiresAdmin");
    assert_eq!(f["gen_ai.security.target.id"], "get_env_raw");
    // The decision log records went out though no log file was asked for.
    let logged: Vec<String> = all
        .iter()
        .filter(|(sig, _)| sig == "logs")
        .flat_map(|(_, b)| b["resourceLogs"].as_array().unwrap().clone())
        .flat_map(|rl| rl["scopeLogs"].as_array().unwrap().clone())
        .flat_map(|sl| sl["logRecords"].as_array().unwrap().clone())
        .map(|r| {
            let b: Value =
                serde_json::from_str(r["body"]["stringValue"].as_str().unwrap()).unwrap();
            b["input"]["resource"]["id"].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(logged, ["read_source", "get_env_raw"]);
}
