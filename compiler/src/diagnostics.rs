//! Diagnostics: one variant of [`Problem`] per kind of finding, each with its
//! spans and typed hint; [`Problem::diagnostic`] renders it into the common
//! [`Diagnostic`] shape that every output format reads. Codes are stable: a
//! code, once published in docs/diagnostics.md, keeps its meaning.

use crate::source::Span;
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// What kind of thing a name refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NameKind {
    Tool,
    Group,
    Zone,
    Class,
    Provider,
    Skill,
    Profile,
    Configuration,
    Consumer,
    Gateway,
    Rule,
}

impl NameKind {
    pub fn as_str(self) -> &'static str {
        match self {
            NameKind::Tool => "tool",
            NameKind::Group => "group",
            NameKind::Zone => "zone",
            NameKind::Class => "class",
            NameKind::Provider => "provider",
            NameKind::Skill => "skill",
            NameKind::Profile => "profile",
            NameKind::Configuration => "configuration",
            NameKind::Consumer => "consumer",
            NameKind::Gateway => "gateway",
            NameKind::Rule => "rule",
        }
    }
}

/// Every finding of the compiler front end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// TG0001
    Syntax {
        span: Span,
        expected: Vec<String>,
        found: Option<String>,
    },
    /// TG0002
    TooLarge {
        span: Span,
        what: &'static str,
        limit: usize,
        actual: usize,
    },
    /// TG0003
    Manifest { span: Span, message: String },
    /// TG0004
    RegistryInvalid { span: Span, message: String },
    /// TG0005
    TooManyClasses {
        span: Span,
        count: usize,
        limit: usize,
    },
    /// TG1001 .. TG1008 (by kind)
    Unknown {
        kind: NameKind,
        name: String,
        span: Span,
        suggestion: Option<String>,
    },
    /// TG1009
    StaleExclusion {
        name: String,
        span: Span,
        configuration: String,
    },
    /// TG1010
    ExclusionTypo {
        name: String,
        span: Span,
        configuration: String,
        suggestion: String,
    },
    /// TG2001
    Duplicate {
        kind: NameKind,
        name: String,
        span: Span,
        first: Span,
    },
    /// TG2002
    Contradiction {
        subject: String,
        span: Span,
        other: Span,
    },
    /// TG2003
    Repeated {
        property: &'static str,
        span: Span,
        first: Span,
    },
    /// TG2004
    ListedTwice {
        name: String,
        span: Span,
        first: Span,
    },
    /// TG2005
    LadderMisuse { span: Span, message: String },
    /// TG2006
    MissingProperty {
        kind: NameKind,
        name: String,
        property: &'static str,
        example: &'static str,
        span: Span,
    },
    /// TG3001
    ExclusionOutsideGroups {
        name: String,
        span: Span,
        configuration: String,
        group: String,
    },
    /// TG3002
    EnableInDisabledGroup {
        tool: String,
        span: Span,
        group: String,
        group_span: Option<Span>,
    },
    /// TG3003
    CeilingUnreached {
        zone: String,
        span: Span,
        ceiling: String,
    },
    /// TG3004
    EmptyGroups { span: Span, configuration: String },
    /// TG3005
    PatternMatchesNothing { pattern: String, span: Span },
    /// TG3006
    FallbackToSelf { provider: String, span: Span },
    /// TG4001
    RemoteNameInvalid {
        name: String,
        span: Span,
        reason: String,
    },
    /// TG4002
    RemoteGroupMismatch {
        tool: String,
        span: Span,
        expected: String,
    },
    /// TG4003
    DuplicateRegistryTool {
        name: String,
        span: Span,
        first: Span,
    },
    /// TG1011: a reference that reads like a registered tool but is another text.
    Lookalike {
        name: String,
        span: Span,
        registered: String,
        /// The code points that are not plain ASCII ([`crate::names::describe`]).
        detail: String,
    },
    /// TG1012: a control or format character in a name or a policy file.
    InvisibleCharacter {
        span: Span,
        /// Where: "policy file", or "registry name `x`".
        place: String,
        code_point: u32,
    },
    /// TG2007: `*` in a list of tool names that takes no patterns.
    PatternInNameList {
        name: String,
        span: Span,
        list: &'static str,
    },
    /// TG3007: a `mcp_<server>_*` prefix that also admits another server's tools.
    PrefixCrossesServers {
        pattern: String,
        span: Span,
        server: String,
        other_server: String,
        example: String,
    },
    /// TG4004: two registry tools whose names read alike.
    RegistryTwins {
        name: String,
        span: Span,
        other: String,
        other_span: Span,
        detail: String,
    },
    /// TG4005: a builtin tool in the remote namespace (`mcp_` name or group).
    BuiltinInRemoteNamespace {
        name: String,
        span: Span,
        what: String,
    },
}

/// A label on a span other than the primary one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

/// The rendered form every output format reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub code: &'static str,
    pub severity: Severity,
    pub message: String,
    pub span: Span,
    /// Text under the primary span.
    pub label: String,
    pub labels: Vec<Label>,
    pub help: Option<String>,
}

/// One entry of the catalogue: every code the compiler can emit.
pub struct CodeInfo {
    pub code: &'static str,
    pub name: &'static str,
    pub severity: Severity,
    pub summary: &'static str,
}

/// The catalogue, in code order. docs/diagnostics.md has one section per entry
/// (a test keeps the two in step).
pub const CATALOGUE: &[CodeInfo] = &[
    CodeInfo {
        code: "TG0001",
        name: "syntax-error",
        severity: Severity::Error,
        summary: "The text is not valid policy syntax.",
    },
    CodeInfo {
        code: "TG0002",
        name: "input-too-large",
        severity: Severity::Error,
        summary: "An input is over a documented limit.",
    },
    CodeInfo {
        code: "TG0003",
        name: "invalid-manifest",
        severity: Severity::Error,
        summary: "toolgate.toml is not a valid project manifest.",
    },
    CodeInfo {
        code: "TG0004",
        name: "invalid-registry",
        severity: Severity::Error,
        summary: "The registry file does not follow the registry schema.",
    },
    CodeInfo {
        code: "TG0005",
        name: "too-many-classes",
        severity: Severity::Error,
        summary: "The `classes` ladder has more classes than a table holds (64).",
    },
    CodeInfo {
        code: "TG1001",
        name: "unknown-tool",
        severity: Severity::Error,
        summary: "A tool name that the registry does not hold.",
    },
    CodeInfo {
        code: "TG1002",
        name: "unknown-group",
        severity: Severity::Error,
        summary: "A group that no registered tool belongs to.",
    },
    CodeInfo {
        code: "TG1003",
        name: "unknown-zone",
        severity: Severity::Error,
        summary: "A trust zone that no `zone` block defines.",
    },
    CodeInfo {
        code: "TG1004",
        name: "unknown-class",
        severity: Severity::Error,
        summary: "A data class that is not on the `classes` ladder.",
    },
    CodeInfo {
        code: "TG1005",
        name: "unknown-provider",
        severity: Severity::Error,
        summary: "A provider that no `provider` block defines.",
    },
    CodeInfo {
        code: "TG1006",
        name: "unknown-skill",
        severity: Severity::Error,
        summary: "A skill that no `skill` block defines.",
    },
    CodeInfo {
        code: "TG1007",
        name: "unknown-profile",
        severity: Severity::Error,
        summary: "An access profile that no `profile` block defines.",
    },
    CodeInfo {
        code: "TG1008",
        name: "unknown-configuration",
        severity: Severity::Error,
        summary: "A configuration that no `configuration` block defines.",
    },
    CodeInfo {
        code: "TG1009",
        name: "stale-exclusion",
        severity: Severity::Warning,
        summary: "An excluded name that no registered tool carries any more.",
    },
    CodeInfo {
        code: "TG1010",
        name: "exclusion-typo",
        severity: Severity::Error,
        summary: "An excluded name that is a near miss of a registered tool.",
    },
    CodeInfo {
        code: "TG1011",
        name: "lookalike-name",
        severity: Severity::Error,
        summary: "A name reads like a registered tool's but is a different text (Unicode confusables, invisible characters).",
    },
    CodeInfo {
        code: "TG1012",
        name: "invisible-character",
        severity: Severity::Error,
        summary: "A control or format character (Unicode Cc or Cf) in a policy file or a registry name.",
    },
    CodeInfo {
        code: "TG2001",
        name: "duplicate-definition",
        severity: Severity::Error,
        summary: "The same thing is defined twice.",
    },
    CodeInfo {
        code: "TG2002",
        name: "contradiction",
        severity: Severity::Error,
        summary: "Two statements say opposite things.",
    },
    CodeInfo {
        code: "TG2003",
        name: "repeated-property",
        severity: Severity::Warning,
        summary: "A property is given twice with the same value.",
    },
    CodeInfo {
        code: "TG2004",
        name: "listed-twice",
        severity: Severity::Warning,
        summary: "A name appears twice in one list.",
    },
    CodeInfo {
        code: "TG2005",
        name: "invalid-ladder",
        severity: Severity::Error,
        summary: "The `classes` ladder is missing, empty or given twice.",
    },
    CodeInfo {
        code: "TG2006",
        name: "missing-property",
        severity: Severity::Error,
        summary: "A block lacks a property it cannot do without.",
    },
    CodeInfo {
        code: "TG2007",
        name: "pattern-in-name-list",
        severity: Severity::Error,
        summary: "A `*` in an `exclude` or skill `tools` list, which name tools and take no patterns.",
    },
    CodeInfo {
        code: "TG3001",
        name: "exclusion-without-effect",
        severity: Severity::Warning,
        summary: "An excluded tool is already outside the configuration's groups.",
    },
    CodeInfo {
        code: "TG3002",
        name: "enable-in-disabled-group",
        severity: Severity::Warning,
        summary: "A tool is enabled but its group is disabled, so it stays off.",
    },
    CodeInfo {
        code: "TG3003",
        name: "ceiling-unreached",
        severity: Severity::Warning,
        summary: "A zone's ceiling refuses no registered tool.",
    },
    CodeInfo {
        code: "TG3004",
        name: "empty-groups",
        severity: Severity::Warning,
        summary: "An empty `groups` list means no restriction.",
    },
    CodeInfo {
        code: "TG3005",
        name: "pattern-matches-nothing",
        severity: Severity::Warning,
        summary: "A profile selector matches no registered tool.",
    },
    CodeInfo {
        code: "TG3006",
        name: "fallback-to-self",
        severity: Severity::Warning,
        summary: "A provider names itself in its fallback chain.",
    },
    CodeInfo {
        code: "TG3007",
        name: "prefix-crosses-servers",
        severity: Severity::Warning,
        summary: "A `mcp_<server>_*` prefix also admits the tools of another server.",
    },
    CodeInfo {
        code: "TG4001",
        name: "remote-name-invalid",
        severity: Severity::Error,
        summary: "A remote tool's name breaks the MCP naming rule.",
    },
    CodeInfo {
        code: "TG4002",
        name: "remote-group-mismatch",
        severity: Severity::Error,
        summary: "A remote tool's group is not `mcp_<server>`.",
    },
    CodeInfo {
        code: "TG4003",
        name: "duplicate-registry-tool",
        severity: Severity::Error,
        summary: "The registry lists a tool name twice.",
    },
    CodeInfo {
        code: "TG4004",
        name: "registry-twins",
        severity: Severity::Error,
        summary: "Two registry tools have names that read alike.",
    },
    CodeInfo {
        code: "TG4005",
        name: "builtin-in-remote-namespace",
        severity: Severity::Error,
        summary: "A builtin tool carries a remote tool's name (`mcp_...`) or group (`mcp_<server>`).",
    },
];

fn unknown_code(kind: NameKind) -> &'static str {
    match kind {
        NameKind::Tool => "TG1001",
        NameKind::Group => "TG1002",
        NameKind::Zone => "TG1003",
        NameKind::Class => "TG1004",
        NameKind::Provider => "TG1005",
        NameKind::Skill => "TG1006",
        NameKind::Profile => "TG1007",
        NameKind::Configuration => "TG1008",
        // Consumers, gateways and rules are never referenced by name inside a policy.
        NameKind::Consumer | NameKind::Gateway | NameKind::Rule => "TG1008",
    }
}

/// A name in a message, its invisible characters escaped.
fn esc(name: &str) -> std::borrow::Cow<'_, str> {
    toolgate_runtime::names::escape(name)
}

fn english_list(items: &[String]) -> String {
    match items {
        [] => String::from("something else"),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {}", init.join(", "), last),
    }
}

impl Problem {
    pub fn code(&self) -> &'static str {
        match self {
            Problem::Syntax { .. } => "TG0001",
            Problem::TooLarge { .. } => "TG0002",
            Problem::Manifest { .. } => "TG0003",
            Problem::RegistryInvalid { .. } => "TG0004",
            Problem::TooManyClasses { .. } => "TG0005",
            Problem::Unknown { kind, .. } => unknown_code(*kind),
            Problem::StaleExclusion { .. } => "TG1009",
            Problem::ExclusionTypo { .. } => "TG1010",
            Problem::Duplicate { .. } => "TG2001",
            Problem::Contradiction { .. } => "TG2002",
            Problem::Repeated { .. } => "TG2003",
            Problem::ListedTwice { .. } => "TG2004",
            Problem::LadderMisuse { .. } => "TG2005",
            Problem::MissingProperty { .. } => "TG2006",
            Problem::ExclusionOutsideGroups { .. } => "TG3001",
            Problem::EnableInDisabledGroup { .. } => "TG3002",
            Problem::CeilingUnreached { .. } => "TG3003",
            Problem::EmptyGroups { .. } => "TG3004",
            Problem::PatternMatchesNothing { .. } => "TG3005",
            Problem::FallbackToSelf { .. } => "TG3006",
            Problem::RemoteNameInvalid { .. } => "TG4001",
            Problem::RemoteGroupMismatch { .. } => "TG4002",
            Problem::DuplicateRegistryTool { .. } => "TG4003",
            Problem::Lookalike { .. } => "TG1011",
            Problem::InvisibleCharacter { .. } => "TG1012",
            Problem::PatternInNameList { .. } => "TG2007",
            Problem::PrefixCrossesServers { .. } => "TG3007",
            Problem::RegistryTwins { .. } => "TG4004",
            Problem::BuiltinInRemoteNamespace { .. } => "TG4005",
        }
    }

    pub fn severity(&self) -> Severity {
        let code = self.code();
        CATALOGUE
            .iter()
            .find(|c| c.code == code)
            .map(|c| c.severity)
            // Unreachable while the catalogue is complete (a test checks it); an error is the safe side.
            .unwrap_or(Severity::Error)
    }

    pub fn span(&self) -> Span {
        self.diagnostic().span
    }

    pub fn diagnostic(&self) -> Diagnostic {
        let d =
            |span: Span, message: String, label: &str, labels: Vec<Label>, help: Option<String>| {
                Diagnostic {
                    code: self.code(),
                    severity: self.severity(),
                    message,
                    span,
                    label: label.to_string(),
                    labels,
                    help,
                }
            };
        match self {
            Problem::Syntax { span, expected, found } => d(
                *span,
                match found {
                    Some(f) => format!("expected {}, found `{}`", english_list(expected), f),
                    None => format!("expected {}, found end of file", english_list(expected)),
                },
                "unexpected here",
                vec![],
                Some("see grammar/README.md for the statements and properties the language has".into()),
            ),
            Problem::TooLarge { span, what, limit, actual } => d(
                *span,
                format!("{what} is {actual} bytes, over the limit of {limit} bytes"),
                "input starts here",
                vec![],
                Some(format!("split the {what} into several files, each under {limit} bytes")),
            ),
            Problem::Manifest { span, message } => d(
                *span,
                format!("invalid project manifest: {message}"),
                "here",
                vec![],
                Some("toolgate.toml needs `registry = \"FILE\"` and `policies = [\"FILE\", ...]`".into()),
            ),
            Problem::RegistryInvalid { span, message } => d(
                *span,
                format!("invalid registry: {message}"),
                "here",
                vec![],
                Some("each `[[tool]]` needs `name` and `group`; see docs/registry.md".into()),
            ),
            Problem::TooManyClasses { span, count, limit } => d(
                *span,
                format!("the `classes` ladder has {count} classes, over the limit of {limit}"),
                &format!("class {} of {count}", limit + 1),
                vec![],
                Some(format!("merge classes until at most {limit} remain: a table holds a class rank in a 64-bit mask")),
            ),
            Problem::Unknown { kind, name, span, suggestion } => d(
                *span,
                format!("unknown {} `{}`", kind.as_str(), name),
                &format!("no {} of this name", kind.as_str()),
                vec![],
                Some(match suggestion {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => match kind {
                        NameKind::Tool | NameKind::Group => {
                            format!("add the {} to the registry, or remove this reference", kind.as_str())
                        }
                        NameKind::Class => "add the class to the `classes` ladder, or use one that is on it".into(),
                        _ => format!("define it with a `{} {} {{ ... }}` block", kind.as_str(), name),
                    },
                }),
            ),
            Problem::StaleExclusion { name, span, configuration } => d(
                *span,
                format!("`{name}` is no longer registered"),
                "no registered tool carries this name",
                vec![],
                Some(format!(
                    "remove `{name}` from the exclusions of configuration `{configuration}` (it excludes nothing now, but would exclude a tool of that name registered later)"
                )),
            ),
            Problem::ExclusionTypo { name, span, configuration, suggestion } => d(
                *span,
                format!("excluded tool `{name}` is not registered; did you mean `{suggestion}`?"),
                "not a registered tool",
                vec![],
                Some(format!(
                    "as written, configuration `{configuration}` still offers `{suggestion}`; write `{suggestion}`"
                )),
            ),
            Problem::Duplicate { kind, name, span, first } => d(
                *span,
                format!("{} `{}` is defined twice", kind.as_str(), name),
                "defined again here",
                vec![Label { span: *first, message: "first defined here".into() }],
                Some(format!("merge the two `{}` blocks into one", kind.as_str())),
            ),
            Problem::Contradiction { subject, span, other } => d(
                *span,
                format!("contradictory statements about {subject}"),
                "this says one thing",
                vec![Label { span: *other, message: "this says the opposite".into() }],
                Some("keep the one you mean and delete the other".into()),
            ),
            Problem::Repeated { property, span, first } => d(
                *span,
                format!("`{property}` is given twice"),
                "repeated here",
                vec![Label { span: *first, message: "first given here".into() }],
                Some("delete the repetition".into()),
            ),
            Problem::ListedTwice { name, span, first } => d(
                *span,
                format!("`{name}` is listed twice"),
                "listed again here",
                vec![Label { span: *first, message: "first listed here".into() }],
                Some("delete the repetition".into()),
            ),
            Problem::LadderMisuse { span, message } => d(
                *span,
                message.clone(),
                "here",
                vec![],
                Some("write one `classes [least, ..., most]` statement listing every data class, least sensitive first".into()),
            ),
            Problem::MissingProperty { kind, name, property, example, span } => d(
                *span,
                format!("{} `{}` has no `{}`", kind.as_str(), name, property),
                &format!("needs `{property}`"),
                vec![],
                Some(format!("add it, for example: `{} {} {{ {} }}`", kind.as_str(), name, example)),
            ),
            Problem::ExclusionOutsideGroups { name, span, configuration, group } => d(
                *span,
                format!("excluding `{name}` has no effect"),
                "already refused by the group gate",
                vec![],
                Some(format!(
                    "`{name}` is in group `{group}`, which configuration `{configuration}` does not allow; remove the exclusion, or allow the group if you meant to offer the rest of it"
                )),
            ),
            Problem::EnableInDisabledGroup { tool, span, group, group_span } => d(
                *span,
                format!("enabling `{tool}` has no effect: its group `{group}` is disabled"),
                "a tool cannot be enabled inside a disabled group",
                group_span
                    .map(|s| vec![Label { span: s, message: "the group is disabled here".into() }])
                    .unwrap_or_default(),
                Some(format!("enable group `{group}` (and disable the tools you do not want), or remove `enabled`")),
            ),
            Problem::CeilingUnreached { zone, span, ceiling } => d(
                *span,
                format!("the ceiling of zone `{zone}` refuses no registered tool"),
                "no tool's class is above this",
                vec![],
                Some(format!(
                    "no registered tool is classed above `{ceiling}`; lower the ceiling if the zone should refuse something, or set it to the top class to say it refuses nothing"
                )),
            ),
            Problem::EmptyGroups { span, configuration } => d(
                *span,
                format!("an empty `groups` list puts no restriction on configuration `{configuration}`"),
                "this allows every group",
                vec![],
                Some("list the groups to allow, or delete the line to say \"every group\"".into()),
            ),
            Problem::PatternMatchesNothing { pattern, span } => d(
                *span,
                format!("`{pattern}` matches no registered tool"),
                "matches nothing",
                vec![],
                Some("check the spelling of the prefix, or remove the selector".into()),
            ),
            Problem::FallbackToSelf { provider, span } => d(
                *span,
                format!("provider `{provider}` falls back to itself"),
                "has no effect",
                vec![],
                Some("remove it from its own `fallback` list".into()),
            ),
            Problem::RemoteNameInvalid { name, span, reason } => d(
                *span,
                format!("remote tool name `{name}` breaks the naming rule: {reason}"),
                "rejected",
                vec![],
                Some("a remote tool is named `mcp_<server>_<remote>` and must match ^[a-zA-Z0-9_-]{1,64}$; rename the tool on its server or shorten the server name".into()),
            ),
            Problem::RemoteGroupMismatch { tool, span, expected } => d(
                *span,
                format!("remote tool `{tool}` must be in group `{expected}`"),
                "wrong group",
                vec![],
                Some(format!("set `group = \"{expected}\"`")),
            ),
            Problem::DuplicateRegistryTool { name, span, first } => d(
                *span,
                format!("the registry lists `{name}` twice"),
                "listed again here",
                vec![Label { span: *first, message: "first listed here".into() }],
                Some("delete one of the entries".into()),
            ),
            Problem::Lookalike { name, span, registered, detail } => d(
                *span,
                format!(
                    "`{}` reads like registered tool `{registered}` but is a different name",
                    esc(name)
                ),
                "not the registered tool",
                vec![],
                Some(format!(
                    "as written this names no tool, so `{registered}` is untouched; write `{registered}` in plain characters (this name has {detail})"
                )),
            ),
            Problem::InvisibleCharacter { span, place, code_point } => d(
                *span,
                format!("a control or format character U+{code_point:04X} in {place}"),
                "invisible or control character here",
                vec![],
                Some("delete it: names and policy text hold no control (Cc) or format (Cf) characters, which are invisible in review or change how text is shown".into()),
            ),
            Problem::PatternInNameList { name, span, list } => d(
                *span,
                format!("`{}` in {list} is not a pattern", esc(name)),
                "`*` here",
                vec![],
                Some(format!(
                    "{list} names tools one by one (a tool registered later is never caught by it); list the tools, or use a profile's `allow` for patterns"
                )),
            ),
            Problem::PrefixCrossesServers { pattern, span, server, other_server, example } => d(
                *span,
                format!("`{pattern}` also admits tools of server `{other_server}`"),
                &format!("meant for server `{server}`?"),
                vec![],
                Some(format!(
                    "`{example}` belongs to server `{other_server}`; write `server {server}` to admit exactly the tools of `{server}`"
                )),
            ),
            Problem::RegistryTwins { name, span, other, other_span, detail } => d(
                *span,
                format!("registry tools `{}` and `{}` read alike", esc(other), esc(name)),
                "reads like the other",
                vec![Label { span: *other_span, message: "this one".into() }],
                Some(format!(
                    "rename one of them so that a reviewer can tell them apart (`{}` has {detail})",
                    esc(name)
                )),
            ),
            Problem::BuiltinInRemoteNamespace { name, span, what } => d(
                *span,
                format!("builtin tool `{}` {what}", esc(name)),
                "no `server`",
                vec![],
                Some("remote tools are admin-only and switched off until enabled; give it `server = \"<server>\"` if it comes from an MCP server, or rename it and its group out of `mcp_`".into()),
            ),
        }
    }
}

/// A closest match within a distance cap, for "did you mean". The cap is a
/// third of the name's length (at least 1, at most 3), so short names do not
/// suggest unrelated ones.
pub fn did_you_mean<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    let cap = (name.chars().count() / 3).clamp(1, 3);
    let lower = name.to_lowercase();
    candidates
        .into_iter()
        .filter(|c| *c != name)
        .map(|c| (strsim::damerau_levenshtein(&lower, &c.to_lowercase()), c))
        .filter(|(d, _)| *d <= cap)
        .min_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.cmp(b.1)))
        .map(|(_, c)| c.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn did_you_mean_is_capped() {
        let names = ["delete_record", "read_source", "get_env_raw"];
        assert_eq!(
            did_you_mean("delete_recrod", names),
            Some("delete_record".into())
        );
        assert_eq!(
            did_you_mean("read_sourc", names),
            Some("read_source".into())
        );
        assert_eq!(did_you_mean("shell_exec", names), None);
        assert_eq!(did_you_mean("ab", ["ac", "zz"]), Some("ac".into()));
        assert_eq!(did_you_mean("ab", ["xy"]), None);
    }

    #[test]
    fn every_code_is_in_the_catalogue_once() {
        let mut codes: Vec<_> = CATALOGUE.iter().map(|c| c.code).collect();
        let n = codes.len();
        codes.sort();
        codes.dedup();
        assert_eq!(codes.len(), n);
    }
}
