//! `toolgate fmt`: one canonical layout for policy files, comments kept.
//!
//! The file is parsed (a file that does not parse is not formatted) and
//! printed again from its syntax tree, walking in source order. Comments are
//! found by a small scan that skips strings, and emitted where they were:
//! above the item they preceded, or at the end of the line they ended.
//! Layout: one statement per line; a block without a comment inside fits on
//! one line when it is short and has one property, or up to three without
//! lists (`tool x { enabled  not admin-only }`, two spaces between), else one
//! property per line indented by two spaces; a list stays on one line
//! unless it is long or holds a comment; one blank line is kept where the
//! source had one or more.

use crate::diagnostics::Problem;
use crate::source::{FileId, Span};
use crate::syntax::ast::*;
use crate::syntax::parse::parse_policy;

const WIDTH: usize = 100;
const INDENT: &str = "  ";

#[derive(Debug, Clone)]
struct Comment {
    start: usize,
    end: usize,
    text: String,
}

fn comments(text: &str) -> Vec<Comment> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    let mut in_string = false;
    while i < b.len() {
        match b[i] {
            b'"' => in_string = !in_string,
            b'\n' => in_string = false,
            b'#' if !in_string => {
                let end = text[i..].find('\n').map(|e| i + e).unwrap_or(text.len());
                out.push(Comment {
                    start: i,
                    end,
                    text: text[i..end].trim_end().to_string(),
                });
                i = end;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Format a policy file. Errors only when the file does not parse.
pub fn format(text: &str) -> Result<String, Problem> {
    let ast = parse_policy(FileId(0), text)?;
    let mut p = Printer {
        text,
        comments: comments(text),
        next: 0,
        out: String::new(),
        last_end: 0,
    };
    for st in &ast.statements {
        p.statement(st);
    }
    p.leading(text.len(), 0);
    let mut out = p.out.trim_end().to_string();
    out.push('\n');
    if out.trim().is_empty() {
        return Ok(String::new());
    }
    Ok(out)
}

struct Printer<'a> {
    text: &'a str,
    comments: Vec<Comment>,
    /// Index of the next comment not yet emitted.
    next: usize,
    out: String,
    /// End of the last thing emitted, in the source.
    last_end: usize,
}

fn bare_ok(s: &str) -> bool {
    let mut c = s.chars();
    matches!(c.next(), Some(ch) if ch.is_ascii_alphabetic() || ch == '_')
        && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_' || ch == '-')
}

fn name(n: &Name) -> String {
    // Keywords need no quotes: every place a name stands, the grammar reads a name.
    if bare_ok(&n.text) {
        n.text.clone()
    } else {
        format!("\"{}\"", n.text)
    }
}

/// Where a statement starts and ends in its source.
fn statement_span(st: &Statement) -> crate::source::Span {
    match st {
        Statement::Classes(c) => c.span,
        Statement::Enforcement(s) => s.span,
        Statement::RemoteVisibility(s) => s.span,
        Statement::Unprofiled(s) => s.span,
        Statement::UnknownConsumers(s) => s.span,
        Statement::SkillLoader(s) => s.span,
        Statement::Group(b) => b.span,
        Statement::Tool(b) => b.span,
        Statement::Zone(b) => b.span,
        Statement::Provider(b) => b.span,
        Statement::Skill(b) => b.span,
        Statement::Configuration(b) => b.span,
        Statement::Profile(b) => b.span,
        Statement::Consumer(b) => b.span,
        Statement::Gateway(b) => b.span,
    }
}

fn selector(s: &Selector) -> (String, Span) {
    match s {
        Selector::Tool(n) => (name(n), n.span),
        Selector::Group(n) => (format!("group {}", name(n)), n.span),
        Selector::Server(n) => (format!("server {}", name(n)), n.span),
        Selector::Prefix(n) => {
            let bare = n
                .text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
            (
                if bare {
                    format!("{}*", n.text)
                } else {
                    format!("\"{}*\"", n.text)
                },
                n.span,
            )
        }
    }
}

impl Printer<'_> {
    /// Whether the source has an empty line between `from` and `to`.
    fn has_blank_line(&self, from: usize, to: usize) -> bool {
        let gap = self.text.get(from.min(to)..to).unwrap_or("");
        let lines: Vec<&str> = gap.split('\n').collect();
        lines.len() >= 3
            && lines[1..lines.len() - 1]
                .iter()
                .any(|l| l.trim().is_empty())
    }

    fn blank_if(&mut self, from: usize, to: usize) {
        if !self.out.is_empty()
            && !self.out.ends_with("{\n")
            && !self.out.ends_with("[\n")
            && self.has_blank_line(from, to)
            && !self.out.ends_with("\n\n")
        {
            self.out.push('\n');
        }
    }

    /// Emit the comments that start before `pos`, each on its own line.
    fn leading(&mut self, pos: usize, depth: usize) {
        while self.next < self.comments.len() && self.comments[self.next].start < pos {
            let c = self.comments[self.next].clone();
            self.blank_if(self.last_end, c.start);
            self.out.push_str(&INDENT.repeat(depth));
            self.out.push_str(&c.text);
            self.out.push('\n');
            self.last_end = c.end;
            self.next += 1;
        }
    }

    /// The comment that starts on the same line after `end`, if any: emitted at line end.
    fn trailing(&mut self, end: usize) -> Option<String> {
        let c = self.comments.get(self.next)?;
        let gap = self.text.get(end..c.start)?;
        if gap.contains('\n') {
            return None;
        }
        let t = c.text.clone();
        self.last_end = c.end;
        self.next += 1;
        Some(t)
    }

    fn comments_within(&self, span: Span) -> bool {
        self.comments[self.next..]
            .iter()
            .any(|c| c.start >= span.start as usize && c.start < span.end as usize)
    }

    fn line(&mut self, depth: usize, text: &str, end: usize) {
        self.out.push_str(&INDENT.repeat(depth));
        self.out.push_str(text);
        if let Some(t) = self.trailing(end) {
            self.out.push_str("  ");
            self.out.push_str(&t);
        }
        self.out.push('\n');
        self.last_end = self.last_end.max(end);
    }

    fn statement(&mut self, st: &Statement) {
        let span = statement_span(st);
        self.leading(span.start as usize, 0);
        self.blank_if(self.last_end, span.start as usize);
        match st {
            Statement::Classes(_)
            | Statement::Enforcement(_)
            | Statement::RemoteVisibility(_)
            | Statement::Unprofiled(_)
            | Statement::UnknownConsumers(_)
            | Statement::SkillLoader(_) => self.setting(st),
            _ => self.block_statement(st),
        }
    }

    /// A one-line setting (`classes`, `enforcement`, ...).
    fn setting(&mut self, st: &Statement) {
        match st {
            Statement::Classes(c) => self.list_prop(
                0,
                "classes",
                &c.ladder
                    .iter()
                    .map(|n| (name(n), n.span))
                    .collect::<Vec<_>>(),
                c.span,
            ),
            Statement::Enforcement(s) => {
                let v = if s.value == Enforcement::Observe {
                    "observe"
                } else {
                    "enforce"
                };
                self.line(0, &format!("enforcement {v}"), s.span.end as usize);
            }
            Statement::RemoteVisibility(s) => {
                let v = match s.value {
                    Audience::Admins => "admins",
                    Audience::Everyone => "everyone",
                    Audience::Nobody => "nobody",
                };
                self.line(
                    0,
                    &format!("remote-tools visible-to {v}"),
                    s.span.end as usize,
                );
            }
            Statement::Unprofiled(s) => {
                let v = if s.value == Unprofiled::Refused {
                    "refused"
                } else {
                    "unrestricted"
                };
                self.line(
                    0,
                    &format!("consumers-without-profile {v}"),
                    s.span.end as usize,
                );
            }
            Statement::UnknownConsumers(s) => {
                let v = if s.value == UnknownConsumers::Admitted {
                    "admitted"
                } else {
                    "refused"
                };
                self.line(0, &format!("unknown-consumers {v}"), s.span.end as usize);
            }
            Statement::SkillLoader(s) => self.line(
                0,
                &format!("skill-loader {}", name(&s.value)),
                s.span.end as usize,
            ),
            _ => {}
        }
    }

    /// A block statement (`group`, `tool`, ... `gateway`).
    fn block_statement(&mut self, st: &Statement) {
        match st {
            Statement::Group(b) => self.block("group", b, Self::group_prop, simple_group),
            Statement::Tool(b) => self.block("tool", b, Self::tool_prop, simple_tool),
            Statement::Zone(b) => self.block(
                "zone",
                b,
                |p, v, sp, d| match v {
                    ZoneProp::Ceiling(n) => {
                        p.line(d, &format!("ceiling {}", name(n)), sp.end as usize)
                    }
                },
                simple_zone,
            ),
            Statement::Provider(b) => {
                self.block("provider", b, Self::provider_prop, simple_provider)
            }
            Statement::Skill(b) => self.block(
                "skill",
                b,
                |p, v, sp, d| match v {
                    SkillProp::Tools(l) => p.list_prop(d, "tools", &names(l), sp),
                },
                simple_skill,
            ),
            Statement::Configuration(b) => self.block(
                "configuration",
                b,
                Self::configuration_prop,
                simple_configuration,
            ),
            Statement::Profile(b) => self.block("profile", b, Self::profile_prop, simple_profile),
            Statement::Consumer(b) => self.block(
                "consumer",
                b,
                |p, v, sp, d| match v {
                    ConsumerProp::Profile(n) => {
                        p.line(d, &format!("profile {}", name(n)), sp.end as usize)
                    }
                },
                simple_consumer,
            ),
            Statement::Gateway(b) => {
                self.block("gateway", b, |p, r, sp, d| p.rule(r, sp, d), |_| None)
            }
            _ => {}
        }
    }

    // The properties of each kind of block one per line (a block that does
    // not fit on one line).
    fn group_prop(&mut self, v: &GroupProp, sp: Span, d: usize) {
        match v {
            GroupProp::State(s) => {
                self.line(d, if *s { "enabled" } else { "disabled" }, sp.end as usize)
            }
            GroupProp::Class(n) => self.line(d, &format!("class {}", name(n)), sp.end as usize),
        }
    }

    fn tool_prop(&mut self, v: &ToolProp, sp: Span, d: usize) {
        match v {
            ToolProp::State(s) => {
                self.line(d, if *s { "enabled" } else { "disabled" }, sp.end as usize)
            }
            ToolProp::AdminOnly(a) => self.line(
                d,
                if *a { "admin-only" } else { "not admin-only" },
                sp.end as usize,
            ),
            ToolProp::Class(n) => self.line(d, &format!("class {}", name(n)), sp.end as usize),
        }
    }

    fn provider_prop(&mut self, v: &ProviderProp, sp: Span, d: usize) {
        match v {
            ProviderProp::Zone(n) => self.line(d, &format!("zone {}", name(n)), sp.end as usize),
            ProviderProp::Fallback(l) => self.list_prop(d, "fallback", &names(l), sp),
        }
    }

    fn configuration_prop(&mut self, v: &ConfigurationProp, sp: Span, d: usize) {
        match v {
            ConfigurationProp::Provider(n) => {
                self.line(d, &format!("provider {}", name(n)), sp.end as usize)
            }
            ConfigurationProp::Groups(l) => self.list_prop(d, "groups", &names(l), sp),
            ConfigurationProp::Exclude(l) => self.list_prop(d, "exclude", &names(l), sp),
            ConfigurationProp::Skills(l) => self.list_prop(d, "skills", &names(l), sp),
            ConfigurationProp::NeedsApproval(l) => self.list_prop(
                d,
                "needs-approval",
                &l.iter().map(selector).collect::<Vec<_>>(),
                sp,
            ),
        }
    }

    fn profile_prop(&mut self, v: &ProfileProp, sp: Span, d: usize) {
        match v {
            ProfileProp::Allow(l) => {
                self.list_prop(d, "allow", &l.iter().map(selector).collect::<Vec<_>>(), sp)
            }
            ProfileProp::NeedsApproval(l) => self.list_prop(
                d,
                "needs-approval",
                &l.iter().map(selector).collect::<Vec<_>>(),
                sp,
            ),
        }
    }

    /// A block: one line when it has at most one property, no comment inside,
    /// and fits; else one property per line.
    fn block<P>(
        &mut self,
        kind: &str,
        b: &Block<P>,
        prop: impl Fn(&mut Self, &P, Span, usize),
        one_line: impl Fn(&P) -> Option<String>,
    ) {
        let head = format!("{kind} {}", name(&b.name));
        let inner = Span {
            file: b.span.file,
            start: b.name.span.end,
            end: b.span.end,
        };
        if !self.comments_within(inner) {
            // One line: no property, one property, or up to three short ones without lists.
            let parts: Option<Vec<String>> = b.props.iter().map(|p| one_line(&p.value)).collect();
            let single = match (b.props.len(), parts) {
                (0, _) => Some(format!("{head} {{ }}")),
                (1, Some(p)) => Some(format!("{head} {{ {} }}", p[0])),
                (2..=3, Some(p)) if p.iter().all(|x| !x.contains('[')) => {
                    Some(format!("{head} {{ {} }}", p.join("  ")))
                }
                _ => None,
            };
            if let Some(s) = single.filter(|s| s.len() <= 80) {
                self.line(0, &s, b.span.end as usize);
                return;
            }
        }
        self.out.push_str(&head);
        self.out.push_str(" {\n");
        self.last_end = b.name.span.end as usize;
        for p in &b.props {
            self.leading(p.span.start as usize, 1);
            self.blank_if(self.last_end, p.span.start as usize);
            prop(self, &p.value, p.span, 1);
        }
        self.leading(b.span.end as usize - 1, 1);
        self.line(0, "}", b.span.end as usize);
    }

    fn rule(&mut self, r: &GatewayRule, span: Span, depth: usize) {
        self.out.push_str(&INDENT.repeat(depth));
        self.out.push_str(&format!("rule {} {{\n", name(&r.name)));
        self.last_end = r.name.span.end as usize;
        for (m, sp) in &r.matchers {
            self.leading(sp.start as usize, depth + 1);
            let t = match m {
                Matcher::HttpStatus(n) => format!("http-status {n}"),
                Matcher::ErrorCode(n) => format!("error-code {n}"),
                Matcher::Message(s) => format!("message \"{s}\""),
                Matcher::Data(f, s) => format!("data {} = \"{s}\"", name(f)),
                Matcher::ResultText(s) => format!("result-text \"{s}\""),
                Matcher::Header(f, s) => format!("header {} = \"{s}\"", name(f)),
                Matcher::Body(s) => format!("body \"{s}\""),
                Matcher::Remediation(s) => format!("remediation \"{s}\""),
            };
            self.line(depth + 1, &t, sp.end as usize);
        }
        self.leading(r.outcome_span.start as usize, depth + 1);
        let o = match r.outcome {
            Outcome::NotInProfile => "not-in-profile",
            Outcome::NotRegistered => "not-registered",
            Outcome::ContentPolicy => "content-policy",
            Outcome::Policy => "policy",
            Outcome::ToolFailure => "tool-failure",
        };
        self.line(depth + 1, &format!("=> {o}"), r.outcome_span.end as usize);
        self.leading(span.end as usize - 1, depth + 1);
        self.line(depth, "}", span.end as usize);
    }

    /// `key [a, b]` on one line, or one item per line when long or commented.
    fn list_prop(&mut self, depth: usize, key: &str, items: &[(String, Span)], span: Span) {
        let one = format!("{key} [{}]", join(items));
        if !self.comments_within(span) && INDENT.len() * depth + one.len() <= WIDTH {
            self.line(depth, &one, span.end as usize);
            return;
        }
        self.out.push_str(&INDENT.repeat(depth));
        self.out.push_str(key);
        self.out.push_str(" [\n");
        for (text, sp) in items {
            self.leading(sp.start as usize, depth + 1);
            self.line(depth + 1, &format!("{text},"), sp.end as usize);
        }
        self.leading(span.end as usize - 1, depth + 1);
        self.line(depth, "]", span.end as usize);
    }
}

fn names(l: &[Name]) -> Vec<(String, Span)> {
    l.iter().map(|n| (name(n), n.span)).collect()
}

fn join(items: &[(String, Span)]) -> String {
    items
        .iter()
        .map(|(t, _)| t.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn simple_group(v: &GroupProp) -> Option<String> {
    Some(match v {
        GroupProp::State(s) => (if *s { "enabled" } else { "disabled" }).to_string(),
        GroupProp::Class(n) => format!("class {}", name(n)),
    })
}

fn simple_tool(v: &ToolProp) -> Option<String> {
    Some(match v {
        ToolProp::State(s) => (if *s { "enabled" } else { "disabled" }).to_string(),
        ToolProp::AdminOnly(a) => (if *a { "admin-only" } else { "not admin-only" }).to_string(),
        ToolProp::Class(n) => format!("class {}", name(n)),
    })
}

fn simple_zone(v: &ZoneProp) -> Option<String> {
    match v {
        ZoneProp::Ceiling(n) => Some(format!("ceiling {}", name(n))),
    }
}

fn simple_provider(v: &ProviderProp) -> Option<String> {
    match v {
        ProviderProp::Zone(n) => Some(format!("zone {}", name(n))),
        ProviderProp::Fallback(l) => Some(format!("fallback [{}]", join(&names(l)))),
    }
}

fn simple_skill(v: &SkillProp) -> Option<String> {
    match v {
        SkillProp::Tools(l) => Some(format!("tools [{}]", join(&names(l)))),
    }
}

fn simple_configuration(v: &ConfigurationProp) -> Option<String> {
    match v {
        ConfigurationProp::Provider(n) => Some(format!("provider {}", name(n))),
        ConfigurationProp::Groups(l) => Some(format!("groups [{}]", join(&names(l)))),
        ConfigurationProp::Exclude(l) => Some(format!("exclude [{}]", join(&names(l)))),
        ConfigurationProp::Skills(l) => Some(format!("skills [{}]", join(&names(l)))),
        ConfigurationProp::NeedsApproval(l) => Some(format!(
            "needs-approval [{}]",
            join(&l.iter().map(selector).collect::<Vec<_>>())
        )),
    }
}

fn simple_profile(v: &ProfileProp) -> Option<String> {
    match v {
        ProfileProp::Allow(l) => Some(format!(
            "allow [{}]",
            join(&l.iter().map(selector).collect::<Vec<_>>())
        )),
        ProfileProp::NeedsApproval(l) => Some(format!(
            "needs-approval [{}]",
            join(&l.iter().map(selector).collect::<Vec<_>>())
        )),
    }
}

fn simple_consumer(v: &ConsumerProp) -> Option<String> {
    match v {
        ConsumerProp::Profile(n) => Some(format!("profile {}", name(n))),
    }
}

#[cfg(test)]
mod tests {
    use super::format;

    #[test]
    fn canonical_layout_keeps_comments() {
        let src = "# head\n\nenforcement   observe # why\ntool  x {disabled}\nconfiguration c {\n  # who\n  provider p   groups [a,b,\n c]\n exclude [x] # not x\n}\n\n\n\nzone z { ceiling  secretAdjacent }\n";
        let want = "# head\n\nenforcement observe  # why\ntool x { disabled }\nconfiguration c {\n  # who\n  provider p\n  groups [a, b, c]\n  exclude [x]  # not x\n}\n\nzone z { ceiling secretAdjacent }\n";
        let got = format(src).unwrap();
        assert_eq!(got, want);
        assert_eq!(format(&got).unwrap(), got);
    }

    #[test]
    fn comments_inside_lists_force_one_item_per_line() {
        let src = "configuration c { exclude [a, # first\n b] }\n";
        let got = format(src).unwrap();
        assert_eq!(
            got,
            "configuration c {\n  exclude [\n    a,  # first\n    b,\n  ]\n}\n"
        );
        assert_eq!(format(&got).unwrap(), got);
    }

    #[test]
    fn names_are_quoted_only_when_needed() {
        let src = "profile p { allow [\"refund.issue\", \"plain\", group \"g\", mcp_a_*] }\n";
        assert_eq!(
            format(src).unwrap(),
            "profile p { allow [\"refund.issue\", plain, group g, mcp_a_*] }\n"
        );
    }
}
