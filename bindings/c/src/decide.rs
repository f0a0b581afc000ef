//! Decisions: one tool, many at once, by id, packed, as JSON, live.

use std::ffi::c_char;

use toolgate_runtime::host::codes::packed;
use toolgate_runtime::LiveTool;

use crate::boundary::{
    bytes_arg, err, guard, handle_ref, json, out_ref, slice_arg, slice_out, str_arg, toolgate_buf,
    with_buf, Error,
};
use crate::codes::{
    decision_of, toolgate_decision, REFUSED, TOOLGATE_ERR_ARGUMENT, TOOLGATE_ERR_UTF8, TOOLGATE_OK,
};
use crate::context::toolgate_context;
use crate::table::check_id;

/// A live tool from its JSON object, checked as a registry name is.
pub(crate) fn live_arg(text: &[u8]) -> Result<LiveTool, Error> {
    LiveTool::from_json(text).map_err(|e| err(TOOLGATE_ERR_ARGUMENT, e.message))
}

/// Decide for a tool by name (an unknown name is a `notRegistered` refusal).
#[no_mangle]
pub unsafe extern "C" fn toolgate_decide(
    ctx: *const toolgate_context,
    name: *const c_char,
    name_len: usize,
    out: *mut toolgate_decision,
) -> i32 {
    guard(|| {
        let c = unsafe { handle_ref(ctx, "context")? };
        let name = unsafe { str_arg(name, name_len, "name")? };
        let o = unsafe { out_ref(out, "out")? };
        *o = decision_of(&c.ctx.get().decide(name));
        Ok(())
    })
}

/// Decide for `count` tools by name at once (a gateway filtering an
/// upstream's `tools/list`, say): name `i` is `names[i]` of `name_lens[i]`
/// bytes, and `out[i]` gets exactly what `toolgate_decide` gives for it. The
/// name lookups of a batch overlap, so a long list costs less than `count`
/// calls. On an error (a NULL pointer, a name that is not UTF-8, a count
/// larger than any array) nothing is decided: every `out[i]` is written as
/// a refusal (`allowed` 0, reason `TOOLGATE_REASON_NONE`) when `out` can be
/// written, and the status says why.
#[no_mangle]
pub unsafe extern "C" fn toolgate_decide_many(
    ctx: *const toolgate_context,
    names: *const *const c_char,
    name_lens: *const usize,
    count: usize,
    out: *mut toolgate_decision,
) -> i32 {
    guard(|| {
        let out = unsafe { slice_out(out, count, "out")? };
        out.fill(REFUSED);
        let c = unsafe { handle_ref(ctx, "context")? };
        let ptrs = unsafe { slice_arg(names, count, "names")? };
        let lens = unsafe { slice_arg(name_lens, count, "name_lens")? };
        let asked = ptrs
            .iter()
            .zip(lens)
            .map(|(&p, &len)| unsafe { str_arg(p, len, "a name in names") })
            .collect::<Result<Vec<&str>, Error>>()?;
        for (o, d) in out.iter_mut().zip(c.ctx.get().decide_many(&asked)) {
            *o = decision_of(&d);
        }
        Ok(())
    })
}

/// The `count` names laid one after another in `text`, name `i` being
/// `lens[i]` bytes long; the lengths must add up to `text`'s length.
fn split_names<'a>(text: &'a [u8], lens: &[usize]) -> Result<Vec<&'a str>, Error> {
    let mut asked = Vec::with_capacity(lens.len());
    let mut at = 0usize;
    for (i, &len) in lens.iter().enumerate() {
        let name = at
            .checked_add(len)
            .and_then(|end| text.get(at..end))
            .ok_or_else(|| {
                err(
                    TOOLGATE_ERR_ARGUMENT,
                    format!(
                        "name_lens: name {i} ends past names_len ({} bytes)",
                        text.len()
                    ),
                )
            })?;
        asked.push(std::str::from_utf8(name).map_err(|e| {
            err(
                TOOLGATE_ERR_UTF8,
                format!("name {i} in names: not UTF-8: {e}"),
            )
        })?);
        at += len;
    }
    if at != text.len() {
        return Err(err(
            TOOLGATE_ERR_ARGUMENT,
            format!(
                "name_lens add up to {at} bytes, names_len is {}",
                text.len()
            ),
        ));
    }
    Ok(asked)
}

/// `toolgate_decide_many` for hosts that pass one string more cheaply than
/// an array of pointers (PHP's FFI): the `count` names one after another in
/// `names` (`names_len` bytes, no separators), name `i` being `name_lens[i]`
/// bytes long; the lengths must add up to `names_len`. `out[i]` gets name
/// `i`'s decision packed as `toolgate_decide_packed` returns it (see
/// `TOOLGATE_PACKED_*`). On an error (a NULL pointer, lengths that do not
/// add up, a name that is not UTF-8) nothing is decided and every `out[i]`
/// is 0: refused, no reason.
#[no_mangle]
pub unsafe extern "C" fn toolgate_decide_many_packed(
    ctx: *const toolgate_context,
    names: *const c_char,
    names_len: usize,
    name_lens: *const usize,
    count: usize,
    out: *mut u8,
) -> i32 {
    guard(|| {
        let out = unsafe { slice_out(out, count, "out")? };
        out.fill(0);
        let c = unsafe { handle_ref(ctx, "context")? };
        let text = unsafe { bytes_arg(names, names_len, "names")? };
        let lens = unsafe { slice_arg(name_lens, count, "name_lens")? };
        let asked = split_names(text, lens)?;
        for (o, d) in out.iter_mut().zip(c.ctx.get().decide_many(&asked)) {
            *o = packed::of(&d);
        }
        Ok(())
    })
}

/// Decide for tool `id` (registry order; no hashing).
#[no_mangle]
pub unsafe extern "C" fn toolgate_decide_id(
    ctx: *const toolgate_context,
    id: u32,
    out: *mut toolgate_decision,
) -> i32 {
    guard(|| {
        let c = unsafe { handle_ref(ctx, "context")? };
        check_id(c.ctx.table(), id)?;
        let o = unsafe { out_ref(out, "out")? };
        *o = decision_of(&c.ctx.get().decide_id(id));
        Ok(())
    })
}

/// The fast path for FFI hosts: the decision packed in the return value.
/// `>= 0`: the packed byte (`TOOLGATE_PACKED_*`: bit 0 allowed, bit 1
/// observed only, bits 2 to 4 the `TOOLGATE_REASON_*` code, bit 5 needs
/// approval); `< 0`: minus an error status (never an allow).
#[no_mangle]
pub unsafe extern "C" fn toolgate_decide_packed(
    ctx: *const toolgate_context,
    name: *const c_char,
    name_len: usize,
) -> i32 {
    let mut d = REFUSED;
    match unsafe { toolgate_decide(ctx, name, name_len, &mut d) } {
        TOOLGATE_OK => i32::from(
            packed::pack(d.allowed == 1, d.observed_only == 1, d.reason)
                | if d.needs_approval == 1 {
                    packed::NEEDS_APPROVAL
                } else {
                    0
                },
        ),
        status => -status,
    }
}

/// The decision as JSON, with the trust-zone facts when that gate was
/// reached: `{"tool","allowed","reason","observedOnly"[,"class","zone","ceiling"]}`.
#[no_mangle]
pub unsafe extern "C" fn toolgate_decide_json(
    ctx: *const toolgate_context,
    name: *const c_char,
    name_len: usize,
    out: *mut toolgate_buf,
) -> i32 {
    with_buf(out, || {
        let c = unsafe { handle_ref(ctx, "context")? };
        let name = unsafe { str_arg(name, name_len, "name")? };
        json(&c.ctx.get().decide(name))
    })
}

/// Decide for a tool with its live metadata (registered after compilation),
/// given as JSON `{"name","group","remote","enabled","adminOnly","class"}`
/// (`class` may be null; the others are required). The name must pass the
/// registry's naming rule (no control or format character; for a remote
/// tool `[a-zA-Z0-9_-]{1,64}`), else `TOOLGATE_ERR_ARGUMENT`. A name the
/// table knows gets the table's decision.
#[no_mangle]
pub unsafe extern "C" fn toolgate_decide_live(
    ctx: *const toolgate_context,
    tool_json: *const c_char,
    tool_json_len: usize,
    out: *mut toolgate_decision,
) -> i32 {
    guard(|| {
        let c = unsafe { handle_ref(ctx, "context")? };
        let text = unsafe { bytes_arg(tool_json, tool_json_len, "tool_json")? };
        let tool = live_arg(text)?;
        let o = unsafe { out_ref(out, "out")? };
        *o = decision_of(&c.ctx.get().decide_live(&tool));
        Ok(())
    })
}
