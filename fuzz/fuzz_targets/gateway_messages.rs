//! The gateway's handling of what peers send: an upstream's `tools/list`
//! page (any JSON, read as the SDK reads it) mapped to registry names, and
//! client tool names decided and routed against a real table, with pins on
//! and off; and any configuration text. Nothing panics; a routed call is
//! one the table allows, under the name its server listed; every refusal
//! is one of the contract's codes, its message free of raw control
//! characters; every offered tool is allowed.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use toolgate_gateway::catalog::Catalog;
use toolgate_gateway::pins::Pins;
use toolgate_runtime::{mcp, Role, Table};

struct Fixture {
    table: Table,
    pinned: Pins,
    open: Pins,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let project =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../policies/real-servers");
        let table = toolgate_service::Source::Project(project.clone())
            .load()
            .expect("the example compiles");
        Fixture {
            table,
            pinned: Pins::new(Some(project.join("registry.toml"))),
            open: Pins::new(None),
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else { return };
    let Ok(text) = std::str::from_utf8(rest) else { return };
    if selector & 0x80 != 0 {
        let _ = toolgate_gateway::Config::from_toml(text, std::path::Path::new("."));
        return;
    }
    let f = fixture();
    let mut lines = text.lines();
    let Some(page) = lines.next() else { return };
    let Ok(value) = serde_json::from_str::<serde_json::Value>(page) else { return };
    let Some(tools) = value.get("tools").cloned() else { return };
    let Ok(tools) = serde_json::from_value::<Vec<rmcp::model::Tool>>(tools) else { return };
    let server = ["git", "time", "fetch", "git_x"][usize::from(selector & 3)];
    let catalog = Catalog::new(vec![(server.to_string(), tools)]);
    let role = [Role::Admin, Role::User, Role::None][usize::from(selector >> 2) % 3];
    let consumer = (selector & 0x20 != 0).then_some("review-bot");
    let stealth = selector & 0x40 != 0;
    let Ok(ctx) = f.table.context("developer-chat") else { return };
    let ctx = ctx.role(role).consumer(consumer);
    let pins = if selector & 0x10 != 0 { &f.pinned } else { &f.open };
    for (e, d, offered) in catalog.offered(&ctx, &f.table, pins) {
        if offered {
            assert!(d.allowed, "{} offered but refused", e.registry_name);
        }
    }
    for name in lines {
        match catalog.call(&ctx, &f.table, pins, name, mcp::Provenance::default(), stealth) {
            Ok(route) => {
                assert!(ctx.decide(name).allowed, "{name} routed but refused");
                assert_eq!(
                    toolgate_runtime::names::remote_tool_name(route.server, route.name),
                    name
                );
            }
            Err(refused) => {
                let e = refused.error;
                assert!(
                    [mcp::CODE_UNKNOWN_TOOL, mcp::CODE_CONFIGURATION_REFUSAL, mcp::CODE_RUNTIME_REFUSAL]
                        .contains(&e.code),
                    "{e:?}"
                );
                assert!(
                    !e.message.chars().any(toolgate_runtime::names::is_invisible),
                    "{e:?}"
                );
                if stealth {
                    assert_eq!(e, mcp::unknown_tool_error(name));
                }
            }
        }
    }
});
