//! `classify`: a gateway's answer to a tool call, typed.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::Args;
use toolgate_runtime::Classified;

use super::{load_table, OutFormat, Res};
use crate::io::{read_file, write_out, Failure};

#[derive(Args)]
pub struct ClassifyArgs {
    /// The answer: a body, or an envelope `{"httpStatus": N, "origin": "...", "headers": {...}, "body": {...}}`
    /// (`"bodyText": "..."` for a body that is not JSON).
    file: PathBuf,
    /// The file is the body exactly as received (plain text, HTML, empty, JSON), never an envelope.
    #[arg(long)]
    raw: bool,
    /// An HTTP header of the answer, `NAME: VALUE` (repeatable; added to the envelope's).
    #[arg(long = "header", value_name = "NAME: VALUE")]
    headers: Vec<String>,
    /// The gateway that answered: its declared rules apply first.
    #[arg(long)]
    origin: Option<String>,
    /// The HTTP status of the answer.
    #[arg(long)]
    http_status: Option<u16>,
    /// The tool that was called.
    #[arg(long)]
    tool: Option<String>,
    /// A project whose `gateway` rules to use (default: built-in rules only).
    #[arg(long, short = 'p')]
    project: Option<PathBuf>,
    /// A compiled table whose `gateway` rules to use.
    #[arg(long)]
    table: Option<PathBuf>,
    /// `json` (the default: the typed outcome, for programs) or `text` (for a person).
    #[arg(long, value_enum, default_value = "json")]
    format: OutFormat,
    #[command(flatten)]
    out: super::OutputArg,
}

pub fn classify(a: ClassifyArgs) -> Res {
    a.out.apply();
    let bytes = read_file(&a.file)?;
    let mut envelope = if a.raw {
        toolgate_runtime::Envelope {
            http_status: None,
            origin: None,
            headers: Vec::new(),
            body: bytes,
        }
    } else {
        toolgate_runtime::Envelope::read(&bytes)
    };
    for h in &a.headers {
        let (name, value) = h
            .split_once(':')
            .filter(|(n, _)| !n.trim().is_empty())
            .ok_or_else(|| Failure::Usage(format!("--header `{h}` is not `NAME: VALUE`")))?;
        envelope
            .headers
            .push((name.trim().to_string(), value.trim().to_string()));
    }
    let answer = envelope.answer(a.http_status, a.origin.as_deref(), a.tool.as_deref());
    let outcome = match (&a.table, &a.project) {
        (None, None) => toolgate_runtime::classify_raw(&answer),
        (t, p) => {
            let project = p.clone().unwrap_or_else(|| PathBuf::from("."));
            load_table(&project, t.as_deref())?.classify_raw(&answer)
        }
    };
    match a.format {
        OutFormat::Json => write_out(&format!("{}\n", serde_json::to_string_pretty(&outcome)?)),
        OutFormat::Text => write_out(&text(&outcome)),
    }
    Ok(0)
}

/// The outcome for a person: what it is, then what is known and the fix.
fn text(outcome: &Classified) -> String {
    let r = match outcome {
        Classified::Success => return "success\n".into(),
        Classified::ToolFailure { text } => return format!("tool failure: {text}\n"),
        Classified::Refusal { refusal } => refusal,
    };
    let mut out = format!(
        "refusal: {} ({}, {}, {})\n",
        r.kind.code(),
        serde_plain(&r.class),
        serde_plain(&r.action),
        if r.retryable {
            "retryable"
        } else {
            "not retryable"
        }
    );
    for (label, value) in [
        ("tool", &r.tool),
        ("profile", &r.profile),
        ("consumer", &r.consumer),
        ("configuration", &r.configuration),
        ("file", &r.file),
        ("policy", &r.policy),
        ("origin", &r.origin),
        ("rule", &r.rule),
        ("detail", &r.detail),
    ] {
        if let Some(v) = value {
            let _ = writeln!(out, "  {label}: {v}");
        }
    }
    let _ = writeln!(out, "  model text: {}", r.model_text);
    let _ = writeln!(out, "  fix: {}", r.remediation);
    out
}

/// A unit enum's name as its JSON spells it (`configuration`, `stop`).
fn serde_plain(v: &impl serde::Serialize) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        other => format!("{other:?}"),
    }
}
