//! The classifier: any JSON classifies; success only for a result object without an error.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolgate_runtime::{classify, Answer, Classified};

fuzz_target!(|data: &[u8]| {
    let (status, rest) = match data.split_first() {
        Some((s, r)) => (Some(u16::from(*s) + 200), r),
        None => (None, data),
    };
    if let Ok(body) = serde_json::from_slice::<serde_json::Value>(rest) {
        let c = classify(&Answer { body: &body, http_status: status, origin: Some("mulesoft"), tool: Some("t") });
        if c == Classified::Success {
            assert!(body.get("result").is_some_and(|r| r.is_object()) && body.get("error").is_none_or(|e| e.is_null()));
        }
        let _ = serde_json::to_string(&c).unwrap();
    }
});
