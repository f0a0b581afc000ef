//! The registry from live MCP servers. These tests start the real
//! reference servers from the package index (mcp-server-git on a temporary
//! repository, mcp-server-time, mcp-server-fetch), import them over stdio
//! and streamable HTTP through `toolgate registry import-mcp`, check the
//! example policy over them, and sync. `.ci/run` installs the servers into a
//! venv and sets TOOLGATE_MCP_BIN to its `bin`; without it these tests FAIL.
//! mcp-server-fetch is only asked for its tool list: it fetches nothing.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

/// The venv's `bin` with the three servers and their Python.
fn mcp_bin() -> PathBuf {
    let dir = std::env::var_os("TOOLGATE_MCP_BIN").unwrap_or_else(|| {
        panic!(
            "TOOLGATE_MCP_BIN is not set: it must name the bin directory of a venv with \
             mcp-server-git, mcp-server-time and mcp-server-fetch (`.ci/run` makes one: \
             python3 -m venv V && V/bin/pip install mcp-server-git mcp-server-time mcp-server-fetch)"
        )
    });
    let dir = PathBuf::from(dir);
    for exe in [
        "mcp-server-git",
        "mcp-server-time",
        "mcp-server-fetch",
        "python",
    ] {
        assert!(
            dir.join(exe).is_file(),
            "TOOLGATE_MCP_BIN={} has no {exe}: install the reference servers there (see .ci/run)",
            dir.display()
        );
    }
    dir
}

fn exe(name: &str) -> String {
    mcp_bin().join(name).to_string_lossy().into_owned()
}

/// A fresh git repository with one commit, for mcp-server-git.
fn git_repo(name: &str) -> PathBuf {
    let dir = temp(name);
    let git = |args: &[&str]| {
        let o = Command::new("git")
            .current_dir(&dir)
            .args(args)
            .output()
            .expect("git must be installed");
        assert!(o.status.success(), "git {args:?}: {}", stderr(&o));
    };
    git(&["init", "-q"]);
    std::fs::write(dir.join("README"), "hello\n").unwrap();
    git(&["add", "README"]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@example.invalid",
        "commit",
        "-qm",
        "first",
    ]);
    dir
}

/// The command line of each reference server over stdio.
fn server_cmd(server: &str, repo: &Path) -> Vec<String> {
    match server {
        "git" => vec![
            exe("mcp-server-git"),
            "--repository".into(),
            repo.to_string_lossy().into_owned(),
        ],
        "time" => vec![
            exe("mcp-server-time"),
            "--local-timezone".into(),
            "Etc/UTC".into(),
        ],
        "fetch" => vec![exe("mcp-server-fetch")],
        other => panic!("no server {other}"),
    }
}

/// `toolgate ARGS -- COMMAND...` at the repository root.
fn with_command(args: &[&str], command: &[String]) -> Output {
    let mut all: Vec<&str> = args.to_vec();
    all.push("--");
    all.extend(command.iter().map(String::as_str));
    run(&all)
}

fn timed<T>(what: &str, limit: Duration, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let out = f();
    let took = start.elapsed();
    eprintln!("{what}: {} ms", took.as_millis());
    assert!(took < limit, "{what} took {took:?}, over {limit:?}");
    out
}

fn import_file(server: &str, file: &str) -> String {
    let o = run(&["registry", "import-mcp", "--server", server, file]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    stdout(&o)
}

#[test]
fn stdio_import_of_the_three_reference_servers_equals_the_example_registry() {
    let repo = git_repo("live-git");
    let mut registry = String::new();
    for (server, names) in [
        (
            "git",
            &[
                "git_status",
                "git_diff_unstaged",
                "git_diff_staged",
                "git_diff",
                "git_commit",
                "git_add",
                "git_reset",
                "git_log",
                "git_create_branch",
                "git_checkout",
                "git_show",
                "git_branch",
            ][..],
        ),
        ("time", &["get_current_time", "convert_time"][..]),
        ("fetch", &["fetch"][..]),
    ] {
        let o = timed(
            &format!("import {server} over stdio"),
            Duration::from_secs(20),
            || {
                with_command(
                    &[
                        "registry",
                        "import-mcp",
                        "--server",
                        server,
                        "--timeout",
                        "20",
                    ],
                    &server_cmd(server, &repo),
                )
            },
        );
        assert_eq!(o.status.code(), Some(0), "{server}: {}", stderr(&o));
        let toml = stdout(&o);
        // The tools, then the prompts a server declares (fetch: one).
        let (tools, prompts) =
            toml.split_at(toml.find("\n[[prompt]]").map_or(toml.len(), |i| i + 1));
        let names_in = |text: &str| -> Vec<String> {
            text.lines()
                .filter_map(|l| l.strip_prefix("name = \""))
                .map(|l| l.trim_end_matches('"').to_string())
                .collect()
        };
        let want: Vec<String> = names.iter().map(|n| format!("mcp_{server}_{n}")).collect();
        assert_eq!(names_in(tools), want);
        let want_prompts: &[&str] = if server == "fetch" {
            &["mcp_fetch_fetch"]
        } else {
            &[]
        };
        assert_eq!(names_in(prompts), want_prompts, "{server}");
        // The SDK's answer imports exactly as the answer captured with the
        // official Python client (its tools/list: the tools).
        let captured = format!("policies/real-servers/mcp/{server}.tools-list.json");
        assert_eq!(
            tools.trim_end_matches('\n'),
            import_file(server, &captured).trim_end_matches('\n'),
            "{server}"
        );
        if !registry.is_empty() {
            registry.push('\n');
        }
        registry.push_str(&toml);
    }
    // Pydantic's nulls are kept in TOML (the `$json` escape), and the
    // example project's registry is what the servers list now.
    assert!(registry.contains(r#"default = { "$json" = "null" }"#));
    let example =
        std::fs::read_to_string(root().join("policies/real-servers/registry.toml")).unwrap();
    assert_eq!(example, format!("{HEADER}{registry}"));
}

/// The comment that opens the example's registry.
const HEADER: &str = "\
# The tools (and prompts) of mcp-server-git, mcp-server-time and mcp-server-fetch,
# imported live (toolgate registry import-mcp --server NAME -- COMMAND) in that order.
# Kept in step with `toolgate registry sync` (docs/registry.md).

";

#[test]
fn a_policy_over_the_live_servers_checks_and_decides() {
    // A project whose registry is imported live, with the example's policy.
    let repo = git_repo("policy-git");
    let dir = temp("policy-project");
    let mut registry = String::new();
    for server in ["git", "time", "fetch"] {
        let o = with_command(
            &[
                "registry",
                "import-mcp",
                "--server",
                server,
                "--format",
                "json",
                "--timeout",
                "20",
            ],
            &server_cmd(server, &repo),
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        for t in v["tool"].as_array().unwrap() {
            registry.push_str(if registry.is_empty() { "" } else { ",\n" });
            registry.push_str(&t.to_string());
        }
    }
    std::fs::write(
        dir.join("registry.json"),
        format!("{{\"tool\": [{registry}]}}\n"),
    )
    .unwrap();
    std::fs::copy(
        root().join("policies/real-servers/policy.tg"),
        dir.join("policy.tg"),
    )
    .unwrap();
    std::fs::write(
        dir.join("toolgate.toml"),
        "registry = \"registry.json\"\npolicies = [\"policy.tg\"]\n",
    )
    .unwrap();
    let o = toolgate(&dir, &["check", "--deny-warnings", "--format", "plain"]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    let decide = |args: &[&str]| {
        let mut all = vec!["decide", "-p", ".", "--format", "json"];
        all.extend_from_slice(args);
        let o = toolgate(&dir, &all);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        (o.status.code(), v["reason"].as_str().map(String::from))
    };
    assert_eq!(
        decide(&["-c", "developer-chat", "mcp_git_git_log"]),
        (Some(0), None)
    );
    assert_eq!(
        decide(&["-c", "cloud-chat", "mcp_git_git_log"]),
        (Some(1), Some("trustZone".into()))
    );
    assert_eq!(
        decide(&["-c", "cloud-chat", "mcp_time_convert_time"]),
        (Some(0), None)
    );
    assert_eq!(
        decide(&[
            "-c",
            "developer-chat",
            "--consumer",
            "review-bot",
            "mcp_git_git_commit"
        ]),
        (Some(1), Some("notInProfile".into()))
    );
}

/// A free port on 127.0.0.1 (bound, then released for the server).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A child process killed when the test ends, however it ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn streamable_http_import_of_mcp_server_time() {
    let port = free_port();
    let fixture = root().join("cli/tests/fixtures/mcp/servers.py");
    let _server = Server(
        Command::new(exe("python"))
            .args([fixture.to_str().unwrap(), "time-http", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    // Bounded wait for the port (Python and uvicorn start in about a second).
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the HTTP server did not start"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let url = format!("http://127.0.0.1:{port}/mcp");
    let o = timed(
        "import time over streamable HTTP",
        Duration::from_secs(10),
        || {
            run(&[
                "registry",
                "import-mcp",
                "--server",
                "time",
                "--url",
                &url,
                "--timeout",
                "10",
            ])
        },
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        import_file("time", "policies/real-servers/mcp/time.tools-list.json")
    );
}

/// One HTTP server thread on 127.0.0.1 that answers each of at most `n`
/// connections with `answer` (or holds it open, silent, when `None`).
fn http_stub(answer: Option<&'static str>, n: usize) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming().take(n) {
            let Ok(mut conn) = conn else { return };
            let _ = conn.set_read_timeout(Some(Duration::from_secs(5)));
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf);
            match answer {
                Some(a) => {
                    let _ = conn.write_all(a.as_bytes());
                }
                None => held.push(conn),
            }
        }
        std::thread::sleep(Duration::from_secs(5));
    });
    url
}

#[test]
fn a_server_that_does_not_answer_times_out_with_a_clear_error() {
    // Over stdio: a program that starts and never speaks.
    let o = timed("silent stdio server", Duration::from_secs(8), || {
        with_command(
            &[
                "registry",
                "import-mcp",
                "--server",
                "quiet",
                "--timeout",
                "1.5",
            ],
            &[
                exe("python"),
                "-c".into(),
                "import time; time.sleep(30)".into(),
            ],
        )
    });
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_contains(
        &err,
        "no answer within 1.5 s (the server did not complete the MCP handshake and `tools/list`)",
    );
    assert_eq!(stdout(&o), "");
    // Over HTTP: a listener that accepts and never answers.
    let url = http_stub(None, 4);
    let o = timed("silent HTTP server", Duration::from_secs(8), || {
        run(&[
            "registry",
            "import-mcp",
            "--server",
            "quiet",
            "--url",
            &url,
            "--timeout",
            "1.5",
        ])
    });
    assert_eq!(o.status.code(), Some(2));
    assert_contains(&stderr(&o), "no answer within 1.5 s");
}

#[test]
fn a_server_that_answers_garbage_is_a_clear_error() {
    // Over stdio: lines that are not JSON-RPC, then the program ends.
    let fixture = root().join("cli/tests/fixtures/mcp/servers.py");
    let o = timed("garbage over stdio", Duration::from_secs(10), || {
        with_command(
            &[
                "registry",
                "import-mcp",
                "--server",
                "junk",
                "--timeout",
                "8",
            ],
            &[
                exe("python"),
                fixture.to_string_lossy().into_owned(),
                "garbage".into(),
            ],
        )
    });
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert_contains(&err, "the MCP handshake failed");
    // Over HTTP: a web page where an MCP answer should be.
    let url = http_stub(
        Some("HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 15\r\nconnection: close\r\n\r\n<html>no</html>"),
        4,
    );
    let o = run(&[
        "registry",
        "import-mcp",
        "--server",
        "junk",
        "--url",
        &url,
        "--timeout",
        "5",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.starts_with(&format!(
            "error: MCP server {url}: the MCP handshake failed"
        )),
        "{err}"
    );
    // A program that cannot be started at all.
    let o = with_command(
        &["registry", "import-mcp", "--server", "none"],
        &["/nonexistent/mcp-server".to_string()],
    );
    assert_eq!(o.status.code(), Some(2));
    assert_contains(&stderr(&o), "cannot start `/nonexistent/mcp-server`");
}

#[test]
fn a_live_name_that_breaks_the_naming_rule_is_tg4001_and_the_rest_imports() {
    let fixture = root().join("cli/tests/fixtures/mcp/servers.py");
    let o = with_command(
        &[
            "registry",
            "import-mcp",
            "--server",
            "odd",
            "--timeout",
            "20",
        ],
        &[
            exe("python"),
            fixture.to_string_lossy().into_owned(),
            "bad-names".into(),
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(
        out.contains("name = \"mcp_odd_lookup\"") && !out.contains("bad name"),
        "{out}"
    );
    // Pydantic's optional argument, null default kept.
    assert_contains(
        &out,
        r#"query = { anyOf = [{ type = "string" }, { type = "null" }], default = { "$json" = "null" }, title = "Query" }"#,
    );
    let err = stderr(&o);
    assert!(
        err.contains("TG4001")
            && err.contains(
                "remote tool name `mcp_odd_bad name!` breaks the naming rule: it contains ` `"
            )
            && err.contains("tools/list of `"),
        "{err}"
    );
}

/// The example project in a scratch directory (registry, policy, tests).
fn example_copy(name: &str) -> PathBuf {
    scratch_example(name, "real-servers")
}

#[test]
fn sync_with_the_live_servers_finds_no_drift_in_the_example() {
    let repo = git_repo("sync-live-git");
    for server in ["git", "time", "fetch"] {
        let o = timed(
            &format!("sync --check {server}"),
            Duration::from_secs(20),
            || {
                with_command(
                    &[
                        "registry",
                        "sync",
                        "-p",
                        "policies/real-servers",
                        "--server",
                        server,
                        "--check",
                        "--timeout",
                        "20",
                    ],
                    &server_cmd(server, &repo),
                )
            },
        );
        assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
        assert_eq!(stdout(&o), format!("server {server}: no drift\n"));
    }
}

const UPGRADED: &str = "cli/tests/fixtures/mcp/git-upgraded.tools-list.json";

#[test]
fn sync_reports_a_simulated_upgrade_and_writes_the_registry() {
    let dir = example_copy("sync-upgrade");
    let upgraded = root().join(UPGRADED);
    let sync = |extra: &[&str]| {
        let mut args = vec!["registry", "sync", "-p", ".", "--server", "git"];
        args.extend_from_slice(extra);
        args.push(upgraded.to_str().unwrap());
        toolgate(&dir, &args)
    };
    // --check: the report, exit 1, nothing written.
    let before = std::fs::read_to_string(dir.join("registry.toml")).unwrap();
    let o = sync(&["--check"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        EXPECTED_REPORT.replace(
            "WRITTEN",
            "./registry.toml not written (use --write to update it)"
        )
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("registry.toml")).unwrap(),
        before
    );
    // JSON for machines.
    let o = sync(&["--format", "json"]);
    assert_eq!(o.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["drift"], true);
    assert_eq!(v["added"][0]["name"], "mcp_git_git_tag");
    assert_eq!(v["removed"][0]["name"], "mcp_git_git_branch");
    assert_eq!(v["removed"][0]["statements"].as_array().unwrap().len(), 2);
    assert_eq!(v["removed"][0]["statements"][0]["code"], "TG1001");
    assert_eq!(
        v["changed"][0]["fields"],
        serde_json::json!(["description"])
    );
    // --write: the registry follows the server; a second sync finds nothing.
    let o = sync(&["--write"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stdout(&o),
        EXPECTED_REPORT.replace("WRITTEN", "wrote ./registry.toml")
    );
    let o = sync(&["--check"]);
    assert_eq!(
        (o.status.code(), stdout(&o)),
        (Some(0), "server git: no drift\n".into())
    );
    // The new tool arrived disabled and admin-only: a sync grants nothing.
    let after = std::fs::read_to_string(dir.join("registry.toml")).unwrap();
    assert_contains(&after, "[[tool]]\nname = \"mcp_git_git_tag\"\ngroup = \"mcp_git\"\norigin = \"remote\"\nserver = \"git\"\nadmin_only = true\nenabled = false\n");
    // The stale statements are the project's errors now, where the report said.
    let o = toolgate(&dir, &["check", "--format", "plain"]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert_eq!(
        out.matches("error[TG1001]: unknown tool `mcp_git_git_branch`")
            .count(),
        2,
        "{out}"
    );
    assert!(
        out.contains("┌─ policy.tg:33:6") && out.contains("┌─ policy.tg:67:5"),
        "{out}"
    );
    // With those two statements gone the policy checks, and the new tool is
    // refused even to an administrator until the policy switches it on.
    let policy = std::fs::read_to_string(dir.join("policy.tg")).unwrap();
    let policy = policy
        .replace("tool mcp_git_git_branch { enabled  not admin-only }\n", "")
        .replace("    mcp_git_git_branch,\n", "");
    std::fs::write(dir.join("policy.tg"), policy).unwrap();
    let o = toolgate(&dir, &["check", "--deny-warnings", "--format", "plain"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let o = toolgate(
        &dir,
        &with_configuration(
            &["decide"],
            ".",
            "developer-chat",
            &["--admin", "mcp_git_git_tag"],
        ),
    );
    assert_eq!(
        (o.status.code(), stdout(&o)),
        (
            Some(1),
            "mcp_git_git_tag: refused, toolDisabled (switched off by an administrator)\n"
                .to_string()
        )
    );
}

/// The report of the simulated upgrade (docs/registry.md shows it too).
const EXPECTED_REPORT: &str = "\
server git: 1 new, 1 removed, 1 changed; descriptor bytes -444
new (disabled and admin-only until the policy says otherwise; no class):
  + mcp_git_git_tag  322 bytes
removed:
  - mcp_git_git_branch  835 bytes
      named at policy.tg:33:6: TG1001 unknown tool `mcp_git_git_branch`
      named at policy.tg:67:5: TG1001 unknown tool `mcp_git_git_branch`
changed:
  ~ mcp_git_git_log  description  866 -> 935 bytes (+69)
WRITTEN
";
