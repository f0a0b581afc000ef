//! `push` and `pull`: a compiled table as an OCI artifact in any registry
//! (the `toolgate-oci` crate; docs/distribution.md).

use std::path::PathBuf;

use clap::Args;
use toolgate_oci::{Registry, RegistryOptions};
use toolgate_runtime::Table;

use super::sign::{sign_with, trusted_keys};
use super::{compile_project, Res};
use crate::io::{read_file, write_atomic, write_out, Failure};

/// How to reach the registry (shared by push, pull and serve --oci).
#[derive(Args, Clone)]
pub struct RegistryArgs {
    /// Speak plain HTTP (no TLS) to the reference's registry: a registry on
    /// this machine or a private network only.
    #[arg(long)]
    pub plain_http: bool,
    /// Seconds one push, pull or registry poll may take in all, every
    /// request of it included; past it the call is abandoned and reported.
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub registry_timeout: u64,
}

impl RegistryArgs {
    /// The options for `reference`; credentials from
    /// TOOLGATE_REGISTRY_USERNAME and TOOLGATE_REGISTRY_PASSWORD (basic auth).
    pub fn options(&self, reference: &str) -> Result<RegistryOptions, Failure> {
        let plain_http = if self.plain_http {
            vec![toolgate_oci::registry_of(reference).map_err(Failure::Usage)?]
        } else {
            Vec::new()
        };
        let basic_auth = match (
            std::env::var("TOOLGATE_REGISTRY_USERNAME"),
            std::env::var("TOOLGATE_REGISTRY_PASSWORD"),
        ) {
            (Ok(u), Ok(p)) => Some((u, p)),
            _ => None,
        };
        Ok(RegistryOptions {
            plain_http,
            basic_auth,
            deadline: std::time::Duration::from_secs(self.registry_timeout),
        })
    }
}

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
    registry: RegistryArgs,
}

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
    registry: RegistryArgs,
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
    let options = a.registry.options(&a.reference)?;
    let pushed = toolgate_oci::block_on(Registry::new(&options).push(&a.reference, &bytes))
        .map_err(Failure::Usage)?
        .map_err(|e| Failure::Usage(e.into()))?;
    let pinned =
        toolgate_oci::pinned(&a.reference, &pushed.manifest_digest).map_err(Failure::Usage)?;
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

pub fn pull(a: PullArgs) -> Res {
    let keys = trusted_keys(&a.trusted_key)?;
    let options = a.registry.options(&a.reference)?;
    let pulled = toolgate_oci::block_on(Registry::new(&options).pull(&a.reference))
        .map_err(Failure::Usage)?
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
