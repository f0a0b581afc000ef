//! Registry loaders (TOML, JSON) and the MCP tools/list import.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolgate_compiler::registry;
use toolgate_compiler::source::FileId;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let (r, _) = registry::load(FileId(0), text, false);
        let _ = registry::to_toml(&r);
        let (r, _) = registry::load(FileId(0), text, true);
        let _ = registry::to_json(&r);
        let (r, _) = registry::import_mcp(FileId(0), text, "srv");
        for t in &r.tools {
            assert!(registry::remote_name_problem(&t.name).is_none(), "an imported name breaks the rule: {}", t.name);
        }
    }
});
