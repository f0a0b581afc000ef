//! Hot reload: a table handle the host swaps atomically while decisions run.
//! A reader takes the current table (an `Arc`, lock-free) and decides with
//! it; a swap never tears a table, and a reader that started on the old one
//! finishes on the old one. A table that does not load is never swapped in,
//! nor, on a handle that requires a signature, one that does not verify.

use std::sync::Arc;

use arc_swap::ArcSwap;

use crate::format::LoadError;
use crate::table::Table;

pub struct TableHandle {
    current: ArcSwap<Table>,
    /// When set, `reload` accepts only tables signed by one of these keys.
    #[cfg(feature = "signature")]
    trusted: Option<crate::signature::TrustedKeys>,
}

impl TableHandle {
    pub fn new(table: Table) -> TableHandle {
        TableHandle {
            current: ArcSwap::from_pointee(table),
            #[cfg(feature = "signature")]
            trusted: None,
        }
    }

    /// A handle that requires a signature: the first table and every reload
    /// must be signed by one of `keys` ([`Table::load_verified`]).
    #[cfg(feature = "signature")]
    pub fn load_verified(
        bytes: &[u8],
        keys: crate::signature::TrustedKeys,
    ) -> Result<TableHandle, LoadError> {
        let table = Table::load_verified(bytes, &keys)?;
        TableHandle::with_trusted_keys(table, keys)
    }

    /// A handle over `table` whose every reload must be signed by one of
    /// `keys`. `table` itself must have been loaded with
    /// [`Table::load_verified`] by one of them: an unverified table, or one
    /// signed by a key not in `keys`, is refused as a load would refuse it.
    #[cfg(feature = "signature")]
    pub fn with_trusted_keys(
        table: Table,
        keys: crate::signature::TrustedKeys,
    ) -> Result<TableHandle, LoadError> {
        keys.check_table(&table)?;
        Ok(TableHandle {
            current: ArcSwap::from_pointee(table),
            trusted: Some(keys),
        })
    }

    /// The keys a reload's table must be signed by, when a signature is required.
    #[cfg(feature = "signature")]
    pub fn trusted_keys(&self) -> Option<&crate::signature::TrustedKeys> {
        self.trusted.as_ref()
    }

    /// The table to decide with now. Cheap; hold it for one decision or one
    /// request, so that everything in it comes from the same table.
    pub fn current(&self) -> Arc<Table> {
        self.current.load_full()
    }

    /// Put a new table in place; returns the old one. The caller vouches
    /// for `table`: on a handle that requires a signature, hosts use
    /// [`TableHandle::install`] or [`TableHandle::reload`].
    pub fn swap(&self, table: Table) -> Arc<Table> {
        self.current.swap(Arc::new(table))
    }

    /// Put a table a host already loaded in place, under this handle's
    /// rule: on a handle that requires a signature, `table` must have been
    /// loaded verified by one of its keys ([`Table::verified_by`]), else it
    /// is refused and the current table stays. Returns the old table.
    pub fn install(&self, table: Arc<Table>) -> Result<Arc<Table>, LoadError> {
        #[cfg(feature = "signature")]
        if let Some(keys) = &self.trusted {
            keys.check_table(&table)?;
        }
        Ok(self.current.swap(table))
    }

    /// Load `bytes` and swap it in. On any load error (or, when the handle
    /// requires a signature, any signature error) the current table stays:
    /// fail closed, a bad update never replaces a good table.
    pub fn reload(&self, bytes: &[u8]) -> Result<Arc<Table>, LoadError> {
        Ok(self.swap(self.load(bytes)?))
    }

    /// Load `bytes` under this handle's rule (verified when it requires a
    /// signature), without swapping.
    pub fn load(&self, bytes: &[u8]) -> Result<Table, LoadError> {
        #[cfg(feature = "signature")]
        if let Some(keys) = &self.trusted {
            return Table::load_verified(bytes, keys);
        }
        Table::load(bytes)
    }
}
