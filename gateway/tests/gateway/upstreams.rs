//! Command and URL upstreams: a listing that paginates forever stopped
//! within its bounds, a command's environment, working directory and
//! result bound, and a URL upstream's kept-alive connections.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use rmcp::model::ProtocolVersion;

use crate::common::*;
use crate::support::*;

#[test]
fn an_upstream_that_paginates_forever_is_stopped_within_its_bounds() {
    for (mode, said) in [
        ("forever", "`tools/list` goes on past 5 pages (max-pages)"),
        (
            "repeat",
            "`tools/list` page 2 repeats an earlier `nextCursor`",
        ),
    ] {
        let dir = temp(&format!("gw-pages-{mode}"));
        let project = crm_project(&format!("gw-pages-{mode}-project"));
        let upstream = crm_upstream_with(&[("CRM_PAGINATE", mode)]);
        let cfg = config(&dir, &project, &upstream, "");
        let text = std::fs::read_to_string(&cfg)
            .unwrap()
            .replace("[limits]\n", "[limits]\nmax-pages = 5\n");
        std::fs::write(&cfg, text).unwrap();
        let started = Instant::now();
        let err = match start(&cfg) {
            Ok(gw) => panic!("started against an endless list at {}", gw.url),
            Err(e) => e.to_string(),
        };
        assert_contains(&err, said);
        assert!(started.elapsed() < Duration::from_secs(30));
    }
}

/// A command upstream runs with the environment and working directory the
/// operator gave it; an answer over max-result-bytes is an error naming the
/// bound, at once.
#[test]
fn a_command_upstream_gets_its_environment_directory_and_result_bound() {
    let dir = temp("gw-env");
    let project = crm_project("gw-env-project");
    std::fs::create_dir_all(dir.join("crm-work")).unwrap();
    std::fs::write(dir.join("secret.txt"), "from-a-file\n").unwrap();
    // (bound, result bytes, the answer): within the bound it is relayed
    // whole, also over the SDK's 16 MiB line; over it, an error naming the
    // bound comes at once (the upstream timeout is 20 s).
    for (bound, huge, want) in [
        (
            65536,
            0,
            Ok(r#"[{"type":"text","text":" env=from-a-file cwd=crm-work"}]"#.len()),
        ),
        (
            65536,
            200_000,
            Err("answered more than 65536 bytes (max-result-bytes)"),
        ),
        (32 << 20, 24 << 20, Ok((24 << 20) + 56)),
        (
            1 << 20,
            24 << 20,
            Err("answered more than 1048576 bytes (max-result-bytes)"),
        ),
    ] {
        let upstream = format!(
            "[[upstream]]\nname = \"crm\"\ncommand = [{:?}, {:?}]\ncwd = \"crm-work\"\n\
             env = {{ CRM_SECRET = {{ file = \"secret.txt\" }}, CRM_REPORT_ENV = {{ value = \"1\" }}, CRM_HUGE_RESULT = {{ value = \"{huge}\" }} }}\n",
            python(),
            crm_server()
        );
        let cfg = config(&dir, &project, &upstream, "");
        let text = std::fs::read_to_string(&cfg).unwrap().replace(
            "[limits]\n",
            &format!("[limits]\nmax-result-bytes = {bound}\n"),
        );
        std::fs::write(&cfg, text).unwrap();
        let gw = start(&cfg).unwrap_or_else(|e| panic!("the gateway did not start:\n{e}"));
        runtime().block_on(async {
            let c = client(&gw.url, SUPPORT_KEY, ProtocolVersion::V_2026_07_28).await;
            let t = Instant::now();
            let got = call(&c, "mcp_crm_notes_append").await;
            match want {
                Ok(len) if huge == 0 => assert_eq!(
                    got,
                    Ok(r#"[{"type":"text","text":" env=from-a-file cwd=crm-work"}]"#.to_string()),
                    "{len}"
                ),
                Ok(len) => assert_eq!(got.map(|t| t.len()), Ok(len), "bound {bound}"),
                Err(part) => {
                    let e = got.expect_err("over the bound");
                    assert_contains(e["message"].as_str().unwrap_or_default(), part);
                    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
                }
            }
            let _ = c.cancel().await;
        });
        drop(gw);
    }
}

/// Requests to a URL upstream ride kept-alive connections: 20 calls come on
/// a handful of connections, not one each; `keep-alive = false` opens one
/// per request (as the SDK's own client does).
#[test]
fn a_url_upstream_is_asked_over_kept_alive_connections_unless_told_otherwise() {
    for keep_alive in [true, false] {
        let dir = temp(&format!("gw-pool-{keep_alive}"));
        let project = crm_project(&format!("gw-pool-project-{keep_alive}"));
        let port = free_port();
        let conns = dir.join("conns.log");
        let _crm = http_crm(port, &[("CRM_CONN_LOG", conns.to_str().unwrap())]);
        let upstream = format!(
            "[[upstream]]\nname = \"crm\"\nurl = \"http://127.0.0.1:{port}/mcp\"\nkeep-alive = {keep_alive}\n"
        );
        let cfg = config(&dir, &project, &upstream, "");
        let gw = start(&cfg).unwrap_or_else(|e| panic!("the gateway did not start:\n{e}"));
        let before = std::fs::read_to_string(&conns)
            .unwrap_or_default()
            .lines()
            .count();
        runtime().block_on(async {
            let c = client(&gw.url, SUPPORT_KEY, ProtocolVersion::V_2026_07_28).await;
            for _ in 0..20 {
                assert_eq!(
                    call(&c, "mcp_crm_notes_append").await,
                    Ok(r#"[{"type":"text","text":"notes_append(7) done"}]"#.to_string())
                );
            }
            let _ = c.cancel().await;
        });
        let text = std::fs::read_to_string(&conns).unwrap_or_default();
        let calls: Vec<&str> = text.lines().skip(before).collect();
        let ports: BTreeSet<&str> = calls.iter().copied().collect();
        assert!(calls.len() >= 20, "{calls:?}");
        if keep_alive {
            assert!(ports.len() <= 3, "20 calls on {} connections", ports.len());
        } else {
            assert!(ports.len() >= 20, "20 calls on {} connections", ports.len());
        }
        drop(gw);
    }
}

/// An idle upstream connection is given up before the server's own
/// keep-alive (uvicorn's 5 s) ends it: a call after 4.5 s idle goes on a
/// new connection, never on one the server may be closing at that moment.
#[test]
fn an_idle_upstream_connection_is_given_up_before_the_server_closes_it() {
    let dir = temp("gw-pool-idle");
    let project = crm_project("gw-pool-idle-project");
    let port = free_port();
    let conns = dir.join("conns.log");
    let _crm = http_crm(
        port,
        &[("CRM_CONN_LOG", conns.to_str().unwrap_or_default())],
    );
    let upstream = format!(
        "[[upstream]]\nname = \"crm\"\nprotocol = \"2026-07-28\"\nurl = \"http://127.0.0.1:{port}/mcp\"\n"
    );
    // No relisting to keep the connection busy meanwhile.
    let cfg = config(&dir, &project, &upstream, "");
    let text = std::fs::read_to_string(&cfg).unwrap_or_default().replace(
        "relist-interval-ms = 300\n",
        "relist-interval-ms = 600000\n",
    );
    std::fs::write(&cfg, text).unwrap_or_else(|e| panic!("{e}"));
    let gw = start(&cfg).unwrap_or_else(|e| panic!("the gateway did not start:\n{e}"));
    let seen = || {
        std::fs::read_to_string(&conns)
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    runtime().block_on(async {
        let c = client(&gw.url, SUPPORT_KEY, ProtocolVersion::V_2026_07_28).await;
        let done = Ok(r#"[{"type":"text","text":"notes_append(7) done"}]"#.to_string());
        assert_eq!(call(&c, "mcp_crm_notes_append").await, done);
        let first = seen().last().cloned();
        assert_eq!(call(&c, "mcp_crm_notes_append").await, done);
        assert_eq!(
            seen().last().cloned(),
            first,
            "a call right after: the same connection"
        );
        tokio::time::sleep(Duration::from_millis(4500)).await;
        assert_eq!(call(&c, "mcp_crm_notes_append").await, done);
        assert_ne!(
            seen().last().cloned(),
            first,
            "a call after 4.5 s idle: a new connection"
        );
        let _ = c.cancel().await;
    });
    drop(gw);
}

/// Relisting an upstream whose list did not change changes nothing a
/// client sees: no `list_changed` (which would have every client list
/// again), the same catalog and page cursors; a table swap is still told.
#[test]
fn a_relisting_that_finds_the_same_tools_tells_no_one_and_keeps_the_catalog() {
    let dir = temp("gw-same-relist");
    let project = crm_project("gw-same-relist-project");
    // relist-interval-ms is 300 in `config`.
    let cfg = config(&dir, &project, &crm_upstream(), "");
    let gw = start(&cfg).unwrap_or_else(|e| panic!("the gateway did not start:\n{e}"));
    let generation = gw.gateway().catalog.load().generation;
    runtime().block_on(async {
        let (watcher, mut changes) = notified_client(&gw.url, SUPPORT_KEY).await;
        assert_eq!(listed(&watcher).await.len(), 2);
        // Ten relistings of the same list.
        tokio::time::sleep(Duration::from_millis(3000)).await;
        assert!(changes.try_recv().is_err(), "a list change was announced");
        assert_eq!(gw.gateway().catalog.load().generation, generation);
        // A new table is told, within 20 s.
        let policy = std::fs::read_to_string(project.join("policy.tg")).unwrap();
        std::fs::write(
            project.join("policy.tg"),
            policy.replace(
                "allow [mcp_crm_customer-360_lookup, mcp_crm_notes_append]",
                "allow [mcp_crm_customer-360_lookup]",
            ),
        )
        .unwrap();
        tokio::time::timeout(Duration::from_secs(20), changes.recv())
            .await
            .expect("the new table announced within 20 s");
        assert_eq!(listed(&watcher).await.len(), 1);
        let _ = watcher.cancel().await;
    });
    drop(gw);
}
