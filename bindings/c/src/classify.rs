//! Classification of gateway answers (success, tool failure, or a typed
//! refusal) by the runtime's rules and a table's declared ones.

use std::ffi::c_char;

use crate::boundary::json;
use crate::boundary::{bytes_arg, err, opt_str_arg, toolgate_buf, with_buf};
use crate::codes::TOOLGATE_ERR_ARGUMENT;
use crate::raw_answer;
use crate::table::toolgate_table;

/// Classify a gateway answer: the body bytes as received, the HTTP status
/// (-1 when unknown), the gateway (NULL when unknown), the tool (NULL when
/// unknown), with `table`'s declared rules for that gateway first (NULL
/// table: the built-in rules only). JSON: `{"outcome":"success"}`,
/// `{"outcome":"toolFailure","text":...}` or
/// `{"outcome":"refusal","refusal":{...}}`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn toolgate_classify_json(
    table: *const toolgate_table,
    body: *const c_char,
    body_len: usize,
    http_status: i32,
    origin: *const c_char,
    origin_len: usize,
    tool: *const c_char,
    tool_len: usize,
    out: *mut toolgate_buf,
) -> i32 {
    with_buf(out, || {
        // SAFETY: NULL or a live table handle.
        let t = unsafe { table.as_ref() }.map(|t| &*t.table);
        let body = unsafe { bytes_arg(body, body_len, "body")? };
        let http_status = match http_status {
            -1 => None,
            s => Some(u16::try_from(s).map_err(|_| {
                err(
                    TOOLGATE_ERR_ARGUMENT,
                    format!("http_status {s} is not -1 or 0 to 65535"),
                )
            })?),
        };
        let origin = unsafe { opt_str_arg(origin, origin_len, "origin")? };
        let tool = unsafe { opt_str_arg(tool, tool_len, "tool")? };
        let answer = raw_answer::RawAnswer {
            body,
            http_status,
            headers: &[],
            origin,
            tool,
        };
        json(&raw_answer::classify_raw(t, &answer))
    })
}

/// Classify a gateway answer given as an answer file's bytes, as `toolgate
/// classify` reads it: an envelope `{"httpStatus", "origin", "headers",
/// "body" | "bodyText"}` (headers and a body that is not JSON, such as plain
/// text, HTML or nothing, reach the rules' `header` and `body` matchers), or
/// a bare body. The tool NULL when unknown; `table` as in
/// [`toolgate_classify_json`]. Same JSON answer.
#[no_mangle]
pub unsafe extern "C" fn toolgate_classify_envelope(
    table: *const toolgate_table,
    data: *const c_char,
    data_len: usize,
    tool: *const c_char,
    tool_len: usize,
    out: *mut toolgate_buf,
) -> i32 {
    with_buf(out, || {
        // SAFETY: NULL or a live table handle.
        let t = unsafe { table.as_ref() }.map(|t| &*t.table);
        let data = unsafe { bytes_arg(data, data_len, "data")? };
        let tool = unsafe { opt_str_arg(tool, tool_len, "tool")? };
        let envelope = toolgate_runtime::Envelope::read(data);
        json(&raw_answer::classify_raw(
            t,
            &envelope.answer(None, None, tool),
        ))
    })
}
