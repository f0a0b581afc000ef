//! The AuthZEN 1.0 mapping (docs/authzen.md): request shapes, and how one
//! evaluation becomes a runtime [`Context`] and a [`Decision`]. Every
//! decision is the runtime's own (`Context::decide`, `decide_live`,
//! `refusal`, `offered`, `unavailable`); nothing here decides.
//!
//! Requests are read strictly: an unknown member in a subject's or a
//! resource's properties or in the context is an error, so that a misspelt
//! `run` or `enforcement` cannot silently widen a decision.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use toolgate_runtime::log::{
    LogAction, LogApproval, LogContext, LogResource, LogSubject, LogSubjectProperties,
    ServiceInput, ServiceResult, ServiceResultContext,
};
use toolgate_runtime::{Context, LiveTool, LiveToolSpec, Reason, Refusal, Role, RunState, Table};

/// An error answer: HTTP status, a stable code, and a message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApiError {
    pub status: u16,
    pub code: &'static str,
    pub message: String,
}

impl ApiError {
    pub fn bad(code: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status: 400,
            code,
            message: message.into(),
        }
    }

    /// `{"error": {"status", "code", "message"}}`.
    pub fn body(&self) -> Vec<u8> {
        #[derive(Serialize)]
        struct Body<'a> {
            error: &'a ApiError,
        }
        serde_json::to_vec(&Body { error: self }).unwrap_or_default()
    }
}

// ------------------------------------------------------------------ requests

/// Members a request object may carry beyond toolgate's: AuthZEN 1.0 says a
/// receiver MUST ignore unknown members, and so they are, unless one is a
/// near miss of a member toolgate reads (`consumr`, `enforcment`, `Run`):
/// that is a 400 naming the member meant, because a misspelt `run`,
/// `consumer` or `enforcement` must never widen a decision.
pub type Extra = std::collections::BTreeMap<String, serde::de::IgnoredAny>;

/// Longest name a request may give (a configuration, a consumer, a tool, a
/// subject id): an answer or a log record is then at most a few kilobytes
/// per evaluation, however the request is shaped.
pub const MAX_NAME_BYTES: usize = 1024;

/// Refuse a near miss of a known member among the unknown ones.
pub fn check_members(extra: &Extra, known: &[&str], what: &str) -> Result<(), ApiError> {
    for key in extra.keys() {
        if let Some(meant) = toolgate_runtime::names::did_you_mean(key, known.iter().copied()) {
            return Err(ApiError::bad(
                "unknownMember",
                format!(
                    "{what} has no member `{}`; did you mean `{meant}`? (unknown members are ignored, but not one that looks like a misspelt member toolgate reads)",
                    toolgate_runtime::names::escape(key)
                ),
            ));
        }
    }
    Ok(())
}

/// Refuse a name longer than [`MAX_NAME_BYTES`].
pub fn check_name(name: &str, what: &str) -> Result<(), ApiError> {
    if name.len() > MAX_NAME_BYTES {
        return Err(ApiError::bad(
            "nameTooLong",
            format!(
                "{what} is {} bytes long, over the limit of {MAX_NAME_BYTES}",
                name.len()
            ),
        ));
    }
    Ok(())
}

#[derive(Debug, Clone, Deserialize)]
pub struct Subject {
    #[serde(rename = "type")]
    pub kind: String,
    pub id: String,
    #[serde(default)]
    pub properties: SubjectProperties,
    #[serde(flatten)]
    pub extra: Extra,
}

/// A subject's properties: toolgate reads `role` and `consumer`; anything
/// else a gateway forwards (`department`, ...) is ignored.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct SubjectProperties {
    /// `admin`, `user` or `none`.
    pub role: Option<String>,
    /// The MCP consumer asking (held to its access profile).
    pub consumer: Option<String>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Action<'a> {
    /// Borrowed from the body where it can be (no escapes): the hot path of a batch.
    #[serde(borrow)]
    pub name: Cow<'a, str>,
    /// Accepted and ignored: no property of an action changes a decision.
    #[serde(default)]
    pub properties: Option<serde::de::IgnoredAny>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Resource<'a> {
    #[serde(rename = "type", borrow)]
    pub kind: Cow<'a, str>,
    #[serde(default, borrow)]
    pub id: Option<Cow<'a, str>>,
    /// A live tool's metadata (a tool registered after the table was compiled).
    #[serde(default)]
    pub properties: Option<Box<ToolProperties>>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// The metadata of a live tool; every member but `class` is required, and
/// none other is taken: this object is toolgate's own, and a gate fact
/// misspelt must not default to the wider answer.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ToolProperties {
    pub group: String,
    pub remote: bool,
    pub enabled: bool,
    pub admin_only: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct RequestContext {
    /// The configuration; absent: the service's `--default-configuration`.
    #[serde(default)]
    pub configuration: Option<String>,
    /// The host's enforcement setting; only `observe` observes.
    #[serde(default)]
    pub enforcement: Option<String>,
    /// A stored run (`RunState::to_json`), read strictly by `RunState::parse`.
    #[serde(default)]
    pub run: Option<Box<RawValue>>,
    /// The call's arguments (an object): what a grant is checked against.
    #[serde(default)]
    pub arguments: Option<Box<RawValue>>,
    /// A person's signed approval grant of this call (docs/approvals.md),
    /// checked at stage `call` against `--approver-key` and used once.
    #[serde(default)]
    pub grant: Option<Box<RawValue>>,
    #[serde(flatten)]
    pub extra: Extra,
}

/// One evaluation: the body of `POST /access/v1/evaluation`, and an item of
/// `evaluations` (where every member may come from the request's defaults).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Evaluation<'a> {
    /// Boxed, as the context: items mostly take the defaults, and a batch
    /// of small items is a vector of small structs.
    pub subject: Option<Box<Subject>>,
    #[serde(borrow)]
    pub action: Option<Action<'a>>,
    #[serde(borrow)]
    pub resource: Option<Resource<'a>>,
    pub context: Option<Box<RequestContext>>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl Evaluation<'_> {
    /// Refuse near misses of toolgate's members anywhere in the evaluation.
    pub fn check(&self) -> Result<(), ApiError> {
        check_members(
            &self.extra,
            &["subject", "action", "resource", "context"],
            "the evaluation",
        )?;
        check_parts(
            self.subject.as_deref(),
            self.action.as_ref(),
            self.resource.as_ref(),
            self.context.as_deref(),
        )
    }
}

/// [`Evaluation::check`] of each part.
pub fn check_parts(
    subject: Option<&Subject>,
    action: Option<&Action<'_>>,
    resource: Option<&Resource<'_>>,
    context: Option<&RequestContext>,
) -> Result<(), ApiError> {
    if let Some(s) = subject {
        check_members(&s.extra, &["type", "id", "properties"], "the subject")?;
        check_members(
            &s.properties.extra,
            &["role", "consumer"],
            "the subject's properties",
        )?;
        check_name(&s.id, "subject.id")?;
        if let Some(c) = &s.properties.consumer {
            check_name(c, "subject.properties.consumer")?;
        }
    }
    if let Some(a) = action {
        check_members(&a.extra, &["name", "properties"], "the action")?;
        check_name(&a.name, "action.name")?;
    }
    if let Some(r) = resource {
        check_members(&r.extra, &["type", "id", "properties"], "the resource")?;
        if let Some(id) = &r.id {
            check_name(id, "resource.id")?;
        }
    }
    if let Some(c) = context {
        check_members(
            &c.extra,
            &["configuration", "enforcement", "run", "arguments", "grant"],
            "the context",
        )?;
        if let Some(n) = &c.configuration {
            check_name(n, "context.configuration")?;
        }
        if let Some(e) = &c.enforcement {
            check_name(e, "context.enforcement")?;
        }
    }
    Ok(())
}

/// The body of `POST /access/v1/evaluations`: request-level defaults, the
/// evaluations, and the options.
#[derive(Debug, Deserialize)]
pub struct EvaluationsRequest<'a> {
    pub subject: Option<Box<Subject>>,
    #[serde(borrow)]
    pub action: Option<Action<'a>>,
    #[serde(borrow)]
    pub resource: Option<Resource<'a>>,
    pub context: Option<Box<RequestContext>>,
    #[serde(default, borrow)]
    pub evaluations: Option<Vec<Evaluation<'a>>>,
    #[serde(default)]
    pub options: Option<EvaluationsOptions>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl EvaluationsRequest<'_> {
    /// Refuse near misses of toolgate's members in the defaults and the items.
    pub fn check(&self) -> Result<(), ApiError> {
        check_members(
            &self.extra,
            &[
                "subject",
                "action",
                "resource",
                "context",
                "evaluations",
                "options",
            ],
            "the request",
        )?;
        check_parts(
            self.subject.as_deref(),
            self.action.as_ref(),
            self.resource.as_ref(),
            self.context.as_deref(),
        )?;
        if let Some(o) = &self.options {
            check_members(&o.extra, &OPTION_NAMES, "`options`")?;
        }
        for e in self.evaluations.iter().flatten() {
            e.check()?;
        }
        Ok(())
    }
}

/// The options toolgate reads in a batch's `options`.
pub const OPTION_NAMES: [&str; 3] = ["evaluations_semantic", "refusals", "toolgate_context"];

/// The options of a batch. AuthZEN 1.0 makes `options` a general-purpose
/// object for PEP-supplied metadata, and its own example sends
/// `another_option`: an option toolgate does not read is ignored, as every
/// unknown member is, except a near miss of one it reads
/// ([`OPTION_NAMES`]): a misspelt `evaluations_semantic` is a 400, never
/// `execute_all` by default ([`EvaluationsRequest::check`]).
#[derive(Debug, Deserialize)]
pub struct EvaluationsOptions {
    #[serde(default)]
    pub evaluations_semantic: Option<String>,
    /// toolgate's own option: `false` leaves the typed refusals (and their
    /// texts) out of the answers, for a host that only needs the decisions.
    #[serde(default)]
    pub refusals: Option<bool>,
    /// toolgate's own option: `true` gives every item of the answer its
    /// `context` (reason, observedOnly, refusal, decisionId); `false` gives
    /// `{"decision": ...}` alone. Absent: the service's `--answer-context`.
    #[serde(default)]
    pub toolgate_context: Option<bool>,
    #[serde(flatten)]
    pub extra: Extra,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Semantic {
    ExecuteAll,
    DenyOnFirstDeny,
    PermitOnFirstPermit,
}

impl Semantic {
    pub fn parse(options: Option<&EvaluationsOptions>) -> Result<Semantic, ApiError> {
        match options.and_then(|o| o.evaluations_semantic.as_deref()) {
            None | Some("execute_all") => Ok(Semantic::ExecuteAll),
            Some("deny_on_first_deny") => Ok(Semantic::DenyOnFirstDeny),
            Some("permit_on_first_permit") => Ok(Semantic::PermitOnFirstPermit),
            Some(other) => Err(ApiError::bad(
                "unknownSemantic",
                format!(
                    "unknown evaluations_semantic `{other}` (execute_all, deny_on_first_deny or permit_on_first_permit)"
                ),
            )),
        }
    }

    /// Whether to stop after an evaluation that decided `decision`.
    pub fn stops_after(self, decision: bool) -> bool {
        match self {
            Semantic::ExecuteAll => false,
            Semantic::DenyOnFirstDeny => !decision,
            Semantic::PermitOnFirstPermit => decision,
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct SearchRequest<'a> {
    pub subject: Subject,
    #[serde(borrow)]
    pub action: Action<'a>,
    #[serde(borrow)]
    pub resource: Resource<'a>,
    #[serde(default)]
    pub context: RequestContext,
    #[serde(default)]
    pub page: Option<PageRequest>,
    #[serde(flatten)]
    pub extra: Extra,
}

impl SearchRequest<'_> {
    pub fn check(&self) -> Result<(), ApiError> {
        check_members(
            &self.extra,
            &["subject", "action", "resource", "context", "page"],
            "the request",
        )?;
        check_parts(
            Some(&self.subject),
            Some(&self.action),
            Some(&self.resource),
            Some(&self.context),
        )
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PageRequest {
    #[serde(default)]
    pub token: Option<String>,
    #[serde(default)]
    pub limit: Option<usize>,
}

/// `POST /toolgate/v1/unavailable`: toolgate's own endpoint, read strictly.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UnavailableRequest {
    pub subject: Subject,
    #[serde(default)]
    pub context: RequestContext,
}

impl UnavailableRequest {
    pub fn check(&self) -> Result<(), ApiError> {
        check_parts(Some(&self.subject), None, None, Some(&self.context))
    }
}

// ------------------------------------------------------------------ mapping

/// When the decision is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stage {
    /// Tools are being offered to the model.
    Offer,
    /// A call is about to run.
    Call,
}

impl Stage {
    pub fn parse(action: &Action<'_>) -> Result<Stage, ApiError> {
        match action.name.as_ref() {
            "call" | "tools/call" => Ok(Stage::Call),
            "offer" => Ok(Stage::Offer),
            other => Err(ApiError::bad(
                "unknownAction",
                format!("unknown action `{other}` (offer, call or tools/call)"),
            )),
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Offer => "offer",
            Stage::Call => "call",
        }
    }
}

/// The role and the consumer of a subject.
pub fn subject(s: &Subject) -> Result<(Role, Option<&str>), ApiError> {
    let (default_role, consumer) = match s.kind.as_str() {
        "user" => (Role::User, s.properties.consumer.as_deref()),
        "mcp_consumer" => {
            if s.properties.consumer.is_some() {
                return Err(ApiError::bad(
                    "badSubject",
                    "an mcp_consumer subject is the consumer (its id); it has no `consumer` property",
                ));
            }
            (Role::None, Some(s.id.as_str()))
        }
        other => {
            return Err(ApiError::bad(
                "unknownSubjectType",
                format!("unknown subject type `{other}` (user or mcp_consumer)"),
            ))
        }
    };
    let role = match s.properties.role.as_deref() {
        None => default_role,
        Some("admin") => Role::Admin,
        Some("user") => Role::User,
        Some("none") => Role::None,
        Some(other) => {
            return Err(ApiError::bad(
                "unknownRole",
                format!("unknown role `{other}` (admin, user or none)"),
            ))
        }
    };
    Ok((role, consumer))
}

/// The runtime context a decision request resolves to (its configuration,
/// role, consumer, enforcement and stored run), and the stored run itself.
pub struct ResolvedContext<'t> {
    pub ctx: Context<'t>,
    /// Why the stored run could not be read (it then admits no tool).
    pub run_error: Option<String>,
    /// The stored run decided with, for the decision log.
    pub run: Option<RunState>,
}

/// The subject's role and consumer once the caller's token has had its say
/// (see [`crate::Trust`]): a 403 for a consumer, role or enforcement the
/// caller may not claim.
fn trusted_subject<'a>(
    s: &'a Subject,
    c: &RequestContext,
    trust: &'a crate::Trust,
) -> Result<(Role, Option<&'a str>), ApiError> {
    let (mut role, mut consumer) = subject(s)?;
    // An authenticated caller's token may fix who it is: a request may
    // name no other consumer or role, and one that names none is its.
    if let Some(bound) = trust.consumer.as_deref() {
        match consumer {
            None => consumer = Some(bound),
            Some(c) if c == bound => {}
            Some(c) => {
                return Err(ApiError {
                    status: 403,
                    code: "consumerNotAllowed",
                    message: format!(
                        "this caller is consumer `{bound}` and may not ask as `{}`",
                        toolgate_runtime::names::escape(c)
                    ),
                })
            }
        }
    }
    if let Some(bound) = trust.role {
        if s.properties.role.is_none() {
            role = bound;
        } else if role != bound {
            return Err(ApiError {
                status: 403,
                code: "roleNotAllowed",
                message: format!(
                    "this caller's token is for the role `{}` and may not claim `{}`",
                    bound.as_str(),
                    role.as_str()
                ),
            });
        }
    }
    if !trust.roles.contains(&role) {
        return Err(ApiError {
            status: 403,
            code: "roleNotAllowed",
            message: format!(
                "a caller may not claim the role `{}` here (the service lets callers claim: {}; see --pep-roles)",
                role.as_str(),
                trust.roles.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(", ")
            ),
        });
    }
    if c.enforcement.is_some() && !trust.enforcement_override {
        return Err(ApiError {
            status: 403,
            code: "enforcementNotAllowed",
            message: "a caller may not set context.enforcement here: the policy's setting holds (see --pep-may-set-enforcement)".into(),
        });
    }
    Ok((role, consumer))
}

/// A 400 for a consumer the policy does not know (docs/gate-semantics.md
/// §4): the PEP named it, so it is a bad question, as an unknown
/// configuration is; never a consumer without a profile by accident.
fn check_consumer(table: &Table, name: &str) -> Result<(), ApiError> {
    table.check_consumer(name).map_err(|near| {
        ApiError::bad(
            "unknownConsumer",
            toolgate_runtime::ContextError::UnknownConsumer {
                name: name.to_string(),
                suggestion: near.map(str::to_string),
            }
            .to_string(),
        )
    })
}

/// The [`ResolvedContext`] of `s` and `c` in `table`: what the caller may
/// assert (`trust`) checked, the configuration the request's, else the
/// caller's, else `default_configuration`.
pub fn build<'t>(
    table: &'t Table,
    s: &Subject,
    c: &RequestContext,
    default_configuration: Option<&str>,
    trust: &crate::Trust,
) -> Result<ResolvedContext<'t>, ApiError> {
    let (role, consumer) = trusted_subject(s, c, trust)?;
    // A caller bound to a configuration asks under it, and only it.
    if let (Some(bound), Some(asked)) = (trust.configuration.as_deref(), c.configuration.as_deref())
    {
        if asked != bound {
            return Err(ApiError {
                status: 403,
                code: "configurationNotAllowed",
                message: format!(
                    "this caller is bound to configuration `{bound}` and may not ask under `{}`",
                    toolgate_runtime::names::escape(asked)
                ),
            });
        }
    }
    let configuration = c
        .configuration
        .as_deref()
        .or(trust.configuration.as_deref())
        .or(default_configuration)
        .ok_or_else(|| {
            ApiError::bad(
                "noConfiguration",
                "context.configuration is required (this service has no --default-configuration)",
            )
        })?;
    if let Some(name) = consumer {
        check_consumer(table, name)?;
    }
    let mut ctx = table
        .context(configuration)
        .map_err(|e| ApiError::bad("unknownConfiguration", e.to_string()))?
        .role(role)
        .consumer(consumer)
        .enforcement(c.enforcement.as_deref());
    let (mut run, mut run_error) = (None, None);
    if let Some(raw) = &c.run {
        let state = RunState::parse(raw.get().as_bytes()).unwrap_or_else(|e| {
            run_error = Some(e.to_string());
            e.state
        });
        ctx = ctx.run(&state);
        run = Some(state);
    }
    Ok(ResolvedContext {
        ctx,
        run_error,
        run,
    })
}

/// The decision on one tool, owned: allowed or why not, whether its name
/// is visible to the caller, and its typed refusal when asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolDecision {
    /// Offered (stage `offer`), or may run (stage `call`: a call that
    /// waits for a person's approval may not).
    pub allowed: bool,
    pub reason: Option<Reason>,
    /// A person approves each call of the tool (`needs-approval`).
    pub needs_approval: bool,
    pub observed_only: bool,
    pub name_visible: bool,
    /// The typed refusal, as shown to a person or a model (hidden remote
    /// names masked as unregistered ones: `Context::refusal`).
    pub refusal: Option<Box<Refusal>>,
    /// What a grant given for the call did: let it run, or why not.
    pub approval: Option<LogApproval>,
}

/// A call's arguments and grant (`context.arguments`, `context.grant`),
/// and the keys grants must be signed by.
#[derive(Clone, Copy, Default)]
pub struct CallInput<'c> {
    pub arguments: Option<&'c RawValue>,
    pub grant: Option<&'c RawValue>,
    pub approver_keys: Option<&'c toolgate_runtime::TrustedKeys>,
}

impl<'c> CallInput<'c> {
    pub fn of(c: &'c RequestContext, keys: Option<&'c toolgate_runtime::TrustedKeys>) -> Self {
        CallInput {
            arguments: c.arguments.as_deref(),
            grant: c.grant.as_deref(),
            approver_keys: keys,
        }
    }
}

/// The tool name of a resource (of type `tool`).
pub fn tool_name<'r>(r: &'r Resource<'_>) -> Result<&'r str, ApiError> {
    if r.kind != "tool" {
        return Err(ApiError::bad(
            "unknownResourceType",
            format!("unknown resource type `{}` (tool)", r.kind),
        ));
    }
    r.id.as_deref()
        .ok_or_else(|| ApiError::bad("badResource", "resource.id (the tool name) is required"))
}

/// One decision; with its typed refusal when `refusal` and refused. At
/// stage `call`, a tool that needs approval is allowed only with a grant
/// the runtime accepts (`Context::check_call_granted`), used once.
pub fn decide(
    ctx: &Context<'_>,
    r: &Resource<'_>,
    refusal: bool,
    stage: Stage,
    call: CallInput<'_>,
) -> Result<ToolDecision, ApiError> {
    let name = tool_name(r)?;
    let live;
    let d = match &r.properties {
        None => ctx.decide(name),
        Some(p) => {
            live = LiveTool::new(LiveToolSpec {
                name: name.to_string(),
                group: p.group.clone(),
                remote: p.remote,
                enabled: p.enabled,
                admin_only: p.admin_only,
                class: p.class.clone(),
            })
            .map_err(|e| ApiError::bad("badResource", e.to_string()))?;
            ctx.decide_live(&live)
        }
    };
    let table = ctx.table();
    // A live remote tool's name is as visible as a table remote tool's.
    let remote = match table.tool_id(name) {
        Some(i) => !ctx.name_visible(i),
        None => r.properties.as_ref().is_some_and(|p| p.remote) && !ctx.remote_names_visible(),
    };
    // A call waits for a person's approval, unless its grant lets it run.
    let waits = stage == Stage::Call && d.allowed && d.needs_approval;
    if let (true, Some(grant)) = (waits, call.grant) {
        let arguments = match call.arguments {
            None => None,
            Some(a) => match serde_json::from_str::<serde_json::Value>(a.get()) {
                Ok(v @ serde_json::Value::Object(_)) => Some(v),
                _ => {
                    return Err(ApiError::bad(
                        "badArguments",
                        "context.arguments is the call's arguments: a JSON object",
                    ))
                }
            },
        };
        let bytes = grant.get().as_bytes();
        let shown = toolgate_runtime::approval::SignedGrant::from_json(bytes).ok();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |t| t.as_secs());
        let checked = ctx.check_call_granted(
            name,
            arguments.as_ref(),
            Some(bytes),
            call.approver_keys,
            now,
        );
        let g = shown.as_ref().map(|s| &s.grant);
        let mut log = LogApproval {
            request_id: g.map(|g| g.request.request_id.clone()).unwrap_or_default(),
            outcome: "granted".into(),
            approver: g.map(|g| g.approver.clone()),
            grant_id: g.map(|g| g.grant_id.clone()),
            grant_error: None,
        };
        return Ok(match checked {
            Ok(_) => ToolDecision {
                allowed: true,
                reason: d.reason,
                needs_approval: true,
                observed_only: d.observed_only,
                name_visible: !remote,
                refusal: None,
                approval: Some(log),
            },
            Err(r) => {
                log.outcome = "refused".into();
                log.grant_error = r.refusal.grant_error.clone();
                ToolDecision {
                    allowed: false,
                    reason: d.reason,
                    needs_approval: true,
                    observed_only: d.observed_only,
                    name_visible: !remote,
                    refusal: refusal.then(|| Box::new(r.refusal)),
                    approval: Some(log),
                }
            }
        });
    }
    Ok(ToolDecision {
        allowed: d.allowed && !waits,
        reason: d.reason,
        needs_approval: d.needs_approval,
        observed_only: d.observed_only,
        name_visible: !remote,
        refusal: match (refusal, waits) {
            (false, _) => None,
            (true, true) => ctx.call_refusal(&d).map(Box::new),
            (true, false) => ctx.refusal(&d).map(Box::new),
        },
        approval: None,
    })
}

// ------------------------------------------------------------------ answers

/// The answer to one evaluation. In a batch, an item's `context` is given
/// only when the caller asks (`options.toolgate_context`) or the operator
/// does (`--answer-context`), or when the item could not be decided or its
/// stored run could not be read: AuthZEN's own examples and the interop
/// harnesses compare the items as `{"decision": ...}`.
#[derive(Debug, Serialize)]
pub struct DecisionOut<'a> {
    pub decision: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<DecisionContextOut<'a>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionContextOut<'a> {
    /// The first refusing gate (the true reason: the PEP is a host), or
    /// `trustZone` for an observed-only allow, or null.
    pub reason: Option<&'static str>,
    pub observed_only: bool,
    /// A person approves each call of the tool (`needs-approval`); at stage
    /// `call` the decision is false with the reason `approvalRequired`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub needs_approval: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refusal: Option<Box<Refusal>>,
    /// What the call's grant did (`granted`, or `refused` with its `grantError`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval: Option<LogApproval>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_error: Option<String>,
    /// Why this evaluation could not be made (batches only): never an allow.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ApiError>,
    /// The table that decided; in a batch, once for the whole answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table_digest: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision_id: Option<String>,
}

impl<'a> DecisionOut<'a> {
    pub fn decided(o: ToolDecision, run_error: Option<String>, digest: Option<&'a str>) -> Self {
        DecisionOut {
            decision: o.allowed,
            context: Some(DecisionContextOut {
                reason: o
                    .reason
                    .map(Reason::code)
                    .or((!o.allowed && o.needs_approval).then_some("approvalRequired")),
                observed_only: o.observed_only,
                needs_approval: o.needs_approval,
                refusal: o.refusal,
                approval: o.approval,
                run_error,
                error: None,
                table_digest: digest,
                decision_id: None,
            }),
        }
    }

    pub fn failed(e: ApiError, digest: Option<&'a str>) -> Self {
        DecisionOut {
            decision: false,
            context: Some(DecisionContextOut {
                reason: None,
                observed_only: false,
                needs_approval: false,
                refusal: None,
                approval: None,
                run_error: None,
                error: Some(e),
                table_digest: digest,
                decision_id: None,
            }),
        }
    }

    /// The answer as a batch item without its context: `{"decision": ...}`
    /// alone, unless the item could not be decided or its stored run could
    /// not be read (what was wrong with the question is always said).
    pub fn bare(mut self) -> Self {
        if self
            .context
            .as_ref()
            .is_some_and(|c| c.error.is_none() && c.run_error.is_none())
        {
            self.context = None;
        }
        self
    }
}

/// The decision log's input and result of one decision.
pub fn log_parts(
    s: &Subject,
    a: &Action<'_>,
    r: &Resource<'_>,
    c: &RequestContext,
    resolved: &ResolvedContext<'_>,
    o: &ToolDecision,
) -> (ServiceInput, ServiceResult) {
    let input = ServiceInput {
        subject: LogSubject {
            kind: s.kind.clone(),
            id: s.id.clone(),
            properties: LogSubjectProperties {
                role: resolved.ctx.user_role().as_str().to_string(),
                consumer: resolved.ctx.consumer_name().map(str::to_string),
            },
        },
        action: LogAction {
            name: a.name.to_string(),
        },
        resource: LogResource {
            kind: r.kind.to_string(),
            id: r.id.as_deref().unwrap_or_default().to_string(),
            properties: r
                .properties
                .as_deref()
                .and_then(|p| serde_json::to_value(p).ok()),
        },
        context: LogContext {
            configuration: resolved.ctx.configuration_name().to_string(),
            enforcement: c.enforcement.clone(),
            run: resolved.run.as_ref().map(RunState::to_value),
        },
    };
    let result = ServiceResult {
        decision: o.allowed,
        context: ServiceResultContext {
            reason: o.reason.map(|r| r.code().to_string()),
            observed_only: o.observed_only,
            name_visible: o.name_visible,
            run_error: resolved.run_error.clone(),
            approval: o.approval.clone(),
        },
    };
    (input, result)
}
