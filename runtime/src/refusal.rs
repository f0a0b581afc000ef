//! The typed refusal: what a host (or an SDK in any language, through JSON)
//! needs to react correctly. A configuration-class refusal cannot be fixed by
//! the agent at run time: stop, a person must change a policy. A
//! runtime-class refusal may succeed with a changed request.

use serde::{Deserialize, Serialize};

use crate::context::Context;
use crate::decide::Decision;
use crate::reason::{Fact, Reason, GATE_ORDER};
use crate::spec::RuleOutcome;

/// What kind of refusal: a gate of the table (its [`Reason`], so adding a
/// gate adds a kind), or what only gateways report. Serialised as the code
/// (`"notInProfile"`, `"contentPolicy"`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RefusalKind {
    /// A gate refused (or a gateway answered as that gate would).
    Gate(Reason),
    /// The call's content broke a content policy.
    ContentPolicy,
    /// A policy refused, and nothing more specific is known.
    Policy,
    /// A remote tool's definition (description, schemas, annotations), as
    /// its server lists it now, is not the one the registry pinned when it
    /// was imported: a gateway withholds it until the change is reviewed.
    DefinitionChanged,
    /// The tool is offered, and a person must approve this call before it
    /// runs (`needs-approval`): no grant for it was given.
    ApprovalRequired,
}

impl Serialize for RefusalKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.code())
    }
}

impl<'de> Deserialize<'de> for RefusalKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let code = String::deserialize(d)?;
        RefusalKind::from_code(&code)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown refusal kind `{code}`")))
    }
}

/// The schema of a kind: one of the codes of [`RefusalKind::all`], as it
/// is serialised.
#[cfg(feature = "schema")]
impl schemars::JsonSchema for RefusalKind {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "RefusalKind".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let codes: Vec<&str> = RefusalKind::all().map(RefusalKind::code).collect();
        schemars::json_schema!({
            "description": "What kind of refusal: a gate's reason code, or what only gateways report (`contentPolicy`, `policy`).",
            "type": "string",
            "enum": codes,
        })
    }
}

/// Who can fix it.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum RefusalClass {
    /// A person must change a policy, profile or configuration.
    Configuration,
    /// The agent may succeed with a changed request.
    Runtime,
    /// A person must approve this very call; the model cannot (and must
    /// not) change anything to get it through.
    Approval,
}

/// What the host should do.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Action {
    /// Do not retry; report that a person must change the configuration.
    Stop,
    /// Rephrase or redact the request, then try again (bounded).
    Rephrase,
    /// Hand over to a person: nothing the agent can change is known to help.
    Escalate,
    /// A person is asked to approve the call; the host asks them (or waits
    /// for an approver) and calls again with the grant.
    AskPerson,
}

impl RefusalKind {
    pub fn from_reason(r: Reason) -> RefusalKind {
        RefusalKind::Gate(r)
    }

    pub fn from_outcome(o: RuleOutcome) -> Option<RefusalKind> {
        match o {
            RuleOutcome::NotRegistered => Some(RefusalKind::Gate(Reason::NotRegistered)),
            RuleOutcome::NotInProfile => Some(RefusalKind::Gate(Reason::NotInProfile)),
            RuleOutcome::ContentPolicy => Some(RefusalKind::ContentPolicy),
            RuleOutcome::Policy => Some(RefusalKind::Policy),
            RuleOutcome::ToolFailure => None,
        }
    }

    pub fn code(self) -> &'static str {
        match self {
            RefusalKind::Gate(r) => r.code(),
            RefusalKind::ContentPolicy => "contentPolicy",
            RefusalKind::Policy => "policy",
            RefusalKind::DefinitionChanged => "definitionChanged",
            RefusalKind::ApprovalRequired => "approvalRequired",
        }
    }

    /// The name of the exception a host raises for this kind, as in
    /// Python and TypeScript (PHP adds `Exception`): every host's
    /// hierarchy is generated from these names.
    pub fn exception_name(self) -> &'static str {
        match self {
            RefusalKind::Gate(r) => r.exception_name(),
            RefusalKind::ContentPolicy => "ContentPolicyViolation",
            RefusalKind::Policy => "PolicyRefused",
            RefusalKind::DefinitionChanged => "DefinitionChanged",
            RefusalKind::ApprovalRequired => "ApprovalRequired",
        }
    }

    pub fn from_code(code: &str) -> Option<RefusalKind> {
        RefusalKind::all().find(|k| k.code() == code)
    }

    /// Every kind: the gates in [`GATE_ORDER`], then the gateway-only kinds
    /// (new kinds are appended: a host may number kinds by this order).
    pub fn all() -> impl Iterator<Item = RefusalKind> {
        GATE_ORDER.into_iter().map(RefusalKind::Gate).chain([
            RefusalKind::ContentPolicy,
            RefusalKind::Policy,
            RefusalKind::DefinitionChanged,
            RefusalKind::ApprovalRequired,
        ])
    }

    /// Only a content-policy refusal is the agent's to fix. An unknown policy
    /// refusal is treated as configuration: retrying blindly cannot help.
    pub fn class(self) -> RefusalClass {
        match self {
            RefusalKind::ContentPolicy => RefusalClass::Runtime,
            RefusalKind::ApprovalRequired => RefusalClass::Approval,
            _ => RefusalClass::Configuration,
        }
    }

    /// Whether a changed request may succeed. Never for the configuration class.
    pub fn retryable(self) -> bool {
        self.class() == RefusalClass::Runtime
    }

    pub fn action(self) -> Action {
        match self {
            RefusalKind::ContentPolicy => Action::Rephrase,
            RefusalKind::Policy => Action::Escalate,
            RefusalKind::ApprovalRequired => Action::AskPerson,
            _ => Action::Stop,
        }
    }
}

/// A refusal with everything known about it, and what to do.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Refusal {
    pub kind: RefusalKind,
    pub class: RefusalClass,
    pub retryable: bool,
    pub action: Action,
    /// The tool called, when known.
    pub tool: Option<String>,
    /// The access profile, when known (`notInProfile`).
    pub profile: Option<String>,
    /// The consumer, when known.
    pub consumer: Option<String>,
    /// The configuration, when known.
    pub configuration: Option<String>,
    /// The policy file that defines the profile or configuration to change.
    pub file: Option<String>,
    /// The content policy (plugin) that refused, when known.
    pub policy: Option<String>,
    /// The gateway and the classification rule that recognised the answer.
    pub origin: Option<String>,
    pub rule: Option<String>,
    /// The gateway's own message, as received; for a grant that did not let
    /// the call run, why (docs/approvals.md, "Grants").
    pub detail: Option<String>,
    /// For `approvalRequired` with a grant that did not let the call run:
    /// its code (`grantExpired`, `grantOtherArguments`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_error: Option<String>,
    /// The text to show the model.
    pub model_text: String,
    /// The exact fix, for the person who can make it.
    pub remediation: String,
}

/// What is known about a refusal besides its kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    pub tool: Option<String>,
    pub profile: Option<String>,
    pub consumer: Option<String>,
    pub configuration: Option<String>,
    pub file: Option<String>,
    pub policy: Option<String>,
    pub origin: Option<String>,
    pub rule: Option<String>,
    pub detail: Option<String>,
    /// For `configurationGroup`: the tool's group.
    pub group: Option<String>,
    /// For `trustZone`: the tool's class and the ceiling.
    pub class: Option<String>,
    pub ceiling: Option<String>,
    /// The remediation a gateway rule gives (filled in), instead of the kind's own.
    pub remediation: Option<String>,
    /// Why a grant did not let the call run (its code).
    pub grant_error: Option<String>,
}

/// `` `name` `` when known, else the fallback words ("the tool"). Names
/// in texts are escaped ([`crate::names::escape`]): a name a host or a
/// model asked about cannot add a line to what a model or a person reads.
fn q(x: &Option<String>, fallback: &str) -> String {
    match x {
        Some(v) => format!("`{}`", crate::names::shown(v)),
        None => fallback.to_string(),
    }
}

/// `` word `name` `` when known ("configuration `c`"), else the fallback
/// words ("the configuration"): every text reads with and without the name.
fn named(word: &str, x: &Option<String>, fallback: &str) -> String {
    match x {
        Some(v) => format!("{word} `{}`", crate::names::shown(v)),
        None => fallback.to_string(),
    }
}

fn in_file(f: &Option<String>) -> String {
    f.as_ref().map(|f| format!(" (in {f})")).unwrap_or_default()
}

/// The kind's own remediation text.
fn remediation(kind: RefusalKind, facts: &Facts) -> String {
    let tool = q(&facts.tool, "the tool");
    let file = in_file(&facts.file);
    let config = named("configuration", &facts.configuration, "the configuration");
    match kind {
        RefusalKind::Gate(Reason::NotRegistered) => format!(
            "{tool} does not exist for this caller: check the name against the offered tools; if a gateway hides tools outside the caller's access, widen the access profile to include it"
        ),
        RefusalKind::Gate(Reason::ToolDisabled) => {
            format!("an administrator must enable {tool} (and its group, if the group is switched off) in the policy")
        }
        RefusalKind::Gate(Reason::RequiresAdmin) => format!(
            "{tool} is admin-only: an administrator must make this call, or the policy must mark it `not admin-only`"
        ),
        RefusalKind::Gate(Reason::NotInProfile) => match (&facts.profile, &facts.consumer) {
            (Some(p), _) => format!("widen access profile `{p}`{file} to allow {tool}, or bind the consumer to a profile that does"),
            (None, Some(c)) => format!("give consumer `{}` an access profile that allows {tool}{file}", crate::names::shown(c)),
            (None, None) => format!("widen the caller's access profile at the gateway to allow {tool}"),
        },
        RefusalKind::Gate(Reason::ConfigurationGroup) => match &facts.group {
            Some(g) => format!(
                "add group `{g}` to the groups of {config}{file}, or, if a skill restricts the run, attach a skill that allows {tool} and start a new run"
            ),
            None => format!("allow {tool} in {config}{file}"),
        },
        RefusalKind::Gate(Reason::ConfigurationExcluded) => {
            format!("remove {tool} from the exclusions of {config}{file}; a run already started keeps its exclusions until a new run starts")
        }
        RefusalKind::Gate(Reason::TrustZone) => format!(
            "{tool} has {} above {} of the provider's trust zone: use a configuration whose provider may receive that class, or reclassify the tool",
            named("class", &facts.class, "a data class"),
            named("the ceiling", &facts.ceiling, "the ceiling")
        ),
        RefusalKind::ContentPolicy => format!(
            "rephrase or redact the request to {tool} so that it passes {}; escalate to a person if it must go through as is",
            named("content policy", &facts.policy, "the gateway's content policy")
        ),
        RefusalKind::Policy => format!(
            "a policy refused the call to {tool} and the answer says no more: do not retry it unchanged; ask a person to check the gateway's policy{}",
            facts.origin.as_ref().map(|o| format!(" (gateway `{}`)", crate::names::shown(o))).unwrap_or_default()
        ),
        RefusalKind::DefinitionChanged => format!(
            "the definition of {tool} (its description, schemas or annotations) on its MCP server is not the one pinned in the registry: review the change, then accept it with `toolgate registry sync --write` (or restore the server's definition)"
        ),
        RefusalKind::ApprovalRequired => format!(
            "{config} requires a person's approval for each call of {tool}: an approver approves this call (its tool and arguments), then the call is made again with the grant{file}"
        ),
    }
}

/// The text for the model: one sentence that reads with and without the
/// tool's name (and, for `notInProfile`, the profile's).
fn model_text(kind: RefusalKind, facts: &Facts) -> String {
    let subject = match &facts.tool {
        Some(_) => format!("The tool {}", q(&facts.tool, "")),
        None => "This tool".to_string(),
    };
    let call = match &facts.tool {
        Some(_) => format!("The call to {}", q(&facts.tool, "")),
        None => "The call".to_string(),
    };
    match kind.action() {
        Action::Stop => {
            let why = match (kind, &facts.profile) {
                (RefusalKind::Gate(Reason::NotInProfile), Some(p)) => {
                    format!("not in this consumer's access profile `{p}`")
                }
                _ => message(kind).to_string(),
            };
            format!(
                "{subject} cannot be used here: {why}. Retrying will not help; tell the user that a person must change the configuration."
            )
        }
        Action::Rephrase => format!(
            "{call} was refused by a content policy. You may rephrase or redact the request and try again, or ask the user to involve a person."
        ),
        Action::Escalate => format!(
            "{call} was refused by a policy. Do not retry it unchanged; tell the user a person needs to look at it."
        ),
        Action::AskPerson => format!(
            "{call} needs a person's approval before it runs. Do not retry it on your own; a person will be asked to approve it."
        ),
    }
}

impl Refusal {
    pub fn new(kind: RefusalKind, facts: Facts) -> Refusal {
        let remediation = facts
            .remediation
            .clone()
            .unwrap_or_else(|| remediation(kind, &facts));
        let model_text = model_text(kind, &facts);
        Refusal {
            kind,
            class: kind.class(),
            retryable: kind.retryable(),
            action: kind.action(),
            tool: facts.tool,
            profile: facts.profile,
            consumer: facts.consumer,
            configuration: facts.configuration,
            file: facts.file,
            policy: facts.policy,
            origin: facts.origin,
            rule: facts.rule,
            detail: facts.detail,
            grant_error: facts.grant_error,
            model_text,
            remediation,
        }
    }
}

/// The reason text of a kind, as `Reason::message` for gate kinds.
pub fn message(kind: RefusalKind) -> &'static str {
    match kind {
        RefusalKind::Gate(r) => r.message(),
        RefusalKind::ContentPolicy => "refused by a content policy",
        RefusalKind::Policy => "refused by a policy",
        RefusalKind::DefinitionChanged => "its definition changed since it was reviewed",
        RefusalKind::ApprovalRequired => "a person must approve each call first",
    }
}

impl<'t> Context<'t> {
    /// The typed refusal for a refused decision (`None` when it is allowed).
    /// Only facts of the refusing gate are included, never a later gate's.
    /// Its texts reach a model or a person, so a remote tool whose name this
    /// user may not see gets exactly the refusal of an unregistered name
    /// ([`Context::shown`]); the host keeps the true reason in the decision.
    /// The refusal of a call under decision `d`: the refusal of a refused
    /// tool, or, for an offered tool whose calls a person approves
    /// (`needs-approval`), `approvalRequired` naming the list that says so.
    /// `None`: the call may run. An approval grant, once given, is checked
    /// by the enforcement point before this is asked (docs/approvals.md).
    pub fn call_refusal(&self, d: &Decision<'_>) -> Option<Refusal> {
        if !(d.allowed && d.needs_approval) {
            return self.refusal(d);
        }
        let spec = &self.table.spec;
        let cfg = &spec.configurations[self.config as usize];
        let by_configuration = self
            .table
            .tool_id(d.tool)
            .and_then(|i| {
                self.table
                    .config_approvals
                    .get(self.config as usize)?
                    .as_ref()
                    .map(|s| s.contains(i as usize))
            })
            .unwrap_or(false);
        let mut facts = Facts {
            tool: Some(d.tool.to_string()),
            consumer: self.consumer.clone(),
            configuration: Some(cfg.name.clone()),
            ..Facts::default()
        };
        if by_configuration {
            facts.file = Some(cfg.file.clone());
        } else if let Some(p) = self.profile_name() {
            facts.profile = Some(p.to_string());
            facts.file = spec
                .profiles
                .iter()
                .find(|x| x.name == p)
                .map(|x| x.file.clone());
        }
        Some(Refusal::new(RefusalKind::ApprovalRequired, facts))
    }

    pub fn refusal(&self, d: &Decision<'_>) -> Option<Refusal> {
        let d = &self.shown(*d);
        if d.allowed {
            return None;
        }
        let reason = d.reason?;
        let spec = &self.table.spec;
        let cfg = &spec.configurations[self.config as usize];
        let mut facts = Facts {
            tool: Some(d.tool.to_string()),
            consumer: self.consumer.clone(),
            ..Facts::default()
        };
        for fact in reason.facts() {
            match fact {
                Fact::Profile => {
                    if let Some(p) = self.profile_name() {
                        facts.profile = Some(p.to_string());
                        facts.file = spec
                            .profiles
                            .iter()
                            .find(|x| x.name == p)
                            .map(|x| x.file.clone());
                    }
                }
                Fact::Configuration => facts.configuration = Some(cfg.name.clone()),
                Fact::ConfigurationFile => facts.file = Some(cfg.file.clone()),
                Fact::Group => {
                    facts.group = self.table.tool_id(d.tool).map(|i| {
                        spec.groups[spec.tools[i as usize].group as usize]
                            .name
                            .clone()
                    })
                }
                Fact::Class => facts.class = d.class.map(str::to_string),
                Fact::Ceiling => facts.ceiling = d.ceiling.map(str::to_string),
            }
        }
        Some(Refusal::new(RefusalKind::from_reason(reason), facts))
    }
}
