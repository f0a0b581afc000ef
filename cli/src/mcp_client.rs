//! Asking a live MCP server for its tools and prompts, with the official Rust SDK
//! (`rmcp`, client side only): over stdio (a command toolgate starts) or
//! streamable HTTP (a URL). The answer goes through the same import as a
//! captured `tools/list` file (`registry::import_mcp`), so a live server and
//! its captured answer give the same registry entries.

use std::process::Stdio;
use std::time::Duration;

use rmcp::model::PaginatedRequestParams;
use rmcp::service::{RoleClient, RunningService, ServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use tokio::io::AsyncReadExt;
use toolgate_compiler::registry::mcp_pages::{List, Pages, MAX_BYTES};

/// Where the server is.
#[derive(Debug, Clone)]
pub enum Endpoint {
    /// A program and its arguments, spoken to over its stdin and stdout.
    Command(Vec<String>),
    /// A streamable HTTP endpoint (`http://host:port/mcp`).
    Url(String),
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Endpoint::Command(argv) => write!(f, "`{}`", argv.join(" ")),
            Endpoint::Url(u) => write!(f, "{u}"),
        }
    }
}

/// The most of a server's standard error kept to explain a failure.
const STDERR_TAIL: usize = 2048;

/// Every tool the server lists (all pages, within the bounds of
/// `toolgate_compiler::registry::mcp_pages`), as the JSON text of a `tools/list`
/// result (`{"tools": [...]}`), with every prompt too (`"prompts": [...]`)
/// when the server declares the prompts capability. The whole exchange, start-up and handshake
/// included, is bounded by `timeout`; a started server is stopped before
/// this returns.
pub fn list(endpoint: &Endpoint, timeout: Duration) -> Result<String, String> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the MCP client: {e}"))?;
    let stderr_tail = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let result = rt.block_on(async {
        match tokio::time::timeout(timeout, ask(endpoint, stderr_tail.clone())).await {
            Ok(r) => r,
            Err(_) => Err(format!(
                "no answer within {} s (the server did not complete the MCP handshake and `tools/list`); \
                 check that it is an MCP server on this transport, or raise --timeout",
                timeout.as_secs_f64()
            )),
        }
    });
    // Anything still running (a child's reader, a kill) gets a moment; a
    // child started with kill_on_drop is killed when its handle goes.
    rt.shutdown_timeout(Duration::from_millis(500));
    result.map_err(|e| {
        let tail = stderr_tail.lock().map(|b| b.clone()).unwrap_or_default();
        let tail = String::from_utf8_lossy(&tail);
        let tail = tail.trim();
        let what = format!("MCP server {endpoint}: {e}");
        if tail.is_empty() {
            what
        } else {
            format!("{what}\nthe server's standard error ended with:\n{tail}")
        }
    })
}

async fn ask(
    endpoint: &Endpoint,
    stderr_tail: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
) -> Result<String, String> {
    let client: RunningService<RoleClient, ()> = match endpoint {
        Endpoint::Command(argv) => {
            let (program, args) = argv.split_first().ok_or("no command given after `--`")?;
            let mut cmd = tokio::process::Command::new(program);
            cmd.args(args)
                .kill_on_drop(true)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let mut child = cmd
                .spawn()
                .map_err(|e| format!("cannot start `{program}`: {e}"))?;
            let stderr = child.stderr.take();
            // The gateway's stdio transport, the one connector: each line
            // bounded (by the listing's own byte bound), the child killed
            // when the transport goes.
            let transport = toolgate_gateway::stdio::transport(child, program, MAX_BYTES)
                .map_err(|e| format!("cannot start `{program}`: {e}"))?;
            if let Some(mut stderr) = stderr {
                tokio::spawn(async move {
                    let mut buf = [0u8; 1024];
                    while let Ok(n) = stderr.read(&mut buf).await {
                        if n == 0 {
                            break;
                        }
                        if let Ok(mut tail) = stderr_tail.lock() {
                            tail.extend_from_slice(&buf[..n]);
                            let over = tail.len().saturating_sub(STDERR_TAIL);
                            tail.drain(..over);
                        }
                    }
                });
            }
            ().serve(transport).await.map_err(|e| {
                format!(
                    "the MCP handshake failed: {e} (is it an MCP server that speaks JSON-RPC on its standard output?)"
                )
            })?
        }
        Endpoint::Url(url) => {
            ().serve(StreamableHttpClientTransport::from_uri(url.as_str()))
                .await
                .map_err(|e| format!("the MCP handshake failed: {e}"))?
        }
    };
    let tools = every_page(&client, List::Tools).await;
    let answer = match tools {
        Ok(tools)
            if client
                .peer_info()
                .is_some_and(|i| i.capabilities.prompts.is_some()) =>
        {
            every_page(&client, List::Prompts)
                .await
                .map(|p| tools.finish_with_prompts(p))
        }
        Ok(tools) => Ok(tools.finish()),
        Err(e) => Err(e),
    };
    let _ = client.cancel().await;
    answer
}

/// Every page of `list` (`tools/list` or `prompts/list`), asked one by one:
/// rmcp's `list_all_tools` follows `nextCursor` for as long as the server
/// sends one, so a server whose cursor never ends is asked without end
/// while the list grows. [`Pages`] holds the bounds.
async fn every_page(client: &RunningService<RoleClient, ()>, list: List) -> Result<Pages, String> {
    let method = match list {
        List::Tools => "tools/list",
        List::Prompts => "prompts/list",
    };
    let mut pages = Pages::new();
    let mut cursor = None;
    loop {
        let params = cursor.map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
        let failed =
            |e: rmcp::ServiceError| format!("`{method}` failed on page {}: {e}", pages.pages() + 1);
        let rendered = |e: serde_json::Error| format!("cannot render an entry of `{method}`: {e}");
        let (texts, next) = match list {
            List::Tools => {
                let page = client.peer().list_tools(params).await.map_err(failed)?;
                let texts = page
                    .tools
                    .iter()
                    .map(serde_json::to_string)
                    .collect::<Result<Vec<_>, _>>();
                (texts.map_err(rendered)?, page.next_cursor)
            }
            List::Prompts => {
                let page = client.peer().list_prompts(params).await.map_err(failed)?;
                let texts = page
                    .prompts
                    .iter()
                    .map(serde_json::to_string)
                    .collect::<Result<Vec<_>, _>>();
                (texts.map_err(rendered)?, page.next_cursor)
            }
        };
        match pages.add(texts, next) {
            Ok(Some(next)) => cursor = Some(next),
            Ok(None) => return Ok(pages),
            Err(e) => return Err(e.describe(list)),
        }
    }
}
