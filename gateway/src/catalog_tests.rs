use rmcp::model::Tool;
use toolgate_compiler::lower;
use toolgate_compiler::project::Project;
use toolgate_runtime::{Role, Table};

use super::*;

fn table(registry: &str, policy: &str) -> Table {
    let project = Project::from_texts(("registry.toml", registry), &[("policy.tg", policy)]);
    let model = project.check().model.expect("the test policy compiles");
    Table::load(&lower::compile(&model)).expect("the compiled table loads")
}

fn tool(name: &str) -> Tool {
    serde_json::from_value(serde_json::json!({
        "name": name, "inputSchema": {"type": "object"}
    }))
    .expect("a tool")
}

/// Server `a` registered `b_c` as `mcp_a_b_c`; server `a_b` lists `c`,
/// whose registry name is the same `mcp_a_b_c`.
const REGISTRY: &str =
    "[[tool]]\nname = \"mcp_a_b_c\"\ngroup = \"mcp_a\"\nserver = \"a\"\nenabled = true\n";
const POLICY: &str =
    "provider p { zone local } configuration c { provider p } remote-tools visible-to everyone";

#[test]
fn a_name_listed_by_another_server_than_the_registrys_is_neither_offered_nor_routed() {
    let t = table(REGISTRY, POLICY);
    let pins = Pins::new(None);
    let ctx = t.context("c").unwrap().role(Role::Admin);
    assert_eq!(ctx.decide("mcp_a_b_c").reason, None);
    // While `a` lists it, it is `a`'s and goes to `a` as `b_c`.
    let both = Catalog::new(vec![("a".into(), vec![tool("b_c")])]);
    let offered: Vec<_> = both
        .offered(&ctx, &t, &pins)
        .filter(|x| x.2)
        .map(|x| x.0.server.clone())
        .collect();
    assert_eq!(offered, ["a"]);
    let at = mcp::Provenance::default();
    assert_eq!(
        both.call(&ctx, &t, &pins, "mcp_a_b_c", at, CallMode::default())
            .map(|r| (r.server, r.name)),
        Ok(("a", "b_c"))
    );
    // Once only `a_b` lists a tool under that name: not offered, not routed.
    let other = Catalog::new(vec![("a".into(), vec![]), ("a_b".into(), vec![tool("c")])]);
    assert_eq!(other.len(), 1);
    assert!(other.offered(&ctx, &t, &pins).all(|x| !x.2));
    let refused = other
        .call(&ctx, &t, &pins, "mcp_a_b_c", at, CallMode::default())
        .expect_err("refused");
    assert_eq!(refused.reason.as_deref(), Some("notListed"));
    assert_eq!(refused.error, mcp::unknown_tool_error("mcp_a_b_c"));
}

#[test]
fn a_call_is_decided_before_it_is_routed_and_a_refusal_names_no_server() {
    let t = table(REGISTRY, &format!("{POLICY} tool mcp_a_b_c {{ disabled }}"));
    let pins = Pins::new(None);
    let ctx = t.context("c").unwrap().role(Role::Admin);
    let c = Catalog::new(vec![("a".into(), vec![tool("b_c")])]);
    let refused = c
        .call(
            &ctx,
            &t,
            &pins,
            "mcp_a_b_c",
            mcp::Provenance::default(),
            CallMode {
                stealth: true,
                approved: false,
            },
        )
        .expect_err("refused");
    assert_eq!(refused.reason.as_deref(), Some("toolDisabled"));
    // Stealth: exactly the answer for a tool nobody has.
    assert_eq!(refused.error, mcp::unknown_tool_error("mcp_a_b_c"));
    // A name no registry could hold is no tool at all.
    let bad = c
        .call(
            &ctx,
            &t,
            &pins,
            "mcp_a\nb",
            mcp::Provenance::default(),
            CallMode::default(),
        )
        .expect_err("refused");
    assert_eq!(bad.reason, None);
}

#[test]
fn the_same_listing_is_the_same_and_any_definition_or_server_change_is_not() {
    let listing = |server: &str, description: &str| {
        let mut t = tool("lookup");
        t.description = Some(description.to_string().into());
        Catalog::new(vec![(server.into(), vec![t, tool("notes")])])
    };
    let before = listing("crm", "Look a customer up");
    assert!(before.same_listing(&listing("crm", "Look a customer up")));
    // A changed description (a rug pull), another server, a tool more.
    assert!(!before.same_listing(&listing("crm", "Look a customer up, and mail them")));
    assert!(!before.same_listing(&listing("erp", "Look a customer up")));
    let more = Catalog::new(vec![(
        "crm".into(),
        vec![tool("lookup"), tool("notes"), tool("refund")],
    )]);
    assert!(!before.same_listing(&more));
    assert!(Catalog::default().same_listing(&Catalog::new(vec![])));
}
