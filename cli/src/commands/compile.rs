//! `toolgate compile`: a project into its table file, optionally signed.

use std::path::PathBuf;

use clap::Args;
use toolgate_compiler::lower;
use toolgate_runtime::Table;

use super::{lower_project, Res};
use crate::io::write_atomic;

#[derive(Args)]
pub struct CompileArgs {
    /// Project directory (or its toolgate.toml).
    project: PathBuf,
    /// Where to write the table.
    #[arg(short, long)]
    output: PathBuf,
    /// Sign the table with this Ed25519 secret key (PKCS#8 PEM, from `toolgate keygen`).
    #[arg(long, value_name = "KEY")]
    sign: Option<PathBuf>,
}

pub fn compile(a: CompileArgs) -> Res {
    let (_, model, lowered) = lower_project(&a.project)?;
    let bytes = match lowered {
        Some(table) => lower::encode(table.spec()),
        None => lower::compile(&model),
    };
    drop(model);
    // Verify by loading before anything is written: never leave a table the runtime would refuse.
    let table = Table::load(&bytes)?;
    let (bytes, signed) = match &a.sign {
        Some(key) => {
            let (signed, key_id) = super::keys::sign_with(&bytes, key)?;
            (signed, format!(", signed by {key_id}"))
        }
        None => (bytes, String::new()),
    };
    write_atomic(&a.output, &bytes)?;
    crate::io::note(&format!(
        "compiled {} tools, {} configurations into {} ({} bytes, digest {}{signed})\n",
        table.tool_count(),
        table.spec().configurations.len(),
        a.output.display(),
        bytes.len(),
        table.digest_hex()
    ));
    Ok(0)
}
