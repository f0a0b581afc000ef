//! Hot reload: a table handle the host swaps atomically while decisions run.
//! A reader takes the current table (an `Arc`, lock-free) and decides with
//! it; a swap never tears a table, and a reader that started on the old one
//! finishes on the old one. A table that does not load is never swapped in.

use std::sync::Arc;

use arc_swap::ArcSwap;

use crate::format::LoadError;
use crate::table::Table;

pub struct TableHandle {
    current: ArcSwap<Table>,
}

impl TableHandle {
    pub fn new(table: Table) -> TableHandle {
        TableHandle {
            current: ArcSwap::from_pointee(table),
        }
    }

    /// The table to decide with now. Cheap; hold it for one decision or one
    /// request, so that everything in it comes from the same table.
    pub fn current(&self) -> Arc<Table> {
        self.current.load_full()
    }

    /// Put a new table in place; returns the old one.
    pub fn swap(&self, table: Table) -> Arc<Table> {
        self.current.swap(Arc::new(table))
    }

    /// Load `bytes` and swap it in. On any load error the current table stays
    /// (fail closed: a corrupt update never replaces a good table).
    pub fn reload(&self, bytes: &[u8]) -> Result<Arc<Table>, LoadError> {
        let table = Table::load(bytes)?;
        Ok(self.swap(table))
    }
}
