//! The one place where this crate adapts to the runtime's classification
//! API. Hosts hand over the raw body bytes of a gateway answer; the runtime
//! classifies them. Everything that classifies (the C ABI, the conformance
//! corpus generator) goes through [`classify_raw`], so a change of the
//! runtime's entry point changes one function.

use serde_json::Value;
use toolgate_runtime::classify::{self, Classified};
use toolgate_runtime::Table;

/// One gateway answer as a host has it: the body as received (bytes; not
/// necessarily JSON), the HTTP status, the gateway and the tool, when known.
#[derive(Debug, Clone, Copy)]
pub struct Answer<'a> {
    pub body: &'a [u8],
    pub http_status: Option<u16>,
    pub origin: Option<&'a str>,
    pub tool: Option<&'a str>,
}

/// Classify with `table`'s declared rules for the answer's origin (when a
/// table is given), then the built-in rule sets. A body that is not JSON is
/// classified as `null` (nothing recognises it: a generic policy refusal).
pub fn classify_raw(table: Option<&Table>, a: &Answer<'_>) -> Classified {
    let body: Value = serde_json::from_slice(a.body).unwrap_or(Value::Null);
    let answer = classify::Answer {
        body: &body,
        http_status: a.http_status,
        origin: a.origin,
        tool: a.tool,
    };
    match table {
        Some(t) => t.classify(&answer),
        None => classify::classify(&answer),
    }
}
