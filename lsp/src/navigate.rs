//! The named thing under a cursor, and where it is defined and used.

use std::collections::HashMap;

use lsp_types::{Location, TextEdit, Url, WorkspaceEdit};
use toolgate_compiler::diagnostics::NameKind;

use crate::convert::url_of;
use crate::expected::{expected_at, Expected, TokKind};
use crate::index::Occ;
use crate::workspace::ProjectState;

/// A name as it must be written: bare when the grammar's `bare` rule takes
/// it, else quoted.
pub fn written(name: &str) -> String {
    let mut chars = name.chars();
    let bare = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        name.to_string()
    } else {
        format!("\"{name}\"")
    }
}

/// The name under the cursor: its kind, its text, and its byte range.
pub fn name_at(text: &str, offset: usize) -> Option<(NameKind, String, std::ops::Range<usize>)> {
    let (expected, tok) = expected_at(text, offset);
    let tok = tok?;
    let kind = match expected {
        Expected::Name(k) | Expected::NewName(k) => k,
        Expected::Selector if tok.kind == TokKind::Quoted || !tok.text.contains('*') => {
            if matches!(tok.text, "group" | "server") && tok.kind == TokKind::Word {
                return None;
            }
            NameKind::Tool
        }
        _ => return None,
    };
    Some((kind, tok.text.to_string(), tok.start..tok.end))
}

fn location(o: &Occ) -> Option<Location> {
    Some(Location::new(url_of(&o.path)?, o.range))
}

pub fn definitions(state: &ProjectState, kind: NameKind, name: &str) -> Vec<Location> {
    state
        .index
        .definitions(kind, name, state.registry())
        .iter()
        .filter_map(location)
        .collect()
}

pub fn references(state: &ProjectState, kind: NameKind, name: &str, decl: bool) -> Vec<Location> {
    state
        .index
        .of(kind, name)
        .filter(|o| decl || !o.def)
        .filter_map(location)
        .collect()
}

/// The kinds a policy defines (and so may rename): a tool or group belongs
/// to the registry, a class to the ladder.
pub fn renamable(kind: NameKind) -> bool {
    matches!(
        kind,
        NameKind::Configuration
            | NameKind::Provider
            | NameKind::Zone
            | NameKind::Skill
            | NameKind::Profile
    )
}

/// Every occurrence of a policy-defined name, rewritten.
pub fn rename(
    state: &ProjectState,
    kind: NameKind,
    name: &str,
    new_name: &str,
) -> Result<WorkspaceEdit, String> {
    if !renamable(kind) {
        return Err(format!(
            "a {} is not defined by the policy and cannot be renamed here",
            kind.as_str()
        ));
    }
    if !state.all_parsed {
        return Err("a policy file of the project does not parse; fix it before renaming".into());
    }
    if new_name.is_empty() || new_name.contains(['"', '\\', '\n']) {
        return Err(format!(
            "`{}` cannot be a name: names are not empty and hold no `\"`, `\\` or line break",
            new_name.escape_debug()
        ));
    }
    let mut changes: HashMap<Url, Vec<TextEdit>> = HashMap::new();
    for o in state.index.of(kind, name) {
        let Some(uri) = url_of(&o.path) else { continue };
        changes
            .entry(uri)
            .or_default()
            .push(TextEdit::new(o.range, written(new_name)));
    }
    Ok(WorkspaceEdit {
        changes: Some(changes),
        ..WorkspaceEdit::default()
    })
}
