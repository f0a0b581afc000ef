//! Signature verification (feature `signature`): a table is accepted only
//! when it carries an Ed25519 signature by one of the trusted keys. The
//! format of the block is in `format`; signing lives in the compiler, so a
//! host that verifies never links a signing key's code.

use ed25519_dalek::pkcs8::DecodePublicKey;
use ed25519_dalek::{Signature, VerifyingKey};

use crate::format::{self, LoadError, SignatureBlock};
use crate::table::Table;

/// The public keys a table's signature must come from (several during a
/// key rotation).
#[derive(Clone)]
pub struct TrustedKeys {
    keys: Vec<VerifyingKey>,
}

impl std::fmt::Debug for TrustedKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.key_ids()).finish()
    }
}

/// A trusted-key list that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyError(pub String);

impl std::fmt::Display for KeyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for KeyError {}

const BEGIN: &str = "-----BEGIN PUBLIC KEY-----";
const END: &str = "-----END PUBLIC KEY-----";

impl TrustedKeys {
    /// Read one or more Ed25519 public keys in PEM (`-----BEGIN PUBLIC
    /// KEY-----`, SubjectPublicKeyInfo: what `toolgate keygen` writes and
    /// `openssl pkey -pubout` prints), concatenated. Text outside the blocks
    /// (comments) is ignored; no block at all is an error.
    pub fn from_pem(text: &str) -> Result<TrustedKeys, KeyError> {
        let mut keys = Vec::new();
        let mut rest = text;
        while let Some(start) = rest.find(BEGIN) {
            let Some(len) = rest[start..].find(END) else {
                return Err(KeyError(format!(
                    "public key {}: `{BEGIN}` without `{END}`",
                    keys.len() + 1
                )));
            };
            let end = start + len + END.len();
            let key = VerifyingKey::from_public_key_pem(&rest[start..end]).map_err(|e| {
                KeyError(format!(
                    "public key {}: not an Ed25519 public key in PEM ({e})",
                    keys.len() + 1
                ))
            })?;
            keys.push(key);
            rest = &rest[end..];
        }
        if keys.is_empty() {
            return Err(KeyError(format!(
                "no public key found: expected one or more `{BEGIN}` blocks (toolgate keygen writes them)"
            )));
        }
        Ok(TrustedKeys { keys })
    }

    /// Raw 32-byte Ed25519 public keys.
    pub fn from_raw(raw: &[[u8; 32]]) -> Result<TrustedKeys, KeyError> {
        let keys = raw
            .iter()
            .enumerate()
            .map(|(i, k)| {
                VerifyingKey::from_bytes(k)
                    .map_err(|_| KeyError(format!("public key {}: not an Ed25519 point", i + 1)))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if keys.is_empty() {
            return Err(KeyError("no public key given".into()));
        }
        Ok(TrustedKeys { keys })
    }

    /// The ids of the trusted keys (`format::key_id`), in the order given.
    pub fn key_ids(&self) -> Vec<String> {
        self.keys
            .iter()
            .map(|k| format::key_id(k.as_bytes()))
            .collect()
    }

    /// Whether `public_key` (raw bytes) is one of these keys.
    pub fn contains(&self, public_key: &[u8; 32]) -> bool {
        self.keys.iter().any(|k| k.as_bytes() == public_key)
    }

    /// Verify the signature of a table file; returns the id of the key that
    /// signed it. Only the signature: [`crate::Table::load_verified`] also
    /// checks and decodes the table.
    pub fn verify(&self, bytes: &[u8]) -> Result<String, LoadError> {
        self.verify_key(bytes).map(|k| format::key_id(&k))
    }

    /// [`TrustedKeys::verify`], returning the signing public key's bytes.
    pub fn verify_key(&self, bytes: &[u8]) -> Result<[u8; 32], LoadError> {
        let (table, block) = format::split_signature(bytes)?;
        let SignatureBlock {
            public_key,
            signature,
        } = block.ok_or(LoadError::Unsigned)?;
        let key_id = format::key_id(&public_key);
        let Some(key) = self.keys.iter().find(|k| k.as_bytes() == &public_key) else {
            return Err(LoadError::UntrustedKey { key_id });
        };
        key.verify_strict(
            &format::signed_message(table),
            &Signature::from_bytes(&signature),
        )
        .map_err(|_| LoadError::BadSignature {
            key_id: key_id.clone(),
        })?;
        Ok(public_key)
    }

    /// Whether `table` was loaded with a signature by one of these keys:
    /// `Ok`, else the error a load would give (unsigned, untrusted key).
    pub fn check_table(&self, table: &Table) -> Result<(), LoadError> {
        let key = table.verified_by().ok_or(LoadError::Unsigned)?;
        if self.keys.iter().any(|k| k.as_bytes() == key) {
            Ok(())
        } else {
            Err(LoadError::UntrustedKey {
                key_id: format::key_id(key),
            })
        }
    }
}

impl Table {
    /// Load a table file that must be signed by one of `keys`: unsigned,
    /// signed by another key, or altered after signing is a [`LoadError`].
    /// The signature is checked first, then everything [`Table::load`] checks.
    pub fn load_verified(bytes: &[u8], keys: &TrustedKeys) -> Result<Table, LoadError> {
        let key = keys.verify_key(bytes)?;
        let mut table = Table::load(bytes)?;
        table.verified_by = Some(key);
        Ok(table)
    }
}
