//! The two network fronts sit on the service core and never on each other:
//! `toolgate-serve` (AuthZEN) and `toolgate-gateway` (MCP) may each depend on
//! `toolgate-service`, and neither may depend on the other, directly or
//! through another workspace crate, for any kind of dependency (normal,
//! dev or build). Read from `cargo metadata`, the workspace as Cargo sees it.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

/// Each workspace package's workspace dependencies, of every kind.
fn workspace_graph() -> BTreeMap<String, BTreeSet<String>> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata is JSON");
    let packages = meta["packages"].as_array().expect("packages");
    let names: BTreeSet<String> = packages
        .iter()
        .filter_map(|p| p["name"].as_str().map(String::from))
        .collect();
    packages
        .iter()
        .map(|p| {
            let deps = p["dependencies"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|d| d["name"].as_str())
                .filter(|d| names.contains(*d))
                .map(String::from)
                .collect();
            (p["name"].as_str().unwrap_or_default().to_string(), deps)
        })
        .collect()
}

/// Every workspace package `from` reaches through workspace dependencies.
fn reaches(graph: &BTreeMap<String, BTreeSet<String>>, from: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut todo = vec![from.to_string()];
    while let Some(p) = todo.pop() {
        for d in graph.get(&p).into_iter().flatten() {
            if seen.insert(d.clone()) {
                todo.push(d.clone());
            }
        }
    }
    seen
}

#[test]
fn serve_and_the_gateway_never_depend_on_each_other() {
    let graph = workspace_graph();
    for (front, other) in [
        ("toolgate-serve", "toolgate-gateway"),
        ("toolgate-gateway", "toolgate-serve"),
    ] {
        assert!(graph.contains_key(front), "{front} is not in the workspace");
        let reached = reaches(&graph, front);
        assert!(
            !reached.contains(other),
            "{front} depends on {other} (through {:?}); both fronts sit on toolgate-service",
            reached
        );
        assert!(
            reached.contains("toolgate-service"),
            "{front} does not sit on toolgate-service"
        );
    }
    // The core depends on neither front.
    let core = reaches(&graph, "toolgate-service");
    assert!(!core.contains("toolgate-serve") && !core.contains("toolgate-gateway"));
}
