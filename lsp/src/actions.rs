//! Quick fixes, from the compiler's own findings: every did-you-mean becomes
//! "replace with the suggested name", and a name that does nothing in a list
//! (a stale or ineffective exclusion, a repetition, a provider falling back
//! to itself) can be removed.

use std::collections::HashMap;

use lsp_types::{CodeAction, CodeActionKind, Diagnostic, TextEdit, Url, WorkspaceEdit};
use toolgate_compiler::diagnostics::Problem;
use toolgate_compiler::source::{SourceMap, Span};

use crate::convert;
use crate::navigate::written;
use crate::text::LineIndex;

/// What a problem can be fixed by.
enum Fix {
    Replace(String),
    RemoveFromList(String),
}

fn fix_of(p: &Problem) -> Option<(Span, Fix)> {
    Some(match p {
        Problem::Unknown {
            span,
            suggestion: Some(s),
            ..
        } => (*span, Fix::Replace(s.clone())),
        Problem::ExclusionTypo {
            span, suggestion, ..
        } => (*span, Fix::Replace(suggestion.clone())),
        Problem::Lookalike {
            span, registered, ..
        } => (*span, Fix::Replace(registered.clone())),
        Problem::StaleExclusion { span, name, .. }
        | Problem::ExclusionOutsideGroups { span, name, .. }
        | Problem::ListedTwice { span, name, .. } => (*span, Fix::RemoveFromList(name.clone())),
        Problem::FallbackToSelf { span, provider } => {
            (*span, Fix::RemoveFromList(provider.clone()))
        }
        _ => return None,
    })
}

/// The byte range to delete to take the list entry at `span` out of its
/// list: the entry and one comma beside it; the whole property (and its line,
/// when nothing else is on it) when it is the only entry.
pub fn list_removal(text: &str, span: Span) -> std::ops::Range<usize> {
    let (start, end) = (span.start as usize, span.end as usize);
    let after = &text[end..];
    let ws_after = after.len() - after.trim_start().len();
    if after.trim_start().starts_with(',') {
        let rest = &after[ws_after + 1..];
        let ws = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        return start..end + ws_after + 1 + ws;
    }
    let before = &text[..start];
    let trimmed = before.trim_end();
    if trimmed.ends_with(',') {
        return trimmed.len() - 1..end;
    }
    if !(trimmed.ends_with('[') && after.trim_start().starts_with(']')) {
        return start..end;
    }
    // The only entry: the property `keyword [name]` goes.
    let open = trimmed.len() - 1;
    let kw_end = text[..open].trim_end().len();
    let kw_start = text[..kw_end]
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
        .map(|i| i + 1)
        .unwrap_or(0);
    let close = end + ws_after + 1;
    let line_start = text[..kw_start].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let line_end = text[close..]
        .find('\n')
        .map(|i| close + i)
        .unwrap_or(text.len());
    if text[line_start..kw_start].trim().is_empty() && text[close..line_end].trim().is_empty() {
        let through = (line_end + 1).min(text.len());
        return line_start..through;
    }
    kw_start..close
}

/// The quick fixes for the problems of one file that touch `range`.
pub fn code_actions(
    problems: &[Problem],
    findings: &[toolgate_compiler::diagnostics::Diagnostic],
    sources: &SourceMap,
    paths: &[std::path::PathBuf],
    uri: &Url,
    file: toolgate_compiler::source::FileId,
    range: lsp_types::Range,
) -> Vec<CodeAction> {
    let text = &sources.get(file).text;
    let lines = LineIndex::of(sources.get(file));
    let overlaps = |r: lsp_types::Range| r.start <= range.end && range.start <= r.end;
    let mut out = Vec::new();
    for (p, f) in problems.iter().zip(findings) {
        if f.span.file != file {
            continue;
        }
        let Some((span, fix)) = fix_of(p) else {
            continue;
        };
        let diag: Diagnostic = convert::diagnostic(f, sources, paths);
        if !overlaps(diag.range) {
            continue;
        }
        let (title, bytes, new_text) = match fix {
            Fix::Replace(s) => (format!("Replace with `{s}`"), span.range(), written(&s)),
            Fix::RemoveFromList(name) => (
                format!("Remove `{name}`"),
                list_removal(text, span),
                String::new(),
            ),
        };
        let edit = TextEdit::new(lines.range(bytes), new_text);
        out.push(CodeAction {
            title,
            kind: Some(CodeActionKind::QUICKFIX),
            diagnostics: Some(vec![diag]),
            edit: Some(WorkspaceEdit {
                changes: Some(HashMap::from([(uri.clone(), vec![edit])])),
                ..WorkspaceEdit::default()
            }),
            command: None,
            is_preferred: Some(true),
            disabled: None,
            data: None,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_compiler::source::FileId;

    fn remove(text: &str, name: &str) -> String {
        let start = text.find(name).unwrap_or(0);
        let span = Span::new(FileId(0), start..start + name.len());
        let mut t = text.to_string();
        t.replace_range(list_removal(text, span), "");
        t
    }

    #[test]
    fn removing_a_list_entry() {
        let list = "exclude [one, two, three]";
        assert_eq!(remove(list, "one"), "exclude [two, three]");
        assert_eq!(remove(list, "two"), "exclude [one, three]");
        assert_eq!(remove(list, "three"), "exclude [one, two]");
        assert_eq!(
            remove("c {\n  groups [g]\n  exclude [xx]\n}\n", "xx"),
            "c {\n  groups [g]\n}\n"
        );
        assert_eq!(remove("c { exclude [xx] }", "xx"), "c {  }");
    }
}
