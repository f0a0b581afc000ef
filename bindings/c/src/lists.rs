//! Lists over every tool of a context (offered, unavailable, the prompt
//! section) and the typed refusals a model or a person is shown.

use std::ffi::c_char;

use toolgate_runtime::{LiveTool, Reason};

use crate::boundary::{bytes_arg, err, handle_ref, json, str_arg, toolgate_buf, with_buf, Error};
use crate::codes::{TOOLGATE_ERR_ARGUMENT, TOOLGATE_ERR_PANIC, TOOLGATE_REASON_NONE};
use crate::context::toolgate_context;
use crate::decide::live_arg;

/// A JSON array of live tools, each checked as `toolgate_decide_live` checks one.
unsafe fn live_list_arg(ptr: *const c_char, len: usize) -> Result<Vec<LiveTool>, Error> {
    let text = unsafe { bytes_arg(ptr, len, "live_json")? };
    LiveTool::list_from_json(text).map_err(|e| err(TOOLGATE_ERR_ARGUMENT, e.message))
}

/// The offered tools, JSON array of names in registry order.
#[no_mangle]
pub unsafe extern "C" fn toolgate_offered_json(
    ctx: *const toolgate_context,
    out: *mut toolgate_buf,
) -> i32 {
    with_buf(out, || {
        json(&unsafe { handle_ref(ctx, "context")? }.ctx.get().offered())
    })
}

/// What this context is offered and what is held back, the runtime's
/// `Context::tool_set` as JSON: `{"audience": "host", "configuration",
/// "consumer", "profile", "offered": [names], "excluded": [{"tool",
/// "reason", "nameVisible"}], "descriptorBytes", "estimatedTokens"}`. For
/// the host: render for people or models only the excluded entries with
/// `nameVisible` (docs/refusals.md).
#[no_mangle]
pub unsafe extern "C" fn toolgate_tool_set_json(
    ctx: *const toolgate_context,
    out: *mut toolgate_buf,
) -> i32 {
    with_buf(out, || {
        json(&unsafe { handle_ref(ctx, "context")? }.ctx.get().tool_set())
    })
}

/// The unavailable list, JSON `[{"tool": name, "reason": code}, ...]` in
/// registry order (remote tools only where the visibility rule shows them).
#[no_mangle]
pub unsafe extern "C" fn toolgate_unavailable_json(
    ctx: *const toolgate_context,
    out: *mut toolgate_buf,
) -> i32 {
    with_buf(out, || {
        json(
            &unsafe { handle_ref(ctx, "context")? }
                .ctx
                .get()
                .unavailable(),
        )
    })
}

/// The unavailable list in two columns, for hosts where building one small
/// object per entry costs more than the gate (PHP): the tool names joined by
/// `\n`, then one `\t`, then their reason codes joined by `\n` (registry
/// order; empty list: the empty string). A PHP host makes the pairs with
/// two `explode`s. No compiled table has a name holding `\n` or `\t` (the
/// loader refuses control characters in tool names); should one appear,
/// the call fails with `TOOLGATE_ERR_ARGUMENT` rather than split it.
#[no_mangle]
pub unsafe extern "C" fn toolgate_unavailable_columns(
    ctx: *const toolgate_context,
    out: *mut toolgate_buf,
) -> i32 {
    with_buf(out, || {
        let c = unsafe { handle_ref(ctx, "context")? }.ctx.get();
        let n = c.unavailable_count();
        let mut names = String::with_capacity(n * 24);
        let mut codes = String::with_capacity(n * 16);
        c.for_each_unavailable(|tool, reason| {
            if !names.is_empty() {
                names.push('\n');
                codes.push('\n');
            }
            names.push_str(tool);
            codes.push_str(reason.code());
        });
        // One separator per entry and no tab, checked over the whole text
        // (memchr) rather than per name.
        if names.contains('\t') || names.matches('\n').count() != n.saturating_sub(1) {
            return Err(err(
                TOOLGATE_ERR_ARGUMENT,
                "a tool name holds a line break or tab: use toolgate_unavailable_json",
            ));
        }
        if n == 0 {
            return Ok(String::new());
        }
        names.push('\t');
        names.push_str(&codes);
        Ok(names)
    })
}

/// The unavailable list by tool id, for hosts that keep the tool names
/// (`toolgate_table_tool_name`, registry order) and want only the reasons
/// per call: one byte per registered tool, byte `i` the
/// `TOOLGATE_REASON_*` code of tool `i` when it is on the unavailable list,
/// else 0 (offered, offered observed-only, or a remote tool whose name this
/// user may not see). `len` is the table's tool count. The same list as
/// `toolgate_unavailable_json`, in the same order, without names.
#[no_mangle]
pub unsafe extern "C" fn toolgate_unavailable_reasons(
    ctx: *const toolgate_context,
    out: *mut toolgate_buf,
) -> i32 {
    with_buf(out, || {
        let c = unsafe { handle_ref(ctx, "context")? }.ctx.get();
        let mut codes = vec![TOOLGATE_REASON_NONE; c.table().tool_count()];
        c.for_each_unavailable_id(|i, r| {
            if let Some(b) = codes.get_mut(i as usize) {
                *b = Reason::number(r);
            }
        });
        // Codes 0 to 7: ASCII, hence UTF-8 like every buffer.
        String::from_utf8(codes).map_err(|e| err(TOOLGATE_ERR_PANIC, e.to_string()))
    })
}

/// The unavailable list over the table's tools and then the given live
/// tools (a JSON array of live tools, each as `toolgate_decide_live` takes
/// it; one that breaks the naming rule fails the call). A refused remote
/// live tool whose name this user may not see is left out, as a table one is.
#[no_mangle]
pub unsafe extern "C" fn toolgate_unavailable_with_live_json(
    ctx: *const toolgate_context,
    live_json: *const c_char,
    live_json_len: usize,
    out: *mut toolgate_buf,
) -> i32 {
    with_buf(out, || {
        let c = unsafe { handle_ref(ctx, "context")? }.ctx.get();
        let live = unsafe { live_list_arg(live_json, live_json_len)? };
        json(&c.unavailable_with(&live))
    })
}

/// The unavailable list as a system-prompt section (empty when nothing is
/// unavailable).
#[no_mangle]
pub unsafe extern "C" fn toolgate_unavailable_prompt(
    ctx: *const toolgate_context,
    out: *mut toolgate_buf,
) -> i32 {
    with_buf(out, || {
        Ok(unsafe { handle_ref(ctx, "context")? }
            .ctx
            .get()
            .unavailable_prompt())
    })
}

/// The system-prompt section over the table's tools and then the given
/// live tools (as `toolgate_unavailable_with_live_json` lists them): the
/// section of a host that registers tools at run time. Names are escaped,
/// so no name can add a line to the prompt.
#[no_mangle]
pub unsafe extern "C" fn toolgate_unavailable_prompt_with_live(
    ctx: *const toolgate_context,
    live_json: *const c_char,
    live_json_len: usize,
    out: *mut toolgate_buf,
) -> i32 {
    with_buf(out, || {
        let c = unsafe { handle_ref(ctx, "context")? }.ctx.get();
        let live = unsafe { live_list_arg(live_json, live_json_len)? };
        Ok(c.unavailable_prompt_with(&live))
    })
}

/// The typed refusal of the decision for `name`, as JSON; `null` when the
/// tool is allowed. A remote tool whose name this user may not see is
/// refused word for word as an unregistered name.
#[no_mangle]
pub unsafe extern "C" fn toolgate_refusal_json(
    ctx: *const toolgate_context,
    name: *const c_char,
    name_len: usize,
    out: *mut toolgate_buf,
) -> i32 {
    with_buf(out, || {
        let c = unsafe { handle_ref(ctx, "context")? }.ctx.get();
        let name = unsafe { str_arg(name, name_len, "name")? };
        json(&c.refusal(&c.decide(name)))
    })
}

/// The typed refusal of a call of `name` as JSON (`null` when the call may
/// run): a refused tool's refusal, or `approvalRequired` for an offered
/// tool a person approves call by call (`needs-approval`). What a host's
/// check before a call raises.
#[no_mangle]
pub unsafe extern "C" fn toolgate_call_refusal_json(
    ctx: *const toolgate_context,
    name: *const c_char,
    name_len: usize,
    out: *mut toolgate_buf,
) -> i32 {
    with_buf(out, || {
        let c = unsafe { handle_ref(ctx, "context")? }.ctx.get();
        let name = unsafe { str_arg(name, name_len, "name")? };
        json(&c.call_refusal(&c.decide(name)))
    })
}

/// The typed refusal of the decision for a live tool (JSON as
/// `toolgate_decide_live` takes), as JSON; `null` when allowed. A hidden
/// remote live tool is refused as an unregistered name, as a table one is.
#[no_mangle]
pub unsafe extern "C" fn toolgate_refusal_live_json(
    ctx: *const toolgate_context,
    tool_json: *const c_char,
    tool_json_len: usize,
    out: *mut toolgate_buf,
) -> i32 {
    with_buf(out, || {
        let c = unsafe { handle_ref(ctx, "context")? }.ctx.get();
        let text = unsafe { bytes_arg(tool_json, tool_json_len, "tool_json")? };
        let tool = live_arg(text)?;
        json(&c.refusal(&c.decide_live(&tool)))
    })
}
