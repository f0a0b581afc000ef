//! A call checked with a grant (docs/approvals.md, "Grants"), as every host
//! hands it in: the call's arguments as JSON text, the time of the check.
//! Each host's `check_call` with a grant reads them here, then asks
//! `Context::check_call_granted`; no binding reads them its own way.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

/// Arguments a host cannot hand to a check: not one JSON object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentsError(pub String);

impl std::fmt::Display for ArgumentsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "arguments: {}", self.0)
    }
}

impl std::error::Error for ArgumentsError {}

/// The arguments of a call from their JSON text: one JSON object (what an
/// MCP `tools/call` carries), read strictly ([`crate::json::parse_strict`]:
/// a key given twice is an error, never its last value). Absent arguments
/// are the host's `None`, which a grant binds as `{}`.
pub fn call_arguments(text: &[u8]) -> Result<Value, ArgumentsError> {
    let v = crate::json::parse_strict(text).map_err(|e| ArgumentsError(e.to_string()))?;
    if !v.is_object() {
        return Err(ArgumentsError(format!(
            "expected a JSON object, got {}",
            match v {
                Value::Null => "null",
                Value::Bool(_) => "a boolean",
                Value::Number(_) => "a number",
                Value::String(_) => "a string",
                Value::Array(_) => "an array",
                Value::Object(_) => "an object",
            }
        )));
    }
    Ok(v)
}

/// The time a grant is checked at, in Unix seconds: `now`, or the system
/// clock when `now` is 0 (no grant is checked at the epoch: 0 is what a
/// host passes when it has no time of its own, and must not read as a
/// time before every expiry).
pub fn check_time(now: u64) -> u64 {
    if now != 0 {
        return now;
    }
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        // A clock before 1970 is broken: every grant reads as expired.
        .unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_one_object_read_strictly() {
        assert_eq!(
            call_arguments(br#"{"b": 1, "a": [true]}"#).unwrap(),
            serde_json::json!({"a": [true], "b": 1})
        );
        assert_eq!(
            call_arguments(b"[1]").unwrap_err().to_string(),
            "arguments: expected a JSON object, got an array"
        );
        assert_eq!(
            call_arguments(b"null").unwrap_err().to_string(),
            "arguments: expected a JSON object, got null"
        );
        assert!(call_arguments(br#"{"a": 1, "a": 2}"#)
            .unwrap_err()
            .to_string()
            .starts_with("arguments: "));
        assert!(call_arguments(b"{").is_err());
        assert!(call_arguments(b"{} {}").is_err());
    }

    #[test]
    fn zero_is_the_system_clock() {
        assert_eq!(check_time(1_800_000_000), 1_800_000_000);
        // 2020-01-01 or later.
        assert!(check_time(0) > 1_577_836_800);
    }
}
