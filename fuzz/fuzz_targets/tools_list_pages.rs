//! A live MCP server's `tools/list` answers, one page a line (each a JSON
//! `{"tools": [...], "nextCursor": ...}`), gathered under the bounds of
//! `mcp_pages` as `toolgate registry import-mcp` gathers them, imported and
//! synced against a small registry. The bounds hold, the joined answer is
//! always a tools/list result, and no sync yields a name twice.
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
    let mut complete = false;
    for line in text.lines() {
        let Ok(page) = serde_json::from_str::<serde_json::Value>(line) else { return };
        // What rmcp hands over: tools that are objects with a string name.
        let Some(tools) = page.get("tools").and_then(|t| t.as_array()) else { return };
        if !tools.iter().all(|t| t.get("name").is_some_and(|n| n.is_string())) {
            return;
        }
        let texts: Vec<String> = tools.iter().map(|t| t.to_string()).collect();
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
    let (live, problems) = registry::import_mcp(FileId(1), &answer, "srv");
    assert!(
        !problems.iter().any(|p| matches!(p, Problem::RegistryInvalid { .. })),
        "the joined pages are not a tools/list result: {answer}"
    );
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
