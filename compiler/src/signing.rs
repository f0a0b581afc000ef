//! Table signing (`toolgate keygen`, `toolgate compile --sign`): Ed25519
//! keys in PEM (PKCS#8 secret, SubjectPublicKeyInfo public, the forms
//! OpenSSL reads and writes) and the signature block of the table format
//! (docs/table-format.md). Verification is the runtime's (feature
//! `signature`); this side only signs.

use ed25519_dalek::pkcs8::spki::der::pem::LineEnding;
use ed25519_dalek::pkcs8::{DecodePrivateKey, EncodePrivateKey, EncodePublicKey};
use ed25519_dalek::{Signer, SigningKey};
use toolgate_runtime::format::{self, SignatureBlock};

/// A new key pair, ready to be written out.
pub struct KeyPair {
    /// PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`); wiped from memory on drop.
    pub secret_pem: zeroize::Zeroizing<String>,
    /// SubjectPublicKeyInfo PEM (`-----BEGIN PUBLIC KEY-----`).
    pub public_pem: String,
    /// `format::key_id` of the public key.
    pub key_id: String,
}

/// Generate a key pair from the operating system's random source.
pub fn generate() -> Result<KeyPair, String> {
    let mut seed = zeroize::Zeroizing::new([0u8; 32]);
    getrandom::fill(seed.as_mut()).map_err(|e| format!("no random source: {e}"))?;
    let key = SigningKey::from_bytes(&seed);
    let secret_pem = key
        .to_pkcs8_pem(LineEnding::LF)
        .map_err(|e| format!("cannot encode the secret key: {e}"))?;
    let public_pem = key
        .verifying_key()
        .to_public_key_pem(LineEnding::LF)
        .map_err(|e| format!("cannot encode the public key: {e}"))?;
    Ok(KeyPair {
        secret_pem,
        public_pem,
        key_id: format::key_id(key.verifying_key().as_bytes()),
    })
}

/// Read a secret key in PKCS#8 PEM.
pub fn read_secret_key(pem: &str) -> Result<SigningKey, String> {
    SigningKey::from_pkcs8_pem(pem).map_err(|e| {
        format!("not an Ed25519 secret key in PKCS#8 PEM ({e}); `toolgate keygen` writes one")
    })
}

/// A random id (32 hex digits, from the operating system's random source):
/// a grant's id when its minter names none.
pub fn random_id() -> Result<String, String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| format!("no random source: {e}"))?;
    Ok(format::hex(&bytes))
}

/// The public key of `key` in SubjectPublicKeyInfo PEM (what
/// [`toolgate_runtime::TrustedKeys::from_pem`] reads).
pub fn public_pem(key: &SigningKey) -> Result<String, String> {
    key.verifying_key()
        .to_public_key_pem(LineEnding::LF)
        .map_err(|e| format!("cannot encode the public key: {e}"))
}

/// Sign a table file: the table (any signature it had is replaced) followed
/// by a signature block by `key`. The table is checked first: only a table
/// that loads is signed.
pub fn sign(table: &[u8], key: &SigningKey) -> Result<Vec<u8>, String> {
    let (unsigned, _) = format::split_signature(table).map_err(|e| e.to_string())?;
    format::decode(unsigned).map_err(|e| e.to_string())?;
    let block = SignatureBlock {
        public_key: key.verifying_key().to_bytes(),
        signature: key.sign(&format::signed_message(unsigned)).to_bytes(),
    };
    let mut out = Vec::with_capacity(unsigned.len() + format::SIGNATURE_LEN);
    out.extend_from_slice(unsigned);
    out.extend_from_slice(&block.encode());
    Ok(out)
}

/// Sign an approval grant with `key` (docs/approvals.md, "Grants"): what an
/// enforcement point mints when a person approves a call. The runtime
/// verifies it (`Context::check_grant`).
pub fn sign_grant(
    grant: toolgate_runtime::approval::Grant,
    key: &SigningKey,
) -> toolgate_runtime::approval::SignedGrant {
    let signature = key.sign(&toolgate_runtime::approval::grant_message(&grant));
    toolgate_runtime::approval::SignedGrant {
        grant,
        public_key: format::hex(&key.verifying_key().to_bytes()),
        signature: format::hex(&signature.to_bytes()),
    }
}
