//! What `--decision-log LOG` adds: denials over time, per reason and per
//! configuration, from either format of docs/decision-log.md (the runtime's
//! `DecisionLog` lines, `toolgate serve --decision-log` lines). The counts
//! per reason and configuration are the runtime's `LogStats`; this module
//! only adds each record's time to bucket them.

use serde::Serialize;
use toolgate_runtime::log::{LogRecord, LogStats, ServiceRecord};

/// A line that is not a decision record, or a time that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogError {
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for LogError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for LogError {}

/// The denial charts' data.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Denials {
    pub stats: LogStats,
    /// Milliseconds since the Unix epoch of the first bucket's start.
    pub start_ms: u64,
    pub bucket_ms: u64,
    /// Per bucket: decisions, refusals, then refusals per reason in the
    /// order of `reasons`.
    pub buckets: Vec<Vec<u64>>,
    /// The reason codes of the buckets' counts: `stats.byReason`'s order.
    pub reasons: Vec<String>,
}

/// Bucket widths the time axis chooses from, the first that gives at most
/// [`MAX_BUCKETS`].
const WIDTHS: [u64; 10] = [
    1_000,
    10_000,
    60_000,
    300_000,
    900_000,
    3_600_000,
    21_600_000,
    86_400_000,
    604_800_000,
    2_592_000_000,
];
const MAX_BUCKETS: u64 = 60;

/// One record's time, allowed and reason, in either format.
fn read_line(line: &str) -> Result<(u64, bool, Option<String>), String> {
    if line.contains("\"decision_id\"") {
        let r: ServiceRecord = serde_json::from_str(line).map_err(|e| e.to_string())?;
        let t = parse_rfc3339(&r.timestamp)
            .ok_or_else(|| format!("`timestamp` {:?} is not an RFC 3339 UTC time", r.timestamp))?;
        return Ok((t, r.result.decision, r.result.context.reason));
    }
    let r: LogRecord = serde_json::from_str(line).map_err(|e| e.to_string())?;
    Ok((r.time_unix_ms, r.allowed, r.reason))
}

/// Milliseconds since the epoch of `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+00:00)`.
fn parse_rfc3339(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let t = s.get(r)?;
        t.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| t.parse().ok())?
    };
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if b[13] != b':' || b[16] != b':' || !(1..=12).contains(&mo) || !(1..=31).contains(&d) {
        return None;
    }
    if h > 23 || mi > 59 || se > 60 {
        return None;
    }
    let mut rest = &s[19..];
    let mut ms = 0i64;
    if let Some(f) = rest.strip_prefix('.') {
        let digits = f.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let frac = &f[..digits];
        ms = frac
            .chars()
            .chain("000".chars())
            .take(3)
            .collect::<String>()
            .parse()
            .ok()?;
        rest = &f[digits..];
    }
    let offset_min: i64 = match rest {
        "Z" | "z" => 0,
        o if o.len() == 6
            && (o.starts_with('+') || o.starts_with('-'))
            && o.as_bytes()[3] == b':' =>
        {
            let hh: i64 = o.get(1..3)?.parse().ok()?;
            let mm: i64 = o.get(4..6)?.parse().ok()?;
            let sign = if o.starts_with('-') { -1 } else { 1 };
            sign * (hh * 60 + mm)
        }
        _ => return None,
    };
    // Howard Hinnant's days_from_civil.
    let y2 = if mo <= 2 { y - 1 } else { y };
    let era = y2.div_euclid(400);
    let yoe = y2 - era * 400;
    let mp = (mo + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + h * 3600 + mi * 60 + se - offset_min * 60;
    u64::try_from(secs * 1000 + ms).ok()
}

/// Count the denials of a log.
pub fn denials(text: &str) -> Result<Denials, LogError> {
    let stats = LogStats::read(text).map_err(|e| LogError {
        line: e.line,
        message: format!("not a decision record: {}", e.message),
    })?;
    let mut records = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        records.push(read_line(line).map_err(|message| LogError {
            line: n + 1,
            message,
        })?);
    }
    let reasons: Vec<String> = stats.by_reason.iter().map(|(c, _)| c.clone()).collect();
    let (lo, hi) = records
        .iter()
        .fold((u64::MAX, 0), |(lo, hi), r| (lo.min(r.0), hi.max(r.0)));
    if records.is_empty() {
        return Ok(Denials {
            stats,
            start_ms: 0,
            bucket_ms: WIDTHS[0],
            buckets: Vec::new(),
            reasons,
        });
    }
    let span = hi - lo + 1;
    let width = WIDTHS
        .iter()
        .copied()
        .find(|w| span.div_ceil(*w) <= MAX_BUCKETS)
        .unwrap_or_else(|| span.div_ceil(MAX_BUCKETS));
    let start = lo - lo % width;
    let count = ((hi - start) / width + 1) as usize;
    let mut buckets = vec![vec![0u64; 2 + reasons.len()]; count];
    for (t, allowed, reason) in records {
        let b = &mut buckets[((t - start) / width) as usize];
        b[0] += 1;
        if !allowed {
            b[1] += 1;
            let code = reason.unwrap_or_else(|| "unknown".into());
            if let Some(i) = reasons.iter().position(|r| *r == code) {
                b[2 + i] += 1;
            }
        }
    }
    Ok(Denials {
        stats,
        start_ms: start,
        bucket_ms: width,
        buckets,
        reasons,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_times_read_to_the_millisecond() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_rfc3339("2026-12-02T02:30:07.123456789Z"),
            Some(1_796_178_607_123)
        );
        assert_eq!(parse_rfc3339("1970-01-01T01:00:00+01:00"), Some(0));
        assert_eq!(parse_rfc3339("1970-01-01 00:00:00Z"), None);
        assert_eq!(parse_rfc3339("1970-13-01T00:00:00Z"), None);
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00"), None);
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00+0é:0"), None);
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00.Z"), None);
    }

    #[test]
    fn a_bad_line_is_named_by_its_number() {
        let good = r#"{"timeUnixMs":5,"table":"t","configuration":"c","role":"user","consumer":null,"tool":"x","allowed":false,"reason":"requiresAdmin","observedOnly":false}"#;
        let e = denials(&format!("{good}\n\nnot json\n")).unwrap_err();
        assert_eq!(e.line, 3);
        let d = denials(&format!("{good}\n{good}\n")).unwrap();
        assert_eq!(d.stats.refused, 2);
        assert_eq!(d.buckets, vec![vec![2, 2, 2]]);
        assert_eq!(d.reasons, vec!["requiresAdmin".to_string()]);
    }
}
