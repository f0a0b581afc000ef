//! The decision log: one JSON object per line per decision, for audit and for
//! `toolgate stats`. Field names are stable (docs/decision-log.md). Two
//! formats: [`LogRecord`], what [`DecisionLog`] writes for an embedding host,
//! and [`ServiceRecord`], what the decision service (`toolgate serve`) writes,
//! with OPA's field names. [`LogStats::read`] reads both, line by line.

use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::context::Context;
use crate::decide::Decision;

/// One line of the log.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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

/// One line of the decision service's log (`toolgate serve`): OPA's decision
/// log field names where OPA has them (`decision_id`, `timestamp`, `path`,
/// `input`, `result`), plus the digest of the table that decided and the
/// stage (`offer` when tools were being offered, `call` when a call was about
/// to run). docs/decision-log.md has its JSON Schema.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceRecord {
    /// Unique per decision (a UUID in its text form).
    pub decision_id: String,
    /// RFC 3339, UTC, nanoseconds.
    pub timestamp: String,
    /// The endpoint that decided, without its leading slash (`access/v1/evaluation`).
    pub path: String,
    /// The request's `X-Request-ID` (sent by the client, or generated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// sha256 of the table that decided (hex).
    pub table_digest: String,
    /// `offer` or `call`.
    pub stage: String,
    /// The evaluation as the service understood it (defaults of a batch applied).
    pub input: ServiceInput,
    pub result: ServiceResult,
}

/// The AuthZEN request of one decision, normalised.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceInput {
    pub subject: LogSubject,
    pub action: LogAction,
    pub resource: LogResource,
    pub context: LogContext,
}

#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogSubject {
    #[serde(rename = "type")]
    pub kind: String,
    pub id: String,
    pub properties: LogSubjectProperties,
}

#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogSubjectProperties {
    /// The role decided with: `admin`, `user` or `none`.
    pub role: String,
    pub consumer: Option<String>,
}

#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogAction {
    pub name: String,
}

#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogResource {
    #[serde(rename = "type")]
    pub kind: String,
    pub id: String,
    /// A live tool's metadata, as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub properties: Option<serde_json::Value>,
}

#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogContext {
    pub configuration: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enforcement: Option<String>,
    /// The stored run decided with, as read ([`crate::RunState::to_value`]:
    /// an unreadable part is written as `false`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<serde_json::Value>,
}

#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceResult {
    pub decision: bool,
    pub context: ServiceResultContext,
}

#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServiceResultContext {
    /// The first refusing gate (or `trustZone` for an observed-only offer).
    pub reason: Option<String>,
    pub observed_only: bool,
    /// Whether the tool's name may be shown to this user.
    pub name_visible: bool,
    /// Why the stored run could not be read (it then admits no tool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_error: Option<String>,
    /// For a call of a tool that needs a person's approval: what was asked
    /// and answered (docs/approvals.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<LogApproval>,
}

/// The approval of one call, as the decision log keeps it.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogApproval {
    /// The question's id.
    pub request_id: String,
    /// `granted` (the call ran), `asked` (the client was asked, on
    /// 2026-07-28), `pending` (waiting for an approver), `declined`, or
    /// `refused` (a grant that does not fit; `grantError` says why).
    pub outcome: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approver: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_error: Option<String>,
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

/// Refusals counted from a decision log, for a per-reason denial dashboard
/// (`toolgate stats`, and any host that has the log; docs/gate-semantics.md
/// §6, rule 7).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LogStats {
    pub decisions: usize,
    pub refused: usize,
    /// Offered only because the trust zone is observed.
    pub observed_only: usize,
    /// Refusals by reason code: the gates in [`crate::GATE_ORDER`], then any
    /// code this runtime does not know (a newer log), sorted.
    #[serde(serialize_with = "ordered")]
    #[cfg_attr(
        feature = "schema",
        schemars(with = "std::collections::BTreeMap<String, usize>")
    )]
    pub by_reason: Vec<(String, usize)>,
    /// Refusals by configuration, then by reason code.
    pub by_configuration:
        std::collections::BTreeMap<String, std::collections::BTreeMap<String, usize>>,
}

fn ordered<S: serde::Serializer>(v: &[(String, usize)], s: S) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeMap;
    let mut m = s.serialize_map(Some(v.len()))?;
    for (k, n) in v {
        m.serialize_entry(k, n)?;
    }
    m.end()
}

/// A line of a decision log that is not a decision record: its 1-based
/// number and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLineError {
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for LogLineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "line {}: not a decision record: {}",
            self.line, self.message
        )
    }
}

impl std::error::Error for LogLineError {}

impl LogStats {
    /// Count the records of a log (JSON lines; blank lines are skipped).
    pub fn read(text: &str) -> Result<LogStats, LogLineError> {
        let mut stats = LogStats::default();
        let mut by_reason: std::collections::BTreeMap<(usize, String), usize> = Default::default();
        for rec in read_records(text)? {
            stats.decisions += 1;
            stats.observed_only += usize::from(rec.observed_only);
            if rec.allowed {
                continue;
            }
            stats.refused += 1;
            let code = rec.reason.unwrap_or_else(|| "unknown".into());
            // Known gates sort in gate order, before any unknown code.
            let rank = crate::Reason::from_code(&code).map_or(usize::MAX, crate::Reason::rank);
            *by_reason.entry((rank, code.clone())).or_default() += 1;
            *stats
                .by_configuration
                .entry(rec.configuration)
                .or_default()
                .entry(code)
                .or_default() += 1;
        }
        stats.by_reason = by_reason.into_iter().map(|((_, c), n)| (c, n)).collect();
        Ok(stats)
    }
}

/// What `stats` and `drift` need of one line, in either format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counted {
    pub configuration: String,
    pub consumer: Option<String>,
    pub tool: String,
    pub allowed: bool,
    pub reason: Option<String>,
    pub observed_only: bool,
}

/// Every record of a log (JSON lines, blank lines skipped), in either format.
pub fn read_records(text: &str) -> Result<Vec<Counted>, LogLineError> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(n, line)| {
            Counted::read(line).map_err(|message| LogLineError {
                line: n + 1,
                message,
            })
        })
        .collect()
}

impl Counted {
    /// A [`LogRecord`], else a [`ServiceRecord`]; the error is that of the
    /// format the line looks like (a service line has `decision_id`).
    fn read(line: &str) -> Result<Counted, String> {
        let runtime_error = match serde_json::from_str::<LogRecord>(line) {
            Ok(r) => {
                return Ok(Counted {
                    configuration: r.configuration,
                    consumer: r.consumer,
                    tool: r.tool,
                    allowed: r.allowed,
                    reason: r.reason,
                    observed_only: r.observed_only,
                })
            }
            Err(e) => e.to_string(),
        };
        match serde_json::from_str::<ServiceRecord>(line) {
            Ok(r) => Ok(Counted {
                configuration: r.input.context.configuration,
                consumer: r.input.subject.properties.consumer,
                tool: r.input.resource.id,
                allowed: r.result.decision,
                reason: r.result.context.reason,
                observed_only: r.result.context.observed_only,
            }),
            Err(e) if line.contains("\"decision_id\"") => Err(e.to_string()),
            Err(_) => Err(runtime_error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_count_refusals_by_reason_in_gate_order_then_unknown_codes() {
        let rec = |cfg: &str, allowed: bool, reason: Option<&str>, observed: bool| {
            serde_json::to_string(&LogRecord {
                time_unix_ms: 0,
                table: "t".into(),
                configuration: cfg.into(),
                role: "user".into(),
                consumer: None,
                tool: "x".into(),
                allowed,
                reason: reason.map(str::to_string),
                observed_only: observed,
                name_visible: true,
            })
            .unwrap()
        };
        let log = [
            rec("a", false, Some("trustZone"), false),
            rec("a", false, Some("quotaExceeded"), false),
            String::new(),
            rec("b", false, Some("toolDisabled"), false),
            rec("b", false, Some("trustZone"), false),
            rec("a", true, Some("trustZone"), true),
            rec("a", true, None, false),
        ]
        .join("\n");
        let s = LogStats::read(&log).unwrap();
        assert_eq!((s.decisions, s.refused, s.observed_only), (6, 4, 1));
        assert_eq!(
            s.by_reason,
            vec![
                ("toolDisabled".to_string(), 1),
                ("trustZone".to_string(), 2),
                ("quotaExceeded".to_string(), 1)
            ]
        );
        assert_eq!(s.by_configuration["b"]["trustZone"], 1);
        assert_eq!(LogStats::read("{}\n").unwrap_err().line, 1);
    }

    #[test]
    fn stats_read_service_records_beside_runtime_records() {
        let svc = |cfg: &str, decision: bool, reason: Option<&str>, observed: bool| {
            serde_json::to_string(&ServiceRecord {
                decision_id: "d".into(),
                timestamp: "2026-01-01T00:00:00.000000000Z".into(),
                path: "access/v1/evaluation".into(),
                request_id: None,
                table_digest: "t".into(),
                stage: "call".into(),
                input: ServiceInput {
                    subject: LogSubject {
                        kind: "user".into(),
                        id: "u".into(),
                        properties: LogSubjectProperties {
                            role: "user".into(),
                            consumer: None,
                        },
                    },
                    action: LogAction {
                        name: "call".into(),
                    },
                    resource: LogResource {
                        kind: "tool".into(),
                        id: "x".into(),
                        properties: None,
                    },
                    context: LogContext {
                        configuration: cfg.into(),
                        enforcement: None,
                        run: None,
                    },
                },
                result: ServiceResult {
                    decision,
                    context: ServiceResultContext {
                        reason: reason.map(str::to_string),
                        observed_only: observed,
                        name_visible: true,
                        run_error: None,
                        approval: None,
                    },
                },
            })
            .unwrap()
        };
        let log = [
            svc("a", false, Some("trustZone"), false),
            svc("a", true, Some("trustZone"), true),
            svc("b", false, Some("toolDisabled"), false),
            svc("b", true, None, false),
        ]
        .join("\n");
        let s = LogStats::read(&log).unwrap();
        assert_eq!((s.decisions, s.refused, s.observed_only), (4, 2, 1));
        assert_eq!(
            s.by_reason,
            vec![
                ("toolDisabled".to_string(), 1),
                ("trustZone".to_string(), 1)
            ]
        );
        assert_eq!(s.by_configuration["a"]["trustZone"], 1);
        let e = LogStats::read("{\"decision_id\":\"d\"}\n").unwrap_err();
        assert_eq!(e.line, 1);
        assert!(
            e.message.starts_with("missing field `timestamp`"),
            "{}",
            e.message
        );
    }
}
