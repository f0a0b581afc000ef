//! The classifier: any bytes classify; success only for an unambiguous
//! result (parsed strictly: a duplicate key anywhere is never success).
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolgate_runtime::{classify, classify_raw, Answer, Classified, Envelope};

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
    // Raw bytes through the one reader of answer files, as the CLI, policy
    // tests and the bindings classify them.
    let envelope = Envelope::read(rest);
    let c = classify_raw(&envelope.answer(status, Some("mulesoft"), Some("t")));
    if c == Classified::Success {
        let body = toolgate_runtime::json::parse_strict(&envelope.body)
            .expect("success only for a body that parses strictly");
        let members_ok = body
            .as_object()
            .is_some_and(|o| o.keys().all(|k| ["jsonrpc", "id", "result"].contains(&k.as_str())));
        assert!(members_ok && body["result"].is_object() && body["result"].get("error").is_none());
    }
});
