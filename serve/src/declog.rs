//! The decision log sink: records go through a bounded queue to one writer
//! thread that writes JSON lines ([`toolgate_runtime::log::ServiceRecord`])
//! to a file or standard output. A decision never waits for the log: when
//! the queue is full the record is dropped and counted
//! (`toolgate_decision_log_dropped_total`).

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

enum Msg {
    Record(Box<ServiceRecord>),
    /// Write what is queued, flush, and stop.
    Stop,
}

pub struct DecisionLogSink {
    tx: SyncSender<Msg>,
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
    ) -> Result<DecisionLogSink, String> {
        let out: Box<dyn Write + Send> = match target {
            LogTarget::Stdout => Box::new(std::io::stdout()),
            LogTarget::File(path) => Box::new(
                OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map_err(|e| format!("{}: {e}", path.display()))?,
            ),
        };
        let (tx, rx) = sync_channel(capacity.max(1));
        let writer = std::thread::Builder::new()
            .name("toolgate-decision-log".into())
            .spawn(move || write_loop(rx, BufWriter::with_capacity(1 << 16, out), written))
            .map_err(|e| e.to_string())?;
        Ok(DecisionLogSink {
            tx,
            writer: Mutex::new(Some(writer)),
            dropped,
        })
    }

    /// Queue a record; never blocks. Dropped and counted when the queue is full.
    pub fn record(&self, rec: ServiceRecord) {
        match self.tx.try_send(Msg::Record(Box::new(rec))) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                self.dropped.inc();
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

fn write_loop(rx: Receiver<Msg>, mut out: BufWriter<Box<dyn Write + Send>>, written: Counter) {
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
            Msg::Record(rec) => {
                if serde_json::to_writer(&mut out, &*rec).is_ok() && out.write_all(b"\n").is_ok() {
                    written.inc();
                }
                dirty = true;
            }
            Msg::Stop => break,
        }
    }
    let _ = out.flush();
}
