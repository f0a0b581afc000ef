//! `toolgate pull`: a table from an OCI registry, verified.

use super::oci_distribution::DistributionArgs;
use std::path::PathBuf;

use clap::Args;
use toolgate_oci::Distribution;
use toolgate_runtime::Table;

use super::keys::trusted_keys;
use super::Res;
use crate::io::{write_atomic, write_out, Failure};

#[derive(Args)]
pub struct PullArgs {
    /// What to fetch: REGISTRY/REPOSITORY:TAG or REGISTRY/REPOSITORY@sha256:DIGEST.
    reference: String,
    /// Where to write the table.
    #[arg(short, long)]
    output: PathBuf,
    /// Accept the table only when signed by one of these public keys (repeatable).
    #[arg(long, value_name = "FILE")]
    trusted_key: Vec<PathBuf>,
    #[command(flatten)]
    distribution: DistributionArgs,
}

pub fn pull(a: PullArgs) -> Res {
    let keys = trusted_keys(&a.trusted_key)?;
    let options = a.distribution.options(&a.reference)?;
    let pulled = toolgate_oci::block_on(Distribution::new(&options).pull(&a.reference))
        .map_err(|e| Failure::Usage(e.into()))?
        .map_err(|e| Failure::Usage(e.into()))?;
    if let Some(keys) = &keys {
        Table::load_verified(&pulled.bytes, keys).map_err(|e| {
            Failure::Usage(format!(
                "{} ({}): {e}",
                a.reference, pulled.artifact.manifest_digest
            ))
        })?;
    }
    write_atomic(&a.output, &pulled.bytes)?;
    write_out(&format!("{}\n", pulled.artifact.manifest_digest));
    crate::io::note(&format!(
        "pulled {} ({}) into {}: table {}, {}\n",
        pulled.artifact.reference,
        pulled.artifact.manifest_digest,
        a.output.display(),
        pulled.artifact.table_digest,
        match (&pulled.artifact.signed_by, &keys) {
            (Some(k), Some(_)) => format!("signature by {k} verified"),
            (Some(k), None) => format!("signed by {k} (not verified: no --trusted-key)"),
            (None, _) => "unsigned".to_string(),
        }
    ));
    Ok(0)
}
