//! The syntax tree of a policy file: what was written, with spans, before any
//! name is resolved. `validate` turns a set of these into a [`crate::model::Model`].

use crate::source::Span;

/// A name as written (`read_source` or `"refund.issue"`), with its span.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Name {
    pub text: String,
    pub span: Span,
}

/// One parsed policy file.
#[derive(Debug, Clone, Default)]
pub struct PolicyFile {
    pub statements: Vec<Statement>,
}

#[derive(Debug, Clone)]
pub enum Statement {
    Classes(ClassesStmt),
    Enforcement(Setting<Enforcement>),
    RemoteVisibility(Setting<Audience>),
    Unprofiled(Setting<Unprofiled>),
    UnknownConsumers(Setting<UnknownConsumers>),
    SkillLoader(Setting<Name>),
    Group(Block<GroupProp>),
    Tool(Block<ToolProp>),
    Zone(Block<ZoneProp>),
    Provider(Block<ProviderProp>),
    Skill(Block<SkillProp>),
    Configuration(Block<ConfigurationProp>),
    Profile(Block<ProfileProp>),
    Consumer(Block<ConsumerProp>),
    Gateway(Block<GatewayRule>),
}

impl Statement {
    /// The keyword that starts the statement, for messages.
    pub fn keyword(&self) -> &'static str {
        match self {
            Statement::Classes(_) => "classes",
            Statement::Enforcement(_) => "enforcement",
            Statement::RemoteVisibility(_) => "remote-tools",
            Statement::Unprofiled(_) => "consumers-without-profile",
            Statement::UnknownConsumers(_) => "unknown-consumers",
            Statement::SkillLoader(_) => "skill-loader",
            Statement::Group(_) => "group",
            Statement::Tool(_) => "tool",
            Statement::Zone(_) => "zone",
            Statement::Provider(_) => "provider",
            Statement::Skill(_) => "skill",
            Statement::Configuration(_) => "configuration",
            Statement::Profile(_) => "profile",
            Statement::Consumer(_) => "consumer",
            Statement::Gateway(_) => "gateway",
        }
    }
}

#[derive(Debug, Clone)]
pub struct ClassesStmt {
    pub ladder: Vec<Name>,
    pub span: Span,
}

/// A one-line setting such as `enforcement observe`.
#[derive(Debug, Clone)]
pub struct Setting<T> {
    pub value: T,
    /// Span of the value.
    pub value_span: Span,
    /// Span of the whole statement.
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enforcement {
    Observe,
    Enforce,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Audience {
    Admins,
    Everyone,
    Nobody,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unprofiled {
    Unrestricted,
    Refused,
}

/// What a consumer name that no `consumer` block binds gets: refused (the
/// default), or admitted as a consumer without a profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnknownConsumers {
    Refused,
    Admitted,
}

/// `kind name { props }`.
#[derive(Debug, Clone)]
pub struct Block<P> {
    pub name: Name,
    pub props: Vec<Prop<P>>,
    /// Span of the whole block.
    pub span: Span,
}

/// A property with the span of its whole text.
#[derive(Debug, Clone)]
pub struct Prop<P> {
    pub value: P,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupProp {
    State(bool),
    Class(Name),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolProp {
    State(bool),
    AdminOnly(bool),
    Class(Name),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ZoneProp {
    Ceiling(Name),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProviderProp {
    Zone(Name),
    Fallback(Vec<Name>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillProp {
    Tools(Vec<Name>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigurationProp {
    Provider(Name),
    Groups(Vec<Name>),
    Exclude(Vec<Name>),
    Skills(Vec<Name>),
    /// `needs-approval [...]`: a call of these tools waits for a person.
    NeedsApproval(Vec<Selector>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProfileProp {
    Allow(Vec<Selector>),
    /// `needs-approval [...]`: a call of these tools waits for a person.
    NeedsApproval(Vec<Selector>),
}

/// One entry of a profile's `allow` list, or of a `needs-approval` list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    Tool(Name),
    Group(Name),
    /// `server crm`: exactly the tools of MCP server `crm` (group `mcp_crm`).
    Server(Name),
    /// `mcp_billing_*`: every tool whose name starts with the prefix.
    Prefix(Name),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConsumerProp {
    Profile(Name),
}

/// `rule NAME { matchers => outcome }` inside a `gateway` block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayRule {
    pub name: Name,
    pub matchers: Vec<(Matcher, Span)>,
    pub outcome: Outcome,
    pub outcome_span: Span,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Matcher {
    HttpStatus(i64),
    ErrorCode(i64),
    Message(String),
    Data(Name, String),
    ResultText(String),
    /// `header NAME = "GLOB"`.
    Header(Name, String),
    /// `body "GLOB"`: the raw body text.
    Body(String),
    /// `remediation "TEXT"`: not a matcher, the rule's fix text.
    Remediation(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    NotInProfile,
    NotRegistered,
    ContentPolicy,
    Policy,
    ToolFailure,
}
