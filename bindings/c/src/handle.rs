//! Hot reload: a handle whose table is swapped atomically while other
//! threads decide with the table they took.

use std::ffi::c_char;
use std::sync::Arc;

use toolgate_runtime::{Table, TableHandle};

use crate::boundary::{bytes_arg, free_handle, guard, handle_ref, with_handle};
use crate::table::{file_arg, keys_arg, toolgate_table};

/// A hot-reloadable table: readers take the current table, a reload swaps
/// it atomically; a table that does not load is never swapped in. Clones
/// (`toolgate_handle_clone`) share the same current table.
pub struct toolgate_handle {
    handle: Arc<TableHandle>,
}

/// A reloadable handle over a table loaded from `bytes` (fails as
/// `toolgate_table_load` does).
#[no_mangle]
pub unsafe extern "C" fn toolgate_handle_new(
    bytes: *const c_char,
    len: usize,
    out: *mut *mut toolgate_handle,
) -> i32 {
    with_handle(out, || {
        let b = unsafe { bytes_arg(bytes, len, "bytes")? };
        Ok(toolgate_handle {
            handle: Arc::new(TableHandle::new(Table::load(b)?)),
        })
    })
}

/// A reloadable handle that requires a signature: the first table and
/// every `toolgate_handle_reload` must be signed by one of the trusted keys
/// (fails as `toolgate_table_load_verified` does).
#[no_mangle]
pub unsafe extern "C" fn toolgate_handle_new_verified(
    bytes: *const c_char,
    len: usize,
    public_keys_pem: *const c_char,
    public_keys_pem_len: usize,
    out: *mut *mut toolgate_handle,
) -> i32 {
    with_handle(out, || {
        let keys = unsafe { keys_arg(public_keys_pem, public_keys_pem_len)? };
        let b = unsafe { bytes_arg(bytes, len, "bytes")? };
        Ok(toolgate_handle {
            handle: Arc::new(TableHandle::load_verified(b, keys)?),
        })
    })
}

/// A second reference to the same handle: a reload through either is seen
/// by both (free each with `toolgate_handle_free`).
#[no_mangle]
pub unsafe extern "C" fn toolgate_handle_clone(
    handle: *const toolgate_handle,
    out: *mut *mut toolgate_handle,
) -> i32 {
    with_handle(out, || {
        let h = unsafe { handle_ref(handle, "handle")? };
        Ok(toolgate_handle {
            handle: Arc::clone(&h.handle),
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn toolgate_handle_free(handle: *mut toolgate_handle) {
    unsafe { free_handle(handle) }
}

/// The table to decide with now (a new reference; free it with
/// `toolgate_table_free`). Hold it for one request so that every answer of
/// the request comes from the same table. Safe to call while another thread
/// reloads.
#[no_mangle]
pub unsafe extern "C" fn toolgate_handle_current(
    handle: *const toolgate_handle,
    out: *mut *mut toolgate_table,
) -> i32 {
    with_handle(out, || {
        let h = unsafe { handle_ref(handle, "handle")? };
        Ok(toolgate_table {
            table: h.handle.current(),
        })
    })
}

/// Load `bytes` and swap the table in atomically. On any load error (and,
/// on a handle made by `toolgate_handle_new_verified`, any signature error)
/// the current table stays: a bad update never replaces a good table.
#[no_mangle]
pub unsafe extern "C" fn toolgate_handle_reload(
    handle: *const toolgate_handle,
    bytes: *const c_char,
    len: usize,
) -> i32 {
    guard(|| {
        let h = unsafe { handle_ref(handle, "handle")? };
        let b = unsafe { bytes_arg(bytes, len, "bytes")? };
        h.handle.reload(b)?;
        Ok(())
    })
}

/// `toolgate_handle_reload` from the file at `path`, read under the rules
/// of `toolgate_table_load_file`.
#[no_mangle]
pub unsafe extern "C" fn toolgate_handle_reload_file(
    handle: *const toolgate_handle,
    path: *const c_char,
    path_len: usize,
) -> i32 {
    guard(|| {
        let h = unsafe { handle_ref(handle, "handle")? };
        let b = unsafe { file_arg(path, path_len)? };
        h.handle.reload(&b)?;
        Ok(())
    })
}
