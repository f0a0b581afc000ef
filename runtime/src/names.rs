//! Names as text for people and models. A tool name is data from a registry
//! or a host; written raw into a prompt, a terminal or Markdown, a newline
//! would inject lines and an ESC sequence would drive the terminal. The
//! compiler refuses control (Cc) and format (Cf) characters in names, and the
//! table loader refuses them in tool names; names from hosts (live tools,
//! names asked about) can still carry them, so every renderer escapes.

use std::borrow::Cow;
use std::fmt::Write;

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// Whether `c` has no place in a name: a control (Cc) or format (Cf)
/// character, such as newline, ESC, U+200B ZERO WIDTH SPACE, U+202E RIGHT-TO-
/// LEFT OVERRIDE or U+FEFF.
pub fn is_invisible(c: char) -> bool {
    matches!(
        c.general_category(),
        GeneralCategory::Control | GeneralCategory::Format
    )
}

/// The first control or format character of `name`, with its byte offset.
pub fn first_invisible(name: &str) -> Option<(usize, char)> {
    // Printable ASCII is the common case: one pass over bytes.
    if name.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        return None;
    }
    name.char_indices().find(|&(_, c)| is_invisible(c))
}

/// `name` with every control or format character written as a JSON-style
/// `\uXXXX` escape (a surrogate pair beyond the BMP): for prompts,
/// terminals and Markdown. Unchanged (borrowed) when clean.
pub fn escape(name: &str) -> Cow<'_, str> {
    escape_where(name, is_invisible)
}

/// Text bound for a terminal: every control or format character except
/// newline and tab escaped as in [`escape`]. The escape is JSON's own, and
/// such characters only occur inside JSON strings, so JSON text stays valid
/// JSON with the same meaning.
pub fn escape_terminal(text: &str) -> Cow<'_, str> {
    escape_where(text, |c| c != '\n' && c != '\t' && is_invisible(c))
}

fn escape_where(text: &str, bad: impl Fn(char) -> bool) -> Cow<'_, str> {
    // Printable ASCII is never escaped: a byte pass before any lookup.
    let fine = |b: u8| (0x20..0x7f).contains(&b) || (b < 0x20 && !bad(char::from(b)));
    if text.bytes().all(fine) || !text.chars().any(&bad) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if bad(c) {
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{u:04x}");
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// Whether `asked` is near enough to `known` to be a slip for it: the same
/// ignoring ASCII case, `_`/`-` and surrounding white space, or at most two
/// edits apart (one for names of four characters or fewer). The one
/// "did you mean" rule of the runtime: configurations, consumers and the
/// service's request members are suggested by it.
pub fn is_near_miss(asked: &str, known: &str) -> bool {
    if asked == known {
        return false;
    }
    let fold = |s: &str| -> String {
        s.trim()
            .chars()
            .filter(|c| *c != '_' && *c != '-' && !is_invisible(*c))
            .flat_map(char::to_lowercase)
            .collect()
    };
    if fold(asked) == fold(known) {
        return true;
    }
    let limit = if known.chars().count() <= 4 { 1 } else { 2 };
    edit_distance(asked, known) <= limit
}

/// The first of `candidates` that `asked` is a near miss of ([`is_near_miss`]).
pub fn near_miss<'a>(
    asked: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    candidates.into_iter().find(|c| is_near_miss(asked, c))
}

/// Levenshtein distance over characters (short names: a plain table).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The longest remote tool name: MCP's naming rule.
pub const MAX_REMOTE_NAME: usize = 64;

/// What is wrong with a remote tool's name under MCP's naming rule
/// `^[a-zA-Z0-9_-]{1,64}$`, or `None`.
pub fn remote_name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        return Some("it is empty".into());
    }
    if name.len() > MAX_REMOTE_NAME {
        return Some(format!(
            "it is {} characters long, over {}",
            name.len(),
            MAX_REMOTE_NAME
        ));
    }
    name.chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_' || *c == '-'))
        .map(|c| {
            format!(
                "it contains `{}`, outside [a-zA-Z0-9_-]",
                c.escape_default()
            )
        })
}

/// What is wrong with a tool name a host hands in (a live tool), by the
/// registry's rules, or `None`: not empty, no control or format character
/// (the table loader refuses those in tool names), and for a remote tool
/// MCP's naming rule.
pub fn tool_name_problem(name: &str, remote: bool) -> Option<String> {
    if name.is_empty() {
        return Some("it is empty".into());
    }
    if let Some((at, c)) = first_invisible(name) {
        return Some(format!(
            "it contains U+{:04X} at byte {at}, a control or format character",
            c as u32
        ));
    }
    if remote {
        return remote_name_problem(name);
    }
    None
}

/// The registry name of remote tool `name` of MCP server `server`: what
/// `registry import-mcp --server SERVER` writes and a gateway maps back.
pub fn remote_tool_name(server: &str, name: &str) -> String {
    format!("mcp_{server}_{name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_and_format_characters_are_escaped_and_the_rest_kept() {
        assert_eq!(escape("delete_record"), "delete_record");
        assert_eq!(escape("größe_prüfen"), "größe_prüfen");
        assert_eq!(escape("a\nb"), "a\\u000ab");
        assert_eq!(escape("x\u{1b}[31m"), "x\\u001b[31m");
        assert_eq!(
            escape("delete_record\u{200b}\u{feff}"),
            "delete_record\\u200b\\ufeff"
        );
        assert_eq!(escape("\u{202e}dcba"), "\\u202edcba");
        assert_eq!(first_invisible("ab\u{200d}c"), Some((2, '\u{200d}')));
        assert_eq!(first_invisible("dеlеtе"), None);
    }

    #[test]
    fn near_misses_are_slips_of_case_separators_space_and_a_few_edits() {
        for slip in [
            "Support-bot",
            "support-bot ",
            "support_bot",
            "support-b0t",
            "support-bot\u{200b}",
            "suport-bot",
        ] {
            assert!(is_near_miss(slip, "support-bot"), "{slip:?}");
        }
        for other in ["support-bot", "billing-bot", "stranger", ""] {
            assert!(!is_near_miss(other, "support-bot"), "{other:?}");
        }
        assert!(is_near_miss("rol", "role"));
        assert!(!is_near_miss("id", "role"));
        assert_eq!(
            near_miss("edtor-chat", ["other", "editor-chat"]),
            Some("editor-chat")
        );
    }

    #[test]
    fn tool_names_from_hosts_follow_the_registry_rules() {
        assert_eq!(tool_name_problem("purge_caches", false), None);
        assert_eq!(tool_name_problem("größe_prüfen", false), None);
        assert_eq!(tool_name_problem("", false).as_deref(), Some("it is empty"));
        assert_eq!(
            tool_name_problem("purge_caches\n- delete_record: available again", false).as_deref(),
            Some("it contains U+000A at byte 12, a control or format character")
        );
        assert_eq!(
            tool_name_problem("a\u{200b}", true).as_deref(),
            Some("it contains U+200B at byte 1, a control or format character")
        );
        assert_eq!(
            tool_name_problem("mcp_crm_a.b", true).as_deref(),
            Some("it contains `.`, outside [a-zA-Z0-9_-]")
        );
        assert_eq!(
            tool_name_problem(&"x".repeat(65), true).as_deref(),
            Some("it is 65 characters long, over 64")
        );
        assert_eq!(
            remote_tool_name("crm", "customer-360_lookup"),
            "mcp_crm_customer-360_lookup"
        );
    }

    #[test]
    fn terminal_text_keeps_lines_and_json_stays_json() {
        assert_eq!(escape_terminal("a\n\tb\n"), "a\n\tb\n");
        assert_eq!(escape_terminal("\u{1b}[2J\u{9b}x"), "\\u001b[2J\\u009bx");
        let json = serde_json::to_string(&"a\u{202e}\u{9b}\u{e0001}").unwrap();
        let escaped = escape_terminal(&json);
        assert_eq!(escaped, "\"a\\u202e\\u009b\\udb40\\udc01\"");
        let back: String = serde_json::from_str(&escaped).unwrap();
        assert_eq!(back, "a\u{202e}\u{9b}\u{e0001}");
    }
}
