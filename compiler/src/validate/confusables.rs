//! Names that read alike. Two names whose confusable skeletons (Unicode TS
//! #39, via `unicode-security`) are equal look the same to a reviewer: an
//! exclusion spelled `dеlеtе_rеcord` (Cyrillic `е`) or `delete_record`
//! followed by zero-width spaces would exclude nothing while reading as the
//! real tool. The validator refuses such references, and twins in the
//! registry, naming both and showing the code points that differ.

use std::fmt::Write;
use std::sync::OnceLock;

use unicode_security::confusable_detection::skeleton;

use crate::diagnostics::Problem;
use crate::registry::{Origin, Registry};
use crate::source::{FileId, Span};

/// The confusable skeleton of `name`. Printable ASCII takes a per-character
/// table computed once from the same crate (NFD is the identity there, and
/// no ASCII prototype starts with a combining mark), so registries of plain
/// names pay no normalisation.
pub fn skeleton_of(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    skeleton_into(name, &mut out);
    out
}

/// The per-character skeletons of ASCII, when `name` is printable ASCII.
fn ascii_table(name: &str) -> Option<&'static [String]> {
    static ASCII: OnceLock<Vec<String>> = OnceLock::new();
    name.bytes().all(|b| (0x20..0x7f).contains(&b)).then(|| {
        ASCII
            .get_or_init(|| {
                (0u8..128)
                    .map(|b| skeleton(&char::from(b).to_string()).collect())
                    .collect()
            })
            .as_slice()
    })
}

/// The registered names by skeleton. Keyed by a 64-bit hash of the skeleton
/// (a hit is confirmed by comparing skeletons), so a million-tool registry
/// costs 12 bytes a name here, not a second copy of every name. The hash is
/// foldhash, seeded per index.
pub struct Lookalikes<'a> {
    names: Vec<&'a str>,
    by_skeleton: foldhash::HashMap<u64, u32>,
    hasher: foldhash::fast::RandomState,
}

/// [`skeleton_of`] written into `buf` (cleared first), so an index over a
/// million names reuses one string.
fn skeleton_into<'b>(name: &str, buf: &'b mut String) -> &'b str {
    buf.clear();
    match ascii_table(name) {
        Some(table) => name.bytes().for_each(|b| buf.push_str(&table[b as usize])),
        None => buf.extend(skeleton(name)),
    }
    buf
}

impl<'a> Lookalikes<'a> {
    /// Index `names` (registry order). Returns the index and every pair of
    /// twins (earlier index, later index) whose skeletons are equal.
    pub fn new(names: impl IntoIterator<Item = &'a str>) -> (Self, Vec<(usize, usize)>) {
        use std::hash::BuildHasher;
        let names: Vec<&'a str> = names.into_iter().collect();
        let hasher = foldhash::fast::RandomState::default();
        let mut by_skeleton =
            foldhash::HashMap::with_capacity_and_hasher(names.len(), Default::default());
        let mut twins = Vec::new();
        let mut buf = String::new();
        for (i, n) in names.iter().enumerate() {
            match by_skeleton.entry(hasher.hash_one(skeleton_into(n, &mut buf))) {
                std::collections::hash_map::Entry::Occupied(e) => {
                    let first = *e.get() as usize;
                    // Equal names are the registry's duplicates (TG4003), not twins.
                    if names[first] != *n && skeleton_of(names[first]) == skeleton_of(n) {
                        twins.push((first, i));
                    }
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(i as u32);
                }
            }
        }
        let index = Lookalikes {
            names,
            by_skeleton,
            hasher,
        };
        (index, twins)
    }

    /// A registered name that reads like `name` but is a different text.
    pub fn of(&self, name: &str) -> Option<&'a str> {
        use std::hash::BuildHasher;
        let h = self
            .hasher
            .hash_one(skeleton_into(name, &mut String::new()));
        let r = self.names[*self.by_skeleton.get(&h)? as usize];
        (r != name && skeleton_of(r) == skeleton_of(name)).then_some(r)
    }

    /// A registered name that a prefix selector reads as matching, though
    /// its text matches no registered name's start. (A pass over every name:
    /// asked only for a prefix that matches nothing.)
    pub fn prefix_of(&self, prefix: &str) -> Option<&'a str> {
        let p = skeleton_of(prefix);
        self.names
            .iter()
            .filter(|n| !n.starts_with(prefix) && skeleton_of(n).starts_with(&p))
            .min()
            .copied()
    }
}

/// The characters of `name` that are not printable ASCII, with their
/// position (1-based, in characters) and code point, invisible ones escaped:
/// "`е` U+0435 at 2, `\u200b` U+200B at 14".
pub fn describe(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_graphic() {
            continue;
        }
        if !out.is_empty() {
            out.push_str(", ");
        }
        let shown = toolgate_runtime::names::escape(c.encode_utf8(&mut [0; 4])).into_owned();
        let _ = write!(out, "`{shown}` U+{:04X} at {}", c as u32, i + 1);
    }
    if out.is_empty() {
        out.push_str("only ASCII characters that read alike");
    }
    out
}

/// Every control or format character in a policy file's text, except the
/// white space the grammar reads (tab, newline, carriage return) and a
/// byte-order mark at the very start. Inside a name such a character hides
/// what the name says; in a comment it can reorder what a reviewer sees
/// (bidirectional overrides), so it is refused anywhere.
pub fn invisible_in_policy(file: FileId, text: &str) -> Vec<Problem> {
    let mut out = Vec::new();
    if toolgate_runtime::names::first_invisible(text).is_none() {
        return out;
    }
    for (at, c) in text.char_indices() {
        let allowed = matches!(c, '\t' | '\n' | '\r') || (at == 0 && c == '\u{feff}');
        if !allowed && toolgate_runtime::names::is_invisible(c) {
            out.push(Problem::InvisibleCharacter {
                span: Span::new(file, at..at + c.len_utf8()),
                place: "a policy file".into(),
                code_point: c as u32,
            });
        }
    }
    out
}

/// The registry's own name checks: control or format characters in tool,
/// group and server names; builtins in the remote namespace; the `twins`
/// that [`Lookalikes::new`] found among its names.
pub fn registry_problems(registry: &Registry, twins: &[(usize, usize)]) -> Vec<Problem> {
    let mut out = Vec::new();
    for t in &registry.tools {
        let fields = [
            ("tool name", Some(t.name.as_str())),
            ("group", Some(t.group.as_str())),
            (
                "server",
                match &t.origin {
                    Origin::Remote { server } => Some(server.as_str()),
                    Origin::Builtin => None,
                },
            ),
        ];
        for (what, value) in fields {
            if let Some((_, c)) = value.and_then(toolgate_runtime::names::first_invisible) {
                out.push(Problem::InvisibleCharacter {
                    span: t.span,
                    place: format!(
                        "the {what} of registry tool `{}`",
                        toolgate_runtime::names::escape(&t.name)
                    ),
                    code_point: c as u32,
                });
            }
        }
        if t.origin == Origin::Builtin {
            let what = if t.name.starts_with("mcp_") {
                Some("has a remote tool's name (`mcp_<server>_<tool>`) but no `server`".to_string())
            } else if t.group.starts_with("mcp_") {
                Some(format!(
                    "is in remote group `{}` but has no `server`",
                    toolgate_runtime::names::escape(&t.group)
                ))
            } else {
                None
            };
            if let Some(what) = what {
                out.push(Problem::BuiltinInRemoteNamespace {
                    name: t.name.clone(),
                    span: t.span,
                    what,
                });
            }
        }
    }
    for &(a, b) in twins {
        let (a, b) = (&registry.tools[a], &registry.tools[b]);
        out.push(Problem::RegistryTwins {
            name: b.name.clone(),
            span: b.span,
            other: a.name.clone(),
            other_span: a.span,
            detail: describe(&b.name),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookalikes_and_invisible_padding_share_the_skeleton() {
        let (idx, twins) = Lookalikes::new(["delete_record", "read_page"]);
        assert!(twins.is_empty());
        assert_eq!(
            idx.of("d\u{435}l\u{435}t\u{435}_r\u{435}cord"),
            Some("delete_record")
        );
        assert_eq!(
            idx.of("delete_record\u{200b}\u{200b}"),
            Some("delete_record")
        );
        assert_eq!(idx.of("delete_record"), None);
        assert_eq!(idx.of("delete_records"), None);
        assert_eq!(idx.prefix_of("r\u{435}ad_"), Some("read_page"));
        assert_eq!(idx.prefix_of("read_"), None);
    }

    #[test]
    fn twins_are_reported_in_registry_order() {
        let (_, twins) = Lookalikes::new(["a", "flush_cache", "b", "f\u{406}ush_cache"]);
        // U+0406 (Cyrillic І) reads as `l`.
        assert_eq!(twins, vec![(1, 3)]);
    }

    #[test]
    fn the_ascii_table_agrees_with_the_crate() {
        for name in [
            "rn_m",
            "delete_record",
            "Il1|0O",
            "a-b.c*d",
            "mcp_crm_wipe_all",
            " ~",
        ] {
            assert_eq!(
                skeleton_of(name),
                skeleton(name).collect::<String>(),
                "{name}"
            );
        }
    }

    #[test]
    fn code_points_are_shown_with_positions() {
        assert_eq!(
            describe("d\u{435}l_x\u{200b}"),
            "`\u{435}` U+0435 at 2, `\\u200b` U+200B at 6"
        );
    }
}
