//! `registry import-mcp`: registry entries from an MCP `tools/list` answer.

use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use toolgate_compiler::diagnostics::Diagnostic;
use toolgate_compiler::{registry, report, source::SourceMap};

use super::Res;
use crate::io::{read_file, write_atomic, write_err, write_out, Failure};

#[derive(Subcommand)]
pub enum RegistryCommand {
    /// Turn an MCP `tools/list` result (JSON) into registry entries.
    ImportMcp(ImportArgs),
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum RegistryFormat {
    Toml,
    Json,
}

#[derive(Args)]
pub struct ImportArgs {
    /// The MCP server's name; tools become `mcp_<server>_<remote>` in group `mcp_<server>`.
    #[arg(long)]
    server: String,
    /// The tools/list answer (a bare result or a JSON-RPC response).
    file: PathBuf,
    #[arg(long, value_enum, default_value = "toml")]
    format: RegistryFormat,
    /// Write here instead of standard output.
    #[arg(short, long)]
    output: Option<PathBuf>,
}

fn import_mcp(a: ImportArgs) -> Res {
    let text = String::from_utf8(read_file(&a.file)?)
        .map_err(|_| Failure::Usage(format!("{}: not UTF-8", a.file.display())))?;
    let mut sources = SourceMap::new();
    let id = sources.add(a.file.display().to_string(), text.clone());
    let (reg, problems) = registry::import_mcp(id, &text, &a.server);
    let out = match a.format {
        RegistryFormat::Toml => registry::to_toml(&reg).map_err(Failure::Usage)?,
        RegistryFormat::Json => registry::to_json(&reg) + "\n",
    };
    match &a.output {
        Some(p) => write_atomic(p, out.as_bytes())?,
        None => write_out(&out),
    }
    if problems.is_empty() {
        return Ok(0);
    }
    let diags: Vec<Diagnostic> = problems.iter().map(|p| p.diagnostic()).collect();
    write_err(&report::human(&sources, &diags, false));
    Ok(1)
}

pub fn run(c: RegistryCommand) -> Res {
    match c {
        RegistryCommand::ImportMcp(a) => import_mcp(a),
    }
}
