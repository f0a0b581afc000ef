//! A live MCP server's `tools/list` answers, one page a line (each a JSON
//! `{"tools": [...], "nextCursor": ...}`), gathered under the bounds of
//! `mcp_pages` as `toolgate registry import-mcp` gathers them, imported and
//! synced against a small registry. The bounds hold, the joined answer is
//! always JSON holding exactly the tools of the pages, in order, and the
//! importer keeps its promises: a tool whose fields are not what MCP says
//! (a `description` that is an object, say) refuses the whole answer with
//! a diagnostic (TG0004) and imports nothing, which is a valid outcome; an
//! answer it reads has every tool either imported once or named by a
//! diagnostic (TG4001, TG4006), never dropped in silence; no sync yields a
//! name twice. Only a panic or a broken promise fails.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolgate_compiler::diagnostics::Problem;
use toolgate_compiler::registry::mcp_pages::{Pages, MAX_PAGES};
use toolgate_compiler::source::FileId;
use toolgate_compiler::{mcp_sync, registry};

const REGISTRY: &str = "[[tool]]\nname = \"mcp_srv_a\"\ngroup = \"mcp_srv\"\nserver = \"srv\"\n\
[[tool]]\nname = \"mcp_srv_b_c\"\ngroup = \"mcp_srv_b\"\nserver = \"srv_b\"\n\
[[tool]]\nname = \"local\"\ngroup = \"g\"\n";

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut pages = Pages::new();
    let mut gathered: Vec<serde_json::Value> = Vec::new();
    let mut complete = false;
    for line in text.lines() {
        let Ok(page) = serde_json::from_str::<serde_json::Value>(line) else { return };
        // What rmcp hands over: tools that are objects with a string name.
        let Some(tools) = page.get("tools").and_then(|t| t.as_array()) else { return };
        if !tools.iter().all(|t| t.get("name").is_some_and(|n| n.is_string())) {
            return;
        }
        let texts: Vec<String> = tools.iter().map(|t| t.to_string()).collect();
        gathered.extend(tools.iter().cloned());
        let next = page.get("nextCursor").and_then(|c| c.as_str()).map(String::from);
        match pages.add(texts, next) {
            Ok(Some(_)) => assert!(pages.pages() < MAX_PAGES),
            Ok(None) => {
                complete = true;
                break;
            }
            Err(_) => return,
        }
    }
    if !complete {
        return;
    }
    let answer = pages.finish();
    // The joining loses and adds nothing: the pages' tools, in order.
    let joined: serde_json::Value = match serde_json::from_str(&answer) {
        Ok(v) => v,
        Err(e) => panic!("the joined pages are not JSON ({e}): {answer}"),
    };
    assert_eq!(
        joined.get("tools").and_then(|t| t.as_array()),
        Some(&gathered),
        "the joined pages are not the pages' tools: {answer}"
    );
    let (live, problems) = registry::import_mcp(FileId(1), &answer, "srv");
    for p in &problems {
        let span = p.span();
        assert!(
            span.start <= span.end && span.end as usize <= answer.len(),
            "a diagnostic outside the answer: {p:?}"
        );
        assert!(!p.diagnostic().message.is_empty(), "{p:?}");
    }
    if problems.iter().any(|p| matches!(p, Problem::RegistryInvalid { .. })) {
        // Refused whole, with the reason: a tool that is not an MCP tool
        // (the JSON itself is sound, checked above). Nothing is imported.
        assert!(live.tools.is_empty(), "a refused answer imported tools");
        assert!(
            problems.iter().all(|p| match p {
                Problem::RegistryInvalid { message, .. } =>
                    message.starts_with("not an MCP tools/list result: "),
                _ => false,
            }),
            "{problems:?}"
        );
        return;
    }
    // Read: every tool imported once or named by a diagnostic.
    let named = problems
        .iter()
        .filter(|p| {
            matches!(
                p,
                Problem::RemoteNameInvalid { .. } | Problem::ServerListsTwice { .. }
            )
        })
        .count();
    assert_eq!(named, problems.len(), "an unexpected diagnostic: {problems:?}");
    assert_eq!(
        live.tools.len() + named,
        gathered.len(),
        "a tool was dropped without a diagnostic: {answer}"
    );
    let mut imported: Vec<&str> = live.tools.iter().map(|t| t.name.as_str()).collect();
    imported.sort_unstable();
    let count = imported.len();
    imported.dedup();
    assert_eq!(count, imported.len(), "the import holds a name twice");
    let (current, p) = registry::load(FileId(0), REGISTRY, false);
    assert!(p.is_empty());
    if !mcp_sync::collisions(&current, "srv", &live).is_empty() {
        return;
    }
    let (_, updated) = mcp_sync::sync(&current, "srv", &live);
    let mut names: Vec<&str> = updated.tools.iter().map(|t| t.name.as_str()).collect();
    names.sort_unstable();
    let before = names.len();
    names.dedup();
    assert_eq!(before, names.len(), "a sync yielded a name twice");
});
