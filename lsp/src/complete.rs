//! Completion: the keywords the grammar expects at the cursor, and names by
//! kind from the registry and the policy.

use std::collections::BTreeSet;

use lsp_types::{CompletionItem, CompletionItemKind, CompletionTextEdit, Range, TextEdit};
use toolgate_compiler::diagnostics::NameKind;
use toolgate_compiler::model::{DEFAULT_CLASSES, DEFAULT_ZONES};
use toolgate_compiler::registry::{Origin, Registry};

use crate::expected::{expected_at, prop_keywords, Expected, TOP_KEYWORDS};
use crate::index::Index;
use crate::navigate::written;
use crate::text::LineIndex;

fn item(
    label: &str,
    kind: CompletionItemKind,
    detail: Option<String>,
    range: Range,
    text: String,
) -> CompletionItem {
    CompletionItem {
        label: label.to_string(),
        kind: Some(kind),
        detail,
        filter_text: Some(text.clone()),
        text_edit: Some(CompletionTextEdit::Edit(TextEdit::new(range, text))),
        ..CompletionItem::default()
    }
}

fn servers(registry: Option<&Registry>) -> BTreeSet<&str> {
    registry
        .map(|r| {
            r.tools
                .iter()
                .filter_map(|t| match &t.origin {
                    Origin::Remote { server } => Some(server.as_str()),
                    Origin::Builtin => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Names of a kind: (name, detail).
fn names(
    kind: NameKind,
    index: &Index,
    registry: Option<&Registry>,
) -> Vec<(String, Option<String>)> {
    let tools = || registry.map(|r| r.tools.as_slice()).unwrap_or_default();
    let defined = |k| {
        index
            .defined(k)
            .into_iter()
            .map(|n| (n.to_string(), Some(k_str(k))))
            .collect::<Vec<_>>()
    };
    match kind {
        NameKind::Tool => tools()
            .iter()
            .map(|t| (t.name.clone(), Some(format!("tool in group {}", t.group))))
            .collect(),
        NameKind::Group => tools()
            .iter()
            .map(|t| t.group.as_str())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .map(|g| (g.to_string(), Some("group".to_string())))
            .collect(),
        NameKind::Zone if index.defined(NameKind::Zone).is_empty() => DEFAULT_ZONES
            .iter()
            .map(|(z, _)| (z.to_string(), Some("zone (default)".to_string())))
            .collect(),
        NameKind::Class if index.defined(NameKind::Class).is_empty() => DEFAULT_CLASSES
            .iter()
            .map(|c| (c.to_string(), Some("class (default ladder)".to_string())))
            .collect(),
        k => defined(k),
    }
}

fn k_str(k: NameKind) -> String {
    k.as_str().to_string()
}

pub fn completions(
    text: &str,
    offset: usize,
    index: &Index,
    registry: Option<&Registry>,
) -> Vec<CompletionItem> {
    let (expected, tok) = expected_at(text, offset);
    let lines = LineIndex::new(text);
    let range = match tok {
        Some(t) => lines.range(t.start..t.end),
        None => lines.range(offset..offset),
    };
    let keywords = |words: &[&str]| {
        words
            .iter()
            .map(|w| item(w, CompletionItemKind::KEYWORD, None, range, w.to_string()))
            .collect::<Vec<_>>()
    };
    let named = |kind: NameKind| {
        let ck = match kind {
            NameKind::Tool => CompletionItemKind::FUNCTION,
            NameKind::Group => CompletionItemKind::MODULE,
            NameKind::Class => CompletionItemKind::ENUM_MEMBER,
            _ => CompletionItemKind::REFERENCE,
        };
        names(kind, index, registry)
            .into_iter()
            .map(|(n, d)| item(&n, ck, d, range, written(&n)))
            .collect::<Vec<_>>()
    };
    match expected {
        Expected::TopKeyword => keywords(TOP_KEYWORDS),
        Expected::PropKeyword(b) => keywords(prop_keywords(b)),
        Expected::Value(v) => keywords(v),
        Expected::Name(k) => named(k),
        Expected::Server => servers(registry)
            .into_iter()
            .map(|s| {
                item(
                    s,
                    CompletionItemKind::MODULE,
                    Some("MCP server".into()),
                    range,
                    written(s),
                )
            })
            .collect(),
        Expected::Selector => {
            let mut out = keywords(&["group", "server"]);
            out.extend(servers(registry).into_iter().map(|s| {
                let p = format!("mcp_{s}_*");
                item(
                    &p,
                    CompletionItemKind::SNIPPET,
                    Some(format!("every tool of server {s}")),
                    range,
                    p.clone(),
                )
            }));
            out.extend(named(NameKind::Tool));
            out
        }
        Expected::NewName(_) | Expected::Nothing => Vec::new(),
    }
}
