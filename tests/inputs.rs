//! What hosts and gateways hand in (stored runs, enforcement strings, live
//! tools, gateway answers) never widens access (docs/gate-semantics.md §8,
//! §13, §14, §15).

use proptest::prelude::*;
use serde_json::Value;
use toolgate_reference::table;
use toolgate_runtime::{
    classify_raw, Classified, Envelope, RawAnswer, Reason, RefusalKind, Role, RunState,
};

const REG: &str = "[[tool]]\nname = \"a\"\ngroup = \"g\"\n[[tool]]\nname = \"b\"\ngroup = \"g\"\n[[tool]]\nname = \"load_skill\"\ngroup = \"s\"\n";
const POLICY: &str = "provider p { zone local } configuration c { provider p }";

fn kind(c: &Classified) -> Option<RefusalKind> {
    match c {
        Classified::Refusal { refusal } => Some(refusal.kind),
        _ => None,
    }
}

fn raw(body: &str, status: Option<u16>) -> Classified {
    classify_raw(&RawAnswer {
        body: body.as_bytes(),
        http_status: status,
        headers: &[],
        origin: None,
        tool: Some("refund.issue"),
    })
}

#[test]
fn a_stored_run_with_a_misspelt_or_duplicate_key_admits_no_tool() {
    let t = table(REG, &[POLICY]);
    let base = t.context("c").unwrap().role(Role::Admin);
    assert_eq!(base.offered(), ["a", "b", "load_skill"]);
    for (stored, reason) in [
        (
            r#"{"allowed_tool_names":["a"]}"#,
            Reason::ConfigurationGroup,
        ),
        (
            r#"{"allowedToolNames":["a"],"allowedToolNames":null}"#,
            Reason::ConfigurationGroup,
        ),
        // A part of the wrong type refuses with its own gate.
        (
            r#"{"allowedToolNames":null,"excludedToolNames":"a"}"#,
            Reason::ConfigurationExcluded,
        ),
    ] {
        let ctx = base.clone().run(&RunState::from_json(stored));
        assert!(ctx.offered().is_empty(), "{stored}");
        let d = ctx.decide("load_skill");
        assert_eq!((d.allowed, d.reason), (false, Some(reason)), "{stored}");
    }
    let ctx = base
        .clone()
        .run(&RunState::from_bytes(b"{\"allowedToolNames\":[\"a\xff\"]}"));
    assert!(ctx.offered().is_empty());
    // Absent keys keep their meaning: no allow-list key is unrestricted.
    let ctx = base.run(&RunState::from_json(r#"{"excludedToolNames":["b"]}"#));
    assert_eq!(ctx.offered(), ["a", "load_skill"]);
}

#[test]
fn ambiguous_answers_are_policy_refusals_never_success() {
    for body in [
        // A key named twice (the last would say success).
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true,"isError":false}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32003,"message":"Access denied"},"id":1,"result":{}}"#,
        // isError that is not a boolean.
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":"false"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":0}}"#,
        // A JSON-RPC error nested in the result.
        r#"{"jsonrpc":"2.0","id":1,"result":{"error":{"code":-32003,"message":"Access denied"}}}"#,
        // Both error and result, even a null error.
        r#"{"jsonrpc":"2.0","id":1,"error":null,"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"},"result":{}}"#,
        // A result beside other members.
        r#"{"body":{"error":{"code":-32003,"message":"Access denied"}},"result":{}}"#,
        // Not JSON, not UTF-8, or not one value.
        "<html>403 Forbidden</html>",
        "",
        r#"{"result":{}} {"result":{}}"#,
    ] {
        assert_eq!(
            kind(&raw(body, Some(200))),
            Some(RefusalKind::Policy),
            "{body}"
        );
    }
    let c = classify_raw(&RawAnswer {
        body: b"{\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"\xff\"}]}}",
        http_status: None,
        headers: &[],
        origin: None,
        tool: None,
    });
    assert_eq!(kind(&c), Some(RefusalKind::Policy));
    // The unambiguous shapes stay what they were.
    assert_eq!(
        raw(
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":false}}"#,
            None
        ),
        Classified::Success
    );
    assert!(matches!(
        raw(r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"boom"}],"isError":true}}"#, None),
        Classified::ToolFailure { text } if text == "boom"
    ));
}

#[test]
fn the_plugin_violation_rule_needs_http_422_and_an_rbac_denial_stays_not_in_profile() {
    let plugin = r#"{"error":{"code":-32602,"message":"Plugin Violation: pii","data":{"plugin_error_code":"PROHIBITED_CONTENT","plugin_name":"PIIFilter"}}}"#;
    assert_eq!(
        kind(&raw(plugin, Some(422))),
        Some(RefusalKind::ContentPolicy)
    );
    // The same body on another status is not a content refusal (nothing retryable).
    let c = raw(plugin, Some(200));
    assert_eq!(kind(&c), Some(RefusalKind::Policy));
    let rbac = r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32003,"message":"Access denied","data":{"method":"tools/call","plugin_error_code":"X"}}}"#;
    let c = raw(rbac, Some(403));
    assert_eq!(kind(&c), Some(RefusalKind::Gate(Reason::NotInProfile)));
    let Classified::Refusal { refusal } = c else {
        unreachable!()
    };
    assert!(!refusal.retryable);
}

#[test]
fn an_envelope_is_exactly_its_keys_and_every_reader_agrees() {
    let e = Envelope::read(br#"{"httpStatus":403,"origin":"mulesoft","body":{"error":{"code":-32003,"message":"Access denied to: x"}}}"#);
    assert_eq!(e.http_status, Some(403));
    assert_eq!(e.origin.as_deref(), Some("mulesoft"));
    assert_eq!(
        kind(&classify_raw(&e.answer(None, None, None))),
        Some(RefusalKind::Gate(Reason::NotInProfile))
    );
    // A body that only looks like an envelope is a bare body: never success.
    let text = br#"{"body":{"error":{"code":-32003,"message":"Access denied"}},"result":{}}"#;
    let e = Envelope::read(text);
    assert_eq!((e.http_status, e.body.as_slice()), (None, &text[..]));
    assert_eq!(
        kind(&classify_raw(&e.answer(None, None, None))),
        Some(RefusalKind::Policy)
    );
    // The body's bytes are kept as written: its duplicate keys are still seen.
    let e =
        Envelope::read(br#"{"httpStatus":200,"body":{"result":{"isError":true,"isError":false}}}"#);
    assert_eq!(
        kind(&classify_raw(&e.answer(None, None, None))),
        Some(RefusalKind::Policy)
    );
}

/// JSON text of `v` in which the `target`-th object (preorder) names its
/// first key a second time, with `dup` as the second value.
fn with_duplicate(v: &Value, target: usize, dup: &Value, seen: &mut usize, out: &mut String) {
    match v {
        Value::Object(m) => {
            let me = *seen;
            *seen += 1;
            out.push('{');
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::to_string(k).unwrap());
                out.push(':');
                with_duplicate(x, target, dup, seen, out);
            }
            if me == target {
                if let Some(k) = m.keys().next() {
                    out.push(',');
                    out.push_str(&serde_json::to_string(k).unwrap());
                    out.push(':');
                    out.push_str(&dup.to_string());
                }
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                with_duplicate(x, target, dup, seen, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

fn objects(v: &Value) -> usize {
    match v {
        Value::Object(m) => 1 + m.values().map(objects).sum::<usize>(),
        Value::Array(a) => a.iter().map(objects).sum(),
        _ => 0,
    }
}

fn nonempty_objects(v: &Value) -> Vec<usize> {
    fn walk(v: &Value, n: &mut usize, out: &mut Vec<usize>) {
        match v {
            Value::Object(m) => {
                if !m.is_empty() {
                    out.push(*n);
                }
                *n += 1;
                for x in m.values() {
                    walk(x, n, out);
                }
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, n, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(v, &mut 0, &mut out);
    out
}

fn success_body() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i32>().prop_map(Value::from),
        "[a-zA-Z :*-]{0,12}".prop_map(Value::from),
    ];
    let content = leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::from),
            prop::collection::btree_map("[a-z]{1,6}", inner, 1..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    });
    (content, any::<bool>()).prop_map(|(c, is_error)| {
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [c], "isError": is_error}})
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    /// A key named twice anywhere in an answer that would otherwise be
    /// success or a tool failure makes it a policy refusal.
    #[test]
    fn an_answer_with_a_duplicate_key_anywhere_is_never_success(
        body in success_body(),
        pick in any::<prop::sample::Index>(),
        dup in prop_oneof![Just(Value::Bool(false)), Just(Value::Null), Just(serde_json::json!({}))],
    ) {
        let candidates = nonempty_objects(&body);
        prop_assume!(!candidates.is_empty());
        let target = candidates[pick.index(candidates.len())];
        let mut text = String::new();
        with_duplicate(&body, target, &dup, &mut 0, &mut text);
        prop_assert!(objects(&body) > target);
        let c = raw(&text, Some(200));
        prop_assert_eq!(kind(&c), Some(RefusalKind::Policy), "{}", text);
    }

    /// A stored run with any key besides the two of the stored form admits
    /// no tool, whatever else it says.
    #[test]
    fn a_stored_run_with_any_unknown_key_never_widens(
        key in "[a-zA-Z_]{1,20}",
        allowed in prop::option::of(prop::collection::vec(prop::sample::select(vec!["a", "b", "load_skill"]), 0..3)),
    ) {
        prop_assume!(key != "allowedToolNames" && key != "excludedToolNames");
        let t = table(REG, &[POLICY]);
        let stored = serde_json::json!({"allowedToolNames": allowed, key.clone(): ["b"]});
        let run = RunState::from_json(&stored.to_string());
        prop_assert_eq!(&run, &RunState::unreadable());
        for role in Role::ALL {
            prop_assert!(t.context("c").unwrap().role(role).run(&run).offered().is_empty());
        }
    }
}

#[test]
fn toolgates_own_refusal_shape_classifies_as_its_kind_with_recomputed_class() {
    // What toolgate's MCP proxy answers for a refused call: the typed refusal
    // in `error.data.toolgate`, whatever JSON-RPC code carries it.
    let body = r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32010,"message":"refused","data":{"toolgate":{"kind":"configurationExcluded","class":"runtime","retryable":true,"tool":"delete_record","configuration":"editor-chat","file":"configurations.tg"}}}}"#;
    let Classified::Refusal { refusal } = raw(body, Some(200)) else {
        panic!("not a refusal")
    };
    assert_eq!(
        refusal.kind,
        RefusalKind::Gate(Reason::ConfigurationExcluded)
    );
    // The answer's own claims of class and retryability are not trusted.
    assert_eq!(
        (refusal.class, refusal.retryable, refusal.rule.as_deref()),
        (
            toolgate_runtime::RefusalClass::Configuration,
            false,
            Some("toolgate")
        )
    );
    assert_eq!(refusal.tool.as_deref(), Some("delete_record"));
    assert_eq!(refusal.configuration.as_deref(), Some("editor-chat"));
    // An unknown kind there is not trusted either: the built-in rules decide.
    let body = r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32010,"message":"x","data":{"toolgate":{"kind":"allowed"}}}}"#;
    assert_eq!(kind(&raw(body, None)), Some(RefusalKind::Policy));
}
