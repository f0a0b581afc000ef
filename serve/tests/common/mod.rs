//! A running service on 127.0.0.1 (an ephemeral port) and a real HTTP client.

#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;
use toolgate_compiler::lower;
use toolgate_compiler::project::Project;
use toolgate_runtime::Table;
use toolgate_serve::{BuiltService, LogTarget, RequestLimits, Service, Source};

pub fn project(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("policies")
        .join(name)
}

/// The shipped MCP-profiles example, compiled as the service compiles it.
pub fn profiles_source() -> Source {
    Source::Project(project("mcp-profiles"))
}

pub const REG: &str = "[[tool]]\nname = \"a\"\ngroup = \"g\"\n[[tool]]\nname = \"b\"\ngroup = \"g\"\n[[tool]]\nname = \"c\"\ngroup = \"h\"\n";

/// A table compiled from a registry and a policy text.
pub fn table_bytes(registry: &str, policy: &str) -> Vec<u8> {
    let project = Project::from_texts(("registry.toml", registry), &[("policy.tg", policy)]);
    let checked = project.check();
    let model = checked.model.expect("the test policy compiles");
    lower::compile(&model)
}

pub struct Running {
    pub base: String,
    pub service: BuiltService,
    pub client: reqwest::Client,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<std::io::Result<()>>>,
}

pub async fn start(
    table: Table,
    source: Option<Source>,
    limits: RequestLimits,
    log: Option<(LogTarget, usize)>,
) -> Running {
    // The tests ask as a caller the operator vouches for; the default trust
    // is tested on its own (edges.rs).
    start_with(table, source, limits, log, |s| {
        s.with_trust(toolgate_serve::Trust::everything())
    })
    .await
}

/// [`start`], with the service adjusted by `adjust` before it serves.
pub async fn start_with(
    table: Table,
    source: Option<Source>,
    limits: RequestLimits,
    log: Option<(LogTarget, usize)>,
    adjust: impl FnOnce(Service) -> Service,
) -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind 127.0.0.1:0");
    let addr = listener.local_addr().expect("local address");
    let base = format!("http://{addr}");
    let service = adjust(Service::new(
        table,
        source,
        limits,
        base.clone(),
        log.as_ref().map(|(t, n)| (t, *n)),
    ))
    .build()
    .expect("service");
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let s = service.clone();
    let task = tokio::spawn(async move {
        s.serve(listener, async {
            let _ = rx.await;
        })
        .await
    });
    Running {
        base,
        service,
        client: reqwest::Client::builder()
            .timeout(Duration::from_secs(20))
            .build()
            .expect("client"),
        stop: Some(tx),
        task: Some(task),
    }
}

pub async fn start_profiles() -> Running {
    let source = profiles_source();
    let table = source.load().expect("mcp-profiles compiles");
    start(table, Some(source), RequestLimits::default(), None).await
}

/// The profiles example under the service's default trust.
pub async fn start_profiles_default_trust() -> Running {
    let source = profiles_source();
    let table = source.load().expect("mcp-profiles compiles");
    start_with(table, Some(source), RequestLimits::default(), None, |s| s).await
}

pub struct Answer {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub json: Value,
    pub text: String,
}

impl Running {
    pub async fn post(&self, path: &str, body: impl Into<reqwest::Body>) -> Answer {
        let r = self
            .client
            .post(format!("{}{path}", self.base))
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .expect("request");
        answer(r).await
    }

    pub async fn post_json(&self, path: &str, body: &Value) -> Answer {
        self.post(path, body.to_string()).await
    }

    pub async fn get(&self, path: &str) -> Answer {
        let r = self
            .client
            .get(format!("{}{path}", self.base))
            .send()
            .await
            .expect("request");
        answer(r).await
    }

    /// Stop (graceful shutdown) and wait for the server to finish.
    pub async fn stop(mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.expect("server task").expect("served");
        }
    }

    pub fn digest(&self) -> String {
        self.service.shared.handle.current().digest_hex()
    }
}

async fn answer(r: reqwest::Response) -> Answer {
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    let text = r.text().await.expect("body");
    let json = serde_json::from_str(&text).unwrap_or(Value::Null);
    Answer {
        status,
        headers,
        json,
        text,
    }
}
