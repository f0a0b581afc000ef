//! The gateway's cost, side by side in one run on loopback (BENCHMARKS.md,
//! "The MCP gateway"): a `tools/call` straight to an upstream and the same
//! call through the gateway (p50, p99), and `tools/list` of a 10,000-tool
//! upstream through the gateway, filtered per caller (p50, p99), with the
//! filter alone (the runtime's decisions and the pins, in process); and a
//! `resources/read` and a `prompts/get`, straight and through (p50, p99).
//!
//! `cargo run --release -p toolgate-gateway --example latency [-- TOOLS CALLS]`
//!
//! With `--otel`: a call through three gateways in one run, interleaved:
//! OpenTelemetry export off, on (to an in-process OTLP/HTTP collector that
//! takes everything), and on with the collector down (docs/observability.md).
//!
//! The upstream is an MCP server on the official Rust SDK (streamable HTTP,
//! JSON answers), listing TOOLS tools, reached on 2026-07-28 (`protocol =
//! "2026-07-28"`, so a plain call takes the direct path: docs/gateway.md);
//! the gateway runs in this process as `toolgate gateway` does, with pins
//! on and a consumer whose profile holds half the tools. The client sends
//! revision 2026-07-28 requests over one kept-alive connection per target,
//! interleaved, so both see the same machine. A bare HTTP relay (axum and
//! reqwest, no MCP) in front of the same upstream is the floor.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    GetPromptRequestParams, GetPromptResponse, GetPromptResult, InitializeResult,
    ListPromptsResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams, Prompt,
    PromptMessage, ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, Resource,
    ResourceContents, ServerCapabilities, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::ServerHandler;
use serde_json::json;

#[derive(Clone)]
struct Upstream {
    tools: Arc<Vec<Tool>>,
}

impl ServerHandler for Upstream {
    fn get_info(&self) -> InitializeResult {
        InitializeResult::new(
            ServerCapabilities::builder()
                .enable_prompts()
                .enable_resources()
                .enable_tools()
                .build(),
        )
    }

    async fn list_resources(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let doc: Resource = serde_json::from_value(json!({"uri": "bench://doc", "name": "doc"}))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(ListResourcesResult::with_all_items(vec![doc]))
    }

    async fn read_resource(
        &self,
        r: ReadResourceRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let text = ResourceContents::text(format!("contents of {}", r.uri), r.uri);
        Ok(ReadResourceResult::new(vec![text]).into())
    }

    async fn list_prompts(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(prompts()))
    }

    async fn get_prompt(
        &self,
        r: GetPromptRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let message: PromptMessage = serde_json::from_value(
            json!({"role": "user", "content": {"type": "text", "text": format!("{} please", r.name)}}),
        )
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(GetPromptResult::new(vec![message]).into())
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    async fn call_tool(
        &self,
        r: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        Ok(CallToolResult::success(vec![ContentBlock::text(format!("{} done", r.name))]).into())
    }
}

/// The upstream's one prompt, as it lists it (and the registry pins it).
fn prompts() -> Vec<Prompt> {
    vec![Prompt::new("brief", Some("A brief"), None)]
}

fn tools(n: usize) -> Vec<Tool> {
    let schema = json!({"type": "object", "properties": {"id": {"type": "string"}}});
    let schema = Arc::new(schema.as_object().cloned().unwrap_or_default());
    (0..n)
        .map(|i| {
            Tool::new(
                format!("tool_{i:05}"),
                format!("Tool number {i}"),
                schema.clone(),
            )
        })
        .collect()
}

async fn serve_upstream(n: usize) -> String {
    let up = Upstream {
        tools: Arc::new(tools(n)),
    };
    let mut config = StreamableHttpServerConfig::default();
    config.json_response = true;
    let svc = StreamableHttpService::new(
        move || Ok(up.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let app = axum::Router::new().fallback_service(svc);
    serve_app(app).await
}

/// `app` on loopback as a server should be set up (answers written at
/// once): the `/mcp` URL it answers on.
async fn serve_app(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        use axum::serve::ListenerExt;
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}/mcp")
}

/// A project whose registry is what the upstream lists (as `registry
/// import-mcp --server up` writes it), with a consumer whose profile holds
/// the even-numbered tools.
fn project(dir: &std::path::Path, n: usize) {
    // Tools and the prompt, as `registry import-mcp` reads a live server:
    // a prompt the registry does not pin is withheld.
    let listing = json!({"tools": tools(n), "prompts": prompts()}).to_string();
    let (registry, problems) = toolgate_compiler::registry::import_mcp(
        toolgate_compiler::source::FileId(0),
        &listing,
        "up",
    );
    assert!(problems.is_empty());
    std::fs::write(
        dir.join("registry.toml"),
        toolgate_compiler::registry::to_toml(&registry),
    )
    .expect("registry");
    let mut policy = String::from(
        "remote-tools visible-to everyone\ngroup mcp_up { enabled  class publicContent }\n",
    );
    for i in 0..n {
        policy.push_str(&format!(
            "tool mcp_up_tool_{i:05} {{ enabled  not admin-only }}\n"
        ));
    }
    policy.push_str("configuration chat {\n  groups [mcp_up]\n}\nprofile half {\n  allow [\n");
    for i in (0..n).step_by(2) {
        policy.push_str(&format!("    mcp_up_tool_{i:05},\n"));
    }
    policy.push_str("  ]\n}\nconsumer bot { profile half }\n");
    std::fs::write(dir.join("policy.tg"), policy).expect("policy");
    std::fs::write(
        dir.join("toolgate.toml"),
        "registry = \"registry.toml\"\npolicies = [\"policy.tg\"]\n",
    )
    .expect("manifest");
}

fn request(method: &str, params: serde_json::Value) -> serde_json::Value {
    let mut params = params;
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}});
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
}

async fn send(
    client: &reqwest::Client,
    url: &str,
    body: &serde_json::Value,
    name: Option<&str>,
) -> Duration {
    let mut req = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", body["method"].as_str().unwrap_or_default());
    if let Some(n) = name {
        req = req.header("mcp-name", n);
    }
    let start = Instant::now();
    let r = req.body(body.to_string()).send().await.expect("an answer");
    assert!(r.status().is_success(), "{}", r.status());
    let text = r.text().await.expect("a body");
    let took = start.elapsed();
    assert!(
        text.contains("\"result\""),
        "{}",
        &text[..text.len().min(300)]
    );
    took
}

fn pct(v: &mut [Duration], p: f64) -> f64 {
    v.sort_unstable();
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i].as_secs_f64() * 1e3
}

/// The gateway in this process, as `toolgate gateway` runs it, in front of
/// the upstream at `up`; with the URL it answers on.
async fn start_gateway(
    dir: &std::path::Path,
    n: usize,
    up: &str,
) -> (Arc<toolgate_gateway::Gateway>, String) {
    start_gateway_with(dir, n, up, "").await
}

/// [`start_gateway`] with `extra` configuration (a `[telemetry]` table).
async fn start_gateway_with(
    dir: &std::path::Path,
    n: usize,
    up: &str,
    extra: &str,
) -> (Arc<toolgate_gateway::Gateway>, String) {
    let cfg = format!(
        "listen = \"127.0.0.1:0\"\nproject = \".\"\nregistry = \"registry.toml\"\nconfiguration = \"chat\"\n\
         [identity]\nconsumer = \"bot\"\n[limits]\nlist-page-size = {n}\nmax-tools = {n}\n[[upstream]]\nname = \"up\"\nprotocol = \"2026-07-28\"\nurl = {up:?}\n{extra}"
    );
    let config = toolgate_gateway::Config::from_toml(&cfg, dir).expect("a configuration");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let gw = toolgate_gateway::Gateway::start(config, format!("http://{addr}"))
        .await
        .expect("the gateway starts");
    tokio::spawn(toolgate_gateway::serve(
        gw.clone(),
        listener,
        std::future::pending(),
    ));
    (gw, format!("http://{addr}/mcp"))
}

/// The times of `body` sent straight to `up` and through the gateway at
/// `gw_url`, interleaved (so both see the same machine), after `warm`
/// unmeasured rounds; over the same kept-alive connection per target
/// (`clients`: straight, through) for every measurement.
async fn interleaved(
    clients: &(reqwest::Client, reqwest::Client),
    up: &str,
    gw_url: &str,
    direct: (&serde_json::Value, Option<&str>),
    through: (&serde_json::Value, Option<&str>),
    warm: usize,
    rounds: usize,
) -> (Vec<Duration>, Vec<Duration>) {
    let (dc, tc) = clients;
    for _ in 0..warm {
        send(dc, up, direct.0, direct.1).await;
        send(tc, gw_url, through.0, through.1).await;
    }
    let (mut d, mut g) = (Vec::with_capacity(rounds), Vec::with_capacity(rounds));
    for _ in 0..rounds {
        d.push(send(dc, up, direct.0, direct.1).await);
        g.push(send(tc, gw_url, through.0, through.1).await);
    }
    (d, g)
}

/// A bare HTTP relay in front of `up` (axum and a pooled reqwest client,
/// as the gateway's HTTP halves; no MCP, no decision): the least any
/// gateway adds here. The URL it answers on.
async fn serve_relay(up: &str) -> String {
    let http = reqwest::Client::builder()
        .tcp_nodelay(true)
        .build()
        .expect("client");
    let up: Arc<str> = up.into();
    let app = axum::Router::new().fallback(axum::routing::post(
        move |headers: axum::http::HeaderMap, body: axum::body::Bytes| {
            let http = http.clone();
            let up = up.clone();
            async move {
                let mut req = http.post(up.as_ref()).body(body);
                for (k, v) in &headers {
                    if k.as_str().starts_with("mcp-") || k == "content-type" || k == "accept" {
                        req = req.header(k.as_str(), v.as_bytes());
                    }
                }
                let r = req.send().await.expect("relayed");
                let ct = r.headers().get("content-type").cloned();
                let b = r.bytes().await.expect("body");
                let mut resp = axum::response::Response::new(axum::body::Body::from(b));
                if let Some(ct) = ct {
                    resp.headers_mut().insert(
                        "content-type",
                        axum::http::HeaderValue::from_bytes(ct.as_bytes()).expect("ct"),
                    );
                }
                resp
            }
        },
    ));
    serve_app(app).await
}

/// The filter alone: every listed tool decided for the caller, and its pin checked.
fn filter_times(gw: &toolgate_gateway::Gateway, n: usize) -> Vec<Duration> {
    let table = gw.table();
    let ctx = table.context("chat").expect("chat").consumer(Some("bot"));
    let catalog = gw.catalog.load();
    let mut f = Vec::new();
    for _ in 0..200 {
        let start = Instant::now();
        let offered = catalog
            .offered(&ctx, &table, &gw.pins)
            .filter(|(_, _, o)| *o)
            .count();
        f.push(start.elapsed());
        assert_eq!(offered, n.div_ceil(2));
    }
    f
}

/// The Markdown table of BENCHMARKS.md: one row per measurement, p50 and p99.
fn print_table(n: usize, calls: usize, rows: &mut [(String, Vec<Duration>)]) {
    println!("| what ({n} upstream tools, {calls} calls) | p50 ms | p99 ms |");
    println!("| --- | ---: | ---: |");
    for (what, times) in rows {
        println!(
            "| {what} | {:.3} | {:.3} |",
            pct(times, 0.5),
            pct(times, 0.99)
        );
    }
}

/// An OTLP/HTTP collector that takes everything (answers 200 with an
/// empty export response): the cost of export, not of a collector.
async fn serve_collector() -> String {
    let app = axum::Router::new().fallback(axum::routing::post(|| async { "" }));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

/// `--otel`: a call through three gateways in front of the same upstream,
/// interleaved call by call: export off, on (to a collector that takes
/// everything) and on with the collector down (nothing listens).
async fn otel(dir: &std::path::Path, n: usize, calls: usize, up: &str) {
    let collector = serve_collector().await;
    let down = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let a = l.local_addr().expect("addr");
        drop(l);
        format!("http://{a}")
    };
    let (_off, off_url) = start_gateway(dir, n, up).await;
    let (_on, on_url) = start_gateway_with(
        dir,
        n,
        up,
        &format!("[telemetry]\nendpoint = {collector:?}\n"),
    )
    .await;
    let (down_gw, down_url) =
        start_gateway_with(dir, n, up, &format!("[telemetry]\nendpoint = {down:?}\n")).await;
    let call = request(
        "tools/call",
        json!({"name": "mcp_up_tool_00002", "arguments": {"id": "1"}}),
    );
    let clients = [
        reqwest::Client::new(),
        reqwest::Client::new(),
        reqwest::Client::new(),
    ];
    let urls = [&off_url, &on_url, &down_url];
    let mut times: [Vec<Duration>; 3] = Default::default();
    for round in 0..(calls + 200) {
        for i in 0..3 {
            let t = send(&clients[i], urls[i], &call, Some("mcp_up_tool_00002")).await;
            if round >= 200 {
                times[i].push(t);
            }
        }
    }
    let lost = down_gw.core.telemetry.dropped.spans.get();
    let [off, on, down] = times;
    print_table(
        n,
        calls,
        &mut [
            ("tools/call through the gateway, export off".into(), off),
            ("tools/call through the gateway, export on".into(), on),
            (
                "tools/call through the gateway, export on, collector down".into(),
                down,
            ),
        ],
    );
    println!("spans counted lost with the collector down: {lost}");
}

#[tokio::main]
async fn main() {
    let otel_mode = std::env::args().any(|a| a == "--otel");
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let n = args.first().copied().unwrap_or(10_000);
    let calls = args.get(1).copied().unwrap_or(2_000);
    let up = serve_upstream(n).await;
    let dir = std::env::temp_dir().join(format!("toolgate-gateway-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a directory");
    project(&dir, n);
    if otel_mode {
        otel(&dir, n, calls, &up).await;
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    let (gw, gw_url) = start_gateway(&dir, n, &up).await;

    let call = |name: &str| {
        request(
            "tools/call",
            json!({"name": name, "arguments": {"id": "1"}}),
        )
    };
    let (direct_call, gw_call) = (call("tool_00002"), call("mcp_up_tool_00002"));
    let clients = (reqwest::Client::new(), reqwest::Client::new());
    let (d, g) = interleaved(
        &clients,
        &up,
        &gw_url,
        (&direct_call, Some("tool_00002")),
        (&gw_call, Some("mcp_up_tool_00002")),
        200,
        calls,
    )
    .await;
    let relay_url = serve_relay(&up).await;
    let (_, relayed) = interleaved(
        &clients,
        &up,
        &relay_url,
        (&direct_call, Some("tool_00002")),
        (&direct_call, Some("tool_00002")),
        200,
        calls,
    )
    .await;
    let list = request("tools/list", json!({}));
    let (ld, lg) = interleaved(
        &clients,
        &up,
        &gw_url,
        (&list, None),
        (&list, None),
        10,
        200,
    )
    .await;
    let read = request("resources/read", json!({"uri": "bench://doc"}));
    let (rd, rg) = interleaved(
        &clients,
        &up,
        &gw_url,
        (&read, Some("bench://doc")),
        (&read, Some("bench://doc")),
        200,
        calls,
    )
    .await;
    let (direct_prompt, gw_prompt) = (
        request("prompts/get", json!({"name": "brief"})),
        request("prompts/get", json!({"name": "mcp_up_brief"})),
    );
    let (pd, pg) = interleaved(
        &clients,
        &up,
        &gw_url,
        (&direct_prompt, Some("brief")),
        (&gw_prompt, Some("mcp_up_brief")),
        200,
        calls,
    )
    .await;
    let f = filter_times(&gw, n);
    print_table(
        n,
        calls,
        &mut [
            ("tools/call straight to the server".into(), d),
            ("tools/call through the gateway".into(), g),
            (
                "tools/call through a bare HTTP relay (the floor)".into(),
                relayed,
            ),
            (format!("tools/list straight to the server (all {n})"), ld),
            (
                format!(
                    "tools/list through the gateway (filtered to {})",
                    n.div_ceil(2)
                ),
                lg,
            ),
            ("the filter alone (decide + pin, in process)".into(), f),
            ("resources/read straight to the server".into(), rd),
            ("resources/read through the gateway".into(), rg),
            ("prompts/get straight to the server".into(), pd),
            ("prompts/get through the gateway".into(), pg),
        ],
    );
    let _ = std::fs::remove_dir_all(&dir);
}
