//! Diagnostics: one variant of [`Problem`] per kind of finding, each with its
//! spans and typed hint; [`Problem::diagnostic`] renders it into the common
//! [`Diagnostic`] shape that every output format reads. Codes are stable: a
//! code, once published in docs/diagnostics.md, keeps its meaning.

pub mod suppress;

use crate::source::{FileId, Span};
use serde::Serialize;

#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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

/// What kind of thing a reference names: the kinds a policy can refer to,
/// each with its own "unknown" code (TG1001..TG1008). Consumers, gateways and
/// rules are never referred to by name inside a policy, so an unknown one
/// cannot be represented.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RefKind {
    Tool,
    Group,
    Zone,
    Class,
    Provider,
    Skill,
    Profile,
    Configuration,
}

impl RefKind {
    pub fn as_str(self) -> &'static str {
        self.name_kind().as_str()
    }

    /// The same kind among all named things.
    pub fn name_kind(self) -> NameKind {
        match self {
            RefKind::Tool => NameKind::Tool,
            RefKind::Group => NameKind::Group,
            RefKind::Zone => NameKind::Zone,
            RefKind::Class => NameKind::Class,
            RefKind::Provider => NameKind::Provider,
            RefKind::Skill => NameKind::Skill,
            RefKind::Profile => NameKind::Profile,
            RefKind::Configuration => NameKind::Configuration,
        }
    }

    /// The code of "unknown" for this kind.
    pub fn unknown_code(self) -> &'static str {
        match self {
            RefKind::Tool => "TG1001",
            RefKind::Group => "TG1002",
            RefKind::Zone => "TG1003",
            RefKind::Class => "TG1004",
            RefKind::Provider => "TG1005",
            RefKind::Skill => "TG1006",
            RefKind::Profile => "TG1007",
            RefKind::Configuration => "TG1008",
        }
    }
}

/// Defines every diagnostic in one place: its code, name, severity and
/// summary (the catalogue), its variant with the fields it carries, and how it
/// renders (primary span, message, label, secondary labels, help). The enum,
/// [`CATALOGUE`] and the rendering are generated from the one list below, so
/// adding a diagnostic is adding one entry (and its docs and test).
macro_rules! problems {
    ($(
        $(#[doc = $doc:literal])*
        $code:literal $slug:literal $sev:ident $summary:literal
        $Variant:ident { $( $(#[doc = $fdoc:literal])* $field:ident : $ty:ty ),* $(,)? }
        $(also [ $( ($xcode:literal, $xslug:literal, $xsev:ident, $xsummary:literal) ),* $(,)? ])?
        => $render:expr;
    )*) => {
        /// Every finding of the compiler front end.
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum Problem {
            $( $(#[doc = $doc])* $Variant { $( $(#[doc = $fdoc])* $field: $ty ),* }, )*
        }

        /// The catalogue, in code order. docs/diagnostics.md has one section
        /// per entry (a test keeps the two in step).
        pub const CATALOGUE: &[CodeInfo] = &[
            $(
                CodeInfo { code: $code, name: $slug, severity: Severity::$sev, summary: $summary },
                $($( CodeInfo { code: $xcode, name: $xslug, severity: Severity::$xsev, summary: $xsummary }, )*)?
            )*
        ];

        impl Problem {
            /// The code of the variant's catalogue entry.
            fn entry_code(&self) -> &'static str {
                match self {
                    $( Problem::$Variant { .. } => $code, )*
                }
            }

            /// (primary span, message, label, secondary labels, help).
            #[allow(unused_variables)]
            fn parts(&self) -> (Span, String, String, Vec<Label>, Option<String>) {
                match self {
                    $(
                        Problem::$Variant { $($field),* } => {
                            let (span, message, label, labels, help) = $render;
                            (span, message, label.to_string(), labels, help)
                        }
                    )*
                }
            }
        }
    };
}

problems! {
    "TG0001" "syntax-error" Error "The text is not valid policy syntax."
    Syntax {
        span: Span,
        expected: Vec<String>,
        found: Option<String>,
        /// A fix for a known slip (a keyword's near miss, a name with `.`
        /// unquoted); else the pointer to the grammar.
        hint: Option<String>,
        /// The `{` a missing `}` leaves open: then the diagnostic stands there.
        unclosed: Option<Span>,
    }
    => {
        let found_text = match found {
            Some(f) => format!("`{f}`"),
            None => "end of file".to_string(),
        };
        let help = hint.clone().unwrap_or_else(|| {
            "see grammar/README.md for the statements and properties the language has".into()
        });
        match unclosed {
            Some(open) => (
                *open,
                format!("this `{{` is never closed: expected `}}` before {found_text}"),
                "opened here",
                vec![Label { span: *span, message: "the block must end before this".into() }],
                Some("add `}` where the block ends".to_string()),
            ),
            None => (
                *span,
                format!("expected {}, found {found_text}", english_list(expected)),
                "unexpected here",
                vec![],
                Some(help),
            ),
        }
    };

    "TG0002" "input-too-large" Error "An input is over a documented limit."
    TooLarge {
        span: Span,
        what: &'static str,
        limit: usize,
        actual: usize,
    }
    => (
        *span,
        format!("{what} is {actual} bytes, over the limit of {limit} bytes"),
        "input starts here",
        vec![],
        Some(format!("split the {what} into several files, each under {limit} bytes")),
    );

    "TG0003" "invalid-manifest" Error "toolgate.toml is not a valid project manifest."
    Manifest {
        span: Span,
        message: String,
    }
    => (
        *span,
        format!("invalid project manifest: {message}"),
        "here",
        vec![],
        Some("toolgate.toml needs `registry = \"FILE\"` and `policies = [\"FILE\", ...]`".into()),
    );

    "TG0004" "invalid-registry" Error "The registry file does not follow the registry schema."
    RegistryInvalid {
        span: Span,
        message: String,
    }
    => (
        *span,
        format!("invalid registry: {message}"),
        "here",
        vec![],
        Some("each `[[tool]]` needs `name` and `group`; see docs/registry.md".into()),
    );

    "TG0005" "too-many-classes" Error "The `classes` ladder has more classes than a table holds (64)."
    TooManyClasses {
        span: Span,
        count: usize,
        limit: usize,
    }
    => (
        *span,
        format!("the `classes` ladder has {count} classes, over the limit of {limit}"),
        &format!("class {} of {count}", limit + 1),
        vec![],
        Some(format!("merge classes until at most {limit} remain: a table holds a class rank in a 64-bit mask")),
    );

    "TG0006" "unused-suppression" Warning "A `# toolgate: allow` comment that suppresses nothing."
    UnusedSuppression {
        span: Span,
        /// The codes it names that matched no finding on its line.
        codes: String,
    }
    => (
        *span,
        format!("`# toolgate: allow {codes}` suppresses nothing"),
        "suppresses nothing",
        vec![],
        Some("remove it, or put it on the line of the finding (or alone on the line above it)".into()),
    );

    "TG0007" "invalid-suppression" Warning "A suppression or `[lints]` entry that names an unknown code or level, or an error that cannot be lowered."
    InvalidSuppression {
        span: Span,
        message: String,
        help: String,
    }
    => (
        *span,
        message.clone(),
        "not applied",
        vec![],
        Some(help.clone()),
    );

    "TG1001" "unknown-tool" Error "A tool name that the registry does not hold."
    Unknown {
        kind: RefKind,
        name: String,
        span: Span,
        suggestion: Option<String>,
    }
    also [
        ("TG1002", "unknown-group", Error, "A group that no registered tool belongs to."),
        ("TG1003", "unknown-zone", Error, "A trust zone that no `zone` block defines."),
        ("TG1004", "unknown-class", Error, "A data class that is not on the `classes` ladder."),
        ("TG1005", "unknown-provider", Error, "A provider that no `provider` block defines."),
        ("TG1006", "unknown-skill", Error, "A skill that no `skill` block defines."),
        ("TG1007", "unknown-profile", Error, "An access profile that no `profile` block defines."),
        ("TG1008", "unknown-configuration", Error, "A configuration that no `configuration` block defines."),
    ]
    => (
        *span,
        format!("unknown {} `{}`", kind.as_str(), name),
        &format!("no {} of this name", kind.as_str()),
        vec![],
        Some(match suggestion {
            Some(s) => format!("did you mean `{s}`?"),
            None => match kind {
                RefKind::Tool | RefKind::Group => {
                    format!("add the {} to the registry, or remove this reference", kind.as_str())
                }
                RefKind::Class => "add the class to the `classes` ladder, or use one that is on it".into(),
                _ => format!("define it with a `{} {} {{ ... }}` block", kind.as_str(), name),
            },
        }),
    );

    "TG1009" "stale-exclusion" Warning "An excluded name that no registered tool carries any more."
    StaleExclusion {
        name: String,
        span: Span,
        configuration: String,
    }
    => (
        *span,
        format!("`{name}` is no longer registered"),
        "no registered tool carries this name",
        vec![],
        Some(format!(
            "remove `{name}` from the exclusions of configuration `{configuration}` (it excludes nothing now, but would exclude a tool of that name registered later)"
        )),
    );

    "TG1010" "exclusion-typo" Error "An excluded name that is a near miss of a registered tool."
    ExclusionTypo {
        name: String,
        span: Span,
        configuration: String,
        suggestion: String,
    }
    => (
        *span,
        format!("excluded tool `{name}` is not registered; did you mean `{suggestion}`?"),
        "not a registered tool",
        vec![],
        Some(format!(
            "as written, configuration `{configuration}` still offers `{suggestion}`; write `{suggestion}`, or, if `{name}` is kept on purpose (a tool renamed in the registry), acknowledge it with `# toolgate: allow TG1010`"
        )),
    );

    "TG2001" "duplicate-definition" Error "The same thing is defined twice."
    Duplicate {
        kind: NameKind,
        name: String,
        span: Span,
        first: Span,
    }
    => (
        *span,
        format!("{} `{}` is defined twice", kind.as_str(), name),
        "defined again here",
        vec![Label { span: *first, message: "first defined here".into() }],
        Some(format!("merge the two `{}` blocks into one", kind.as_str())),
    );

    "TG2002" "contradiction" Error "Two statements say opposite things."
    Contradiction {
        subject: String,
        span: Span,
        other: Span,
    }
    => (
        *span,
        format!("contradictory statements about {subject}"),
        "this says one thing",
        vec![Label { span: *other, message: "this says the opposite".into() }],
        Some("keep the one you mean and delete the other".into()),
    );

    "TG2003" "repeated-property" Warning "A property is given twice with the same value."
    Repeated {
        property: &'static str,
        span: Span,
        first: Span,
    }
    => (
        *span,
        format!("`{property}` is given twice"),
        "repeated here",
        vec![Label { span: *first, message: "first given here".into() }],
        Some("delete the repetition".into()),
    );

    "TG2004" "listed-twice" Warning "A name appears twice in one list."
    ListedTwice {
        name: String,
        span: Span,
        first: Span,
    }
    => (
        *span,
        format!("`{name}` is listed twice"),
        "listed again here",
        vec![Label { span: *first, message: "first listed here".into() }],
        Some("delete the repetition".into()),
    );

    "TG2005" "invalid-ladder" Error "The `classes` ladder is missing, empty or given twice."
    LadderMisuse {
        span: Span,
        message: String,
    }
    => (
        *span,
        message.clone(),
        "here",
        vec![],
        Some("write one `classes [least, ..., most]` statement listing every data class, least sensitive first".into()),
    );

    "TG2006" "missing-property" Error "A block lacks a property it cannot do without."
    MissingProperty {
        kind: NameKind,
        name: String,
        property: &'static str,
        example: &'static str,
        span: Span,
    }
    => (
        *span,
        format!("{} `{}` has no `{}`", kind.as_str(), name, property),
        &format!("needs `{property}`"),
        vec![],
        Some(format!("add it, for example: `{} {} {{ {} }}`", kind.as_str(), name, example)),
    );

    "TG3001" "exclusion-without-effect" Warning "An excluded tool is already outside the configuration's groups."
    ExclusionOutsideGroups {
        name: String,
        span: Span,
        configuration: String,
        group: String,
    }
    => (
        *span,
        format!("excluding `{name}` has no effect"),
        "already refused by the group gate",
        vec![],
        Some(format!(
            "`{name}` is in group `{group}`, which configuration `{configuration}` does not allow; remove the exclusion, or allow the group if you meant to offer the rest of it"
        )),
    );

    "TG3002" "enable-in-disabled-group" Warning "A tool is enabled but its group is disabled, so it stays off."
    EnableInDisabledGroup {
        tool: String,
        span: Span,
        group: String,
        group_span: Option<Span>,
    }
    => (
        *span,
        format!("enabling `{tool}` has no effect: its group `{group}` is disabled"),
        "a tool cannot be enabled inside a disabled group",
        group_span
            .map(|s| vec![Label { span: s, message: "the group is disabled here".into() }])
            .unwrap_or_default(),
        Some(format!("enable group `{group}` (and disable the tools you do not want), or remove `enabled`")),
    );

    "TG3003" "ceiling-unreached" Warning "A zone's ceiling refuses no registered tool."
    CeilingUnreached {
        zone: String,
        span: Span,
        ceiling: String,
    }
    => (
        *span,
        format!("the ceiling of zone `{zone}` refuses no registered tool"),
        "no tool's class is above this",
        vec![],
        Some(format!(
            "no registered tool is classed above `{ceiling}`; lower the ceiling if the zone should refuse something, or set it to the top class to say it refuses nothing"
        )),
    );

    "TG3004" "empty-groups" Warning "An empty `groups` list means no restriction."
    EmptyGroups {
        span: Span,
        configuration: String,
    }
    => (
        *span,
        format!("an empty `groups` list puts no restriction on configuration `{configuration}`"),
        "this allows every group",
        vec![],
        Some("list the groups to allow, or delete the line to say \"every group\"".into()),
    );

    "TG3005" "pattern-matches-nothing" Warning "A profile selector matches no registered tool."
    PatternMatchesNothing {
        pattern: String,
        span: Span,
    }
    => (
        *span,
        format!("`{pattern}` matches no registered tool"),
        "matches nothing",
        vec![],
        Some("check the spelling of the prefix, or remove the selector".into()),
    );

    "TG3006" "fallback-to-self" Warning "A provider names itself in its fallback chain."
    FallbackToSelf {
        provider: String,
        span: Span,
    }
    => (
        *span,
        format!("provider `{provider}` falls back to itself"),
        "has no effect",
        vec![],
        Some("remove it from its own `fallback` list".into()),
    );

    "TG3009" "no-effect" Warning "A statement whose removal changes no decision anywhere in the table."
    NoEffect {
        span: Span,
        /// The statement, as the message names it (`excluding \`x\``, `\`disabled\``).
        what: String,
        /// The block it is in (`configuration \`c\``).
        owner: String,
        why: String,
    }
    => (
        *span,
        format!("{what} in {owner} has no effect"),
        "removing it changes no decision",
        vec![],
        Some(format!("{why}; no decision of any configuration, role, consumer, mode or run changes without it: remove it, or change it to say what you meant")),
    );

    "TG4001" "remote-name-invalid" Error "A remote tool's name breaks the MCP naming rule."
    RemoteNameInvalid {
        name: String,
        span: Span,
        reason: String,
    }
    => (
        *span,
        format!("remote tool name `{name}` breaks the naming rule: {reason}"),
        "rejected",
        vec![],
        Some("a remote tool is named `mcp_<server>_<remote>` and must match ^[a-zA-Z0-9_-]{1,64}$; rename the tool on its server or shorten the server name".into()),
    );

    "TG4002" "remote-group-mismatch" Error "A remote tool's group is not `mcp_<server>`."
    RemoteGroupMismatch {
        tool: String,
        span: Span,
        expected: String,
    }
    => (
        *span,
        format!("remote tool `{tool}` must be in group `{expected}`"),
        "wrong group",
        vec![],
        Some(format!("set `group = \"{expected}\"`")),
    );

    "TG4003" "duplicate-registry-tool" Error "The registry lists a tool name twice."
    DuplicateRegistryTool {
        name: String,
        span: Span,
        first: Span,
    }
    => (
        *span,
        format!("the registry lists `{name}` twice"),
        "listed again here",
        vec![Label { span: *first, message: "first listed here".into() }],
        Some("delete one of the entries".into()),
    );

    /// a reference that reads like a registered tool but is another text.
    "TG1011" "lookalike-name" Error "A name reads like a registered tool's but is a different text (Unicode confusables, invisible characters)."
    Lookalike {
        name: String,
        span: Span,
        registered: String,
        /// The code points that are not plain ASCII ([`crate::validate::confusables::describe`]).
        detail: String,
    }
    => (
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
    );

    /// a control, format, line or paragraph separator character in a name
    /// or a policy file.
    "TG1012" "invisible-character" Error "A control, format, line or paragraph separator character (Unicode Cc, Cf, Zl or Zp) in a policy file or a registry name."
    InvisibleCharacter {
        span: Span,
        /// Where: "policy file", or "registry name `x`".
        place: String,
        code_point: u32,
    }
    => (
        *span,
        format!(
            "{} U+{code_point:04X} in {place}",
            char::from_u32(*code_point)
                .map(toolgate_runtime::names::invisible_kind)
                .unwrap_or("a control or format character")
        ),
        "invisible or control character here",
        vec![],
        Some("delete it: names and policy text hold no control (Cc), format (Cf), line separator (Zl) or paragraph separator (Zp) characters, which are invisible in review, change how text is shown or start a new line".into()),
    );

    /// `*` in a list of tool names that takes no patterns.
    "TG2007" "pattern-in-name-list" Error "A `*` in an `exclude` or skill `tools` list, which name tools and take no patterns."
    PatternInNameList {
        name: String,
        span: Span,
        list: &'static str,
    }
    => (
        *span,
        format!("`{}` in {list} is not a pattern", esc(name)),
        "`*` here",
        vec![],
        Some(format!(
            "{list} names tools one by one (a tool registered later is never caught by it); list the tools, or use a profile's `allow` for patterns"
        )),
    );

    /// `{name}` in a gateway rule's glob or remediation that is not a capture.
    "TG2008" "unknown-capture" Error "A `{name}` in a gateway rule that names nothing a rule can capture."
    UnknownCapture {
        name: String,
        span: Span,
    }
    => (
        *span,
        format!("`{{{}}}` is not a capture", esc(name)),
        "unknown capture",
        vec![],
        Some("a rule captures `{tool}` and `{profile}` only; write `*` to match any text here".into()),
    );

    /// a `mcp_<server>_*` prefix that also admits another server's tools.
    "TG3007" "prefix-crosses-servers" Warning "A `mcp_<server>_*` prefix also admits the tools of another server."
    PrefixCrossesServers {
        pattern: String,
        span: Span,
        server: String,
        other_server: String,
        example: String,
    }
    => (
        *span,
        format!("`{pattern}` also admits tools of server `{other_server}`"),
        &format!("meant for server `{server}`?"),
        vec![],
        Some(format!(
            "`{example}` belongs to server `{other_server}`; write `server {server}` to admit exactly the tools of `{server}`"
        )),
    );

    /// a gateway rule that no answer can ever reach or satisfy.
    "TG3008" "rule-never-matches" Warning "A gateway rule that can never match an answer."
    RuleNeverMatches {
        rule: String,
        gateway: String,
        span: Span,
        /// Why, as a label under the rule's name.
        why: String,
        help: String,
        /// The earlier rule that matches everything this one does.
        shadowed_by: Option<Span>,
    }
    => (
        *span,
        format!("rule `{}` of gateway `{}` can never match", esc(rule), esc(gateway)),
        why.as_str(),
        shadowed_by
            .iter()
            .map(|s| Label { span: *s, message: "this rule matches first".into() })
            .collect(),
        Some(help.clone()),
    );

    /// two registry tools whose names read alike.
    "TG4004" "registry-twins" Error "Two registry tools have names that read alike."
    RegistryTwins {
        name: String,
        span: Span,
        other: String,
        other_span: Span,
        detail: String,
    }
    => (
        *span,
        format!("registry tools `{}` and `{}` read alike", esc(other), esc(name)),
        "reads like the other",
        vec![Label { span: *other_span, message: "this one".into() }],
        Some(format!(
            "rename one of them so that a reviewer can tell them apart (`{}` has {detail})",
            esc(name)
        )),
    );

    /// a builtin tool in the remote namespace (`mcp_` name or group).
    "TG4005" "builtin-in-remote-namespace" Error "A builtin tool carries a remote tool's name (`mcp_...`) or group (`mcp_<server>`)."
    BuiltinInRemoteNamespace {
        name: String,
        span: Span,
        what: String,
    }
    => (
        *span,
        format!("builtin tool `{}` {what}", esc(name)),
        "no `server`",
        vec![],
        Some("remote tools are admin-only and switched off until enabled; give it `server = \"<server>\"` if it comes from an MCP server, or rename it and its group out of `mcp_`".into()));

    /// a live server (or its captured answer) that lists one name twice.
    "TG4006" "server-lists-twice" Error "An MCP server's `tools/list` answer lists one tool name twice."
    ServerListsTwice {
        /// The name as the server lists it.
        name: String,
        span: Span,
        first: Span,
    }
    => (
        *span,
        format!("the server lists tool `{}` twice", esc(name)),
        "listed again here",
        vec![Label { span: *first, message: "first listed here".into() }],
        Some("nothing is imported or written: a registry holds a name once, and which entry is meant is the server's to say; fix the server's tool list".into()),
    );

    /// a server's tool whose registry name another server's tool (or a builtin) already has.
    "TG4007" "remote-name-collision" Error "Tools of two MCP servers map to the same registry name."
    RemoteNameCollision {
        /// The registry name both map to (`mcp_a_b_c`).
        name: String,
        /// The server's tool in its `tools/list` answer.
        span: Span,
        server: String,
        /// The server of the registry's tool (`None`: a builtin tool).
        other_server: Option<String>,
        /// The registry's tool.
        other: Span,
    }
    => {
        let holder = match other_server {
            Some(o) => format!("a tool of server `{}`", esc(o)),
            None => "a builtin tool".to_string(),
        };
        (
            *span,
            format!("server `{}` lists a tool that becomes `{}`, which the registry holds as {holder}", esc(server), esc(name)),
            "maps to a name already taken",
            vec![Label { span: *other, message: "the registry's tool of that name".into() }],
            Some("nothing is written: rename one of the servers (`--server`) so that neither name is a prefix of the other followed by `_`".into()),
        )
    };
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
    /// TG0002: `what` is `actual` over its `limit`, reported at the start of
    /// `file` (a file over its limit is not read at all).
    pub fn too_large(file: FileId, what: &'static str, limit: usize, actual: usize) -> Problem {
        Problem::TooLarge {
            span: Span::new(file, 0..0),
            what,
            limit,
            actual,
        }
    }

    /// [`Problem::too_large`] when `text` is over `limit` bytes.
    pub fn check_size(
        file: FileId,
        text: &str,
        what: &'static str,
        limit: usize,
    ) -> Result<(), Problem> {
        if text.len() > limit {
            return Err(Problem::too_large(file, what, limit, text.len()));
        }
        Ok(())
    }

    pub fn code(&self) -> &'static str {
        match self {
            // One variant for every kind of name: its code says which kind.
            Problem::Unknown { kind, .. } => kind.unknown_code(),
            _ => self.entry_code(),
        }
    }

    /// Whether `code` is an error that a suppression may acknowledge: one
    /// whose model is sound without the fix (TG1010: the near-miss exclusion
    /// stays in the table as a stale one, as TG1009's does).
    pub fn acknowledgeable_code(code: &str) -> bool {
        code == "TG1010"
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
        self.parts().0
    }

    pub fn diagnostic(&self) -> Diagnostic {
        let (span, message, label, labels, help) = self.parts();
        Diagnostic {
            code: self.code(),
            severity: self.severity(),
            message,
            span,
            label,
            labels,
            help,
        }
    }
}

/// Where the catalogue lives, for links in SARIF and summaries.
pub const DOCS_URL: &str = "https://github.com/toolgate/toolgate/blob/main/docs/diagnostics.md";

/// The address of a code's entry in the catalogue: the heading
/// `## TG1001 unknown-tool` of docs/diagnostics.md, as GitHub anchors it.
pub fn catalogue_url(code: &str) -> String {
    match CATALOGUE.iter().find(|c| c.code == code) {
        Some(c) => format!("{DOCS_URL}#{}-{}", c.code.to_lowercase(), c.name),
        None => DOCS_URL.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_is_in_the_catalogue_once() {
        let mut codes: Vec<_> = CATALOGUE.iter().map(|c| c.code).collect();
        let n = codes.len();
        codes.sort();
        codes.dedup();
        assert_eq!(codes.len(), n);
    }
}
