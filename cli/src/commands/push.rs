//! `toolgate push`: a compiled table to an OCI registry.

use super::oci_distribution::DistributionArgs;
use std::path::PathBuf;

use clap::Args;
use toolgate_oci::Distribution;
use toolgate_runtime::Table;

use super::keys::{sign_with, trusted_keys};
use super::{compile_project, Res};
use crate::io::{read_file, write_out, Failure};

#[derive(Args)]
pub struct PushArgs {
    /// A compiled table file, or a project directory (compiled first).
    source: PathBuf,
    /// Where to publish: REGISTRY/REPOSITORY:TAG.
    reference: String,
    /// Sign the table with this secret key (toolgate keygen) before pushing.
    #[arg(long, value_name = "KEY")]
    sign: Option<PathBuf>,
    /// Refuse to push unless the table is signed by one of these public keys (repeatable).
    #[arg(long, value_name = "FILE")]
    trusted_key: Vec<PathBuf>,
    #[command(flatten)]
    distribution: DistributionArgs,
}

/// Prints `REGISTRY/REPOSITORY@sha256:…` (the pushed artifact by its
/// digest) on standard output.
pub fn push(a: PushArgs) -> Res {
    let bytes = if a.source.is_dir() {
        let (_, model) = compile_project(&a.source)?;
        toolgate_compiler::lower::compile(&model)
    } else {
        read_file(&a.source)?
    };
    let bytes = match &a.sign {
        Some(key) => sign_with(&bytes, key)?.0,
        None => bytes,
    };
    if let Some(keys) = trusted_keys(&a.trusted_key)? {
        Table::load_verified(&bytes, &keys)
            .map_err(|e| Failure::Usage(format!("{}: {e}", a.source.display())))?;
    }
    let options = a.distribution.options(&a.reference)?;
    let pushed = toolgate_oci::block_on(Distribution::new(&options).push(&a.reference, &bytes))
        .map_err(|e| Failure::Usage(e.into()))?
        .map_err(|e| Failure::Usage(e.into()))?;
    let pinned = toolgate_oci::pinned(&a.reference, &pushed.manifest_digest)
        .map_err(|e| Failure::Usage(e.into()))?;
    write_out(&format!("{pinned}\n"));
    crate::io::note(&format!(
        "pushed {} ({}): table {}, {}\n",
        pushed.reference,
        pushed.manifest_digest,
        pushed.table_digest,
        pushed
            .signed_by
            .map_or("unsigned".to_string(), |k| format!("signed by {k}"))
    ));
    Ok(0)
}
