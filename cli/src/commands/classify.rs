//! `classify`: a gateway's answer to a tool call, typed.

use std::path::PathBuf;

use clap::Args;

use super::{load_table, Res};
use crate::io::{read_file, write_out};

#[derive(Args)]
pub struct ClassifyArgs {
    /// The answer: a JSON-RPC response body, or `{"httpStatus": N, "origin": "...", "body": {...}}`.
    file: PathBuf,
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
}

pub fn classify(a: ClassifyArgs) -> Res {
    let envelope = toolgate_runtime::Envelope::read(&read_file(&a.file)?);
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

// ------------------------------------------------------------------ readouts
