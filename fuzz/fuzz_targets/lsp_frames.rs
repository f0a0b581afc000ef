//! The language server's input: arbitrary bytes as the stream after a valid
//! `initialize`, framed by `toolgate_lsp::transport` and served by the real
//! loop. Nothing may panic, and no frame may be held past the cap.
#![no_main]
use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use toolgate_lsp::transport::{self, Frame, FrameReader, MAX_FRAME};

fn framed(body: &str) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

fuzz_target!(|data: &[u8]| {
    // The frames alone.
    let mut frames = FrameReader::new(data);
    for _ in 0..=data.len() {
        match frames.next_frame() {
            Ok(Frame::End) | Err(_) => break,
            Ok(Frame::Message(m)) => {
                let text = serde_json::to_string(&m).unwrap_or_default();
                assert!(text.len() <= 2 * MAX_FRAME + 64);
            }
            Ok(Frame::Bad { code, .. }) => assert!(code == -32700 || code == -32600),
        }
    }
    // The whole server over them.
    let mut input = framed(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{}}}"#);
    input.extend(framed(r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#));
    input.extend_from_slice(data);
    let (connection, io) = transport::connect(Cursor::new(input), std::io::sink(), std::io::sink());
    let _ = toolgate_lsp::serve(&connection);
    drop(connection);
    let _ = io.join();
});
