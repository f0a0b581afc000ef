//! A person's approval of a call, at the gateway (docs/approvals.md, "At
//! the gateway"). A call of a tool the policy says needs approval runs
//! only with a grant the runtime accepts
//! ([`toolgate_runtime::Context::check_grant`]): minted here, signed with
//! the gateway's key, bound to the call and the table, used once.
//!
//! Who approves:
//! - **the caller's own user**, through its MCP client (`ask-caller`, the
//!   default): by elicitation on 2025-11-25, by an `InputRequiredResult`
//!   the client answers on 2026-07-28. The grant's approver is the
//!   caller's identity.
//! - **an approver**, out of band at `/approvals`: an authenticated
//!   identity whose key says `approves = true` (or whose token's
//!   `approver-claim` is true), and never the caller of the call it
//!   approves. The caller's client then makes the call again.
//!
//! Everything kept here is bounded: at most `max-pending` questions, each
//! for `expiry-seconds`; grants given out of band are questions answered;
//! the ids of used grants are kept until they expire, in the process's
//! [`toolgate_runtime::approval::GrantLedger`]. Full is refused, never let
//! through.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use ed25519_dalek::SigningKey;
use serde::Serialize;
use serde_json::{json, Value};
use toolgate_runtime::approval::{ApprovalRequest, Grant, GrantError, SignedGrant};
use toolgate_runtime::log::LogApproval;
use toolgate_runtime::{Context, Decision, TrustedKeys};

use crate::config::ApprovalSettings;

/// The key of the gateway's question in an `InputRequiredResult`.
pub const INPUT_KEY: &str = "toolgate-approval";
/// How the gateway's own `requestState` begins; what follows is the question's id.
pub const STATE_PREFIX: &str = "toolgate-approval:";
/// Arguments shown to the person: at most this many bytes of their JSON.
const MAX_SHOWN_ARGUMENTS: usize = 2_000;

/// A question waiting for its answer.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Pending {
    pub request: ApprovalRequest,
    /// The identity whose call it is (never its approver out of band).
    pub caller: String,
    /// The call's arguments, as the approver is shown them.
    pub arguments: Value,
    pub asked_at: u64,
    pub expires_at: u64,
    /// What the policy says (the refusal's remediation).
    pub policy: String,
    /// Answered out of band: the grant, or `None` when declined.
    #[serde(skip)]
    answer: Option<Answer>,
}

#[derive(Debug, Clone)]
enum Answer {
    Granted(Box<SignedGrant>),
    Declined { approver: String },
}

#[derive(Default)]
struct State {
    /// By the question's id.
    pending: HashMap<String, Pending>,
}

/// What the gateway does with a call that needs approval.
pub enum Verdict {
    /// Run it: the grant the runtime accepted.
    Run(LogApproval),
    /// Ask the client (2026-07-28): it retries the call with the answer.
    Ask(Box<rmcp::model::InputRequiredResult>, LogApproval),
    /// Not now: refused with the call's `approvalRequired`, and why.
    Refuse {
        log: LogApproval,
        /// The message for the model, when not the refusal's own.
        message: Option<String>,
    },
}

pub struct Approvals {
    key: SigningKey,
    trusted: TrustedKeys,
    pub settings: ApprovalSettings,
    state: Mutex<State>,
}

/// Why approvals cannot be set up: the signing key.
#[derive(Debug, thiserror::Error)]
#[error("[approvals] signing-key: {0}")]
pub struct KeyError(String);

/// Unix seconds now.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The question as the person reads it: the tool, its arguments as one
/// line of JSON (so no argument starts a line of its own), who asks and
/// what the policy says. Names are escaped as every name toolgate shows.
pub fn message(request: &ApprovalRequest, arguments: &Value, policy: &str) -> String {
    let mut args = String::new();
    toolgate_runtime::mcp::canonical_json(arguments, &mut args);
    if args.len() > MAX_SHOWN_ARGUMENTS {
        let mut end = MAX_SHOWN_ARGUMENTS;
        while !args.is_char_boundary(end) {
            end -= 1;
        }
        args = format!("{}… ({} bytes in all)", &args[..end], args.len());
    }
    let shown = |s: &str| toolgate_runtime::names::shown(s).into_owned();
    format!(
        "Approve this call?\nTool: {}\nArguments: {}\nFor: consumer {}, role {}, configuration {}\nPolicy: {}",
        shown(&request.tool),
        toolgate_runtime::names::escape(&args),
        request.consumer.as_deref().map_or("(none)".into(), shown),
        request.role,
        shown(&request.configuration),
        toolgate_runtime::names::escape(policy),
    )
}

/// The elicitation that asks it: one boolean, `approve`.
pub fn elicitation(message: String) -> Value {
    json!({
        "mode": "form",
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": {
                "approve": {
                    "type": "boolean",
                    "title": "Approve",
                    "description": "Let this one call run, with these arguments"
                }
            },
            "required": ["approve"]
        }
    })
}

/// Whether an elicitation's answer approves: accepted, with `approve`
/// exactly `true`. Anything else (declined, cancelled, another shape) does not.
pub fn approves(answer: &Value) -> bool {
    answer.get("action").and_then(Value::as_str) == Some("accept")
        && answer.get("content").and_then(|c| c.get("approve")) == Some(&Value::Bool(true))
}

impl Approvals {
    pub fn new(settings: ApprovalSettings) -> Result<Approvals, KeyError> {
        use toolgate_compiler::signing;
        let key = match &settings.signing_key {
            Some(path) => {
                let bytes = toolgate_runtime::host::read_file(path, 1 << 16)
                    .map_err(|e| KeyError(format!("{}: {e}", path.display())))?;
                signing::read_secret_key(&String::from_utf8_lossy(&bytes))
                    .map_err(|e| KeyError(format!("{}: {e}", path.display())))?
            }
            None => {
                let pair = signing::generate().map_err(KeyError)?;
                signing::read_secret_key(&pair.secret_pem).map_err(KeyError)?
            }
        };
        let pem = signing::public_pem(&key).map_err(KeyError)?;
        let trusted = TrustedKeys::from_pem(&pem).map_err(|e| KeyError(e.to_string()))?;
        Ok(Approvals {
            key,
            trusted,
            settings,
            state: Mutex::new(State::default()),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic elsewhere while holding it leaves maps that are still maps.
        let mut s = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let t = now();
        s.pending.retain(|_, p| p.expires_at >= t);
        s
    }

    fn expiry(&self) -> u64 {
        now() + self.settings.expiry.as_secs()
    }

    /// A grant of `request` by `approver`, signed.
    pub fn mint(&self, request: ApprovalRequest, approver: &str, grant_id: String) -> SignedGrant {
        toolgate_compiler::signing::sign_grant(
            Grant {
                request,
                approver: approver.to_string(),
                grant_id,
                expires_at: self.expiry(),
            },
            &self.key,
        )
    }

    /// Let the call run with `grant` if the runtime accepts it for this
    /// call now and it was never used: the one way a call that needs
    /// approval runs.
    pub fn redeem(
        &self,
        ctx: &Context<'_>,
        d: &Decision<'_>,
        arguments: Option<&Value>,
        grant: &SignedGrant,
    ) -> Verdict {
        let g = &grant.grant;
        let log = |outcome: &str, error: Option<String>| LogApproval {
            request_id: g.request.request_id.clone(),
            outcome: outcome.into(),
            approver: Some(g.approver.clone()),
            grant_id: Some(g.grant_id.clone()),
            grant_error: error,
        };
        if let Err(e) = ctx.check_grant(d, arguments, grant, &self.trusted, now()) {
            return Verdict::Refuse {
                log: log("refused", Some(e.code().into())),
                message: Some(refused_text(&e)),
            };
        }
        // Single use: the process's ledger, as every host's.
        if let Err(e) = toolgate_runtime::approval::GrantLedger::process().spend(g, now()) {
            let message = match e {
                GrantError::Replayed { .. } => {
                    "This approval was already used for one call: a person approves each call."
                        .to_string()
                }
                _ => full_text(),
            };
            return Verdict::Refuse {
                log: log("refused", Some(e.code().into())),
                message: Some(message),
            };
        }
        Verdict::Run(log("granted", None))
    }

    /// Keep a question for a later answer (an approver's, or the client's
    /// retry on 2026-07-28): its id, or `None` when full. A question the
    /// same caller already waits on for the same call is that one.
    pub fn ask(
        &self,
        request: ApprovalRequest,
        caller: &str,
        arguments: Value,
        policy: String,
    ) -> Option<String> {
        let mut s = self.state();
        if let Some((id, _)) = s.pending.iter().find(|(_, p)| {
            p.caller == caller && p.answer.is_none() && same_call(&p.request, &request)
        }) {
            return Some(id.clone());
        }
        if s.pending.len() >= self.settings.max_pending {
            return None;
        }
        let id = request.request_id.clone();
        s.pending.insert(
            id.clone(),
            Pending {
                request,
                caller: caller.to_string(),
                arguments,
                asked_at: now(),
                expires_at: self.expiry(),
                policy,
                answer: None,
            },
        );
        Some(id)
    }

    /// The question `id` of `caller`, taken (it is answered once).
    pub fn take(&self, id: &str, caller: &str) -> Option<Pending> {
        let mut s = self.state();
        match s.pending.get(id) {
            Some(p) if p.caller == caller => s.pending.remove(id),
            _ => None,
        }
    }

    /// An out-of-band answer to this very call of `caller`, taken: the grant
    /// or the approver who declined.
    pub fn answered(
        &self,
        request: &ApprovalRequest,
        caller: &str,
    ) -> Option<Result<SignedGrant, String>> {
        let mut s = self.state();
        let id = s
            .pending
            .iter()
            .find(|(_, p)| {
                p.caller == caller && p.answer.is_some() && same_call(&p.request, request)
            })
            .map(|(id, _)| id.clone())?;
        match s.pending.remove(&id)?.answer? {
            Answer::Granted(g) => Some(Ok(*g)),
            Answer::Declined { approver } => Some(Err(approver)),
        }
    }

    /// The question `id`, answered or not.
    pub fn question(&self, id: &str) -> Option<Pending> {
        self.state().pending.get(id).cloned()
    }

    /// The questions waiting for an approver, oldest first.
    pub fn waiting(&self) -> Vec<(String, Pending)> {
        let s = self.state();
        let mut out: Vec<_> = s
            .pending
            .iter()
            .filter(|(_, p)| p.answer.is_none())
            .map(|(id, p)| (id.clone(), p.clone()))
            .collect();
        out.sort_by(|a, b| (a.1.asked_at, &a.0).cmp(&(b.1.asked_at, &b.0)));
        out
    }

    /// An approver's answer to question `id`: `Ok` with the grant id when
    /// approved (`None` when declined), or why it is not taken.
    pub fn answer(
        &self,
        id: &str,
        approver: &str,
        approve: bool,
        grant_id: String,
    ) -> Result<Option<String>, AnswerError> {
        let mut s = self.state();
        let p = s.pending.get_mut(id).ok_or(AnswerError::Unknown)?;
        if p.answer.is_some() {
            return Err(AnswerError::Answered);
        }
        if p.caller == approver {
            return Err(AnswerError::OwnCall);
        }
        if approve {
            let g = self.mint(p.request.clone(), approver, grant_id.clone());
            p.answer = Some(Answer::Granted(Box::new(g)));
            Ok(Some(grant_id))
        } else {
            p.answer = Some(Answer::Declined {
                approver: approver.to_string(),
            });
            Ok(None)
        }
    }
}

/// Why an approver's answer is not taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    #[error("no question waits under this id (it was answered, expired or never asked)")]
    Unknown,
    #[error("this question was already answered")]
    Answered,
    #[error("an approver does not approve their own call")]
    OwnCall,
}

/// Two questions about the same call: all but the id equal.
pub fn same_call(a: &ApprovalRequest, b: &ApprovalRequest) -> bool {
    ApprovalRequest {
        request_id: String::new(),
        ..a.clone()
    } == ApprovalRequest {
        request_id: String::new(),
        ..b.clone()
    }
}

fn refused_text(e: &GrantError) -> String {
    match e {
        GrantError::OtherTable { .. } => "The policy changed while this call waited for approval: a person approves it again under the new policy.".into(),
        GrantError::Expired { .. } => "The approval of this call expired: a person approves it again.".into(),
        _ => format!("The approval given does not fit this call ({}): a person approves this call.", e.code()),
    }
}

pub fn full_text() -> String {
    "Too many calls wait for approval at this gateway now: the call is refused; try again later."
        .into()
}

#[cfg(test)]
#[path = "approvals_tests.rs"]
mod tests;
