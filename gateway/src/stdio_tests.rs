use tokio::io::AsyncReadExt;

use super::*;

/// A reader that hands its bytes on `k` at a time.
struct Chunked {
    data: Vec<u8>,
    at: usize,
    k: usize,
}

impl AsyncRead for Chunked {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let n = self.k.min(self.data.len() - self.at).min(buf.remaining());
        let at = self.at;
        buf.put_slice(&self.data[at..at + n]);
        self.at += n;
        Poll::Ready(Ok(()))
    }
}

/// What the SDK reads of `input` with lines bounded at `max`, for every
/// chunking: the same whatever the chunks.
fn through(input: &str, max: usize) -> String {
    let mut seen = None;
    for k in [1, 2, 3, 7, 64, 100_000] {
        let reader = Chunked {
            data: input.as_bytes().to_vec(),
            at: 0,
            k,
        };
        let mut lines = BoundedLines::new(reader, max, "over".into());
        let mut out = Vec::new();
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(lines.read_to_end(&mut out))
            .unwrap();
        let out = String::from_utf8(out).unwrap();
        match &seen {
            None => seen = Some(out),
            Some(s) => assert_eq!(s, &out, "chunks of {k}"),
        }
    }
    seen.unwrap()
}

#[test]
fn lines_within_the_bound_pass_unchanged() {
    let input = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n{\"a\":1}\n\nlast";
    assert_eq!(through(input, 40), input);
}

#[test]
fn a_line_over_the_bound_is_cut_and_answered_with_an_error_for_its_id() {
    let big = "x".repeat(500);
    let input = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":\"{big}\"}}\n{{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":1}}\n"
    );
    let out = through(&input, 64);
    let lines: Vec<&str> = out.split('\n').collect();
    assert_eq!(lines[0], &input[..64]);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(lines[1]).unwrap(),
        serde_json::json!({"jsonrpc": "2.0", "id": 7, "error": {"code": -32603, "message": "over"}})
    );
    assert_eq!(lines[2], r#"{"jsonrpc":"2.0","id":8,"result":1}"#);
    assert_eq!(lines.len(), 4, "{out}");
}

#[test]
fn the_id_is_found_at_the_end_when_the_result_comes_first() {
    // `"id"` inside the result is not the envelope's.
    let big = "y".repeat(1000);
    let input = format!(
        "{{\"result\":{{\"id\":99,\"text\":\"{big}\"}},\"jsonrpc\":\"2.0\",\"id\":\"abc\"}}\n"
    );
    let out = through(&input, 100);
    let lines: Vec<&str> = out.split('\n').collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(lines[1]).unwrap(),
        serde_json::json!({"jsonrpc": "2.0", "id": "abc", "error": {"code": -32603, "message": "over"}})
    );
}

#[test]
fn an_over_long_notification_is_dropped() {
    let big = "z".repeat(1000);
    let input = format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{{\"data\":\"{big}\"}}}}\nnext\n"
    );
    let out = through(&input, 100);
    assert_eq!(out, format!("{}\nnext\n", &input[..100]));
}

#[test]
fn ids_are_read_only_where_the_envelope_has_them() {
    assert_eq!(
        head_id(br#"{"jsonrpc":"2.0","id":12,"res"#),
        Some(12.into())
    );
    assert_eq!(
        head_id(br#"{"jsonrpc":"2.0", "id" : "q\"1","#),
        Some("q\"1".into())
    );
    assert_eq!(head_id(br#"{"result":{"id":3},"#), None);
    assert_eq!(head_id(br#"{"jsonrpc":"2.0","id":1"#), None);
    assert_eq!(tail_id(br#"xx"},"jsonrpc":"2.0","id":5}"#), Some(5.into()));
    assert_eq!(tail_id(br#"xx","id":5,"jsonrpc":"2.0"}"#), Some(5.into()));
    assert_eq!(tail_id(br#"text with "id":5 in it""#), None);
}
