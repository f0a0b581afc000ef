//! What the grammar expects at a cursor, read from the tokens before it.
//!
//! Completion, hover and navigation must work while the text does not parse
//! (the admin is typing), so the place of a cursor is found by a small scan
//! of the tokens of `grammar/toolgate.pest` (words, quoted names, brackets,
//! commas, arrows; comments skipped), tracking which statement, block and
//! property it is in. It decides no policy meaning: it only says which kind
//! of name or keyword may stand there. The names themselves come from the
//! compiler's syntax trees and the registry.

use toolgate_compiler::diagnostics::NameKind;

/// Statement keywords (grammar rule `statement`).
pub const TOP_KEYWORDS: &[&str] = &[
    "classes",
    "enforcement",
    "remote-tools",
    "consumers-without-profile",
    "unknown-consumers",
    "skill-loader",
    "group",
    "tool",
    "zone",
    "provider",
    "skill",
    "configuration",
    "profile",
    "consumer",
    "gateway",
];

/// The properties a block may hold, by block keyword.
pub fn prop_keywords(block: &str) -> &'static [&'static str] {
    match block {
        "group" => &["enabled", "disabled", "class"],
        "tool" => &["enabled", "disabled", "admin-only", "not", "class"],
        "zone" => &["ceiling"],
        "provider" => &["zone", "fallback"],
        "skill" => &["tools"],
        "configuration" => &["provider", "groups", "exclude", "skills", "needs-approval"],
        "profile" => &["allow", "needs-approval"],
        "consumer" => &["profile"],
        "gateway" => &["rule"],
        "rule" => &[
            "http-status",
            "error-code",
            "message",
            "data",
            "result-text",
            "=>",
        ],
        _ => &[],
    }
}

pub const OUTCOMES: &[&str] = &[
    "not-in-profile",
    "not-registered",
    "content-policy",
    "policy",
    "tool-failure",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    /// A statement may start here.
    TopKeyword,
    /// A property of this block may start here.
    PropKeyword(&'static str),
    /// One of these fixed words.
    Value(&'static [&'static str]),
    /// A reference to a named thing of this kind.
    Name(NameKind),
    /// The name a block defines.
    NewName(NameKind),
    /// An entry of a profile's `allow` list: a tool, `group G`, `server S`, or a prefix.
    Selector,
    /// An MCP server's name (after `server` in `allow`).
    Server,
    /// Nothing to offer (a number, a string, punctuation expected).
    Nothing,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokKind {
    /// A bare word (name, keyword, number, prefix pattern).
    Word,
    /// A double-quoted name or string; the token's text is inside the quotes.
    Quoted,
    Punct(char),
    Arrow,
}

#[derive(Debug, Clone, Copy)]
pub struct Token<'a> {
    pub kind: TokKind,
    /// Byte range of the whole token (quotes included).
    pub start: usize,
    pub end: usize,
    pub text: &'a str,
}

fn word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '*')
}

/// The tokens of a policy text, comments skipped.
pub fn tokens(text: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let mut it = text.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        match c {
            '#' => {
                while it.peek().is_some_and(|&(_, c)| c != '\n') {
                    it.next();
                }
            }
            '"' => {
                let mut end = text.len();
                let mut inner_end = text.len();
                while let Some(&(j, c)) = it.peek() {
                    if c == '\n' {
                        end = j;
                        inner_end = j;
                        break;
                    }
                    it.next();
                    if c == '"' {
                        end = j + 1;
                        inner_end = j;
                        break;
                    }
                }
                out.push(Token {
                    kind: TokKind::Quoted,
                    start: i,
                    end,
                    text: &text[i + 1..inner_end],
                });
            }
            '=' if it.peek().is_some_and(|&(_, c)| c == '>') => {
                it.next();
                out.push(Token {
                    kind: TokKind::Arrow,
                    start: i,
                    end: i + 2,
                    text: "=>",
                });
            }
            '{' | '}' | '[' | ']' | ',' | '=' => out.push(Token {
                kind: TokKind::Punct(c),
                start: i,
                end: i + 1,
                text: &text[i..i + 1],
            }),
            c if word_char(c) => {
                let mut end = i + c.len_utf8();
                while let Some(&(j, c)) = it.peek() {
                    if !word_char(c) {
                        break;
                    }
                    end = j + c.len_utf8();
                    it.next();
                }
                out.push(Token {
                    kind: TokKind::Word,
                    start: i,
                    end,
                    text: &text[i..end],
                });
            }
            _ => {}
        }
    }
    out
}

/// The scan's state after some tokens.
#[derive(Debug, Default)]
struct State {
    /// Block keyword per open brace.
    blocks: Vec<&'static str>,
    /// The statement (depth 0) or property (inside a block) in progress, and
    /// how many value tokens it has had.
    head: Option<&'static str>,
    words: usize,
    in_list: bool,
    /// In an `allow` list: `group` or `server` just before the cursor.
    selector: Option<&'static str>,
}

/// How many value words complete a statement or property (lists end at `]`).
fn arity(head: &str, depth: usize) -> usize {
    match (head, depth) {
        ("remote-tools", 0) => 2,
        (
            "classes" | "fallback" | "groups" | "exclude" | "skills" | "tools" | "allow"
            | "needs-approval",
            _,
        ) => usize::MAX,
        ("data", _) => 2,
        // A block statement: its name, then `{`.
        (_, 0) if prop_keywords(head).is_empty() => 1,
        (_, 0) => usize::MAX,
        ("rule", _) => usize::MAX,
        ("not", _) => 1,
        _ => 1,
    }
}

impl State {
    fn step(&mut self, t: &Token<'_>) {
        match t.kind {
            TokKind::Word | TokKind::Quoted => {
                if self.in_list {
                    self.selector = match (self.head, t.text) {
                        (Some("allow" | "needs-approval"), "group" | "server")
                            if self.selector.is_none() =>
                        {
                            Some(if t.text == "group" { "group" } else { "server" })
                        }
                        _ => None,
                    };
                } else if self.head.is_none() && t.kind == TokKind::Word {
                    let keywords = match self.blocks.last() {
                        None => TOP_KEYWORDS,
                        Some(b) => prop_keywords(b),
                    };
                    if let Some(k) = keywords.iter().find(|k| **k == t.text) {
                        // Flag properties stand alone.
                        if !matches!(*k, "enabled" | "disabled" | "admin-only") {
                            self.head = Some(k);
                            self.words = 0;
                        }
                    }
                } else if let Some(h) = self.head {
                    self.words += 1;
                    if self.words >= arity(h, self.blocks.len()) && !self.is_block_head() {
                        self.head = None;
                    }
                }
            }
            TokKind::Arrow => {
                if self.blocks.last() == Some(&"rule") {
                    self.head = Some("=>");
                    self.words = 0;
                }
            }
            TokKind::Punct('{') => {
                let kw = match self.head {
                    Some(h) if self.blocks.is_empty() || h == "rule" => h,
                    _ => "",
                };
                self.blocks.push(kw);
                self.head = None;
                self.in_list = false;
            }
            TokKind::Punct('}') => {
                self.blocks.pop();
                self.head = None;
                self.in_list = false;
            }
            TokKind::Punct('[') => self.in_list = true,
            TokKind::Punct(']') => {
                self.in_list = false;
                self.head = None;
                self.selector = None;
            }
            TokKind::Punct(',') => self.selector = None,
            TokKind::Punct(_) => {}
        }
    }

    /// A block statement or rule waits for its `{` after its name.
    fn is_block_head(&self) -> bool {
        match self.head {
            Some("rule") => true,
            Some(h) => self.blocks.is_empty() && !prop_keywords(h).is_empty(),
            None => false,
        }
    }

    fn expected(&self) -> Expected {
        let depth = self.blocks.len();
        if self.in_list {
            return match self.head {
                Some("fallback") => Expected::Name(NameKind::Provider),
                Some("groups") => Expected::Name(NameKind::Group),
                Some("exclude" | "tools") => Expected::Name(NameKind::Tool),
                Some("skills") => Expected::Name(NameKind::Skill),
                Some("allow" | "needs-approval") => match self.selector {
                    Some("group") => Expected::Name(NameKind::Group),
                    Some(_) => Expected::Server,
                    None => Expected::Selector,
                },
                _ => Expected::Nothing,
            };
        }
        let Some(head) = self.head else {
            return match self.blocks.last() {
                None => Expected::TopKeyword,
                Some(b) if !b.is_empty() => Expected::PropKeyword(b),
                Some(_) => Expected::Nothing,
            };
        };
        if self.words > 0 {
            return Expected::Nothing;
        }
        match (depth, head) {
            (0, "enforcement") => Expected::Value(&["observe", "enforce"]),
            (0, "consumers-without-profile") => Expected::Value(&["unrestricted", "refused"]),
            (0, "unknown-consumers") => Expected::Value(&["refused", "admitted"]),
            (0, "skill-loader") => Expected::Name(NameKind::Tool),
            (0, "group") => Expected::Name(NameKind::Group),
            (0, "tool") => Expected::Name(NameKind::Tool),
            (0, "zone") => Expected::NewName(NameKind::Zone),
            (0, "provider") => Expected::NewName(NameKind::Provider),
            (0, "skill") => Expected::NewName(NameKind::Skill),
            (0, "configuration") => Expected::NewName(NameKind::Configuration),
            (0, "profile") => Expected::NewName(NameKind::Profile),
            (0, "consumer") => Expected::NewName(NameKind::Consumer),
            (0, "gateway") => Expected::NewName(NameKind::Gateway),
            (_, "rule") => Expected::NewName(NameKind::Rule),
            (_, "provider") => Expected::Name(NameKind::Provider),
            (_, "zone") => Expected::Name(NameKind::Zone),
            (_, "ceiling" | "class") => Expected::Name(NameKind::Class),
            (_, "profile") => Expected::Name(NameKind::Profile),
            (_, "not") => Expected::Value(&["admin-only"]),
            (_, "=>") => Expected::Value(OUTCOMES),
            _ => Expected::Nothing,
        }
    }
}

/// What the grammar expects at `offset`: what may stand in the token that contains or ends
/// at it (read from the tokens before that token), and that token.
pub fn expected_at(text: &str, offset: usize) -> (Expected, Option<Token<'_>>) {
    let toks = tokens(text);
    let mut state = State::default();
    // `remote-tools` takes `visible-to` then an audience.
    let mut current = None;
    for t in &toks {
        let touches = t.start <= offset
            && offset <= t.end
            && matches!(t.kind, TokKind::Word | TokKind::Quoted);
        if touches {
            current = Some(*t);
            break;
        }
        if t.start >= offset {
            break;
        }
        state.step(t);
    }
    let expected = match (state.head, state.words, state.blocks.is_empty()) {
        (Some("remote-tools"), 0, true) => Expected::Value(&["visible-to"]),
        (Some("remote-tools"), 1, true) => Expected::Value(&["admins", "everyone", "nobody"]),
        _ => state.expected(),
    };
    (expected, current)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str) -> Expected {
        let cursor = text.find('|').unwrap_or(text.len());
        let text = text.replacen('|', "", 1);
        expected_at(&text, cursor).0
    }

    #[test]
    fn expected_at_each_cursor() {
        assert_eq!(at("|"), Expected::TopKeyword);
        assert_eq!(at("zone a { ceiling x }\nconf|"), Expected::TopKeyword);
        assert_eq!(
            at("configuration c {\n  |"),
            Expected::PropKeyword("configuration")
        );
        assert_eq!(
            at("configuration c { exclude [a, |"),
            Expected::Name(NameKind::Tool)
        );
        assert_eq!(
            at("configuration c { exclude [a] gro|"),
            Expected::PropKeyword("configuration")
        );
        assert_eq!(
            at("configuration c { groups [|"),
            Expected::Name(NameKind::Group)
        );
        assert_eq!(
            at("configuration c { provider |"),
            Expected::Name(NameKind::Provider)
        );
        assert_eq!(
            at("configuration c { provider p |"),
            Expected::PropKeyword("configuration")
        );
        assert_eq!(
            at("configuration c { skills [|]"),
            Expected::Name(NameKind::Skill)
        );
        assert_eq!(at("provider p { zone |"), Expected::Name(NameKind::Zone));
        assert_eq!(
            at("provider p { fallback [|"),
            Expected::Name(NameKind::Provider)
        );
        assert_eq!(at("zone z { ceiling |"), Expected::Name(NameKind::Class));
        assert_eq!(at("tool t { not |"), Expected::Value(&["admin-only"]));
        assert_eq!(at("tool t { enabled |"), Expected::PropKeyword("tool"));
        assert_eq!(
            at("configuration |"),
            Expected::NewName(NameKind::Configuration)
        );
        assert_eq!(at("group |"), Expected::Name(NameKind::Group));
        assert_eq!(
            at("enforcement |"),
            Expected::Value(&["observe", "enforce"])
        );
        assert_eq!(at("remote-tools |"), Expected::Value(&["visible-to"]));
        assert_eq!(
            at("remote-tools visible-to |"),
            Expected::Value(&["admins", "everyone", "nobody"])
        );
        assert_eq!(at("profile p { allow [|"), Expected::Selector);
        assert_eq!(
            at("profile p { allow [group |"),
            Expected::Name(NameKind::Group)
        );
        assert_eq!(at("profile p { allow [server |"), Expected::Server);
        assert_eq!(at("profile p { allow [server crm, |"), Expected::Selector);
        assert_eq!(
            at("consumer c { profile |"),
            Expected::Name(NameKind::Profile)
        );
        assert_eq!(
            at("gateway g { rule r { http-status 403 => |"),
            Expected::Value(OUTCOMES)
        );
        assert_eq!(at("gateway g { rule r { |"), Expected::PropKeyword("rule"));
        assert_eq!(at("# zone |\n|"), Expected::TopKeyword);
        assert_eq!(
            at("configuration \"a b\" { provider |"),
            Expected::Name(NameKind::Provider)
        );
    }

    #[test]
    fn the_token_under_the_cursor_is_not_read_as_context() {
        let text = "configuration c { exclude [delete_recrod] }";
        let at = text.find("recrod").unwrap_or(0);
        let (expected, tok) = expected_at(text, at);
        assert_eq!(expected, Expected::Name(NameKind::Tool));
        assert_eq!(tok.map(|t| t.text), Some("delete_recrod"));
        let at = text.find("c {").unwrap_or(0);
        assert_eq!(
            expected_at(text, at).0,
            Expected::NewName(NameKind::Configuration)
        );
    }
}
