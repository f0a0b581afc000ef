//! A call checked with a person's approval grant (docs/approvals.md,
//! "Grants"): the runtime's `Context::check_call_granted`, the one check of
//! a call with a grant, its arguments and time read by the host layer
//! (`toolgate_runtime::host::call`).

use std::ffi::c_char;

use toolgate_runtime::host::{call_arguments, check_time};
use toolgate_runtime::TrustedKeys;

use crate::boundary::{
    buf_of, bytes_arg, err, guard, handle_ref, json, opt_str_arg, out_ref, str_arg, toolgate_buf,
    EMPTY_BUF,
};
use crate::codes::{
    decision_of, toolgate_decision, REFUSED, TOOLGATE_ERR_ARGUMENT, TOOLGATE_ERR_KEYS,
};
use crate::context::toolgate_context;

/// A call's arguments: one JSON object, or NULL with length 0 for none.
///
/// # Safety
/// As `opt_str_arg`: `ptr` is NULL or points at `len` readable bytes.
unsafe fn arguments_arg(
    ptr: *const c_char,
    len: usize,
) -> Result<Option<serde_json::Value>, crate::boundary::Error> {
    unsafe { opt_str_arg(ptr, len, "arguments_json")? }
        .map(|text| call_arguments(text.as_bytes()))
        .transpose()
        .map_err(|e| err(TOOLGATE_ERR_ARGUMENT, e.to_string()))
}

/// Check a call of `name` about to run, with its arguments and a person's
/// approval grant: what a host runs when the call executes.
///
/// - `arguments_json`: the call's arguments, one JSON object (a key given
///   twice is an error); NULL with length 0: none (a grant binds them as
///   `{}`).
/// - `grant_json`: the signed grant (`{"grant", "publicKey",
///   "signature"}`), as the approver's side minted it; NULL with length 0:
///   no grant. Bytes that are not a signed grant are a refusal
///   (`grantMalformed`), never an error.
/// - `approver_keys_pem`: the keys trusted to approve, one or more PEM
///   public keys (`toolgate keygen`); NULL with length 0: none (a grant is
///   then refused, `grantUntrustedKey`).
/// - `now`: the time of the check in Unix seconds; 0 reads the system clock.
///
/// `TOOLGATE_OK`: `out_decision` is the tool's decision and `out_refusal`
/// the typed refusal of the call as JSON, or `null`: **the call may run
/// exactly when the status is `TOOLGATE_OK` and `out_refusal` is `null`**.
/// A tool the table refuses is refused as `toolgate_call_refusal_json`
/// refuses it, whatever the grant; a tool that needs no approval runs
/// (its grant is not read); a tool a person approves runs only with a grant
/// signed by an approver key, unexpired, bound to this very call (tool,
/// arguments, configuration, consumer, role, table) and not used before in
/// this process (each grant lets one call run). Otherwise the refusal is
/// `approvalRequired`, with `grantError` (`grantReplayed`, `grantExpired`,
/// `grantOtherArguments`, ...) and `detail` saying why a grant given did
/// not fit.
///
/// Errors (nothing is checked and no grant is used): arguments that are not
/// one JSON object (`TOOLGATE_ERR_ARGUMENT`), keys that are not PEM public
/// keys (`TOOLGATE_ERR_KEYS`), and the boundary's rules; `out_decision` is
/// then refused with no reason and `out_refusal` empty.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn toolgate_check_call_granted(
    ctx: *const toolgate_context,
    name: *const c_char,
    name_len: usize,
    arguments_json: *const c_char,
    arguments_json_len: usize,
    grant_json: *const c_char,
    grant_json_len: usize,
    approver_keys_pem: *const c_char,
    approver_keys_pem_len: usize,
    now: u64,
    out_decision: *mut toolgate_decision,
    out_refusal: *mut toolgate_buf,
) -> i32 {
    // SAFETY: checked for NULL; the caller passes writable result slots.
    // Cleared first, so an error leaves a refusal and an empty buffer.
    if let Some(o) = unsafe { out_decision.as_mut() } {
        *o = REFUSED;
    }
    if let Some(o) = unsafe { out_refusal.as_mut() } {
        *o = EMPTY_BUF;
    }
    guard(|| {
        let c = unsafe { handle_ref(ctx, "context")? }.ctx.get();
        let name = unsafe { str_arg(name, name_len, "name")? };
        let arguments = unsafe { arguments_arg(arguments_json, arguments_json_len)? };
        let grant = if grant_json.is_null() && grant_json_len == 0 {
            None
        } else {
            Some(unsafe { bytes_arg(grant_json, grant_json_len, "grant_json")? })
        };
        let keys = unsafe {
            opt_str_arg(
                approver_keys_pem,
                approver_keys_pem_len,
                "approver_keys_pem",
            )?
        }
        .map(TrustedKeys::from_pem)
        .transpose()
        .map_err(|e| err(TOOLGATE_ERR_KEYS, format!("approver_keys_pem: {e}")))?;
        let od = unsafe { out_ref(out_decision, "out_decision")? };
        let or = unsafe { out_ref(out_refusal, "out_refusal")? };
        let checked = c.check_call_granted(
            name,
            arguments.as_ref(),
            grant,
            keys.as_ref(),
            check_time(now),
        );
        let (decision, refusal) = match checked {
            Ok(d) => (decision_of(&d), "null".to_string()),
            Err(r) => (decision_of(&r.decision), json(&r.refusal)?),
        };
        *od = decision;
        *or = buf_of(refusal);
        Ok(())
    })
}

/// What a person is asked to approve for a call of `name` with
/// `arguments_json` (one JSON object, or NULL with length 0 for none), as
/// JSON: `{"tool", "argumentsDigest", "configuration", "consumer", "role",
/// "tableDigest", "requestId"}`, the runtime's `ApprovalRequest`. The host
/// shows it to an approver, who signs it (`toolgate approve REQUEST.json`);
/// the grant then lets this very call run once
/// (`toolgate_check_call_granted`). `request_id` (NULL with length 0:
/// empty) is the host's id of the question.
///
/// Errors: arguments that are not one JSON object
/// (`TOOLGATE_ERR_ARGUMENT`) and the boundary's rules; `out_json` is then
/// empty.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn toolgate_approval_request_json(
    ctx: *const toolgate_context,
    name: *const c_char,
    name_len: usize,
    arguments_json: *const c_char,
    arguments_json_len: usize,
    request_id: *const c_char,
    request_id_len: usize,
    out_json: *mut toolgate_buf,
) -> i32 {
    // SAFETY: checked for NULL; the caller passes a writable result slot.
    if let Some(o) = unsafe { out_json.as_mut() } {
        *o = EMPTY_BUF;
    }
    guard(|| {
        let c = unsafe { handle_ref(ctx, "context")? }.ctx.get();
        let name = unsafe { str_arg(name, name_len, "name")? };
        let arguments = unsafe { arguments_arg(arguments_json, arguments_json_len)? };
        let request_id = unsafe { opt_str_arg(request_id, request_id_len, "request_id")? };
        let out = unsafe { out_ref(out_json, "out_json")? };
        let request = c.approval_request(name, arguments.as_ref(), request_id.unwrap_or(""));
        *out = buf_of(json(&request)?);
        Ok(())
    })
}
