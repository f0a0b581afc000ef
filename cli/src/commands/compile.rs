//! `toolgate compile`: a project into its table file, optionally signed.

use std::path::PathBuf;

use clap::Args;
use toolgate_compiler::lower;
use toolgate_compiler::project::Project;
use toolgate_runtime::Table;

use std::io::{IsTerminal, Write};

use super::{counted, findings, Res};
use crate::io::{write_atomic, Failure};

#[derive(Args)]
pub struct CompileArgs {
    /// Project directory (or its toolgate.toml).
    project: PathBuf,
    /// Where to write the table (`-` or none: standard output, which must
    /// not be a terminal: a table is binary).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Sign the table with this Ed25519 secret key (PKCS#8 PEM, from `toolgate keygen`).
    #[arg(long, value_name = "KEY")]
    sign: Option<PathBuf>,
}

pub fn compile(a: CompileArgs) -> Res {
    let to = a.output.as_deref().filter(|p| p.as_os_str() != "-");
    if to.is_none() && std::io::stdout().is_terminal() {
        return Err(Failure::Usage(format!(
            "a table is binary and standard output is a terminal: give -o FILE (for example `toolgate compile {} -o policy.tgt`), or redirect standard output",
            a.project.display()
        )));
    }
    let project = Project::load(&a.project)?;
    // The table is encoded, and verified by loading, on a second thread
    // while the no-effect lint runs: both need only the lowered table.
    // Verify by loading before anything is written: never leave a table
    // the runtime would refuse.
    let (mut checked, verified) = project.check_with(|lowered| {
        let bytes = lower::encode_lowered(lowered);
        let loaded = Table::load(&bytes);
        (bytes, loaded)
    });
    let Some(model) = checked.model.take() else {
        return Err(findings(&project, &checked));
    };
    let (bytes, table) = match verified {
        Some((bytes, loaded)) => (bytes, loaded?),
        // No table was lowered: the model is one the runtime refuses, and
        // loading its encoding says why.
        None => {
            let bytes = lower::compile(&model);
            let table = Table::load(&bytes)?;
            (bytes, table)
        }
    };
    drop((model, checked.lowered, project));
    let (bytes, signed) = match &a.sign {
        Some(key) => {
            let (signed, key_id) = super::keys::sign_with(&bytes, key)?;
            (signed, format!(", signed by {key_id}"))
        }
        None => (bytes, String::new()),
    };
    let into = match to {
        Some(path) => {
            write_atomic(path, &bytes)?;
            path.display().to_string()
        }
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(&bytes)
                .and_then(|()| out.flush())
                .map_err(|e| Failure::Usage(format!("standard output: {e}")))?;
            "standard output".into()
        }
    };
    crate::io::note(&format!(
        "compiled {} into {into} ({} bytes, digest {}{signed})\n",
        counted(&[
            (table.tool_count(), "tool"),
            (table.spec().configurations.len(), "configuration")
        ]),
        bytes.len(),
        table.digest_hex()
    ));
    Ok(0)
}
