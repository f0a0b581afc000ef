//! `toolgate approve`: a person's approval of one call, as a signed grant
//! (docs/approvals.md, "Grants").

use std::path::PathBuf;

use clap::Args;
use toolgate_compiler::signing;
use toolgate_runtime::approval::{ApprovalRequest, Grant, MAX_GRANT_BYTES};

use super::Res;
use crate::io::{read_file_capped, write_out, Failure};

#[derive(Args)]
pub struct ApproveArgs {
    /// The question to approve: the JSON of an approval request (what a
    /// host's `ApprovalRequired` carries, a LangGraph interrupt's value), a
    /// file or `-` for standard input.
    request: PathBuf,
    /// The approver's secret key (PKCS#8 PEM, `toolgate keygen`); its public
    /// key is what the enforcement point trusts (`--approver-key`, `approver_keys`).
    #[arg(long, value_name = "FILE")]
    key: PathBuf,
    /// Who approves (recorded in the grant and the decision log).
    #[arg(long, value_name = "NAME")]
    approver: String,
    /// How long the grant lasts, in seconds (1 to 86400).
    #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    expires_in: u64,
    /// The grant's id (default: a random one): what single use is kept by.
    #[arg(long, value_name = "ID")]
    id: Option<String>,
}

/// `toolgate approve REQUEST --key K --approver NAME`: print the signed
/// grant of exactly that call, valid for `--expires-in` seconds.
pub fn approve(a: ApproveArgs) -> Res {
    let text = read_file_capped(&a.request, MAX_GRANT_BYTES)?;
    let request: ApprovalRequest = serde_json::from_slice(&text).map_err(|e| {
        Failure::Usage(format!(
            "{}: not an approval request ({e}); it is the JSON a host's ApprovalRequired carries: tool, argumentsDigest, configuration, consumer, role, tableDigest, requestId",
            a.request.display()
        ))
    })?;
    if a.approver.trim().is_empty() {
        return Err(Failure::Usage(
            "--approver is empty: name who approves".into(),
        ));
    }
    let secret = zeroize::Zeroizing::new(super::keys::read_text(&a.key)?);
    let key = signing::read_secret_key(&secret)
        .map_err(|e| Failure::Usage(format!("{}: {e}", a.key.display())))?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let grant_id = match a.id {
        Some(id) if !id.is_empty() => id,
        Some(_) => return Err(Failure::Usage("--id is empty".into())),
        None => signing::random_id().map_err(Failure::Usage)?,
    };
    let signed = signing::sign_grant(
        Grant {
            request,
            approver: a.approver,
            grant_id,
            expires_at: now + a.expires_in,
        },
        &key,
    );
    let json = serde_json::to_string(&signed)
        .map_err(|e| Failure::Usage(format!("the grant could not be written: {e}")))?;
    write_out(&format!("{json}\n"));
    Ok(0)
}
