//! The run-state codec: anything reads back; an unreadable value admits no tool.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;
use toolgate_runtime::{AllowList, Exclusions, RunState, Table};

fn table() -> &'static Table {
    static T: OnceLock<Table> = OnceLock::new();
    T.get_or_init(|| {
        let reg = "[[tool]]\nname = \"a\"\ngroup = \"g\"\n[[tool]]\nname = \"load_skill\"\ngroup = \"s\"\n";
        let p = toolgate_compiler::project::Project::from_texts(("r.toml", reg), &[("p.tg", "provider p { zone local } configuration c { provider p }")]);
        toolgate_compiler::lower::table(&p.check().model.unwrap()).unwrap()
    })
}

fuzz_target!(|data: &[u8]| {
    // The raw bytes, as a host hands them in (strict: not UTF-8, duplicate
    // or unknown keys make the run unreadable); and the same as text.
    let strict = RunState::parse(data);
    let run = RunState::from_bytes(data);
    match &strict {
        Ok(r) => assert_eq!(r, &run),
        Err(e) => {
            assert_eq!(e.state, run);
            assert!(!run.is_readable(), "an error never reads as readable");
        }
    }
    let text = String::from_utf8_lossy(data);
    let _ = RunState::from_json(&text);
    let back = RunState::from_json(&run.to_json());
    assert_eq!(run, back, "the stored form round-trips");
    let ctx = table().context("c").unwrap().run(&run);
    if run.excluded == Exclusions::Unreadable || run.allowed == AllowList::Unreadable {
        assert!(ctx.offered().is_empty(), "an unreadable run admits no tool");
    }
});
