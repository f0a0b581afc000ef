//! What a test of the gateway needs however the gateway runs (in this
//! process through the library, or as `toolgate gateway`): the fixtures
//! (gateway/tests/fixtures/), the credentials and tokens, the configuration
//! writer and the upstream snippets, the official Rust SDK client on both
//! revisions, and raw HTTP. One copy: the CLI's tests
//! (cli/tests/commands/main.rs) include this same file.
#![allow(dead_code)]

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine;
use ed25519_dalek::pkcs8::EncodePrivateKey;
use ed25519_dalek::SigningKey;
use rmcp::model::{CallToolRequestParams, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{json, Value};

pub const SUPPORT_KEY: &str = "support-key-5b1e";
pub const BILLING_KEY: &str = "billing-key-77aa";
pub const ADMIN_KEY: &str = "admin-key-0c3d";
/// billing-bot's key bound to configuration billing-chat.
pub const BOUND_KEY: &str = "bound-key-19fe";
/// A key bound to a configuration no gateway here serves.
pub const ELSEWHERE_KEY: &str = "elsewhere-key-4d20";
/// alice: support-bot, and an approver.
pub const APPROVER_KEY: &str = "approver-key-a11c";
/// carol: billing-bot, and an approver (never of her own calls).
pub const CAROL_KEY: &str = "carol-key-c4r0";

/// The policy over the crm server (also the Node gateway test's).
pub const CRM_POLICY: &str = include_str!("../fixtures/policy.tg");

/// A file of gateway/tests/fixtures/.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../gateway/tests/fixtures")
        .join(name)
}

/// The bin directory of the venv `.ci/run` makes: the reference servers
/// and the Python MCP SDK. Without it the tests FAIL, never skip.
pub fn mcp_bin() -> PathBuf {
    let dir = std::env::var_os("TOOLGATE_MCP_BIN").unwrap_or_else(|| {
        panic!("TOOLGATE_MCP_BIN is not set: it must name the bin directory of the venv `.ci/run` makes (the reference servers and the Python MCP SDK)")
    });
    PathBuf::from(dir)
}

pub fn python() -> String {
    mcp_bin().join("python").to_string_lossy().into_owned()
}

pub fn crm_server() -> String {
    fixture("crm_server.py").to_string_lossy().into_owned()
}

/// The bank server: asks for input the 2026-07-28 way (`InputRequiredResult`).
pub fn bank_server() -> String {
    fixture("mrtr_server.py").to_string_lossy().into_owned()
}

pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

pub fn idp() -> SigningKey {
    SigningKey::from_bytes(&[23; 32])
}

pub fn mint(key: &SigningKey, claims: Value) -> String {
    let der = key.to_pkcs8_der().expect("PKCS#8");
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::EdDSA);
    header.kid = Some("idp-1".into());
    jsonwebtoken::encode(
        &header,
        &claims,
        &jsonwebtoken::EncodingKey::from_ed_der(der.as_bytes()),
    )
    .expect("a token")
}

pub fn token(key: &SigningKey, consumer: &str, exp: u64) -> String {
    mint(
        key,
        json!({"iss": "https://idp.example", "aud": "toolgate-gateway", "sub": "agent-7",
               "exp": exp, "azp": consumer}),
    )
}

/// The credentials file: three API keys (two bound to consumers) and JWTs.
pub fn credentials(dir: &Path) -> PathBuf {
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let jwks = json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "kid": "idp-1",
                                 "x": b64.encode(idp().verifying_key().as_bytes())}]});
    std::fs::write(dir.join("jwks.json"), jwks.to_string()).unwrap();
    let d = toolgate_auth_digest;
    let text = format!(
        "[[key]]\nname = \"support\"\nsha256 = \"{}\"\nconsumer = \"support-bot\"\n\n\
         [[key]]\nname = \"billing\"\nsha256 = \"{}\"\nconsumer = \"billing-bot\"\n\n\
         [[key]]\nname = \"ops\"\nsha256 = \"{}\"\nroles = [\"admin\", \"user\", \"none\"]\nrole = \"admin\"\n\n\
         [[key]]\nname = \"bound\"\nsha256 = \"{}\"\nconsumer = \"billing-bot\"\nconfiguration = \"billing-chat\"\n\n\
         [[key]]\nname = \"elsewhere\"\nsha256 = \"{}\"\nconsumer = \"billing-bot\"\nconfiguration = \"nowhere-chat\"\n\n\
         [[key]]\nname = \"alice\"\nsha256 = \"{}\"\nconsumer = \"support-bot\"\napproves = true\n\n\
         [[key]]\nname = \"carol\"\nsha256 = \"{}\"\nconsumer = \"billing-bot\"\napproves = true\n\n\
         [jwt]\njwks = \"jwks.json\"\nissuer = \"https://idp.example\"\naudience = \"toolgate-gateway\"\nconsumer-claim = \"azp\"\n",
        d(SUPPORT_KEY),
        d(BILLING_KEY),
        d(ADMIN_KEY),
        d(BOUND_KEY),
        d(ELSEWHERE_KEY),
        d(APPROVER_KEY),
        d(CAROL_KEY)
    );
    let path = dir.join("credentials.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn toolgate_auth_digest(key: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(key.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Write the manifest and the crm policy of a project into `dir`, beside
/// the `registry.toml` imported there.
pub fn write_crm_project(dir: &Path) {
    std::fs::write(
        dir.join("toolgate.toml"),
        "registry = \"registry.toml\"\npolicies = [\"policy.tg\"]\n",
    )
    .unwrap();
    std::fs::write(dir.join("policy.tg"), CRM_POLICY).unwrap();
}

/// The gateway's configuration in `dir` over `project` and its registry,
/// serving support-chat to the callers of [`credentials`], with `extra`
/// top-level lines and the `upstreams` given.
pub fn config(dir: &Path, project: &Path, upstreams: &str, extra: &str) -> PathBuf {
    let creds = credentials(dir);
    let text = format!(
        "listen = \"127.0.0.1:0\"\nproject = {:?}\nregistry = {:?}\nconfiguration = \"support-chat\"\n{extra}\n\
         [identity]\nauth = {:?}\n\n[limits]\nrelist-interval-ms = 300\nupstream-timeout-ms = 20000\n\n{upstreams}",
        project.to_string_lossy(),
        project.join("registry.toml").to_string_lossy(),
        creds.to_string_lossy(),
    );
    let path = dir.join("gateway.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// The crm upstream, its calls logged to `log`.
pub fn crm_upstream_logged(log: &Path) -> String {
    format!(
        "[[upstream]]\nname = \"crm\"\ncommand = [{:?}, {:?}]\nenv = {{ CRM_CALL_LOG = {{ value = {:?} }} }}\n",
        python(),
        crm_server(),
        log.to_string_lossy()
    )
}

pub fn crm_upstream() -> String {
    format!(
        "[[upstream]]\nname = \"crm\"\ncommand = [{:?}, {:?}]\n",
        python(),
        crm_server()
    )
}

/// The crm upstream with `env` (`NAME`, value) in its environment, from
/// the configuration.
pub fn crm_upstream_with(env: &[(&str, &str)]) -> String {
    let vars: Vec<String> = env
        .iter()
        .map(|(k, v)| format!("{k} = {{ value = {v:?} }}"))
        .collect();
    format!("{}env = {{ {} }}\n", crm_upstream(), vars.join(", "))
}

/// A tokio runtime on this thread, for a client.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// How a client on `version` starts: 2026-07-28 has no handshake (the
/// client discovers the server and sends each request on its own); the
/// revision before it initializes a session.
pub fn lifecycle(version: &ProtocolVersion) -> rmcp::service::ClientLifecycleMode {
    if *version == ProtocolVersion::V_2026_07_28 {
        rmcp::service::ClientLifecycleMode::Discover {
            preferred_versions: vec![version.clone()],
        }
    } else {
        rmcp::service::ClientLifecycleMode::Initialize
    }
}

/// An official-SDK client of `url` with a bearer token, on `version`.
pub async fn client(
    url: &str,
    token: &str,
    version: ProtocolVersion,
) -> RunningService<RoleClient, ClientConfig> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    config.auth_header = Some(token.to_string());
    // Room for the 24 MiB answer of the result-bound test.
    config.max_json_response_size = 64 << 20;
    config.max_sse_event_size = 64 << 20;
    let transport = StreamableHttpClientTransport::from_config(config);
    let info = ClientConfig::new(Default::default(), Implementation::new("test-client", "1"))
        .with_protocol_version(version.clone());
    rmcp::service::serve_client_with_lifecycle(info, transport, lifecycle(&version))
        .await
        .expect("the MCP handshake")
}

/// A client handler that reports `notifications/tools/list_changed`.
pub struct Notified {
    pub tx: tokio::sync::mpsc::UnboundedSender<()>,
    pub config: ClientConfig,
}

impl rmcp::ClientHandler for Notified {
    fn on_tool_list_changed(
        &self,
        _: rmcp::service::NotificationContext<RoleClient>,
    ) -> impl std::future::Future<Output = ()> + Send + '_ {
        let _ = self.tx.send(());
        std::future::ready(())
    }

    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }
}

/// A 2025-11-25 client of `url` with a bearer token whose handler reports
/// each `notifications/tools/list_changed` on the receiver.
pub async fn notified_client(
    url: &str,
    token: &str,
) -> (
    RunningService<RoleClient, Notified>,
    tokio::sync::mpsc::UnboundedReceiver<()>,
) {
    use rmcp::service::ServiceExt;
    let (tx, changes) = tokio::sync::mpsc::unbounded_channel();
    let notified = Notified {
        tx,
        config: ClientConfig::new(Default::default(), Implementation::new("notified", "1"))
            .with_protocol_version(ProtocolVersion::V_2025_11_25),
    };
    let mut transport =
        rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
            url.to_string(),
        );
    transport.auth_header = Some(token.to_string());
    let client = notified
        .serve(rmcp::transport::StreamableHttpClientTransport::from_config(
            transport,
        ))
        .await
        .expect("the MCP handshake");
    (client, changes)
}

/// A client that declared elicitation, sampling and roots: it accepts with
/// a region, its model says hello, and its one root is `file:///work/`.
pub struct Asked {
    pub config: ClientConfig,
}

impl rmcp::ClientHandler for Asked {
    async fn create_elicitation(
        &self,
        _: rmcp::model::ElicitRequestParams,
        _: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ElicitResult, rmcp::model::ErrorData> {
        Ok(
            serde_json::from_value(json!({"action": "accept", "content": {"region": "eu"}}))
                .unwrap(),
        )
    }

    #[allow(deprecated)]
    async fn create_message(
        &self,
        _: rmcp::model::CreateMessageRequestParams,
        _: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::CreateMessageResult, rmcp::model::ErrorData> {
        Ok(serde_json::from_value(json!({
            "role": "assistant",
            "content": {"type": "text", "text": "hello from the client's model"},
            "model": "test-model"
        }))
        .unwrap())
    }

    #[allow(deprecated)]
    async fn list_roots(
        &self,
        _: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, rmcp::model::ErrorData> {
        Ok(
            serde_json::from_value(json!({"roots": [{"uri": "file:///work/", "name": "work"}]}))
                .unwrap(),
        )
    }

    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }
}

/// An official-SDK client of `url` with a bearer token, on `version`,
/// that declared elicitation ([`Asked`] answers it).
pub async fn asked_client(
    url: &str,
    token: &str,
    version: ProtocolVersion,
) -> Result<RunningService<RoleClient, Asked>, rmcp::service::ClientInitializeError> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    config.auth_header = Some(token.to_string());
    let mut capabilities = rmcp::model::ClientCapabilities::default();
    capabilities.elicitation = Some(Default::default());
    let info = ClientConfig::new(capabilities, Implementation::new("asked", "1"))
        .with_protocol_version(version.clone());
    rmcp::service::serve_client_with_lifecycle(
        Asked { config: info },
        StreamableHttpClientTransport::from_config(config),
        lifecycle(&version),
    )
    .await
}

pub async fn listed<H: rmcp::ClientHandler>(c: &RunningService<RoleClient, H>) -> BTreeSet<String> {
    c.peer()
        .list_all_tools()
        .await
        .expect("tools/list")
        .into_iter()
        .map(|t| t.name.to_string())
        .collect()
}

/// The answer of a call: `Ok(text)` when the server answered, `Err(error
/// object)` when the gateway (or the server) answered an error.
pub async fn call(
    c: &RunningService<RoleClient, ClientConfig>,
    name: &str,
) -> Result<String, Value> {
    let mut p = CallToolRequestParams::new(name.to_string());
    p.arguments = json!({"id": "7", "repo_path": "/nonexistent", "timezone": "Etc/UTC", "url": "http://127.0.0.1:9/"})
        .as_object()
        .cloned();
    match c.peer().call_tool(p).await {
        Ok(r) => Ok(serde_json::to_value(&r.content).unwrap().to_string()),
        Err(rmcp::ServiceError::McpError(e)) => Err(serde_json::to_value(&e).unwrap()),
        Err(e) => panic!("{name}: {e}"),
    }
}

/// The names `prompts/list` answers, every page.
pub async fn prompts(c: &RunningService<RoleClient, ClientConfig>) -> Vec<String> {
    c.peer()
        .list_all_prompts()
        .await
        .expect("prompts/list")
        .into_iter()
        .map(|p| p.name)
        .collect()
}

/// `prompts/get` of `name` with `id = 7`: the answer, or the error object.
pub async fn get_prompt(
    c: &RunningService<RoleClient, ClientConfig>,
    name: &str,
) -> Result<rmcp::model::GetPromptResult, Value> {
    let mut args = serde_json::Map::new();
    args.insert("id".into(), json!("7"));
    let p = rmcp::model::GetPromptRequestParams::new(name).with_arguments(args);
    match c.peer().get_prompt(p).await {
        Ok(r) => Ok(r),
        Err(rmcp::ServiceError::McpError(e)) => Err(serde_json::to_value(&e).unwrap()),
        Err(e) => panic!("{name}: {e}"),
    }
}

/// The lines of a call log (the fixture servers' `*_CALL_LOG`).
pub fn calls_seen(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

pub fn names(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|s| s.to_string()).collect()
}

/// A POST of `body` to `url` as a 2026-07-28 client sends it, with
/// `headers` besides: the status, the `WWW-Authenticate` header and the body.
pub async fn post(url: &str, headers: &[(&str, &str)], body: Value) -> (u16, String, String) {
    let client = reqwest::Client::new();
    let mut req = client
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28");
    // The 2026-07-28 headers a client sends, from the body, unless the test sends its own.
    if !headers.iter().any(|(k, _)| *k == "mcp-method") {
        if let Some(m) = body["method"].as_str() {
            req = req.header("mcp-method", m);
        }
        if let Some(n) = body["params"]["name"].as_str() {
            req = req.header("mcp-name", n);
        }
    }
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let r = req.body(body.to_string()).send().await.expect("an answer");
    let status = r.status().as_u16();
    let www = r
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    (status, www, r.text().await.unwrap_or_default())
}

/// A 2026-07-28 `tools/list`, as a raw client sends it.
pub fn list_request() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
                  "io.modelcontextprotocol/clientCapabilities": {}}}})
}

/// Send `request` (a whole raw HTTP/1.1 request, `Connection: close`) to
/// `addr`; the status and the raw answer.
pub fn raw(addr: &str, request: &str) -> (u16, String) {
    let mut s = std::net::TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut out = String::new();
    let _ = s.read_to_string(&mut out);
    let status = out
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, out)
}

/// A GET of `path` with the `Host` line(s) given, raw.
pub fn get_with_host(addr: &str, path: &str, host_lines: &str) -> (u16, String) {
    raw(
        addr,
        &format!("GET {path} HTTP/1.1\r\n{host_lines}Connection: close\r\n\r\n"),
    )
}

/// A free port on 127.0.0.1 (bound, read, released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The crm server over streamable HTTP on `port` with `env`, until dropped.
pub struct HttpCrm(Child);

impl Drop for HttpCrm {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

pub fn http_crm(port: u16, env: &[(&str, &str)]) -> HttpCrm {
    let mut cmd = Command::new(python());
    cmd.arg(crm_server())
        .env("CRM_HTTP_PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let child = HttpCrm(cmd.spawn().unwrap());
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "the HTTP crm server did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    child
}
