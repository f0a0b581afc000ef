//! `Context`: who is asking, fixed. Every answer is the runtime's, through
//! a `HostContext` (the runtime's context that owns its table: the binding
//! extends no lifetime of its own).

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::{json, Value};
use toolgate_runtime as rt;
use toolgate_runtime::host::codes::packed;
use toolgate_runtime::{HostContext, Reason};

use crate::errors;

/// The reason bits of a packed unavailable entry (`id << 3 | reason
/// number`, as `index.d.ts` documents it): every reason number fits, or the
/// build stops here when a gate is added.
const LIST_REASON_BITS: u32 = 3;
const _: () = assert!(rt::GATE_ORDER.len() < 1 << LIST_REASON_BITS);
use crate::live::{live_tool, live_tools, LiveToolSpec};

/// One tool's answer, as it crosses the boundary.
#[napi(object)]
pub struct NativeDecision {
    pub tool: String,
    pub allowed: bool,
    pub reason: Option<String>,
    pub observed_only: bool,
    /// Offered, and a person approves each call (`needs-approval`).
    pub needs_approval: bool,
    /// Trust-zone facts: only when the trust-zone gate was reached.
    pub class: Option<String>,
    pub zone: Option<String>,
    pub ceiling: Option<String>,
    /// A refused remote tool whose name this user may not see.
    pub hidden: bool,
    /// Whether the tool is remote (for the visibility rule of a context
    /// the decision is handed to later).
    pub remote: bool,
}

impl NativeDecision {
    fn of(d: &rt::Decision<'_>, remote: bool) -> NativeDecision {
        NativeDecision {
            tool: d.tool.to_string(),
            allowed: d.allowed,
            reason: d.reason.map(|r| r.code().to_string()),
            observed_only: d.observed_only,
            needs_approval: d.needs_approval,
            class: d.class.map(str::to_string),
            zone: d.zone.map(str::to_string),
            ceiling: d.ceiling.map(str::to_string),
            hidden: d.hidden,
            remote,
        }
    }
}

/// `{tool, reason}`: one entry of an unavailable list.
#[napi(object)]
pub struct Unavailable {
    pub tool: String,
    pub reason: String,
}

/// Who is asking (configuration, role, consumer, run, enforcement), fixed.
#[napi]
pub struct NativeContext {
    ctx: HostContext,
}

impl NativeContext {
    pub(crate) fn new(ctx: HostContext) -> NativeContext {
        NativeContext { ctx }
    }

    fn rt(&self) -> &rt::Context<'_> {
        self.ctx.get()
    }

    fn remote_of(&self, id: u32) -> bool {
        self.ctx.table().spec().tools[id as usize].remote
    }

    fn live_remote(&self, t: &rt::LiveTool) -> bool {
        let table = self.ctx.table();
        match table.tool_id(t.name()) {
            Some(id) => table.spec().tools[id as usize].remote,
            None => t.remote(),
        }
    }
}

#[napi]
impl NativeContext {
    /// The decision of tool `id` (an id not below the tool count is an
    /// `ArgumentError`, never a decision).
    #[napi]
    pub fn decide_id(&self, id: u32) -> Result<NativeDecision> {
        if id as usize >= self.ctx.table().tool_count() {
            return Err(errors::error(
                "ArgumentError",
                rt::host::Status::OutOfRange,
                format!("no tool with id {id}"),
                Value::Null,
            ));
        }
        Ok(NativeDecision::of(
            &self.rt().decide_id(id),
            self.remote_of(id),
        ))
    }

    /// The decision of a tool name (a name the table does not hold: `notRegistered`).
    #[napi]
    pub fn decide(&self, name: String) -> NativeDecision {
        let remote = self
            .ctx
            .table()
            .tool_id(&name)
            .is_some_and(|id| self.remote_of(id));
        NativeDecision::of(&self.rt().decide(&name), remote)
    }

    /// The decision of a name as one byte (`host::codes::packed`: bit 0
    /// allowed, bit 1 observed only, bits 2 to 4 the reason number).
    #[napi]
    pub fn decide_packed(&self, name: String) -> u32 {
        u32::from(packed::of(&self.rt().decide(&name)))
    }

    /// The ids of the offered tools written into `out` (registry order);
    /// the number written. `out` must hold every tool of the table (an
    /// `ArgumentError` otherwise), as for `unavailableIdsInto`.
    #[napi]
    pub fn offered_ids_into(&self, mut out: Uint32ArraySlice<'_>) -> Result<u32> {
        // SAFETY: the call is synchronous, so no JavaScript runs (and no
        // other view writes the buffer) while this slice lives.
        let out = unsafe { out.as_mut() };
        let out_len = out.len();
        let c = self.rt();
        c.offered_ids_into(out).map(|n| n as u32).ok_or_else(|| {
            errors::argument(format!(
                "offeredIdsInto: a buffer of {} entries cannot hold the offered set of a table of {} tools",
                out_len,
                c.table().tool_count()
            ))
        })
    }

    /// The unavailable list written into `out` (one `id << 3 | reason
    /// number` each, registry order); the number written. `out` must hold
    /// every tool of the table (an `ArgumentError` otherwise: a list is
    /// never cut short). JavaScript owns the memory, so no buffer
    /// is handed across and finalized per call.
    #[napi]
    pub fn unavailable_ids_into(&self, mut out: Uint32ArraySlice<'_>) -> Result<u32> {
        // SAFETY: the call is synchronous, so no JavaScript runs (and no
        // other view writes the buffer) while this slice lives.
        let out = unsafe { out.as_mut() };
        let out_len = out.len();
        let c = self.rt();
        c.unavailable_ids_into(out, |i, r| i << LIST_REASON_BITS | u32::from(r.number()))
            .map(|n| n as u32)
            .ok_or_else(|| {
                errors::argument(format!(
                    "unavailableIdsInto: a buffer of {} entries cannot hold the list of a table of {} tools",
                    out_len,
                    c.table().tool_count()
                ))
            })
    }

    /// The refused live tools the table does not know, after the table's
    /// own unavailable list (hidden remote names left out).
    #[napi]
    pub fn unavailable_live_tail(&self, live: Vec<LiveToolSpec>) -> Result<Vec<Unavailable>> {
        let tools = live_tools(&live)?;
        let c = self.rt();
        let skip = c.unavailable_count();
        Ok(c.unavailable_with(&tools)[skip..]
            .iter()
            .map(|u| Unavailable {
                tool: u.tool.to_string(),
                reason: u.reason.code().to_string(),
            })
            .collect())
    }

    /// The unavailable list as a system-prompt section ("" when nothing is
    /// refused), over the table's tools and then the `live` tools.
    #[napi]
    pub fn unavailable_prompt(&self, live: Option<Vec<LiveToolSpec>>) -> Result<String> {
        Ok(match live {
            Some(l) => self.rt().unavailable_prompt_with(&live_tools(&l)?),
            None => self.rt().unavailable_prompt(),
        })
    }

    /// The decision of a live tool.
    #[napi]
    pub fn decide_live(&self, spec: LiveToolSpec) -> Result<NativeDecision> {
        let t = live_tool(&spec)?;
        let d = self.rt().decide_live(&t);
        Ok(NativeDecision::of(&d, self.live_remote(&t)))
    }

    /// The typed refusal of a live tool (`null` when allowed).
    #[napi]
    pub fn refusal_live(&self, spec: LiveToolSpec) -> Result<Option<Value>> {
        let t = live_tool(&spec)?;
        let d = self.rt().decide_live(&t);
        refusal_json(self.rt().refusal(&d))
    }

    /// The typed refusal of a decision, with this context's facts (`null`
    /// when allowed). Hidden when it was hidden where it was made, or when
    /// it would be here: a decision of another context cannot unhide a name.
    #[napi]
    pub fn refusal(&self, d: NativeDecision) -> Result<Option<Value>> {
        self.refusal_of(d, false)
    }

    /// The typed refusal of a call under a decision (`null` when the call
    /// may run): [`Self::refusal`], and `approvalRequired` for an offered
    /// tool a person approves call by call.
    #[napi]
    pub fn call_refusal(&self, d: NativeDecision) -> Result<Option<Value>> {
        self.refusal_of(d, true)
    }

    /// A call of `name` checked with a grant: the runtime's
    /// `Context::check_call_granted` (its arguments and time read by the
    /// host layer, `host::call`), spending in this process's ledger. The
    /// typed refusal of the call, or `null`: the call may run.
    #[napi]
    pub fn check_call_granted(
        &self,
        name: String,
        arguments_json: Option<String>,
        grant: Option<String>,
        approver_keys: Option<String>,
        now: Option<i64>,
    ) -> Result<Option<Value>> {
        let arguments = arguments_json
            .map(|a| rt::host::call_arguments(a.as_bytes()))
            .transpose()
            .map_err(|e| errors::argument(e.to_string()))?;
        let keys = approver_keys
            .map(|pem| rt::TrustedKeys::from_pem(&pem))
            .transpose()
            .map_err(|e| {
                errors::error(
                    "ArgumentError",
                    rt::host::Status::Keys,
                    format!("approverKeys: {e}"),
                    Value::Null,
                )
            })?;
        let now = match now {
            None => 0,
            Some(n) => u64::try_from(n)
                .map_err(|_| errors::argument(format!("now: Unix seconds, got {n}")))?,
        };
        let checked = self.rt().check_call_granted(
            &name,
            arguments.as_ref(),
            grant.as_deref().map(str::as_bytes),
            keys.as_ref(),
            rt::host::check_time(now),
        );
        match checked {
            Ok(_) => Ok(None),
            Err(refused) => refusal_json(Some(refused.refusal)),
        }
    }

    /// What a person is asked to approve for a call of `name` with
    /// `arguments_json`: the runtime's `Context::approval_request`.
    #[napi]
    pub fn approval_request(
        &self,
        name: String,
        arguments_json: Option<String>,
        request_id: String,
    ) -> Result<Value> {
        let arguments = arguments_json
            .map(|a| rt::host::call_arguments(a.as_bytes()))
            .transpose()
            .map_err(|e| errors::argument(e.to_string()))?;
        let request = self
            .rt()
            .approval_request(&name, arguments.as_ref(), &request_id);
        serde_json::to_value(request).map_err(|e| errors::argument(e.to_string()))
    }

    fn refusal_of(&self, d: NativeDecision, call: bool) -> Result<Option<Value>> {
        let reason = match d.reason.as_deref() {
            None => None,
            Some(code) => Some(
                Reason::from_code(code)
                    .ok_or_else(|| errors::argument(format!("unknown reason {code:?}")))?,
            ),
        };
        let hidden = d.hidden || (!d.allowed && d.remote && !self.rt().remote_names_visible());
        let facts = match (&d.class, &d.zone, &d.ceiling) {
            (Some(c), Some(z), Some(x)) => Some((c.as_str(), z.as_str(), x.as_str())),
            _ => None,
        };
        let rd = rt::Decision {
            tool: &d.tool,
            allowed: d.allowed,
            reason,
            observed_only: d.observed_only,
            needs_approval: d.needs_approval,
            class: facts.map(|f| f.0),
            zone: facts.map(|f| f.1),
            ceiling: facts.map(|f| f.2),
            hidden,
        };
        refusal_json(if call {
            self.rt().call_refusal(&rd)
        } else {
            self.rt().refusal(&rd)
        })
    }

    /// The discovery tool set (`Context::tool_set`): `offered`, and in
    /// `excluded` every refused tool as `{name, reason}`. For the host
    /// (`audience` "host", the default) every refused tool is listed and
    /// marked with `nameVisible`; for a model or a person ("model") a remote
    /// name this user may not see is left out, as `offered` text and the
    /// unavailable list leave it out.
    #[napi]
    pub fn tool_set(&self, audience: Option<String>) -> Result<Value> {
        let for_model = match audience.as_deref() {
            None | Some("host") => false,
            Some("model") => true,
            Some(a) => {
                return Err(errors::argument(format!(
                    "audience {a:?}: expected \"host\" or \"model\""
                )))
            }
        };
        let set = self.rt().tool_set();
        let excluded: Vec<Value> = set
            .excluded
            .iter()
            .filter(|x| !for_model || x.name_visible)
            .map(|x| {
                let mut v = json!({"name": x.tool, "reason": x.reason.code()});
                if !for_model {
                    v["nameVisible"] = json!(x.name_visible);
                }
                v
            })
            .collect();
        Ok(json!({
            "audience": if for_model { "model" } else { set.audience },
            "configuration": set.configuration,
            "consumer": set.consumer,
            "profile": set.profile,
            "offered": set.offered,
            "excluded": excluded,
            "descriptorBytes": set.descriptor_bytes,
            "estimatedTokens": set.estimated_tokens,
        }))
    }

    #[napi]
    pub fn offered_count(&self) -> u32 {
        self.rt().offered_count() as u32
    }

    #[napi]
    pub fn unavailable_count(&self) -> u32 {
        self.rt().unavailable_count() as u32
    }

    #[napi(getter)]
    pub fn configuration(&self) -> String {
        self.rt().configuration_name().to_string()
    }

    #[napi(getter)]
    pub fn role(&self) -> String {
        self.rt().user_role().as_str().to_string()
    }

    #[napi(getter)]
    pub fn consumer(&self) -> Option<String> {
        self.rt().consumer_name().map(str::to_string)
    }

    /// The access profile the consumer is held to, if any.
    #[napi(getter)]
    pub fn profile(&self) -> Option<String> {
        self.rt().profile_name().map(str::to_string)
    }

    /// Trust-zone enforcement: "observe" or "enforce".
    #[napi(getter)]
    pub fn mode(&self) -> String {
        self.rt().mode().as_str().to_string()
    }

    /// Whether this user may be shown remote tool names (`remote-tools visible-to`).
    #[napi(getter)]
    pub fn remote_names_visible(&self) -> bool {
        self.rt().remote_names_visible()
    }
}

pub(crate) fn refusal_json(r: Option<rt::Refusal>) -> Result<Option<Value>> {
    r.map(|r| serde_json::to_value(r).map_err(|e| errors::argument(e.to_string())))
        .transpose()
}
