//! The decision log sink: records go through a bounded queue to one writer
//! thread that writes JSON lines ([`toolgate_runtime::log::ServiceRecord`])
//! to a file or standard output. A decision never waits for the log: when
//! the queue is full the record is dropped and counted
//! (`toolgate_decision_log_dropped_total`).
//!
//! Bounded in bytes, not only in records: a record is encoded on the
//! request's thread under [`MAX_RECORD_BYTES`] (a stored run or a request id
//! that would pass it is cut, with a marker that says so), and the queue
//! holds at most [`MAX_QUEUED_BYTES`] of encoded records, so a blocked
//! reader of the log cannot make the service's memory grow. The file is
//! created readable by its owner only (0600). A batch's shared stored run
//! (and live-tool metadata) is written whole once per request and referred
//! to by the request's other records ([`same_as`]).

use std::fs::OpenOptions;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::Mutex;
use std::thread::JoinHandle;
use std::time::Duration;

use prometheus_client::metrics::counter::Counter;
use toolgate_runtime::log::ServiceRecord;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogTarget {
    Stdout,
    /// Appended to.
    File(PathBuf),
}

/// The largest record written: 16 KiB.
pub const MAX_RECORD_BYTES: usize = 16 << 10;
/// The most bytes of records queued for the writer: 64 MiB.
pub const MAX_QUEUED_BYTES: usize = 64 << 20;
/// The longest request id kept whole in a record.
const MAX_ID_BYTES: usize = 256;

enum Msg {
    Record(Vec<u8>),
    /// Write what is queued, flush, and stop.
    Stop,
}

pub struct DecisionLogSink {
    tx: SyncSender<Msg>,
    /// Bytes of records queued and not yet written.
    queued: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    writer: Mutex<Option<JoinHandle<()>>>,
    dropped: Counter,
}

/// How long the writer waits for more records before it flushes.
const FLUSH_AFTER: Duration = Duration::from_millis(100);

impl DecisionLogSink {
    pub fn open(
        target: &LogTarget,
        capacity: usize,
        written: Counter,
        dropped: Counter,
    ) -> Result<DecisionLogSink, crate::Error> {
        DecisionLogSink::open_text(target, capacity, written, dropped).map_err(crate::Error::Log)
    }

    fn open_text(
        target: &LogTarget,
        capacity: usize,
        written: Counter,
        dropped: Counter,
    ) -> Result<DecisionLogSink, String> {
        let out: Box<dyn Write + Send> = match target {
            LogTarget::Stdout => Box::new(std::io::stdout()),
            LogTarget::File(path) => {
                let mut options = OpenOptions::new();
                options.create(true).append(true);
                #[cfg(unix)]
                {
                    use std::os::unix::fs::OpenOptionsExt;
                    // Decisions name users and consumers: the owner's only.
                    options.mode(0o600);
                }
                Box::new(
                    options
                        .open(path)
                        .map_err(|e| format!("{}: {e}", path.display()))?,
                )
            }
        };
        let (tx, rx) = sync_channel(capacity.max(1));
        let queued = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let in_writer = queued.clone();
        let writer = std::thread::Builder::new()
            .name("toolgate-decision-log".into())
            .spawn(move || {
                write_loop(
                    rx,
                    BufWriter::with_capacity(1 << 16, out),
                    written,
                    &in_writer,
                )
            })
            .map_err(|e| e.to_string())?;
        Ok(DecisionLogSink {
            tx,
            queued,
            writer: Mutex::new(Some(writer)),
            dropped,
        })
    }

    /// Queue a record; never blocks. Dropped and counted when the queue is
    /// full (in records or in bytes). Returns whether it was queued (a
    /// later record of the same request may then refer to it: [`same_as`]).
    pub fn record(&self, rec: ServiceRecord) -> bool {
        // No request budget: only the queue's own bounds.
        let mut unbounded = usize::MAX;
        self.record_within(rec, &mut unbounded)
    }

    /// [`DecisionLogSink::record`] within a request's log budget: a record
    /// larger than what is `left` of it is dropped and counted, and the
    /// budget shrinks by what was queued.
    pub fn record_within(&self, rec: ServiceRecord, left: &mut usize) -> bool {
        use std::sync::atomic::Ordering;
        let Some(line) = encode(rec) else {
            self.dropped.inc();
            return false;
        };
        let n = line.len();
        if n > *left {
            self.dropped.inc();
            return false;
        }
        if self.queued.fetch_add(n, Ordering::AcqRel) + n > MAX_QUEUED_BYTES {
            self.queued.fetch_sub(n, Ordering::AcqRel);
            self.dropped.inc();
            return false;
        }
        match self.tx.try_send(Msg::Record(line)) {
            Ok(()) => {
                *left -= n;
                true
            }
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                self.queued.fetch_sub(n, Ordering::AcqRel);
                self.dropped.inc();
                false
            }
        }
    }

    /// Write everything queued so far and stop the writer (at shutdown).
    /// Records sent afterwards are dropped and counted.
    pub fn close(&self) {
        let handle = match self.writer.lock() {
            Ok(mut w) => w.take(),
            Err(_) => None,
        };
        if let Some(h) = handle {
            let _ = self.tx.send(Msg::Stop);
            let _ = h.join();
        }
    }
}

/// What a record of a batch writes in place of a part it shares with an
/// earlier record of the same request (the stored run, or the live-tool
/// The log bytes one request may write: [`LOG_BYTES_PER_REQUEST_BYTE`] for
/// each byte it sent, at least [`MIN_LOG_BYTES_PER_REQUEST`]. Records past
/// it are dropped and counted (`toolgate_decision_log_dropped_total`), so
/// no request makes the service write more than this multiple of itself.
pub fn request_budget(request_bytes: usize) -> usize {
    request_bytes
        .saturating_mul(LOG_BYTES_PER_REQUEST_BYTE)
        .max(MIN_LOG_BYTES_PER_REQUEST)
}

/// See [`request_budget`].
pub const LOG_BYTES_PER_REQUEST_BYTE: usize = 64;
/// See [`request_budget`]: one decision with its longest names fits.
pub const MIN_LOG_BYTES_PER_REQUEST: usize = 64 << 10;

/// metadata, of the batch's defaults): `"[as in decision ID]"`, naming the
/// record that carries it whole. A batch's shared context is so written
/// once, not once per item: the log of a request grows with what the
/// request sent, not with its items times its defaults (docs/decision-log.md,
/// "Bounds").
pub fn same_as(decision_id: &str) -> serde_json::Value {
    serde_json::Value::String(format!("[as in decision {decision_id}]"))
}

/// `text` cut to `max` bytes (at a character boundary) with a marker that
/// says how long it was.
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}[cut: {} bytes]", &text[..end], text.len())
}

/// A record as one JSON line under [`MAX_RECORD_BYTES`]: a request id past
/// [`MAX_ID_BYTES`] is cut, and a stored run or live-tool metadata that
/// would pass the cap is replaced by a marker naming its size. `None` when
/// even that does not fit (the names of a request are capped far below).
pub fn encode(mut rec: ServiceRecord) -> Option<Vec<u8>> {
    if let Some(id) = &rec.request_id {
        rec.request_id = Some(cut(id, MAX_ID_BYTES));
    }
    let mut line = serde_json::to_vec(&rec).ok()?;
    if line.len() > MAX_RECORD_BYTES {
        let marker = |v: &serde_json::Value| {
            serde_json::Value::String(format!(
                "[cut: {} bytes, over the record cap of {MAX_RECORD_BYTES}]",
                v.to_string().len()
            ))
        };
        if let Some(run) = &rec.input.context.run {
            rec.input.context.run = Some(marker(run));
        }
        if let Some(p) = &rec.input.resource.properties {
            rec.input.resource.properties = Some(marker(p));
        }
        line = serde_json::to_vec(&rec).ok()?;
    }
    if line.len() > MAX_RECORD_BYTES {
        return None;
    }
    line.push(b'\n');
    Some(line)
}

fn write_loop(
    rx: Receiver<Msg>,
    mut out: BufWriter<Box<dyn Write + Send>>,
    written: Counter,
    queued: &std::sync::atomic::AtomicUsize,
) {
    let mut dirty = false;
    loop {
        let msg = if dirty {
            match rx.recv_timeout(FLUSH_AFTER) {
                Ok(m) => m,
                Err(RecvTimeoutError::Timeout) => {
                    let _ = out.flush();
                    dirty = false;
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => break,
            }
        } else {
            match rx.recv() {
                Ok(m) => m,
                Err(_) => break,
            }
        };
        match msg {
            Msg::Record(line) => {
                if out.write_all(&line).is_ok() {
                    written.inc();
                }
                queued.fetch_sub(line.len(), std::sync::atomic::Ordering::AcqRel);
                dirty = true;
            }
            Msg::Stop => break,
        }
    }
    let _ = out.flush();
}
