//! The harness: a gateway in this process, through the library as
//! `toolgate gateway -c FILE` runs it (`Config::from_file`,
//! `Gateway::start`, the table watched, `serve`), on a thread and runtime of
//! its own; scratch directories; and the crm and bank projects, their
//! registries imported live from the fixture servers through the libraries
//! `toolgate registry import-mcp` is made of.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::service::ServiceExt;
use serde_json::json;
use toolgate_gateway::{Config, Error, Gateway};

use crate::support::{bank_server, crm_server, python, runtime, write_crm_project};

/// How long a start may take (every upstream started and listed).
const START_WITHIN: Duration = Duration::from_secs(60);
/// How long a stop may take: the requests in flight get the request
/// deadline (the upstream timeout, 20 s here, and 5 s), then the
/// telemetry 5 s.
const STOP_WITHIN: Duration = Duration::from_secs(40);

/// A gateway serving on 127.0.0.1; stopped when dropped (its shutdown
/// fired, its thread joined, within [`STOP_WITHIN`]).
pub struct Running {
    /// `http://ADDR/mcp`.
    pub url: String,
    addr: std::net::SocketAddr,
    gw: Option<Arc<Gateway>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<std::io::Result<()>>>,
}

impl Running {
    /// The running gateway's state.
    pub fn gateway(&self) -> &Gateway {
        self.gw.as_deref().expect("a running gateway")
    }

    /// `127.0.0.1:PORT`, for raw HTTP.
    pub fn addr(&self) -> String {
        self.addr.to_string()
    }

    /// Stop it as an operator does and wait until it has: the requests in
    /// flight answered, the decision log closed.
    pub fn stop(mut self) {
        if let Err(e) = self.shutdown() {
            panic!("{e}");
        }
    }

    fn shutdown(&mut self) -> Result<(), String> {
        // The last handle on the gateway is the serving thread's: what it
        // holds (the upstreams' processes) goes in its runtime.
        self.gw = None;
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let Some(thread) = self.thread.take() else {
            return Ok(());
        };
        let deadline = Instant::now() + STOP_WITHIN;
        while !thread.is_finished() {
            if Instant::now() > deadline {
                return Err(format!(
                    "the gateway did not stop within {} s",
                    STOP_WITHIN.as_secs()
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        match thread.join() {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(format!("the gateway stopped with {e}")),
            Err(_) => Err("the gateway's thread panicked".into()),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

/// Start the gateway on the configuration file `config` (its table
/// watched, as `toolgate gateway` does unless `--no-watch`), listening on
/// 127.0.0.1 at a free port, and return once it serves; `Err` with what
/// stopped the start.
pub fn start(config: &Path) -> Result<Running, Error> {
    let config = Config::from_file(config)?;
    let io = |e: std::io::Error| Error::Io(e.to_string());
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(io)?;
    listener.set_nonblocking(true).map_err(io)?;
    let addr = listener.local_addr().map_err(io)?;
    let public_url = config.public_url.clone();
    let public_url = public_url.unwrap_or_else(|| format!("http://{addr}"));
    let (ready, started) = std::sync::mpsc::channel();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name("gateway".into())
        .spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?;
            let served = rt.block_on(async move {
                let begun = async {
                    let listener = tokio::net::TcpListener::from_std(listener).map_err(io)?;
                    let gw = Gateway::start(config, public_url).await?;
                    let watch = gw.core.watch(Duration::from_secs(30))?;
                    Ok::<_, Error>((listener, gw, watch))
                };
                let (listener, gw, watch) = match begun.await {
                    Ok(begun) => begun,
                    Err(e) => {
                        let _ = ready.send(Err(e));
                        return Ok(());
                    }
                };
                let _ = ready.send(Ok(gw.clone()));
                let served = toolgate_gateway::serve(gw, listener, async {
                    let _ = stopped.await;
                })
                .await;
                drop(watch);
                served
            });
            rt.shutdown_timeout(Duration::from_secs(5));
            served
        })
        .expect("a thread");
    let mut running = Running {
        url: format!("http://{addr}/mcp"),
        addr,
        gw: None,
        stop: Some(stop),
        thread: Some(thread),
    };
    match started.recv_timeout(START_WITHIN) {
        Ok(Ok(gw)) => {
            running.gw = Some(gw);
            Ok(running)
        }
        Ok(Err(e)) => {
            if let Err(stop) = running.shutdown() {
                panic!("after a failed start ({e}): {stop}");
            }
            Err(e)
        }
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!(
                "the gateway did not start within {} s",
                START_WITHIN.as_secs()
            )
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            panic!("the gateway did not start: {:?}", running.shutdown())
        }
    }
}

/// An empty scratch directory of this test process.
pub fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("toolgate-gateway-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Assert that `text` contains `part`, showing `text` when it does not.
#[track_caller]
pub fn assert_contains(text: &str, part: &str) {
    assert!(text.contains(part), "{part:?} is not in:\n{text}");
}

/// What a process wrote to its standard output.
pub fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// What a process wrote to its standard error.
pub fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A project whose registry is what the crm server lists, imported live,
/// with the crm policy; it checks without an error.
pub fn crm_project(name: &str) -> PathBuf {
    let dir = temp(name);
    import_mcp(&dir, "crm", &[python(), crm_server()]);
    write_crm_project(&dir);
    let project = toolgate_compiler::project::Project::load(&dir).expect("the project");
    let checked = project.check();
    assert!(
        !checked.has_errors(),
        "{}",
        toolgate_compiler::report::human(&project.sources, &checked.diagnostics(), false)
    );
    dir
}

/// A project over the bank server, its registry imported live; both bound
/// consumers may call `mcp_bank_transfer`.
pub fn bank_project(name: &str) -> PathBuf {
    let dir = temp(name);
    import_mcp(&dir, "bank", &[python(), bank_server()]);
    std::fs::write(
        dir.join("toolgate.toml"),
        "registry = \"registry.toml\"\npolicies = [\"policy.tg\"]\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("policy.tg"),
        "remote-tools visible-to everyone\ngroup mcp_bank { class publicContent }\n\
         tool mcp_bank_transfer { enabled  not admin-only }\n\
         configuration support-chat {\n  groups [mcp_bank]\n}\n\
         profile payer {\n  allow [group mcp_bank]\n}\n\
         consumer support-bot { profile payer }\nconsumer billing-bot { profile payer }\n",
    )
    .unwrap();
    dir
}

/// `toolgate registry import-mcp --server SERVER -o DIR/registry.toml --
/// ARGV`, through the libraries it is made of: the server's tools and
/// prompts listed over the gateway's stdio transport, the answer imported
/// (without a finding) and written as TOML.
fn import_mcp(dir: &Path, server: &str, argv: &[String]) {
    let answer = runtime().block_on(listing(argv));
    let (registry, problems) = toolgate_compiler::registry::import_mcp(
        toolgate_compiler::source::FileId(0),
        &answer,
        server,
    );
    assert!(problems.is_empty(), "{server}: {problems:?}");
    std::fs::write(
        dir.join("registry.toml"),
        toolgate_compiler::registry::to_toml(&registry),
    )
    .unwrap();
}

/// What the server `argv` lists: `{"tools": [...]}`, with `"prompts"` when
/// it declares the prompts capability.
async fn listing(argv: &[String]) -> String {
    let (program, args) = argv.split_first().expect("a command");
    let child = tokio::process::Command::new(program)
        .args(args)
        .kill_on_drop(true)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the server starts");
    let transport = toolgate_gateway::stdio::transport(
        child,
        program,
        toolgate_compiler::registry::mcp_pages::MAX_BYTES,
    )
    .expect("its standard input and output");
    let client = ().serve(transport).await.expect("the MCP handshake");
    let tools = client.peer().list_all_tools().await.expect("tools/list");
    let mut answer = json!({ "tools": tools });
    if client
        .peer_info()
        .is_some_and(|i| i.capabilities.prompts.is_some())
    {
        let prompts = client
            .peer()
            .list_all_prompts()
            .await
            .expect("prompts/list");
        answer["prompts"] = json!(prompts);
    }
    let _ = client.cancel().await;
    answer.to_string()
}
