//! The globs of classification rules, with captures. `*` stands for any run
//! of characters (also none); `{tool}` and `{profile}` stand for a run too,
//! and the text they stand for is captured; every other character stands for
//! itself (a `{` that does not open one of those two names is a character).
//! Written here rather than taken from a crate: the whole matcher is the
//! classic last-star backtracking loop (linear space, O(text x pattern) time
//! at worst), and no glob crate captures named runs.

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
    /// `*` (None) or a capture.
    Run(Option<Capture>),
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

fn tokens(pattern: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(c) = pattern[i..].chars().next() {
        if c == '*' {
            out.push(Tok::Run(None));
            i += 1;
        } else if let Some((cap, len)) = placeholder(&pattern[i..])
            .and_then(|(n, len)| Capture::from_name(n).map(|c| (c, len)))
        {
            out.push(Tok::Run(Some(cap)));
            i += len;
        } else {
            out.push(Tok::Char(c));
            i += c.len_utf8();
        }
    }
    out
}

/// Match `text` against `pattern`; `None` when it does not match. Each run
/// takes the shortest text that lets the rest match, except the last, which
/// takes what is left: `Access denied to: {tool}` captures everything after
/// the colon, `policy denied tool {tool} on server *` the word before ` on`.
pub fn capture(pattern: &str, text: &str) -> Option<Captured> {
    let p = tokens(pattern);
    // (start, end) byte offsets of the text each run stands for.
    let mut spans = vec![(0usize, 0usize); p.len()];
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<usize> = None;
    let next_len = |at: usize| text[at..].chars().next().map_or(1, char::len_utf8);
    while ti < text.len() {
        match p.get(pi) {
            Some(Tok::Char(c)) if text[ti..].starts_with(*c) => {
                pi += 1;
                ti += c.len_utf8();
            }
            Some(Tok::Run(_)) => {
                star = Some(pi);
                spans[pi] = (ti, ti);
                pi += 1;
            }
            _ => {
                // Give the last run one more character and retry from there.
                let s = star?;
                let grown = spans[s].1 + next_len(spans[s].1);
                spans[s].1 = grown;
                pi = s + 1;
                ti = grown;
            }
        }
    }
    for (k, t) in p.iter().enumerate().skip(pi) {
        match t {
            Tok::Run(_) => spans[k] = (text.len(), text.len()),
            Tok::Char(_) => return None,
        }
    }
    let mut got = Captured::default();
    for (t, (a, b)) in p.iter().zip(spans) {
        if let Tok::Run(Some(c)) = t {
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
        match placeholder(&template[i..]).and_then(|(n, len)| Capture::from_name(n).map(|c| (c, len))) {
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
        assert!(glob("Access denied to: *", "Access denied to: refund.issue"));
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
    fn captures_take_the_shortest_run_but_the_last() {
        let c = capture("Access denied to: {tool}", "Access denied to: refund.issue").unwrap();
        assert_eq!(c.tool.as_deref(), Some("refund.issue"));
        let c = capture(
            "policy denied tool {tool} on server *",
            "policy denied tool refund.issue on server payments: on server x",
        )
        .unwrap();
        assert_eq!(c.tool.as_deref(), Some("refund.issue"));
        let c = capture("scope=\"{profile}\"*", "scope=\"crm:read\" error=\"x\"").unwrap();
        assert_eq!(c.profile.as_deref(), Some("crm:read"));
        let c = capture("*'{tool}': *", "Authorization failed for tool 'a.b': no").unwrap();
        assert_eq!(c.tool.as_deref(), Some("a.b"));
        // An empty run captures nothing.
        let c = capture("Access denied to: {tool}", "Access denied to: ").unwrap();
        assert_eq!(c, Captured::default());
        assert!(capture("Access denied to: {tool}", "Access denied").is_none());
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
