//! The MCP servers behind the gateway, each spoken to with the official
//! Rust SDK as a client: a program over stdio or a streamable HTTP URL.
//! Every step is bounded (docs/gateway.md, "Bounds"): the start and
//! handshake, each `tools/list` page and each call take at most the
//! upstream timeout; a listing takes at most `max-pages` pages and
//! `max-tools` tools, and a cursor sent twice stops it.

use std::collections::HashSet;
use std::process::Stdio;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientConfig, ErrorCode, ErrorData,
    PaginatedRequestParams, Tool,
};
use rmcp::service::{NotificationContext, RoleClient, RunningService, ServiceExt};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::ClientHandler;
use tokio::sync::Notify;

use crate::config::{Limits, Transport, Upstream};

/// The client side of one upstream: it wakes the gateway when the server
/// says its list changed.
#[derive(Clone)]
pub struct Listener {
    pub changed: Arc<Notify>,
}

impl ClientHandler for Listener {
    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl std::future::Future<Output = ()> + Send + '_ {
        self.changed.notify_one();
        std::future::ready(())
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            Default::default(),
            rmcp::model::Implementation::new("toolgate-gateway", env!("CARGO_PKG_VERSION")),
        )
    }
}

/// A connected upstream.
pub struct Connection {
    pub name: String,
    pub service: RunningService<RoleClient, Listener>,
}

/// Connect to `u` within the upstream timeout.
pub async fn connect(
    u: &Upstream,
    limits: &Limits,
    changed: Arc<Notify>,
) -> Result<Connection, String> {
    let listener = Listener { changed };
    let started = async {
        match &u.transport {
            Transport::Command(argv) => {
                let (program, args) = argv.split_first().ok_or("an empty command")?;
                let mut cmd = tokio::process::Command::new(program);
                cmd.args(args).kill_on_drop(true);
                let (transport, _) = TokioChildProcess::builder(cmd)
                    .stderr(Stdio::inherit())
                    .spawn()
                    .map_err(|e| format!("cannot start `{program}`: {e}"))?;
                listener
                    .serve(transport)
                    .await
                    .map_err(|e| format!("the MCP handshake failed: {e}"))
            }
            Transport::Url(url) => listener
                .serve(StreamableHttpClientTransport::from_uri(url.as_str()))
                .await
                .map_err(|e| format!("the MCP handshake failed: {e}")),
        }
    };
    let service = tokio::time::timeout(limits.upstream_timeout, started)
        .await
        .map_err(|_| {
            format!(
                "upstream `{}`: no handshake within {} ms",
                u.name,
                limits.upstream_timeout.as_millis()
            )
        })?
        .map_err(|e| format!("upstream `{}`: {e}", u.name))?;
    Ok(Connection {
        name: u.name.clone(),
        service,
    })
}

/// Every tool `c` lists, within the bounds.
pub async fn list(c: &Connection, limits: &Limits) -> Result<Vec<Tool>, String> {
    let mut tools: Vec<Tool> = Vec::new();
    let mut cursors: HashSet<String> = HashSet::new();
    let mut cursor: Option<String> = None;
    for page in 1..=limits.max_pages {
        let params = cursor
            .clone()
            .map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
        let answer =
            tokio::time::timeout(limits.upstream_timeout, c.service.peer().list_tools(params))
                .await
                .map_err(|_| {
                    format!(
                        "upstream `{}`: `tools/list` page {page} took over {} ms",
                        c.name,
                        limits.upstream_timeout.as_millis()
                    )
                })?
                .map_err(|e| {
                    format!(
                        "upstream `{}`: `tools/list` page {page} failed: {e}",
                        c.name
                    )
                })?;
        tools.extend(answer.tools);
        if tools.len() > limits.max_tools {
            return Err(format!(
                "upstream `{}` lists more than {} tools (max-tools)",
                c.name, limits.max_tools
            ));
        }
        match answer.next_cursor {
            None => return Ok(tools),
            Some(next) => {
                if !cursors.insert(next.clone()) {
                    return Err(format!(
                        "upstream `{}`: `tools/list` page {page} repeats an earlier `nextCursor`: its pagination goes round in a loop",
                        c.name
                    ));
                }
                cursor = Some(next);
            }
        }
    }
    Err(format!(
        "upstream `{}`: `tools/list` goes on past {} pages (max-pages)",
        c.name, limits.max_pages
    ))
}

/// Forward a call of the server's own tool `name`; the server's JSON-RPC
/// error comes back as it is, a transport failure or a timeout as an
/// internal error naming the upstream.
pub async fn call(
    c: &Connection,
    name: &str,
    arguments: Option<rmcp::model::JsonObject>,
    limits: &Limits,
) -> Result<CallToolResponse, ErrorData> {
    let mut params = CallToolRequestParams::new(name.to_string());
    params.arguments = arguments;
    match tokio::time::timeout(
        limits.upstream_timeout,
        c.service.peer().call_tool_once(params),
    )
    .await
    {
        Err(_) => Err(ErrorData::new(
            ErrorCode::INTERNAL_ERROR,
            format!(
                "upstream `{}` did not answer within {} ms",
                c.name,
                limits.upstream_timeout.as_millis()
            ),
            None,
        )),
        Ok(Ok(r)) => Ok(r),
        Ok(Err(rmcp::ServiceError::McpError(e))) => Err(e),
        Ok(Err(e)) => Err(ErrorData::new(
            ErrorCode::INTERNAL_ERROR,
            format!("upstream `{}` failed: {e}", c.name),
            None,
        )),
    }
}
