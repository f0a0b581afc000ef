//! The lists every host carries by hand-readable name (Python stubs and
//! load-error codes, PHP's `Reason` cases, Node's declarations), written by
//! one generator from the runtime's catalogue (`host::catalogue()`, what the
//! C ABI returns as `toolgate_codes_json`), as the C header and the PHP
//! exceptions are generated.
//!
//! Each list sits in its host file between two marker lines,
//! `generated: NAME` and `end generated: NAME` (in the file's comment
//! syntax); the text between them is this generator's. Without
//! `UPDATE_HOST_LISTS=1` the test fails when a file differs from what the
//! catalogue makes now (the message says how to regenerate); with it, the
//! files are rewritten:
//!
//! `UPDATE_HOST_LISTS=1 cargo test -p toolgate-reference --test host_lists`

use std::path::{Path, PathBuf};

use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the repository")
        .to_path_buf()
}

/// The catalogue's `key`, each item's `field`, in the catalogue's order.
fn names(catalogue: &Value, key: &str, field: &str) -> Vec<String> {
    catalogue[key]
        .as_array()
        .expect("a catalogue list")
        .iter()
        .map(|v| v[field].as_str().expect("a string field").to_string())
        .collect()
}

/// Each value once, in order of first appearance.
fn distinct(values: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for v in values {
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// The roles, most privileged first (as every host's type lists them).
fn roles(c: &Value) -> Vec<String> {
    let mut r: Vec<(u64, String)> = c["roles"]
        .as_array()
        .expect("roles")
        .iter()
        .map(|v| {
            (
                v["number"].as_u64().expect("a number"),
                v["name"].as_str().expect("a name").to_string(),
            )
        })
        .collect();
    r.sort_by_key(|(n, _)| std::cmp::Reverse(*n));
    r.into_iter().map(|(_, n)| n).collect()
}

/// The load and file error codes (statuses that have a `code`).
fn load_codes(c: &Value) -> Vec<String> {
    c["statuses"]
        .as_array()
        .expect("statuses")
        .iter()
        .filter_map(|s| s["code"].as_str().map(str::to_string))
        .collect()
}

fn py_literal(name: &str, items: &[String], multiline: bool) -> String {
    if multiline {
        let mut s = format!("{name} = Literal[\n");
        for i in items {
            s.push_str(&format!("    \"{i}\",\n"));
        }
        s.push_str("]\n");
        s
    } else {
        let inner: Vec<String> = items.iter().map(|i| format!("\"{i}\"")).collect();
        format!("{name} = Literal[{}]\n", inner.join(", "))
    }
}

fn python_types(c: &Value) -> String {
    let kinds = names(c, "refusalKinds", "code");
    py_literal("Role", &roles(c), false)
        + &py_literal("ReasonCode", &names(c, "gates", "code"), true)
        + &py_literal(
            "RefusalClass",
            &distinct(names(c, "refusalKinds", "class")),
            false,
        )
        + &py_literal(
            "RefusalAction",
            &distinct(names(c, "refusalKinds", "action")),
            false,
        )
        + &py_literal("RefusalKind", &kinds, true)
}

fn python_load_codes(c: &Value) -> String {
    py_literal("LoadErrorCode", &load_codes(c), true)
}

fn python_kind_classes(c: &Value) -> String {
    let mut s = String::new();
    for k in c["refusalKinds"].as_array().expect("kinds") {
        let base = match k["class"].as_str() {
            Some("runtime") => "RuntimeRefusal",
            Some("approval") => "ApprovalRefusal",
            _ => "ConfigurationRefusal",
        };
        s.push_str(&format!(
            "class {}({base}):\n    KIND: Literal[\"{}\"]\n",
            k["exception"].as_str().expect("an exception name"),
            k["code"].as_str().expect("a code")
        ));
    }
    s
}

/// `notRegistered` -> `NotRegistered`.
fn pascal(code: &str) -> String {
    let mut ch = code.chars();
    ch.next()
        .map(|f| f.to_uppercase().collect::<String>() + ch.as_str())
        .unwrap_or_default()
}

fn php_reason_cases(c: &Value) -> String {
    names(c, "gates", "code")
        .iter()
        .map(|g| format!("    case {} = '{g}';\n", pascal(g)))
        .collect()
}

fn ts_types(c: &Value) -> String {
    let mut s = String::from(
        "/** A reason code: the gates in their fixed order (catalogue `gates`). */\nexport type Reason =\n",
    );
    let gates = names(c, "gates", "code");
    for (i, g) in gates.iter().enumerate() {
        let end = if i + 1 == gates.len() { ";" } else { "" };
        s.push_str(&format!("  | '{g}'{end}\n"));
    }
    let roles: Vec<String> = roles(c).iter().map(|r| format!("'{r}'")).collect();
    s.push_str(&format!("\nexport type Role = {};\n", roles.join(" | ")));
    s
}

/// One generated region: its file, name, comment prefix and text.
struct Region {
    file: &'static str,
    name: &'static str,
    comment: &'static str,
    render: fn(&Value) -> String,
}

const REGIONS: &[Region] = &[
    Region {
        file: "bindings/python/python/toolgate/_native.pyi",
        name: "types",
        comment: "#",
        render: python_types,
    },
    Region {
        file: "bindings/python/python/toolgate/_errors.py",
        name: "load error codes",
        comment: "#",
        render: python_load_codes,
    },
    Region {
        file: "bindings/python/python/toolgate/_errors.pyi",
        name: "load error codes",
        comment: "#",
        render: python_load_codes,
    },
    Region {
        file: "bindings/python/python/toolgate/_errors.pyi",
        name: "refusal kinds",
        comment: "#",
        render: python_kind_classes,
    },
    Region {
        file: "bindings/php/src/Reason.php",
        name: "gates",
        comment: "//",
        render: php_reason_cases,
    },
    Region {
        file: "bindings/node/index.d.ts",
        name: "types",
        comment: "//",
        render: ts_types,
    },
];

/// `text` with the region between its markers replaced by `body`.
fn with_region(text: &str, r: &Region, body: &str) -> String {
    let begin = format!(
        "{} generated: {} (UPDATE_HOST_LISTS=1 cargo test -p toolgate-reference --test host_lists)\n",
        r.comment, r.name
    );
    let end = format!("{} end generated: {}\n", r.comment, r.name);
    let start = text
        .find(&begin)
        .unwrap_or_else(|| panic!("{}: no line `{}`", r.file, begin.trim_end()))
        + begin.len();
    let stop = text[start..]
        .find(&end)
        .unwrap_or_else(|| panic!("{}: no line `{}`", r.file, end.trim_end()))
        + start;
    format!("{}{body}{}", &text[..start], &text[stop..])
}

#[test]
fn every_host_list_is_the_catalogues() {
    let catalogue = toolgate_runtime::host::catalogue();
    let update = std::env::var_os("UPDATE_HOST_LISTS").is_some();
    let mut stale = Vec::new();
    for r in REGIONS {
        let path = root().join(r.file);
        let text = std::fs::read_to_string(&path).expect("a host file");
        let made = with_region(&text, r, &(r.render)(&catalogue));
        if made != text {
            if update {
                std::fs::write(&path, made).expect("written");
            } else {
                stale.push(format!("{} ({})", r.file, r.name));
            }
        }
    }
    assert!(
        stale.is_empty(),
        "stale host lists: {}; run `UPDATE_HOST_LISTS=1 cargo test -p toolgate-reference --test host_lists`",
        stale.join(", ")
    );
}
