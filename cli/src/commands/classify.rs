//! `classify`: a gateway's answer to a tool call, typed.

use std::path::PathBuf;

use clap::Args;

use super::{load_table, Res};
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
    write_out(&format!("{}\n", serde_json::to_string_pretty(&outcome)?));
    Ok(0)
}
