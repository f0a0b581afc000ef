//! JSON values (input and output schemas, annotations) in a TOML registry.
//!
//! TOML has no null, its integers stop at 2^63 - 1, and the `toml` writer
//! moves a table's plain values before its sub-tables. So a registry writes
//! each JSON value on one line as TOML inline values, in the JSON's own key
//! order, and carries what TOML cannot hold in an escape: a one-key inline
//! table `{ "$json" = "<JSON text>" }`. `null` is `{ "$json" = "null" }`.
//! An object that is itself one `$json` key with a string value is escaped
//! too, so reading an escape back is never ambiguous. docs/registry.md,
//! "JSON values in TOML".

use serde_json::{Map, Value};

/// The key of the escape.
pub const ESCAPE_KEY: &str = "$json";

/// The value as TOML inline value text (one line).
pub fn inline(v: &Value) -> String {
    let mut out = String::new();
    write_value(v, &mut out);
    out
}

fn write_value(v: &Value, out: &mut String) {
    if needs_escape(v) {
        out.push_str("{ ");
        write_key(ESCAPE_KEY, out);
        out.push_str(" = ");
        write_string(&v.to_string(), out);
        out.push_str(" }");
        return;
    }
    match v {
        Value::Null => unreachable!("null is escaped"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        // serde_json's number text is valid TOML: an integer in i64 range
        // (a larger one is escaped), or a float with `.` or an exponent.
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Value::Object(map) if map.is_empty() => out.push_str("{}"),
        Value::Object(map) => {
            out.push_str("{ ");
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_key(k, out);
                out.push_str(" = ");
                write_value(item, out);
            }
            out.push_str(" }");
        }
    }
}

/// What TOML cannot hold as itself: null, an integer above i64, and an
/// object that would read as an escape.
fn needs_escape(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Number(n) => n.is_u64() && n.as_i64().is_none(),
        Value::Object(map) => is_escape(map),
        _ => false,
    }
}

fn is_escape(map: &Map<String, Value>) -> bool {
    map.len() == 1 && matches!(map.get(ESCAPE_KEY), Some(Value::String(_)))
}

fn write_key(k: &str, out: &mut String) {
    let bare = !k.is_empty()
        && k.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if bare {
        out.push_str(k);
    } else {
        write_string(k, out);
    }
}

/// A TOML basic string: one line, every control character escaped.
fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\u{:04X}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Undo the escape in a value read from TOML. `Err` names what is wrong
/// when an escape does not hold JSON text.
pub fn unescape(v: Value) -> Result<Value, String> {
    match v {
        Value::Object(map) if is_escape(&map) => match map.get(ESCAPE_KEY) {
            Some(Value::String(text)) => serde_json::from_str(text).map_err(|e| {
                format!("a `{{ \"{ESCAPE_KEY}\" = \"...\" }}` escape does not hold JSON text ({e})")
            }),
            _ => unreachable!("is_escape checked the key"),
        },
        Value::Object(map) => map
            .into_iter()
            .map(|(k, item)| unescape(item).map(|item| (k, item)))
            .collect::<Result<Map<_, _>, _>>()
            .map(Value::Object),
        Value::Array(items) => items
            .into_iter()
            .map(unescape)
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        other => Ok(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn through_toml(v: &Value) -> Value {
        let doc = format!("x = {}\n", inline(v));
        let t: Map<String, Value> = toml::from_str(&doc).expect(&doc);
        unescape(t["x"].clone()).unwrap()
    }

    #[test]
    fn null_and_what_toml_cannot_hold_are_escaped() {
        let v: Value = serde_json::from_str(
            r#"{"default":null,"anyOf":[{"type":"string"},{"type":"null"}],"max":18446744073709551615,"e":{"$json":"x"}}"#,
        )
        .unwrap();
        assert_eq!(
            inline(&v),
            r#"{ default = { "$json" = "null" }, anyOf = [{ type = "string" }, { type = "null" }], max = { "$json" = "18446744073709551615" }, e = { "$json" = "{\"$json\":\"x\"}" } }"#
        );
        assert_eq!(through_toml(&v).to_string(), v.to_string());
    }

    #[test]
    fn key_order_floats_and_strange_keys_survive() {
        let v: Value = serde_json::from_str(
            r#"{"z":1,"a":{"":[],"k y":{}},"f":1e300,"g":-0.0,"h":0.1,"s":"tab\t\u0001é\u007f\"\\"}"#,
        )
        .unwrap();
        assert_eq!(through_toml(&v).to_string(), v.to_string());
    }

    #[test]
    fn a_broken_escape_is_an_error() {
        let v: Value = serde_json::from_str(r#"{"a":{"$json":"{nope"}}"#).unwrap();
        assert!(unescape(v).unwrap_err().contains("does not hold JSON text"));
    }
}
