//! `registry sync` at scale: `sync TOOLS [DIR]`.
//!
//! A registry of TOOLS tools of server `s` against a `tools/list` answer in
//! which every hundredth tool is gone, every hundredth (another) has a new
//! description and a hundredth as many new tools are listed. Times the
//! import of the answer, the collision check, the drift and the report's
//! stale statements (`check` of the updated registry), one run each, with
//! the process's peak RSS. With DIR, also writes the project and the
//! answer there for timing the command itself:
//! `toolgate registry sync -p DIR --server s DIR/tools-list.json`.

use std::fmt::Write as _;
use std::time::Instant;

use toolgate_compiler::mcp_sync;
use toolgate_compiler::project::Project;
use toolgate_compiler::registry;
use toolgate_compiler::source::FileId;

fn answer(names: impl Iterator<Item = (String, String)>) -> String {
    let mut s = String::from("{\"tools\": [\n");
    for (i, (name, description)) in names.enumerate() {
        if i > 0 {
            s.push_str(",\n");
        }
        let _ = write!(
            s,
            "  {{\"name\": \"{name}\", \"description\": \"{description}\", \"inputSchema\": {{\"type\": \"object\", \"properties\": {{\"q\": {{\"type\": \"string\"}}}}}}}}"
        );
    }
    s.push_str("\n]}\n");
    s
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(60_000);
    let dir = args.next();
    let before = answer((0..n).map(|i| (format!("t{i}"), format!("tool {i}"))));
    let now = answer(
        (0..n)
            .filter(|i| i % 100 != 0)
            .map(|i| {
                let d = if i % 100 == 50 {
                    format!("tool {i}, v2")
                } else {
                    format!("tool {i}")
                };
                (format!("t{i}"), d)
            })
            .chain((0..n / 100).map(|i| (format!("new{i}"), format!("new tool {i}")))),
    );
    let (current, p) = registry::import_mcp(FileId(1), &before, "s");
    assert!(p.is_empty());
    let registry_toml = registry::to_toml(&current);
    let mut project = Project::from_texts(
        ("registry.toml", &registry_toml),
        &[("policy.tg", "tool mcp_s_t0 { enabled }\n")],
    );
    let t = Instant::now();
    let (live, p) = registry::import_mcp(FileId(3), &now, "s");
    assert!(p.is_empty());
    let import = t.elapsed();
    let t = Instant::now();
    let collisions = mcp_sync::collisions(&current, "s", &live);
    assert!(collisions.is_empty());
    let collide = t.elapsed();
    let t = Instant::now();
    let (drift, updated) = mcp_sync::sync(&current, "s", &live);
    let diff = t.elapsed();
    let t = Instant::now();
    let stale = mcp_sync::stale_statements(&mut project, updated, &drift);
    let statements = t.elapsed();
    assert_eq!(
        (
            drift.added.len(),
            drift.removed.len(),
            drift.changed.len(),
            stale.len()
        ),
        (n / 100, n.div_ceil(100), n / 100, 1)
    );
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    println!(
        "{n} tools: import {:.0} ms, collisions {:.1} ms, sync {:.1} ms, stale statements {:.0} ms; total {:.0} ms; peak RSS {:.0} MiB",
        ms(import),
        ms(collide),
        ms(diff),
        ms(statements),
        ms(import + collide + diff + statements),
        toolgate_bench::peak_rss_mib()
    );
    if let Some(dir) = dir {
        let dir = std::path::Path::new(&dir);
        std::fs::create_dir_all(dir).expect("DIR");
        std::fs::write(
            dir.join("toolgate.toml"),
            "registry = \"registry.toml\"\npolicies = [\"policy.tg\"]\n",
        )
        .expect("manifest");
        std::fs::write(dir.join("registry.toml"), &registry_toml).expect("registry");
        std::fs::write(dir.join("policy.tg"), "tool mcp_s_t0 { enabled }\n").expect("policy");
        std::fs::write(dir.join("tools-list.json"), &now).expect("answer");
    }
}
