//! The one place where this crate meets the runtime's classification entry
//! point. Hosts hand over the raw body bytes of a gateway answer; the
//! runtime parses them strictly (a key named twice, bytes that are not UTF-8
//! JSON: a `policy` refusal) and classifies. Everything that classifies (the
//! C ABI, the conformance corpus generator) goes through [`classify_raw`].

use toolgate_runtime::classify::{self, Classified, RawAnswer};
use toolgate_runtime::Table;

/// One gateway answer as a host has it: the body as received (bytes; not
/// necessarily JSON), the HTTP status and headers, the gateway and the tool,
/// when known.
#[derive(Debug, Clone, Copy)]
pub struct Answer<'a> {
    pub body: &'a [u8],
    pub http_status: Option<u16>,
    pub headers: &'a [(String, String)],
    pub origin: Option<&'a str>,
    pub tool: Option<&'a str>,
}

/// Classify with `table`'s declared rules for the answer's origin (when a
/// table is given), then the built-in rule sets.
pub fn classify_raw(table: Option<&Table>, a: &Answer<'_>) -> Classified {
    let raw = RawAnswer {
        body: a.body,
        http_status: a.http_status,
        headers: a.headers,
        origin: a.origin,
        tool: a.tool,
    };
    match table {
        Some(t) => t.classify_raw(&raw),
        None => classify::classify_raw(&raw),
    }
}
