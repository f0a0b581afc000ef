//! Bad input of every kind: a diagnostic or an error, never a panic, never a
//! decision that allows by default; bounded inputs stay bounded.

use proptest::prelude::*;
use toolgate_compiler::project::Project;
use toolgate_reference::table;
use toolgate_runtime::{classify, Answer, Classified, Role, RunState, Table};

const REG: &str = "[[tool]]\nname = \"a\"\ngroup = \"g\"\n[[tool]]\nname = \"load_skill\"\ngroup = \"s\"\n[[tool]]\nname = \"mcp_x_y\"\ngroup = \"mcp_x\"\nserver = \"x\"\nenabled = true\n";

fn check(policy: &str) -> toolgate_compiler::pipeline::Checked {
    Project::from_texts(("registry.toml", REG), &[("p.tg", policy)]).check()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_policy_text_gives_a_model_or_a_diagnostic(text in ".{0,300}") {
        let c = check(&text);
        prop_assert!(c.model.is_some() || !c.problems.is_empty());
        for p in &c.problems {
            let d = p.diagnostic();
            prop_assert!(d.span.end >= d.span.start);
        }
    }

    #[test]
    fn policy_shaped_noise_never_panics(parts in prop::collection::vec(prop::sample::select(vec![
        "tool", "group", "configuration", "exclude", "groups", "[", "]", "{", "}", ",", "a", "\"a.b\"", "mcp_x_*",
        "profile", "allow", "consumer", "gateway", "rule", "=>", "policy", "enabled", "not", "admin-only", "#c\n",
        "zone", "ceiling", "classes", "provider", "fallback", "skill", "tools", "message", "\"*\"", "-1", "data", "=",
    ]), 0..60)) {
        let text = parts.join(" ");
        let c = check(&text);
        prop_assert!(c.model.is_some() || !c.problems.is_empty());
        if c.model.is_some() {
            let f = toolgate_compiler::syntax::formatter::format(&text).unwrap();
            prop_assert_eq!(toolgate_compiler::syntax::formatter::format(&f).unwrap(), f.clone());
        }
    }

    #[test]
    fn arbitrary_bytes_never_load_as_a_table(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        prop_assert!(Table::load(&bytes).is_err());
        let mut framed = b"TGTABLE\0\x01\0\0\0".to_vec();
        framed.extend_from_slice(&bytes);
        prop_assert!(Table::load(&framed).is_err());
    }

    #[test]
    fn arbitrary_registries_never_panic(text in ".{0,300}") {
        let f = toolgate_compiler::source::FileId(0);
        let _ = toolgate_compiler::registry::load(f, &text, false);
        let _ = toolgate_compiler::registry::load(f, &text, true);
        let (r, _) = toolgate_compiler::registry::import_mcp(f, &text, "srv");
        prop_assert!(r.tools.is_empty() || text.contains("tools"));
    }

    #[test]
    fn a_run_state_that_cannot_be_read_admits_nothing(text in ".{0,120}") {
        let t = table(REG, &["provider p { zone local } configuration c { provider p }"]);
        let run = RunState::from_json(&text);
        let ctx = t.context("c").unwrap().role(Role::Admin).run(&run);
        let readable = matches!(run.allowed, toolgate_runtime::AllowList::Unrestricted | toolgate_runtime::AllowList::Only(_))
            && matches!(run.excluded, toolgate_runtime::Exclusions::Names(_));
        if !readable {
            prop_assert!(ctx.offered().is_empty());
        }
        prop_assert_eq!(RunState::from_json(&run.to_json()), run);
    }

    #[test]
    fn arbitrary_json_answers_are_never_success_without_a_result(v in json_value(), status in prop::option::of(100u16..600)) {
        let c = classify(&Answer { body: &v, http_status: status, origin: None, tool: None });
        if c == Classified::Success {
            prop_assert!(v.get("result").is_some_and(|r| r.is_object()) && v.get("error").is_none_or(|e| e.is_null()));
        }
    }

    #[test]
    fn no_text_in_a_deny_list_ever_makes_a_tool_offered(names in prop::collection::vec("[a-zA-Z0-9_.\\- ]{1,12}", 0..6)) {
        let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
        let base = table(REG, &["provider p { zone local } configuration c { provider p }"]);
        let p = format!("provider p {{ zone local }} configuration c {{ provider p exclude [{}] }}", quoted.join(", "));
        let c = check(&p);
        if let Some(m) = c.model {
            let t = toolgate_compiler::lower::table(&m).unwrap();
            for role in Role::ALL {
                let before = base.context("c").unwrap().role(role).offered();
                let after = t.context("c").unwrap().role(role).offered();
                prop_assert!(after.iter().all(|x| before.contains(x)));
            }
        }
    }
}

fn json_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i32>().prop_map(serde_json::Value::from),
        "[a-zA-Z :*-]{0,20}".prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(serde_json::Value::from),
            prop::collection::btree_map(
                prop::sample::select(vec![
                    "jsonrpc",
                    "error",
                    "result",
                    "code",
                    "message",
                    "data",
                    "isError",
                    "content",
                    "text",
                    "plugin_error_code"
                ])
                .prop_map(str::to_string),
                inner,
                0..4
            )
            .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

// ---------------------------------------------------------------- bounded inputs

#[test]
fn a_tool_index_past_the_table_is_never_offered() {
    // 70 tools: the last word is partial, and the words past it do not exist.
    let mut reg = String::new();
    for i in 0..70 {
        reg.push_str(&format!("[[tool]]\nname = \"t{i}\"\ngroup = \"g\"\n"));
    }
    let policy = "group g { class publicContent }\nprovider p { zone local }\nconfiguration c { provider p groups [g] }\n";
    let t = table(&reg, &[policy]);
    let ctx = t.context("c").expect("c").role(Role::User);
    assert!((0..70).all(|i| ctx.is_offered(i) && ctx.decide_id(i).allowed));
    for id in [70, 127, 128, 1_000, u32::MAX] {
        assert!(!ctx.is_offered(id), "index {id}");
    }
}

#[test]
fn a_50_mb_policy_is_refused_with_a_diagnostic() {
    let big = "# padding padding padding padding\n".repeat(50 * 1024 * 1024 / 34);
    let c = check(&big);
    let codes: Vec<&str> = c.problems.iter().map(|p| p.code()).collect();
    assert_eq!(codes, vec!["TG0002"]);
}

#[test]
fn nesting_ten_thousand_deep_is_a_diagnostic_not_a_stack_overflow() {
    let deep = format!("classes {}", "[".repeat(10_000));
    assert_eq!(check(&deep).problems[0].code(), "TG0001");
    let deep = format!("configuration c {}", "{".repeat(10_000));
    assert_eq!(check(&deep).problems[0].code(), "TG0001");
    // Registries: JSON and TOML nesting is refused by their parsers' depth limits.
    let nested = format!("{}1{}", "[".repeat(10_000), "]".repeat(10_000));
    for (registry, is_json) in [
        (
            format!(
                "{{\"tool\": [{{\"name\": \"a\", \"group\": \"g\", \"input_schema\": {nested}}}]}}"
            ),
            true,
        ),
        (
            format!("[[tool]]\nname = \"a\"\ngroup = \"g\"\ninput_schema = {nested}\n"),
            false,
        ),
    ] {
        let (_, p) = toolgate_compiler::registry::load(
            toolgate_compiler::source::FileId(0),
            &registry,
            is_json,
        );
        assert_eq!(p[0].code(), "TG0004", "JSON: {is_json}");
    }
    let run = RunState::from_json(&format!(
        "{{\"excludedToolNames\": {}\"a\"{}}}",
        "[".repeat(10_000),
        "]".repeat(10_000)
    ));
    assert_eq!(run.excluded, toolgate_runtime::Exclusions::Unreadable);
}

#[test]
fn a_diagnostic_storm_is_bounded() {
    // 100,000 unknown tool references: every one is found, in bounded time.
    let names: Vec<String> = (0..100_000).map(|i| format!("x{i}")).collect();
    let p = format!("configuration c {{ groups [{}] }}", names.join(", "));
    let started = std::time::Instant::now();
    let c = check(&p);
    assert_eq!(c.problems.len(), 100_000);
    assert!(started.elapsed().as_secs() < 60, "{:?}", started.elapsed());
}
