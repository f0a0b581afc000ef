//! The decision log: one JSON object per line per decision, for audit and for
//! `toolgate stats`. Field names are stable (docs/decision-log.md).

use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::decide::{Context, Decision};

/// One line of the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogRecord {
    /// Milliseconds since the Unix epoch.
    pub time_unix_ms: u64,
    /// sha256 of the table that decided.
    pub table: String,
    pub configuration: String,
    /// `admin`, `user` or `none`.
    pub role: String,
    pub consumer: Option<String>,
    pub tool: String,
    pub allowed: bool,
    pub reason: Option<String>,
    pub observed_only: bool,
    /// Whether the tool's name may be shown to this user (`remote-tools
    /// visible-to`); the log keeps every decision, hidden names included, so
    /// that dashboards built on it know which to leave out for people.
    /// A record without the field (written before it existed) reads as hidden.
    #[serde(default)]
    pub name_visible: bool,
}

impl LogRecord {
    pub fn new(ctx: &Context<'_>, d: &Decision<'_>) -> LogRecord {
        let time_unix_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        LogRecord {
            time_unix_ms,
            table: ctx.table().digest_hex(),
            configuration: ctx.configuration_name().to_string(),
            role: ctx.user_role().as_str().to_string(),
            consumer: ctx.consumer_name().map(str::to_string),
            tool: d.tool.to_string(),
            allowed: d.allowed,
            reason: d.reason.map(|r| r.code().to_string()),
            observed_only: d.observed_only,
            name_visible: ctx
                .table()
                .tool_id(d.tool)
                .is_none_or(|i| ctx.name_visible(i)),
        }
    }
}

/// Writes decisions as JSON lines.
pub struct DecisionLog<W: Write> {
    out: W,
}

impl<W: Write> DecisionLog<W> {
    pub fn new(out: W) -> Self {
        DecisionLog { out }
    }

    pub fn record(&mut self, ctx: &Context<'_>, d: &Decision<'_>) -> std::io::Result<()> {
        let rec = LogRecord::new(ctx, d);
        serde_json::to_writer(&mut self.out, &rec)?;
        self.out.write_all(b"\n")
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}
