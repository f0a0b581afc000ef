//! Where an entry's name is in the registry's text: the span of its quoted
//! name (found as the value of a `name` key, escapes decoded), and the
//! offset of a parser's line and column.

use crate::source::{FileId, Span};

/// Byte offset of a 1-based line and column.
pub(super) fn offset_of(text: &str, line: usize, col: usize) -> usize {
    let mut off = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            return off
                + l.char_indices()
                    .nth(col.saturating_sub(1))
                    .map(|(b, _)| b)
                    .unwrap_or(l.len());
        }
        off += l.len();
    }
    text.len()
}

/// Span of the quoted name, searching forward from `cursor` (tools appear in
/// order). `is_json` says how a string with escapes is decoded.
pub(super) fn locate(
    file: FileId,
    text: &str,
    name: &str,
    cursor: &mut usize,
    is_json: bool,
) -> Span {
    // As written without escapes: a literal string, or a basic string (a name
    // holding a newline is written `"a\nb"` in TOML and JSON alike).
    // Each needle is made only when the one before is not found (the first
    // almost always is).
    let needles: [&dyn Fn() -> String; 3] =
        [&|| format!("\"{name}\""), &|| format!("'{name}'"), &|| {
            serde_json::to_string(name).unwrap_or_default()
        }];
    for make in needles {
        let needle = make();
        let Some(rest) = text.get(*cursor..) else {
            break;
        };
        // Only as the value of a `name` key: the same quoted string inside
        // a description (`'like "b"'`) is not where tool `b` is named.
        let found = rest
            .match_indices(&needle)
            .map(|(i, _)| *cursor + i)
            .find(|&start| follows_name_key(text.as_bytes(), start));
        if let Some(start) = found {
            *cursor = start + needle.len();
            return Span::new(file, start..start + needle.len());
        }
    }
    // Written with other escapes (`"g\u0435t"`): the next `name` key whose
    // string decodes to the name. Without this the span would be the
    // cursor, the end of the previous tool's name.
    if let Some(r) = locate_escaped(text, name, *cursor, is_json) {
        *cursor = r.end;
        return Span::new(file, r);
    }
    Span::new(file, *cursor..*cursor)
}

/// Whether the string value starting at `value` is a `name` key's:
/// `name = `, `"name": ` or `'name' = ` before it, blanks allowed around the
/// `=` or `:`, and the key not the tail of a longer one (`display_name`).
fn follows_name_key(bytes: &[u8], value: usize) -> bool {
    let skip_blank_back = |mut at: usize| {
        while at > 0 && matches!(bytes[at - 1], b' ' | b'\t') {
            at -= 1;
        }
        at
    };
    let at = skip_blank_back(value);
    if at == 0 || !matches!(bytes[at - 1], b'=' | b':') {
        return false;
    }
    let mut end = skip_blank_back(at - 1);
    let quote = end
        .checked_sub(1)
        .map(|q| bytes[q])
        .filter(|q| *q == b'"' || *q == b'\'');
    if quote.is_some() {
        end -= 1;
    }
    let Some(key) = end.checked_sub("name".len()) else {
        return false;
    };
    if &bytes[key..end] != b"name" {
        return false;
    }
    let before = key.checked_sub(1).map(|b| bytes[b]);
    match quote {
        Some(q) => before == Some(q),
        None => !before
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.'),
    }
}

/// The byte range of the first string value of a `name` key at or after
/// `from` (`name = "..."` in TOML, `"name": "..."` in JSON) that decodes to
/// `name`.
fn locate_escaped(
    text: &str,
    name: &str,
    from: usize,
    is_json: bool,
) -> Option<std::ops::Range<usize>> {
    let bytes = text.as_bytes();
    let rest = text.get(from..)?;
    for (i, _) in rest.match_indices("name") {
        let key = from + i;
        let before = key.checked_sub(1).map(|b| bytes[b]);
        if before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
            continue;
        }
        let mut at = key + "name".len();
        if before == Some(b'"') {
            if bytes.get(at) != Some(&b'"') {
                continue;
            }
            at += 1;
        }
        let skip_blank = |mut at: usize| {
            while matches!(bytes.get(at), Some(b' ' | b'\t')) {
                at += 1;
            }
            at
        };
        at = skip_blank(at);
        if !matches!(bytes.get(at), Some(b'=' | b':')) {
            continue;
        }
        let start = skip_blank(at + 1);
        let Some(end) = string_end(bytes, start) else {
            continue;
        };
        let literal = &text[start..end];
        let decoded = if is_json {
            serde_json::from_str::<String>(literal).ok()
        } else {
            toml::from_str::<std::collections::BTreeMap<String, String>>(&format!("v = {literal}"))
                .ok()
                .and_then(|mut m| m.remove("v"))
        };
        if decoded.as_deref() == Some(name) {
            return Some(start..end);
        }
    }
    None
}

/// The end (past the closing quote) of the one-line string literal starting
/// at `start`: `'...'` without escapes, or `"..."` with backslash escapes.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let quote = *bytes.get(start)?;
    if quote != b'"' && quote != b'\'' {
        return None;
    }
    let mut i = start + 1;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\n' => return None,
            b'\\' if quote == b'"' => i += 2,
            _ if b == quote => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod spans {
    use crate::registry::{import_mcp, load};
    use crate::source::FileId;

    fn spans(text: &str, is_json: bool) -> Vec<(String, String)> {
        let (r, p) = load(FileId(0), text, is_json);
        assert!(p.is_empty(), "{p:?}");
        r.tools
            .iter()
            .map(|t| (t.name.clone(), text[t.span.range()].to_string()))
            .collect()
    }

    #[test]
    fn a_name_written_with_escapes_is_located_at_its_own_key() {
        let toml = "[[tool]]\nname = \"get_page_content\"\ngroup = \"g\"\n\
                    [[tool]]\ngroup = \"g\"\nname = \"g\\u0435t_page_content\"\n\
                    [[tool]]\nname = 'plain'\ngroup = \"g\"\n";
        assert_eq!(
            spans(toml, false),
            [
                ("get_page_content".into(), "\"get_page_content\"".into()),
                (
                    "g\u{435}t_page_content".into(),
                    "\"g\\u0435t_page_content\"".into()
                ),
                ("plain".into(), "'plain'".into()),
            ]
        );
        // TOML's \U form, and a key named `name` inside a schema before it.
        let toml = "[[tool]]\ngroup = \"g\"\ninput_schema = { properties = { name = { type = \"string\" } } }\n\
                    name = \"x\\U0000200By\"\n";
        assert_eq!(
            spans(toml, false),
            [("x\u{200b}y".into(), "\"x\\U0000200By\"".into())]
        );
        let json = "{\"tool\": [{\"name\": \"a\", \"group\": \"g\"}, {\"group\": \"g\", \"name\" : \"\\u0061b\"}]}";
        assert_eq!(
            spans(json, true),
            [
                ("a".into(), "\"a\"".into()),
                ("ab".into(), "\"\\u0061b\"".into())
            ]
        );
    }

    #[test]
    fn a_name_quoted_in_a_description_is_not_taken_for_the_tool() {
        // Tool `a` quotes `b` before `b` is declared, and `c` quotes itself
        // before its own `name` key; neither quote is where the tool is named.
        let toml = "[[tool]]\nname = \"a\"\ngroup = \"g\"\ndescription = 'then call \"b\"'\n\
                    [[tool]]\nname = \"b\"\ngroup = \"g\"\n\
                    [[tool]]\ndescription = 'the \"c\" tool'\ngroup = \"g\"\n\"name\" = \"c\"\n";
        let (r, p) = load(FileId(0), toml, false);
        assert!(p.is_empty(), "{p:?}");
        let got: Vec<std::ops::Range<usize>> = r.tools.iter().map(|t| t.span.range()).collect();
        let at = |key: &str| toml.find(key).map(|k| k + key.len() - 3..k + key.len());
        assert_eq!(
            got,
            [
                at("name = \"a\"").unwrap(),
                at("name = \"b\"").unwrap(),
                at("\"name\" = \"c\"").unwrap(),
            ]
        );
        assert_eq!(&toml[got[1].clone()], "\"b\"");
    }

    #[test]
    fn an_escaped_name_in_a_tools_list_answer_is_located() {
        let answer = r#"{"tools": [{"name": "a"}, {"description": "x", "name": "\u0062"}]}"#;
        let (r, p) = import_mcp(FileId(0), answer, "s");
        assert!(p.is_empty(), "{p:?}");
        let got: Vec<&str> = r.tools.iter().map(|t| &answer[t.span.range()]).collect();
        assert_eq!(got, ["\"a\"", "\"\\u0062\""]);
    }
}
