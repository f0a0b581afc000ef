//! Every code a host exposes, as one JSON document: each host's tests
//! compare their constants with the library they loaded.

use serde::Serialize;
use serde_json::{json, Value};

use crate::context::Role;
use crate::host::codes::{packed, Status};
use crate::host::file::MAX_FILE_BYTES;
use crate::reason::GATE_ORDER;
use crate::refusal::{message as kind_message, RefusalKind};

/// One gate as hosts list it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GateInfo {
    pub code: &'static str,
    pub number: u8,
    pub letter: String,
    pub message: &'static str,
}

/// The gates in [`GATE_ORDER`], as every host exposes them.
pub fn gates() -> Vec<GateInfo> {
    GATE_ORDER
        .iter()
        .map(|r| GateInfo {
            code: r.code(),
            number: r.number(),
            letter: r.letter().to_string(),
            message: r.message(),
        })
        .collect()
}

/// Every code a host exposes, as JSON: `gates` (code, number, letter,
/// message), `refusalKinds` (code, class, retryable, action, message, and
/// `exception`: the class name every host raises it as),
/// `roles` (name, number), `statuses` (name = the C name after
/// `TOOLGATE_`, number, and `code` for load and file errors), `packed`
/// (the decision byte's layout) and `maxFileBytes`. The C ABI returns it
/// (`toolgate_codes_json`); each host's tests compare their constants with it.
pub fn catalogue() -> Value {
    let kinds: Vec<Value> = RefusalKind::all()
        .map(|k| {
            json!({
                "code": k.code(),
                "class": k.class(),
                "retryable": k.retryable(),
                "action": k.action(),
                "message": kind_message(k),
                "exception": k.exception_name(),
            })
        })
        .collect();
    let roles: Vec<Value> = [Role::None, Role::User, Role::Admin]
        .iter()
        .map(|r| json!({"name": r.as_str(), "number": r.number()}))
        .collect();
    let statuses: Vec<Value> = Status::ALL
        .iter()
        .map(|s| {
            let mut v = json!({"name": s.c_name(), "number": s.number()});
            if let Some(code) = s.load_code() {
                v["code"] = json!(code);
            }
            v
        })
        .collect();
    json!({
        "gates": gates(),
        "refusalKinds": kinds,
        "roles": roles,
        "statuses": statuses,
        "packed": {
            "allowed": packed::ALLOWED,
            "observedOnly": packed::OBSERVED_ONLY,
            "reasonShift": packed::REASON_SHIFT,
            "reasonBits": packed::REASON_BITS,
            "needsApproval": packed::NEEDS_APPROVAL,
        },
        "maxFileBytes": MAX_FILE_BYTES,
    })
}
