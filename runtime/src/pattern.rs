//! The globs of classification rules, with captures. `*` stands for any run
//! of characters (also none); `{tool}` and `{profile}` stand for a name, and
//! capture it; every other character stands for itself (a `{` that does not
//! open one of those two names is a character).
//!
//! A name is the longest run of characters other than white space, quotes
//! and `` `,;()<>[]{} `` at that point, less any `.`, `:`, `!` or `?` that
//! ends it (sentence punctuation, not part of a tool name). A capture never
//! backtracks, so it stops at the first delimiter whatever follows in the
//! pattern: `Access denied to: {tool}*` captures `refund.issue` from
//! `Access denied to: refund.issue (policy p)`.
//!
//! Written here rather than taken from a crate: the whole matcher is the
//! classic last-star backtracking loop (linear space, O(text x pattern) time
//! at worst; a possessive capture keeps that bound, since where it ends only
//! moves forward with where it starts), and no glob crate captures names.

/// What a pattern may capture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capture {
    Tool,
    Profile,
}

impl Capture {
    pub const ALL: [Capture; 2] = [Capture::Tool, Capture::Profile];

    pub fn name(self) -> &'static str {
        match self {
            Capture::Tool => "tool",
            Capture::Profile => "profile",
        }
    }

    fn from_name(name: &str) -> Option<Capture> {
        Capture::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// The texts a match captured. An empty run captures nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Captured {
    pub tool: Option<String>,
    pub profile: Option<String>,
}

impl Captured {
    fn slot(&mut self, c: Capture) -> &mut Option<String> {
        match c {
            Capture::Tool => &mut self.tool,
            Capture::Profile => &mut self.profile,
        }
    }

    /// Keep what is already known; fill what is not from `other`.
    pub fn fill(&mut self, other: Captured) {
        if self.tool.is_none() {
            self.tool = other.tool;
        }
        if self.profile.is_none() {
            self.profile = other.profile;
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    Char(char),
    Star,
    Name(Capture),
}

/// A `{name}` at the start of `s`: the name and the length of the whole placeholder.
fn placeholder(s: &str) -> Option<(&str, usize)> {
    let rest = s.strip_prefix('{')?;
    let end = rest.find('}')?;
    let name = &rest[..end];
    let ident = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    ident.then_some((name, end + 2))
}

/// Every `{name}` of a pattern (known or not), with its byte offset: the
/// compiler refuses the names no rule can capture, since such a placeholder
/// would silently be matched as literal text.
pub fn placeholders(pattern: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < pattern.len() {
        if let Some((name, len)) = placeholder(&pattern[i..]) {
            out.push((i, name));
            i += len;
        } else {
            i += pattern[i..].chars().next().map_or(1, char::len_utf8);
        }
    }
    out
}

fn known(s: &str) -> Option<(Capture, usize)> {
    placeholder(s).and_then(|(n, len)| Capture::from_name(n).map(|c| (c, len)))
}

fn tokens(pattern: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(c) = pattern[i..].chars().next() {
        if c == '*' {
            out.push(Tok::Star);
            i += 1;
        } else if let Some((cap, len)) = known(&pattern[i..]) {
            out.push(Tok::Name(cap));
            i += len;
        } else {
            out.push(Tok::Char(c));
            i += c.len_utf8();
        }
    }
    out
}

/// The byte length of the name at the start of `s` (see the module text).
fn name_len(s: &str) -> usize {
    let run = s
        .find(|c: char| c.is_whitespace() || "\"'`,;()<>[]{}".contains(c))
        .unwrap_or(s.len());
    s[..run].trim_end_matches(['.', ':', '!', '?']).len()
}

/// Match `text` against `pattern`; `None` when it does not match.
pub fn capture(pattern: &str, text: &str) -> Option<Captured> {
    let p = tokens(pattern);
    // (start, end) byte offsets of the name each capture took.
    let mut names = vec![(0usize, 0usize); p.len()];
    let (mut pi, mut ti) = (0usize, 0usize);
    // The last star: its token, and where the text after it starts.
    let mut star: Option<(usize, usize)> = None;
    while ti < text.len() {
        match p.get(pi) {
            Some(Tok::Char(c)) if text[ti..].starts_with(*c) => {
                pi += 1;
                ti += c.len_utf8();
            }
            Some(Tok::Star) => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(Tok::Name(_)) => {
                let end = ti + name_len(&text[ti..]);
                names[pi] = (ti, end);
                pi += 1;
                ti = end;
            }
            _ => {
                // Give the last star one more character and retry from there.
                let (s, mark) = star?;
                let grown = mark + text[mark..].chars().next().map_or(1, char::len_utf8);
                star = Some((s, grown));
                pi = s + 1;
                ti = grown;
            }
        }
    }
    for (k, t) in p.iter().enumerate().skip(pi) {
        match t {
            Tok::Char(_) => return None,
            Tok::Star => {}
            Tok::Name(_) => names[k] = (text.len(), text.len()),
        }
    }
    let mut got = Captured::default();
    for (t, (a, b)) in p.iter().zip(names) {
        if let Tok::Name(c) = t {
            let slot = got.slot(*c);
            if slot.is_none() && b > a {
                *slot = Some(text[a..b].to_string());
            }
        }
    }
    Some(got)
}

/// Whether `text` matches `pattern`.
pub fn glob(pattern: &str, text: &str) -> bool {
    capture(pattern, text).is_some()
}

/// Fill a remediation template: `{tool}` and `{profile}` become the name in
/// backticks when known, else "the tool" / "the access profile", so the
/// text reads the same with and without them.
pub fn fill(template: &str, tool: Option<&str>, profile: Option<&str>) -> String {
    let mut out = String::with_capacity(template.len());
    let mut i = 0;
    while let Some(c) = template[i..].chars().next() {
        match known(&template[i..]) {
            Some((cap, len)) => {
                let (known, fallback) = match cap {
                    Capture::Tool => (tool, "the tool"),
                    Capture::Profile => (profile, "the access profile"),
                };
                match known {
                    Some(v) => {
                        out.push('`');
                        out.push_str(v);
                        out.push('`');
                    }
                    None => out.push_str(fallback),
                }
                i += len;
            }
            None => {
                out.push(c);
                i += c.len_utf8();
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stars_match_runs() {
        assert!(glob(
            "Access denied to: *",
            "Access denied to: refund.issue"
        ));
        assert!(glob("*", ""));
        assert!(glob("a*b*c", "axxbyyc"));
        assert!(!glob("a*b*c", "axxbyy"));
        assert!(!glob("Access denied", "Access denied to: x"));
        assert!(glob("Access denied*", "Access denied"));
        assert!(glob("é*ü", "éaäü"));
        assert!(!glob("x", ""));
        assert!(glob("", ""));
        // A `{` that opens no known name is a character.
        assert!(glob(r#"{"error":*}"#, r#"{"error":"forbidden"}"#));
        assert!(glob("{other}", "{other}"));
        assert!(!glob("{other}", "x"));
    }

    #[test]
    fn captures_take_a_name() {
        let tool = |p: &str, t: &str| capture(p, t).map(|c| c.tool);
        assert_eq!(
            tool("Access denied to: {tool}", "Access denied to: refund.issue"),
            Some(Some("refund.issue".into()))
        );
        assert_eq!(
            tool(
                "Access denied to: {tool}*",
                "Access denied to: refund.issue (policy p)."
            ),
            Some(Some("refund.issue".into()))
        );
        // A capture stops at a delimiter whatever the pattern says next.
        assert_eq!(
            tool("Access denied to: {tool}", "Access denied to: refund issue"),
            None
        );
        assert_eq!(
            tool(
                "policy denied tool {tool}*",
                "policy denied tool refund.issue: not allowed"
            ),
            Some(Some("refund.issue".into()))
        );
        assert_eq!(
            tool("*'{tool}': *", "Authorization failed for tool 'a.b': no"),
            Some(Some("a.b".into()))
        );
        // The star before a capture still backtracks.
        assert_eq!(
            tool("*Tool {tool} is*", "Tool a, Tool b is out"),
            Some(Some("b".into()))
        );
        let c = capture("*plan {profile}*", "Tool x is not in plan gold-tier.").unwrap();
        assert_eq!(c.profile.as_deref(), Some("gold-tier"));
        let c = capture("{profile}", "crm:read").unwrap();
        assert_eq!(c.profile.as_deref(), Some("crm:read"));
        // An empty name captures nothing, and still matches.
        assert_eq!(
            tool("Access denied to: {tool}", "Access denied to: "),
            Some(None)
        );
        assert_eq!(tool("Access denied to: {tool}", "Access denied"), None);
    }

    #[test]
    fn placeholders_are_listed_with_offsets() {
        assert_eq!(
            placeholders("a {tool} b {scope} {\"x\"}"),
            vec![(2, "tool"), (11, "scope")]
        );
    }

    #[test]
    fn templates_read_with_and_without_names() {
        let t = "map {tool} into {profile} in API Manager";
        assert_eq!(
            fill(t, Some("refund.issue"), Some("gold")),
            "map `refund.issue` into `gold` in API Manager"
        );
        assert_eq!(
            fill(t, None, None),
            "map the tool into the access profile in API Manager"
        );
    }
}
