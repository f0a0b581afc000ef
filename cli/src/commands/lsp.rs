//! `lsp`: the language server over stdio (the `toolgate-lsp` library).

use clap::Args;

use super::Res;
use crate::io::Failure;

#[derive(Args)]
pub struct LspArgs {
    /// Accepted for editors that pass it (the server always speaks over standard input and output).
    #[arg(long)]
    stdio: bool,
}

pub fn lsp(a: LspArgs) -> Res {
    let _ = a.stdio;
    toolgate_lsp::run_stdio().map_err(|e| Failure::Usage(format!("language server: {e}")))?;
    Ok(0)
}
