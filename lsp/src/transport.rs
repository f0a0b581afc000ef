//! The base protocol on a byte stream: `Content-Length` frames read under a
//! cap, and a connection for the server loop fed by them.
//!
//! lsp-server's own stdio reader (`Message::read`) sizes its buffer to the
//! `Content-Length` a client declares before reading a byte of the body, so
//! `1000000000` costs a gigabyte and `4611686018427387904` aborts the
//! process; and any frame it cannot read is an error that ends the reader,
//! with no way to find the next frame. So this module reads frames itself
//! and hands the server loop `lsp_server::Message`s over the channels of
//! `Connection::memory()`. What is trusted, and how far:
//!
//! - a frame's body is at most [`MAX_FRAME`] bytes; a longer one is
//!   answered with a parse error at once and then skipped without being
//!   kept (the stream is read up to its declared end, where the next frame
//!   starts);
//! - the body is read as it arrives, never allocated ahead of the bytes;
//! - a header block is at most [`MAX_HEADER`] bytes; a header line may end
//!   in LF alone (read as CRLF);
//! - a frame whose body is not UTF-8 or not JSON is answered with JSON-RPC
//!   `-32700` (id null), one that is JSON but not a message with `-32600`,
//!   and the server goes on with the next frame;
//! - a header that cannot be parsed (no `:`, a length that is not a
//!   number, no `Content-Length`, over [`MAX_HEADER`]) leaves the frame's end
//!   unknown: it is answered with `-32700`, logged on standard error, and
//!   the stream is skipped to the next `Content-Length:`, where reading
//!   resumes; when the stream ends before one, that answer is the last and
//!   the reader ends (so every read consumes input or ends: a stream of n
//!   bytes gives at most n + 1 frames, and its end always ends the server's
//!   input).

use std::io::{self, BufRead, Read, Write};
use std::sync::{Arc, Mutex};

use lsp_server::{Connection, Message};
use serde_json::{json, Value};

/// The largest frame body read: 64 MiB.
pub const MAX_FRAME: usize = 64 * 1024 * 1024;
/// The largest header block read: 8 KiB.
pub const MAX_HEADER: usize = 8 * 1024;

const PARSE_ERROR: i32 = -32700;
const INVALID_REQUEST: i32 = -32600;
const LENGTH: &[u8] = b"content-length:";

/// What one read from the stream gives.
#[derive(Debug)]
pub enum Frame {
    /// A message for the server loop.
    Message(Message),
    /// A frame that is no message: answer the client with this error (id
    /// `id`, or null) and read on.
    Bad {
        code: i32,
        message: String,
        id: Option<Value>,
    },
    /// The stream ended.
    End,
}

/// Reads frames from a byte stream under the caps.
pub struct FrameReader<R> {
    input: R,
    /// The previous read skipped to a `Content-Length:` and consumed it: the
    /// next header line is its value.
    resumed: bool,
    /// Bytes of an over-long body still to skip.
    skip: u64,
    /// The stream ended while a bad header was skipped: the frame was
    /// answered, and every later read is [`Frame::End`].
    ended: bool,
}

/// A header that cannot be parsed: why, in words for the client and the log.
struct BadHeader(String);

impl<R: BufRead> FrameReader<R> {
    pub fn new(input: R) -> FrameReader<R> {
        FrameReader {
            input,
            resumed: false,
            skip: 0,
            ended: false,
        }
    }

    /// The next frame. I/O errors of the stream itself are `Err`.
    ///
    /// Every read either consumes at least one byte of the stream or ends
    /// it: a bad header is skipped up to the next `Content-Length:`, and
    /// when the stream ends first, that bad frame is the last one answered.
    pub fn next_frame(&mut self) -> io::Result<Frame> {
        if self.ended {
            return Ok(Frame::End);
        }
        let skip = std::mem::take(&mut self.skip);
        if skip > 0 {
            io::copy(&mut (&mut self.input).take(skip), &mut io::sink())?;
        }
        let length = match self.header()? {
            Ok(Some(n)) => n,
            Ok(None) => return Ok(Frame::End),
            Err(BadHeader(why)) => {
                let found = self.resync()?;
                self.ended = !found;
                let then = if found {
                    "skipped to the next `Content-Length` header"
                } else {
                    "no `Content-Length` header follows"
                };
                return Ok(Frame::Bad {
                    code: PARSE_ERROR,
                    message: format!("malformed frame header: {why}; {then}"),
                    id: None,
                });
            }
        };
        if length > MAX_FRAME as u64 {
            // Answered now, skipped on the next read: the client learns at
            // once, even when the body never comes.
            self.skip = length;
            return Ok(Frame::Bad {
                code: PARSE_ERROR,
                message: format!(
                    "a frame of {length} bytes is over the {} MiB limit; its body is skipped",
                    MAX_FRAME >> 20
                ),
                id: None,
            });
        }
        let mut body = Vec::new();
        (&mut self.input).take(length).read_to_end(&mut body)?;
        if (body.len() as u64) < length {
            return Ok(Frame::End);
        }
        Ok(decode(&body))
    }

    /// One header line, at most `left` bytes: its text without the line
    /// end, `None` at the end of the stream before any byte.
    fn line(&mut self, left: &mut usize) -> io::Result<Result<Option<String>, BadHeader>> {
        let mut raw = Vec::new();
        let limit = (*left as u64) + 1;
        (&mut self.input).take(limit).read_until(b'\n', &mut raw)?;
        if raw.is_empty() {
            return Ok(Ok(None));
        }
        if raw.len() > *left {
            return Ok(Err(BadHeader(format!(
                "the header is over {MAX_HEADER} bytes"
            ))));
        }
        *left -= raw.len();
        if raw.last() != Some(&b'\n') {
            return Ok(Err(BadHeader("the stream ended inside a header".into())));
        }
        raw.pop();
        if raw.last() == Some(&b'\r') {
            raw.pop();
        }
        match String::from_utf8(raw) {
            Ok(s) => Ok(Ok(Some(s))),
            Err(_) => Ok(Err(BadHeader("a header line is not UTF-8".into()))),
        }
    }

    /// The header block: the body's length, `None` at the end of the stream.
    fn header(&mut self) -> io::Result<Result<Option<u64>, BadHeader>> {
        let mut left = MAX_HEADER;
        let mut length = None;
        let mut first = true;
        loop {
            let line = match self.line(&mut left)? {
                Ok(Some(l)) => l,
                Ok(None) if first && !self.resumed => return Ok(Ok(None)),
                Ok(None) => {
                    // A resumed header whose value never came: the
                    // `Content-Length:` found by the resync is spent.
                    self.resumed = false;
                    return Ok(Err(BadHeader("the stream ended inside a header".into())));
                }
                Err(e) => {
                    self.resumed = false;
                    return Ok(Err(e));
                }
            };
            let (name, value) = if std::mem::take(&mut self.resumed) {
                ("Content-Length", line.as_str())
            } else if line.is_empty() {
                if first {
                    // Blank lines between frames are tolerated.
                    continue;
                }
                return Ok(match length {
                    Some(n) => Ok(Some(n)),
                    None => Err(BadHeader("no `Content-Length` header".into())),
                });
            } else {
                match line.split_once(':') {
                    Some(nv) => nv,
                    None => {
                        return Ok(Err(BadHeader(format!(
                            "{:?} is not `Name: value`",
                            cut(&line)
                        ))))
                    }
                }
            };
            first = false;
            if name.trim().eq_ignore_ascii_case("Content-Length") {
                match value.trim().parse::<u64>() {
                    Ok(n) => length = Some(n),
                    Err(_) => {
                        return Ok(Err(BadHeader(format!(
                            "`Content-Length: {}` is not a number of bytes",
                            cut(value.trim())
                        ))))
                    }
                }
            }
        }
    }

    /// Skip to just past the next `Content-Length:` (any case), keeping
    /// nothing; whether one was found before the stream ended.
    fn resync(&mut self) -> io::Result<bool> {
        let mut matched = 0;
        loop {
            let buf = match self.input.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                return Ok(false);
            }
            let mut used = 0;
            let mut found = false;
            for &b in buf {
                used += 1;
                if b.to_ascii_lowercase() == LENGTH[matched] {
                    matched += 1;
                    if matched == LENGTH.len() {
                        found = true;
                        break;
                    }
                } else {
                    matched = usize::from(b.to_ascii_lowercase() == LENGTH[0]);
                }
            }
            self.input.consume(used);
            if found {
                self.resumed = true;
                return Ok(true);
            }
        }
    }
}

/// A token of a bad header for a message, cut to 40 characters.
fn cut(s: &str) -> String {
    match s.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// A whole body: a message, or the error to answer.
fn decode(body: &[u8]) -> Frame {
    let Ok(text) = std::str::from_utf8(body) else {
        return Frame::Bad {
            code: PARSE_ERROR,
            message: "the frame's body is not UTF-8".into(),
            id: None,
        };
    };
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            return Frame::Bad {
                code: PARSE_ERROR,
                message: format!("the frame's body is not JSON: {e}"),
                id: None,
            }
        }
    };
    // The id of a request that is otherwise malformed, when it is one.
    let id = value
        .get("id")
        .filter(|id| id.is_number() || id.is_string())
        .cloned();
    let has_id = value.get("id").is_some_and(|id| !id.is_null());
    match serde_json::from_value::<Message>(value) {
        // lsp-server's ids are strings or 32-bit integers; a request with
        // any other id would be taken for a notification and never answered.
        Ok(Message::Notification(_)) if has_id => Frame::Bad {
            code: INVALID_REQUEST,
            message: format!(
                "request id {} is out of range: ids are strings or 32-bit integers",
                id.as_ref()
                    .map(Value::to_string)
                    .unwrap_or_else(|| "of this type".into())
            ),
            id,
        },
        Ok(m) => Frame::Message(m),
        Err(e) => Frame::Bad {
            code: INVALID_REQUEST,
            message: format!("not a JSON-RPC request, response or notification: {e}"),
            id,
        },
    }
}

/// The JSON-RPC error answer to a frame that is no message.
pub fn error_frame(code: i32, message: &str, id: Option<Value>) -> Vec<u8> {
    let body = json!({
        "jsonrpc": "2.0",
        "id": id.unwrap_or(Value::Null),
        "error": {"code": code, "message": message},
    })
    .to_string();
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

/// Threads that move frames between the streams and the server loop.
pub struct Io {
    writer: std::thread::JoinHandle<io::Result<()>>,
}

impl Io {
    /// Wait until everything the server sent is written. The reader is not
    /// waited for: it may be blocked on input that never comes.
    pub fn join(self) -> io::Result<()> {
        self.writer
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the writer thread panicked")))
    }
}

/// A connection whose messages come from `input` and go to `output`, each
/// moved by a thread of its own. Frames that are no message are answered on
/// `output` by the reader and logged on `log`.
pub fn connect<R, W, L>(input: R, output: W, log: L) -> (Connection, Io)
where
    R: BufRead + Send + 'static,
    W: Write + Send + 'static,
    L: Write + Send + 'static,
{
    let (server, client) = Connection::memory();
    let output = Arc::new(Mutex::new(output));
    let out = Arc::clone(&output);
    let from_server = client.receiver;
    let writer = std::thread::spawn(move || -> io::Result<()> {
        for msg in from_server {
            let mut w = out.lock().map_err(|_| io::Error::other("output lock"))?;
            msg.write(&mut *w)?;
        }
        Ok(())
    });
    let to_server = client.sender;
    std::thread::spawn(move || {
        let mut log = log;
        let mut frames = FrameReader::new(input);
        loop {
            match frames.next_frame() {
                Ok(Frame::Message(m)) => {
                    let exit = matches!(&m, Message::Notification(n) if n.method == "exit");
                    if to_server.send(m).is_err() || exit {
                        return;
                    }
                }
                Ok(Frame::Bad { code, message, id }) => {
                    let _ = writeln!(log, "toolgate lsp: {message}");
                    let frame = error_frame(code, &message, id);
                    let Ok(mut w) = output.lock() else { return };
                    if w.write_all(&frame).and_then(|()| w.flush()).is_err() {
                        return;
                    }
                }
                Ok(Frame::End) => return,
                Err(e) => {
                    let _ = writeln!(log, "toolgate lsp: reading the input failed: {e}");
                    return;
                }
            }
        }
    });
    (server, Io { writer })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(input: &[u8]) -> Vec<String> {
        let mut r = FrameReader::new(input);
        let mut out = Vec::new();
        loop {
            match r.next_frame().expect("read") {
                Frame::End => return out,
                Frame::Message(m) => out.push(format!(
                    "message {}",
                    serde_json::to_string(&m).unwrap_or_default()
                )),
                Frame::Bad { code, message, id } => out.push(format!("{code} {id:?} {message}")),
            }
        }
    }

    const PING: &str = r#"{"jsonrpc":"2.0","method":"ping"}"#;

    fn frame(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    #[test]
    fn bad_frames_are_answered_and_reading_goes_on() {
        let mut input = Vec::new();
        input.extend(frame("nojs").bytes());
        input.extend(b"Content-Length: 2\r\n\r\n\xff\xfe");
        // An id lsp-server cannot hold (over i32): answered with that id.
        input.extend(frame(r#"{"id":4294967296,"method":"x"}"#).bytes());
        input.extend(frame(r#"{"method":5}"#).bytes());
        input.extend(format!("Content-Length: {}\n\n{PING}", PING.len()).bytes());
        input.extend(b"Content-Length: abc\r\n\r\n{}");
        input.extend(frame(PING).bytes());
        input.extend(b"Content-Length: 67108865\r\n\r\n");
        input.extend(std::iter::repeat_n(b'x', MAX_FRAME + 1));
        input.extend(frame(PING).bytes());
        let got = frames(&input);
        let ping = r#"message {"method":"ping"}"#;
        assert_eq!(
            got,
            [
                "-32700 None the frame's body is not JSON: expected ident at line 1 column 2",
                "-32700 None the frame's body is not UTF-8",
                "-32600 Some(Number(4294967296)) request id 4294967296 is out of range: ids are strings or 32-bit integers",
                "-32600 None not a JSON-RPC request, response or notification: data did not match any variant of untagged enum Message",
                ping,
                "-32700 None malformed frame header: `Content-Length: abc` is not a number of bytes; skipped to the next `Content-Length` header",
                ping,
                "-32700 None a frame of 67108865 bytes is over the 64 MiB limit; its body is skipped",
                ping,
            ]
        );
    }

    #[test]
    fn a_length_past_the_stream_is_skipped_without_being_kept() {
        assert_eq!(
            frames(b"Content-Length: 4611686018427387904\r\n\r\n{"),
            ["-32700 None a frame of 4611686018427387904 bytes is over the 64 MiB limit; its body is skipped"]
        );
        assert_eq!(
            frames(b"Content-Length: 99999999999999999999999\r\n\r\n{"),
            ["-32700 None malformed frame header: `Content-Length: 99999999999999999999999` is not a number of bytes; no `Content-Length` header follows"]
        );
        let long = format!("X-Long: {}\r\n", "y".repeat(MAX_HEADER));
        assert_eq!(
            frames(format!("{long}{}", frame(PING)).as_bytes()),
            [
                "-32700 None malformed frame header: the header is over 8192 bytes; skipped to the next `Content-Length` header".to_string(),
                r#"message {"method":"ping"}"#.to_string(),
            ]
        );
        assert_eq!(frames(b"garbage\r\n\r\n"), ["-32700 None malformed frame header: \"garbage\" is not `Name: value`; no `Content-Length` header follows"]);
        assert_eq!(frames(b""), Vec::<String>::new());
    }

    /// Reads at most `cap` frames: how many came before the end, or `None`
    /// when the reader never ended.
    fn frames_until_end(input: &[u8], cap: usize) -> Option<usize> {
        let mut r = FrameReader::new(input);
        for n in 0..cap {
            match r.next_frame() {
                Ok(Frame::End) | Err(_) => return Some(n),
                Ok(_) => {}
            }
        }
        None
    }

    #[test]
    fn the_stream_ending_after_a_resync_ends_the_reader() {
        // Issue 45's fuzz input (fuzz/seeds/lsp_frames/issue45_eof_after_resync.bin).
        let seed = include_bytes!("../../fuzz/seeds/lsp_frames/issue45_eof_after_resync.bin");
        assert!(
            frames_until_end(seed, 64).is_some(),
            "the reader never ends"
        );
        // The smallest form: a `Content-Length:` found by a resync, then the end.
        assert_eq!(
            frames(b"garbage\r\nContent-Length:"),
            [
                "-32700 None malformed frame header: \"garbage\" is not `Name: value`; skipped to the next `Content-Length` header",
                "-32700 None malformed frame header: the stream ended inside a header; no `Content-Length` header follows",
            ]
        );
        assert_eq!(
            frames(b"x\nContent-Length: 3"),
            [
                "-32700 None malformed frame header: \"x\" is not `Name: value`; skipped to the next `Content-Length` header",
                "-32700 None malformed frame header: the stream ended inside a header; no `Content-Length` header follows",
            ]
        );
    }

    #[test]
    fn every_read_consumes_input_or_ends() {
        // Any prefix of these inputs: each read either ends the stream or
        // takes at least one byte, so a stream of n bytes gives at most
        // n + 1 frames.
        let seed = include_bytes!("../../fuzz/seeds/lsp_frames/issue45_eof_after_resync.bin");
        let mut inputs: Vec<Vec<u8>> = vec![seed.to_vec()];
        inputs.push(format!("junk\r\n{}Content-Length: 9\r\n\r\n{{", frame(PING)).into_bytes());
        inputs.push(b"Content-Length: 1\r\nContent-Length: x\r\n\r\ncontent-length:\n".to_vec());
        for input in &inputs {
            for end in 0..=input.len() {
                let part = &input[..end];
                assert!(
                    frames_until_end(part, part.len() + 2).is_some(),
                    "no end after {end} bytes of {:?}",
                    String::from_utf8_lossy(input)
                );
            }
        }
    }
}
