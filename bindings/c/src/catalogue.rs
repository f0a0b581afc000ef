//! The catalogue of the ABI's codes for hosts (`toolgate_codes_json`): the
//! numbers of `codes` as the runtime lists them, handed out through the
//! boundary's buffer. Apart from `codes` so that `codes` (the numbers)
//! depends on nothing of the crate and `boundary` may use its statuses.

use crate::boundary::{json, toolgate_buf, with_buf};

/// Every code of the library as JSON, for hosts that check their own
/// constants against the library they loaded: `{"gates": [{"code",
/// "number", "letter", "message"}], "refusalKinds": [{"code", "class",
/// "retryable", "action", "message"}], "roles": [{"name", "number"}],
/// "statuses": [{"name", "number"[, "code"]}], "packed": {"allowed",
/// "observedOnly", "reasonShift", "reasonBits"}, "maxFileBytes"}`. Gates in
/// gate order; a status `name` is its C name after `TOOLGATE_`.
#[no_mangle]
pub unsafe extern "C" fn toolgate_codes_json(out: *mut toolgate_buf) -> i32 {
    with_buf(out, || json(&toolgate_runtime::host::catalogue()))
}
