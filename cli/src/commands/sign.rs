//! `keygen`, and the key files the signing and verifying commands read:
//! `compile --sign KEY`, `push --sign KEY`, `--trusted-key FILE` of `pull`,
//! `push` and `serve` (docs/distribution.md).

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use toolgate_compiler::signing;
use toolgate_runtime::TrustedKeys;

use super::Res;
use crate::io::{read_file_capped, write_out, Failure};

/// Key files are small; anything larger is not one.
const MAX_KEY_BYTES: usize = 64 * 1024;

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

fn with_suffix(base: &Path, ext: &str) -> PathBuf {
    let mut s = base.as_os_str().to_owned();
    s.push(".");
    s.push(ext);
    PathBuf::from(s)
}

/// Create `path` (never replacing a file); `secret` files are mode 0600.
fn write_new(path: &Path, bytes: &[u8], secret: bool) -> Result<(), Failure> {
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

fn read_text(path: &Path) -> Result<String, Failure> {
    String::from_utf8(read_file_capped(path, MAX_KEY_BYTES)?).map_err(|_| {
        Failure::Usage(format!(
            "{}: not a PEM key file (not UTF-8)",
            path.display()
        ))
    })
}

/// Sign table bytes with the secret key in `key` (PKCS#8 PEM).
pub fn sign_with(bytes: &[u8], key: &Path) -> Result<(Vec<u8>, String), Failure> {
    let secret = zeroize::Zeroizing::new(read_text(key)?);
    let k = signing::read_secret_key(&secret)
        .map_err(|e| Failure::Usage(format!("{}: {e}", key.display())))?;
    let signed = signing::sign(bytes, &k).map_err(Failure::Usage)?;
    Ok((
        signed,
        toolgate_runtime::format::key_id(k.verifying_key().as_bytes()),
    ))
}

/// The trusted keys of the `--trusted-key` files (each may hold several);
/// `None` when none were given.
pub fn trusted_keys(paths: &[PathBuf]) -> Result<Option<TrustedKeys>, Failure> {
    if paths.is_empty() {
        return Ok(None);
    }
    let mut pem = String::new();
    for p in paths {
        let text = read_text(p)?;
        // Each file on its own first, so that an error names the file.
        TrustedKeys::from_pem(&text)
            .map_err(|e| Failure::Usage(format!("{}: {e}", p.display())))?;
        pem.push_str(&text);
        pem.push('\n');
    }
    TrustedKeys::from_pem(&pem)
        .map(Some)
        .map_err(|e| Failure::Usage(e.to_string()))
}
