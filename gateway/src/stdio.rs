//! The stdio transport to a `command` upstream: the SDK's line transport
//! over the child's pipes, with `max-result-bytes` applied to every line as
//! it arrives ([`BoundedLines`]).
//!
//! The SDK's own line bound (16 MiB) drops an over-long line without a
//! word, so the call it answered would wait for the upstream timeout. Here
//! a line over the bound ends where the bound is reached (the SDK ignores
//! the cut line as unparsable), the rest of it is read and dropped, and the
//! SDK is handed a JSON-RPC error for the line's request id instead: the
//! call fails at once with an error naming the bound. The id is looked for
//! at the top level of the line's first [`EDGE`] bytes (SDKs that write
//! `{"jsonrpc":"2.0","id":...` first) or as the last `"id"` of its last
//! [`EDGE`] bytes (SDKs that write the result first); an over-long line
//! without one (a notification) is dropped.
//!
//! Memory: nothing of a line is kept but its two edges; the SDK's reader
//! holds at most one line of up to the bound.

use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

use rmcp::service::RoleClient;
use rmcp::transport::async_rw::AsyncRwTransport;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::process::{Child, ChildStdin, ChildStdout};

/// The bytes kept of each end of an over-long line, to find its id in.
pub const EDGE: usize = 256;

/// What one line may hold besides the answer itself: the JSON-RPC envelope
/// (`max-result-bytes` bounds the result; the check of the parsed result
/// applies the bound exactly).
const ENVELOPE: usize = 64 * 1024;

/// The transport to a started child: reads bounded by `max_result_bytes`.
pub type Stdio = AsyncRwTransport<RoleClient, BoundedLines<ChildStdout>, ChildStdin>;

/// Start the transport over `child`'s pipes (taken from it); the child is
/// killed when the transport is dropped (when it was spawned with
/// `kill_on_drop`).
pub fn transport(
    mut child: Child,
    server: &str,
    max_result_bytes: usize,
) -> std::io::Result<Stdio> {
    let missing = || std::io::Error::other("the child's standard input or output is not piped");
    let stdout = child.stdout.take().ok_or_else(missing)?;
    let stdin = child.stdin.take().ok_or_else(missing)?;
    let max_line = max_result_bytes.saturating_add(ENVELOPE);
    let lines = BoundedLines::new(
        stdout,
        max_line,
        over_bound_message(server, max_result_bytes),
    )
    .holding(child);
    Ok(AsyncRwTransport::new(lines, stdin).with_max_line_length(max_line.saturating_add(2)))
}

/// The message of an answer over the bound (the same as for a URL upstream).
pub fn over_bound_message(server: &str, max_result_bytes: usize) -> String {
    format!(
        "upstream `{server}` answered more than {max_result_bytes} bytes (max-result-bytes): the answer was not relayed"
    )
}

/// A reader of newline-ended lines that cuts every line at `max` bytes and
/// puts, after the cut, a JSON-RPC error answering the line's request id.
pub struct BoundedLines<R> {
    inner: R,
    /// Kept alive as long as its output is read.
    _child: Option<Child>,
    max: usize,
    message: String,
    /// Bytes of the current line so far (passed on, or dropped).
    line: usize,
    /// The first [`EDGE`] bytes of the current line.
    head: Vec<u8>,
    /// The last [`EDGE`] bytes of the current line, while it is dropped.
    tail: VecDeque<u8>,
    dropping: bool,
    /// Bytes to hand on before anything more is read.
    out: Vec<u8>,
    at: usize,
}

impl<R> BoundedLines<R> {
    pub fn new(inner: R, max: usize, message: String) -> BoundedLines<R> {
        BoundedLines {
            inner,
            _child: None,
            max,
            message,
            line: 0,
            head: Vec::with_capacity(EDGE),
            tail: VecDeque::with_capacity(EDGE),
            dropping: false,
            out: Vec::new(),
            at: 0,
        }
    }

    fn holding(mut self, child: Child) -> BoundedLines<R> {
        self._child = Some(child);
        self
    }

    /// Account for `bytes` just read (when `out` is empty). Returns how
    /// many of them, a prefix, are passed on as read; after a cut, what is
    /// passed on goes to `out` instead, after the cut's end and its error.
    fn take(&mut self, bytes: &[u8]) -> usize {
        let mut prefix = 0;
        let mut i = 0;
        while i < bytes.len() {
            let newline = bytes[i..].iter().position(|&b| b == b'\n');
            let end = newline.map_or(bytes.len(), |n| i + n);
            if self.dropping {
                self.keep_tail(&bytes[i..end]);
                if newline.is_some() {
                    self.end_dropped();
                    i = end + 1;
                } else {
                    i = end;
                }
                continue;
            }
            let room = self.max.saturating_sub(self.line);
            let over = end - i > room;
            let upto = if over { i + room } else { end };
            self.keep_head(&bytes[i..upto]);
            self.line += upto - i;
            let passed = if !over && newline.is_some() {
                upto + 1
            } else {
                upto
            };
            // Bytes passed as read are a prefix; once anything was dropped
            // or waits in `out` (a cut, an error), what follows goes behind it.
            if !self.out.is_empty() || prefix != i {
                self.out.extend_from_slice(&bytes[i..passed]);
            } else {
                prefix = passed;
            }
            if over {
                // The cut line ends here (the SDK ignores it as unparsable);
                // the rest of it is dropped, and its error follows.
                self.out.push(b'\n');
                self.dropping = true;
                self.tail.clear();
                i = upto;
            } else if newline.is_some() {
                self.line = 0;
                self.head.clear();
                i = upto + 1;
            } else {
                i = end;
            }
        }
        prefix
    }

    fn keep_head(&mut self, bytes: &[u8]) {
        let room = EDGE.saturating_sub(self.head.len());
        self.head.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    fn keep_tail(&mut self, bytes: &[u8]) {
        let from = bytes.len().saturating_sub(EDGE);
        self.tail.extend(&bytes[from..]);
        while self.tail.len() > EDGE {
            self.tail.pop_front();
        }
    }

    /// The dropped line ended: its error goes out, if it answered a request.
    fn end_dropped(&mut self) {
        let tail: Vec<u8> = self.tail.drain(..).collect();
        if let Some(id) = head_id(&self.head).or_else(|| tail_id(&tail)) {
            let error = serde_json::json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": {"code": -32603, "message": self.message},
            });
            self.out.extend_from_slice(error.to_string().as_bytes());
            self.out.push(b'\n');
        }
        self.dropping = false;
        self.line = 0;
        self.head.clear();
    }
}

/// The value of the top-level `"id"` member among the first bytes of a
/// JSON object, if it is there whole.
fn head_id(head: &[u8]) -> Option<serde_json::Value> {
    let mut depth = 0usize;
    let mut i = 0;
    while i < head.len() {
        match head[i] {
            b'"' => {
                let end = string_end(head, i)?;
                if depth == 1 && &head[i..end] == b"\"id\"" {
                    let rest = skip_blank(head, end);
                    if head.get(rest) == Some(&b':') {
                        return value_at(head, skip_blank(head, rest + 1));
                    }
                }
                i = end;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

/// The value of the last `"id"` member among the last bytes of a JSON
/// object, when only the object's end follows it.
fn tail_id(tail: &[u8]) -> Option<serde_json::Value> {
    let needle = b"\"id\"";
    let at = tail.windows(needle.len()).rposition(|w| w == needle)?;
    let colon = skip_blank(tail, at + needle.len());
    if tail.get(colon) != Some(&b':') {
        return None;
    }
    let start = skip_blank(tail, colon + 1);
    let v = value_at(tail, start)?;
    // Only `}` or another member of the envelope may follow it.
    let after = skip_blank(tail, start + v.to_string().len());
    match tail.get(after) {
        Some(b'}') | Some(b',') => Some(v),
        _ => None,
    }
}

fn skip_blank(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\r')) {
        i += 1;
    }
    i
}

/// The end (past the closing quote) of the string starting at `start`.
fn string_end(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while let Some(&c) = b.get(i) {
        match c {
            b'\\' => i += 2,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

/// A JSON-RPC id (a string or an integer) starting at `start`.
fn value_at(b: &[u8], start: usize) -> Option<serde_json::Value> {
    let end = match b.get(start)? {
        b'"' => string_end(b, start)?,
        b'-' | b'0'..=b'9' => {
            let mut e = start + 1;
            while matches!(b.get(e), Some(b'0'..=b'9')) {
                e += 1;
            }
            // A number at the edge may go on past it.
            if e == b.len() {
                return None;
            }
            e
        }
        _ => return None,
    };
    let v: serde_json::Value = serde_json::from_slice(b.get(start..end)?).ok()?;
    (v.is_string() || v.is_i64() || v.is_u64()).then_some(v)
}

impl<R: AsyncRead + Unpin> AsyncRead for BoundedLines<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        loop {
            if this.at < this.out.len() {
                let n = buf.remaining().min(this.out.len() - this.at);
                buf.put_slice(&this.out[this.at..this.at + n]);
                this.at += n;
                if this.at == this.out.len() {
                    this.out.clear();
                    this.at = 0;
                }
                return Poll::Ready(Ok(()));
            }
            let before = buf.filled().len();
            match Pin::new(&mut this.inner).poll_read(cx, buf) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                Poll::Ready(Ok(())) => {}
            }
            let after = buf.filled().len();
            if after == before {
                // The end of the child's output.
                return Poll::Ready(Ok(()));
            }
            let read = buf.filled()[before..after].to_vec();
            let passed = this.take(&read);
            buf.set_filled(before + passed);
            if passed > 0 {
                return Poll::Ready(Ok(()));
            }
            // Nothing of these bytes is passed on (all dropped, or all
            // waiting in `out`): hand on `out`, or read on.
        }
    }
}

#[cfg(test)]
#[path = "stdio_tests.rs"]
mod tests;
