//! What the classes share: `NativeTable`'s data (a loaded table) and its
//! loading, and the argument rules of more than one class. `NativeTable`'s
//! methods are in `table`; `classify`, `run` and `handle` take a
//! `NativeTable` from here, so they need nothing of `table`, which uses them.

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use toolgate_runtime as rt;
use toolgate_runtime::host::{read_file, MAX_FILE_BYTES};

use crate::errors;

/// The `trustedKeys` argument: PEM public keys, or none.
pub(crate) fn trusted_keys(pem: Option<String>) -> Result<Option<rt::TrustedKeys>> {
    pem.map(|p| rt::TrustedKeys::from_pem(&p).map_err(|e| errors::keys(&e)))
        .transpose()
}

/// The file at `path`, read by the runtime's host rule (a regular file,
/// checked before it is opened, under `MAX_FILE_BYTES`).
pub(crate) fn file_bytes(path: &str, what: &str) -> Result<Vec<u8>> {
    read_file(std::path::Path::new(path), MAX_FILE_BYTES).map_err(|e| errors::file(what, &e))
}

/// A compiled table, loaded: any defect is a `LoadError`.
#[napi]
pub struct NativeTable {
    pub(crate) table: Arc<rt::Table>,
}

impl NativeTable {
    pub(crate) fn from_bytes(bytes: &[u8], keys: Option<&rt::TrustedKeys>) -> Result<NativeTable> {
        let loaded = match keys {
            Some(k) => rt::Table::load_verified(bytes, k),
            None => rt::Table::load(bytes),
        };
        loaded
            .map(|t| NativeTable { table: Arc::new(t) })
            .map_err(|e| errors::load(&e))
    }
}
