//! Every JSON value a server can send in `tools/list`
//! survives `import_mcp` and reads back identically from both registry
//! formats (TOML with its `$json` escape, and JSON).

use proptest::prelude::*;
use serde_json::{json, Map, Value};
use toolgate_compiler::registry::{self, Registry, Tool};
use toolgate_compiler::source::{FileId, Span};

fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("$json".to_string()),
        Just(String::new()),
        Just("type".to_string()),
        "[a-zA-Z_$]{1,8}",
        any::<String>(),
    ]
}

/// Any JSON value serde_json can hold: null, booleans, every i64 and u64,
/// finite floats, any string, nested arrays and objects, and objects that
/// look like the TOML escape.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("JSON has finite numbers only", |f| f.is_finite())
            .prop_map(Value::from),
        any::<String>().prop_map(Value::String),
        any::<String>().prop_map(|s| json!({ "$json": s })),
    ];
    leaf.prop_recursive(5, 96, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn answer() -> impl Strategy<Value = Value> {
    let tool = (
        proptest::option::of(any::<String>()),
        proptest::option::of(any::<String>()),
        proptest::option::of(json_value()),
        proptest::option::of(json_value()),
        proptest::option::of(json_value()),
    );
    prop::collection::vec(tool, 0..4).prop_map(|tools| {
        let tools: Vec<Value> = tools
            .into_iter()
            .enumerate()
            .map(|(i, (title, description, input, output, annotations))| {
                let mut t = Map::new();
                t.insert("name".into(), json!(format!("tool-{i}")));
                for (k, v) in [
                    ("title", title.map(Value::String)),
                    ("description", description.map(Value::String)),
                    ("inputSchema", input),
                    ("outputSchema", output),
                    ("annotations", annotations),
                ] {
                    if let Some(v) = v {
                        t.insert(k.into(), v);
                    }
                }
                Value::Object(t)
            })
            .collect();
        json!({ "tools": tools })
    })
}

/// The tools without their spans (a span is where a name stands in its file).
fn tools(r: &Registry) -> Vec<Tool> {
    r.tools
        .iter()
        .map(|t| Tool {
            span: Span::new(FileId(0), 0..0),
            ..t.clone()
        })
        .collect()
}

fn round_trip(answer: &Value) {
    let text = answer.to_string();
    let (imported, problems) = registry::import_mcp(FileId(0), &text, "srv");
    assert!(problems.is_empty(), "{problems:?}");
    // Kept as given: the compact JSON text of what the server sent.
    for (t, sent) in imported
        .tools
        .iter()
        .zip(answer["tools"].as_array().unwrap())
    {
        let kept = |v: Option<&registry::JsonText>| v.map(|v| v.get().to_string());
        assert_eq!(
            kept(t.input_schema.as_ref()),
            sent.get("inputSchema").map(Value::to_string)
        );
        assert_eq!(
            kept(t.output_schema.as_ref()),
            sent.get("outputSchema").map(Value::to_string)
        );
        assert_eq!(
            kept(t.annotations.as_ref()),
            sent.get("annotations").map(Value::to_string)
        );
    }
    let toml = registry::to_toml(&imported);
    let (from_toml, problems) = registry::load(FileId(0), &toml, false);
    assert!(problems.is_empty(), "{problems:?}\n{toml}");
    assert_eq!(tools(&from_toml), tools(&imported), "{toml}");
    let json = registry::to_json(&imported);
    let (from_json, problems) = registry::load(FileId(0), &json, true);
    assert!(problems.is_empty(), "{problems:?}\n{json}");
    assert_eq!(tools(&from_json), tools(&imported), "{json}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_tools_list_answer_survives_both_formats(a in answer()) {
        round_trip(&a);
    }
}

/// What Pydantic writes for an optional argument (mcp-server-git's
/// `git_log`), `$defs`, annotations, and a large schema.
#[test]
fn pydantic_optionals_defs_annotations_and_a_large_schema() {
    let pydantic = json!({ "tools": [{
        "name": "git_log",
        "description": "Shows the commit logs — ünïcödé, 日本語, emoji 🦀",
        "inputSchema": {
            "properties": {
                "repo_path": { "title": "Repo Path", "type": "string" },
                "start_timestamp": {
                    "anyOf": [{ "type": "string" }, { "type": "null" }],
                    "default": null,
                    "title": "Start Timestamp"
                },
                "max": { "default": 18446744073709551615u64, "type": "integer" }
            },
            "required": ["repo_path"],
            "type": "object",
            "$defs": { "TimeResult": { "type": "object", "properties": { "is_dst": { "type": "boolean" } } } },
            "title": "logArguments"
        },
        "outputSchema": { "$ref": "#/$defs/TimeResult", "enum": [1.5, -0.0, 1e300, null] },
        "annotations": { "readOnlyHint": true, "destructiveHint": false }
    }]});
    round_trip(&pydantic);
    // The TOML keeps null visibly, in the schema's own key order.
    let (imported, _) = registry::import_mcp(FileId(0), &pydantic.to_string(), "git");
    let toml = registry::to_toml(&imported);
    assert!(
        toml.contains(r#"start_timestamp = { anyOf = [{ type = "string" }, { type = "null" }], default = { "$json" = "null" }, title = "Start Timestamp" }"#),
        "{toml}"
    );
    // About 2 MB of schema: 20,000 properties, each with a null default.
    let props: Map<String, Value> = (0..20_000)
        .map(|i| (format!("p{i}"), json!({ "type": ["string", "null"], "default": null, "description": "x".repeat(40) })))
        .collect();
    let large = json!({ "tools": [{ "name": "big", "inputSchema": { "type": "object", "properties": props } }] });
    assert!(large.to_string().len() > 1_500_000);
    round_trip(&large);
}
