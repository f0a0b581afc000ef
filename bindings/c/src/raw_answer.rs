//! The one place where this crate meets the runtime's classification entry
//! point. Hosts hand over the raw body bytes of a gateway answer; the
//! runtime parses them strictly (a key named twice, bytes that are not UTF-8
//! JSON: a `policy` refusal) and classifies. Everything that classifies (the
//! C ABI, the conformance corpus generator) goes through [`classify_raw`].

/// One gateway answer as a host has it: the body as received (bytes; not
/// necessarily JSON), the HTTP status and headers, the gateway and the tool,
/// when known.
pub use toolgate_runtime::classify::RawAnswer;
use toolgate_runtime::classify::{self, Classified};
use toolgate_runtime::Table;

/// Classify with `table`'s declared rules for the answer's origin (when a
/// table is given), then the built-in rule sets.
pub fn classify_raw(table: Option<&Table>, a: &RawAnswer<'_>) -> Classified {
    match table {
        Some(t) => t.classify_raw(a),
        None => classify::classify_raw(a),
    }
}
