//! `TableHandle`: hot reload over the runtime's `TableHandle` (arc-swap).
//! With trusted keys it requires a signature of its first table, of every
//! `swap` and of every `reload` (the runtime's `with_trusted_keys` and
//! `install`), as the C, PHP and Python verified handles do.

use napi::bindgen_prelude::*;
use napi_derive::napi;
use toolgate_runtime as rt;

use crate::common::{file_bytes, trusted_keys, NativeTable};
use crate::errors;

/// Swap tables atomically while decisions run. A table that fails to load
/// (or, with trusted keys, is not verified by one of them) never replaces
/// the current one.
#[napi]
pub struct NativeTableHandle {
    handle: rt::TableHandle,
}

impl NativeTableHandle {
    fn install(&self, table: &NativeTable) -> Result<NativeTable> {
        self.handle
            .install(table.table.clone())
            .map(|old| NativeTable { table: old })
            .map_err(|e| errors::load(&e))
    }

    fn reload_bytes(&self, bytes: &[u8]) -> Result<NativeTable> {
        let loaded = NativeTable::from_bytes(bytes, self.handle.trusted_keys())?;
        self.install(&loaded)
    }
}

#[napi]
impl NativeTableHandle {
    /// With `trustedKeys` (PEM public keys), `table` must have been loaded
    /// verified by one of them, and so must every table put in place later.
    #[napi(constructor)]
    pub fn new(table: &NativeTable, trusted_keys: Option<String>) -> Result<NativeTableHandle> {
        let arc = table.table.clone();
        let handle = match self::trusted_keys(trusted_keys)? {
            Some(keys) => {
                keys.check_table(&arc).map_err(|e| errors::load(&e))?;
                rt::TableHandle::with_trusted_keys((*arc).clone(), keys)
                    .map_err(|e| errors::load(&e))?
            }
            None => rt::TableHandle::new((*arc).clone()),
        };
        // The handle's current table is this very table.
        handle.install(arc).map_err(|e| errors::load(&e))?;
        Ok(NativeTableHandle { handle })
    }

    /// The table to decide with now.
    #[napi]
    pub fn current(&self) -> NativeTable {
        NativeTable {
            table: self.handle.current(),
        }
    }

    /// Whether `table` is the current table.
    #[napi]
    pub fn is_current(&self, table: &NativeTable) -> bool {
        std::sync::Arc::ptr_eq(&self.handle.current(), &table.table)
    }

    /// Put `table` in place; the old one.
    #[napi]
    pub fn swap(&self, table: &NativeTable) -> Result<NativeTable> {
        self.install(table)
    }

    /// Load bytes and swap them in; on any error the current table stays.
    #[napi]
    pub fn reload(&self, bytes: Uint8Array) -> Result<NativeTable> {
        self.reload_bytes(&bytes)
    }

    /// Read a file (the host file rule), load it and swap it in.
    #[napi]
    pub fn reload_file(&self, path: String) -> Result<NativeTable> {
        let bytes = file_bytes(&path, "table")?;
        self.reload_bytes(&bytes)
    }

    /// The ids of the trusted keys, when the handle requires a signature.
    #[napi(getter)]
    pub fn trusted_key_ids(&self) -> Option<Vec<String>> {
        self.handle.trusted_keys().map(|k| k.key_ids())
    }
}
