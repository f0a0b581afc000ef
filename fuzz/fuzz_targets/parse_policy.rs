//! The policy parser and the validator: any text gives a tree or a diagnostic, never a panic.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolgate_compiler::project::Project;

const REGISTRY: &str = "[[tool]]\nname = \"a\"\ngroup = \"g\"\n[[tool]]\nname = \"mcp_s_b\"\ngroup = \"mcp_s\"\nserver = \"s\"\n";

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = toolgate_compiler::syntax::parse::parse_policy(toolgate_compiler::source::FileId(0), text);
        let checked = Project::from_texts(("registry.toml", REGISTRY), &[("p.tg", text)]).check();
        for p in &checked.problems {
            let _ = p.diagnostic();
        }
        if let Some(m) = checked.model {
            let bytes = toolgate_compiler::lower::compile(&m);
            toolgate_runtime::Table::load(&bytes).expect("a compiled table loads");
        }
    }
});
