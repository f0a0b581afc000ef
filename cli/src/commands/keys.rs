//! Signing keys and trusted keys from files, for `compile --sign`, `push`,
//! `pull` and `serve`.

use std::path::{Path, PathBuf};

use toolgate_compiler::signing;
use toolgate_runtime::TrustedKeys;

use crate::io::{read_file_capped, Failure};

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

/// Key files are small; anything larger is not one.
pub(super) const MAX_KEY_BYTES: usize = 64 * 1024;

pub(super) fn read_text(path: &Path) -> Result<String, Failure> {
    String::from_utf8(read_file_capped(path, MAX_KEY_BYTES)?).map_err(|_| {
        Failure::Usage(format!(
            "{}: not a PEM key file (not UTF-8)",
            path.display()
        ))
    })
}
