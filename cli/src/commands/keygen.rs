//! `toolgate keygen`: a signing key pair.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use toolgate_compiler::signing;

use super::Res;
use crate::io::{write_out, Failure};

#[derive(Args)]
pub struct KeygenArgs {
    /// Write the secret key to PATH.key and the public key to PATH.pub.
    #[arg(short, long)]
    output: PathBuf,
}

/// `toolgate keygen -o NAME`: a new Ed25519 key pair. The secret key file
/// is created readable by its owner only and never overwritten.
pub fn keygen(a: KeygenArgs) -> Res {
    let pair = signing::generate().map_err(Failure::Usage)?;
    let secret = with_suffix(&a.output, "key");
    let public = with_suffix(&a.output, "pub");
    for p in [&secret, &public] {
        if p.exists() {
            return Err(Failure::Usage(format!(
                "{}: already exists; keygen never overwrites a key (choose another -o)",
                p.display()
            )));
        }
    }
    write_new(&secret, pair.secret_pem.as_bytes(), true)?;
    write_new(&public, pair.public_pem.as_bytes(), false)?;
    write_out(&format!("{}\n", pair.key_id));
    crate::io::note(&format!(
        "wrote {} (secret: keep it out of version control) and {} (public: give it to every verifier)\n",
        secret.display(),
        public.display()
    ));
    Ok(0)
}

pub(super) fn with_suffix(base: &Path, ext: &str) -> PathBuf {
    let mut s = base.as_os_str().to_owned();
    s.push(".");
    s.push(ext);
    PathBuf::from(s)
}

/// Create `path` (never replacing a file); `secret` files are mode 0600.
pub(super) fn write_new(path: &Path, bytes: &[u8], secret: bool) -> Result<(), Failure> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(if secret { 0o600 } else { 0o644 });
    }
    #[cfg(not(unix))]
    let _ = secret;
    let fail = |e: std::io::Error| Failure::Usage(format!("{}: {e}", path.display()));
    let mut f = o.open(path).map_err(fail)?;
    f.write_all(bytes).map_err(fail)?;
    f.sync_all().map_err(fail)
}
