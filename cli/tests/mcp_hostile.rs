//! `registry import-mcp` and `registry sync` against hostile MCP servers
//! written for these tests (cli/tests/fixtures/mcp/hostile.py: the Python
//! standard library speaking MCP over stdio), through the real binary: a
//! server that lists a name twice, whose `nextCursor` never ends or comes
//! back, and two servers whose tools map to one registry name.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use common::*;

/// `python3 hostile.py LOG MODE ARGS...`, and the log it appends a line to
/// per `tools/list` request.
fn hostile(dir: &Path, mode: &[&str]) -> (Vec<String>, PathBuf) {
    let log = dir.join("asked.log");
    let _ = std::fs::remove_file(&log);
    let mut cmd = vec![
        "python3".to_string(),
        root()
            .join("cli/tests/fixtures/mcp/hostile.py")
            .to_string_lossy()
            .into_owned(),
        log.to_string_lossy().into_owned(),
    ];
    cmd.extend(mode.iter().map(|s| s.to_string()));
    (cmd, log)
}

/// `toolgate ARGS -- COMMAND...` in `dir`, within `limit`.
fn with_server(dir: &Path, args: &[&str], command: &[String], limit: Duration) -> Output {
    let mut all: Vec<&str> = args.to_vec();
    all.push("--");
    all.extend(command.iter().map(String::as_str));
    let start = Instant::now();
    let o = toolgate(dir, &all);
    assert!(
        start.elapsed() < limit,
        "took {:?}, over {limit:?}: {}",
        start.elapsed(),
        stderr(&o)
    );
    o
}

fn asked(log: &Path) -> usize {
    std::fs::read_to_string(log)
        .map(|s| s.lines().count())
        .unwrap_or(0)
}

const CRM: &str = "[[tool]]\nname = \"mcp_crm_lookup\"\ngroup = \"mcp_crm\"\nserver = \"crm\"\n";

#[test]
fn a_server_that_lists_a_name_twice_is_refused_by_import_and_sync() {
    let dir = scratch_project("hostile-twice", CRM, "");
    let (server, _) = hostile(&dir, &["names", "lookup", "export", "lookup"]);
    let o = with_server(
        &dir,
        &[
            "registry",
            "import-mcp",
            "--server",
            "crm",
            "-o",
            "out.toml",
        ],
        &server,
        Duration::from_secs(20),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    assert!(!dir.join("out.toml").exists(), "nothing is written");
    let err = stderr(&o);
    assert_contains(&err, "error[TG4006]");
    assert_contains(&err, "the server lists tool `lookup` twice");
    // The answer is shown one tool a line: the second `lookup` is line 4.
    assert_contains(&err, "[tools/list of `python3 ");
    assert_contains(&err, ":4:11]");
    assert_contains(&err, "1 error, 0 warnings");
    // sync --write neither compares nor writes.
    let o = with_server(
        &dir,
        &["registry", "sync", "-p", ".", "--server", "crm", "--write"],
        &server,
        Duration::from_secs(20),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    assert_contains(&stderr(&o), "the server lists tool `lookup` twice");
    assert_eq!(
        std::fs::read_to_string(dir.join("registry.toml")).unwrap(),
        CRM
    );
}

#[test]
fn a_cursor_that_never_ends_stops_at_the_page_bound() {
    let dir = temp("hostile-endless");
    let (server, log) = hostile(&dir, &["endless"]);
    let o = with_server(
        &dir,
        &[
            "registry",
            "import-mcp",
            "--server",
            "endless",
            "--timeout",
            "60",
        ],
        &server,
        Duration::from_secs(40),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    assert_starts_with(
        &stderr(&o),
        &format!(
            "error: MCP server `{}`: `tools/list` goes on past 100 pages (page 100 has a `nextCursor`): the bound is 100 pages\n",
            server.join(" ")
        ),
    );
    assert_eq!(asked(&log), 100);
}

#[test]
fn a_cursor_that_comes_back_is_a_loop() {
    let dir = temp("hostile-loop");
    let (server, log) = hostile(&dir, &["loop"]);
    let o = with_server(
        &dir,
        &["registry", "import-mcp", "--server", "loop"],
        &server,
        Duration::from_secs(20),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_starts_with(
        &stderr(&o),
        &format!(
            "error: MCP server `{}`: `tools/list` page 3 has the `nextCursor` \"a\" that page 1 had: the server's pagination goes round in a loop\n",
            server.join(" ")
        ),
    );
    assert_eq!(asked(&log), 3);
}

#[test]
fn names_that_collide_after_mapping_are_reported_never_no_drift() {
    // Server `a`'s tool `b_c` is in the registry as `mcp_a_b_c`.
    let dir = temp("hostile-collide");
    let (server_a, _) = hostile(&dir, &["names", "b_c"]);
    let o = with_server(
        &dir,
        &[
            "registry",
            "import-mcp",
            "--server",
            "a",
            "-o",
            "registry.toml",
        ],
        &server_a,
        Duration::from_secs(20),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let registry = std::fs::read_to_string(dir.join("registry.toml")).unwrap();
    write_project(&dir, &registry, "");
    // Server `a_b` lists `c`: `mcp_a_b_c` too.
    let (server_ab, _) = hostile(&dir, &["names", "c"]);
    for mode in ["--check", "--write"] {
        let o = with_server(
            &dir,
            &["registry", "sync", "-p", ".", "--server", "a_b", mode],
            &server_ab,
            Duration::from_secs(20),
        );
        assert_eq!(o.status.code(), Some(1), "{mode}: {}", stderr(&o));
        assert_eq!(stdout(&o), "", "{mode}: no report, so no `no drift`");
        let err = stderr(&o);
        assert_contains(&err, "error[TG4007]");
        assert_contains(
            &err,
            "  × server `a_b` lists a tool that becomes `mcp_a_b_c`, which the registry holds as a tool of\n  │ server `a`\n",
        );
        assert_contains(&err, "the registry's tool of that name");
        assert_ends_with(
            &err,
            "registry sync: 1 of server a_b's tools take names the registry gives other tools; nothing compared or written\n",
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("registry.toml")).unwrap(),
            registry
        );
    }
}
