//! Tables: load (bytes or a file, with or without a required signature),
//! share, inspect.

use std::ffi::c_char;
use std::path::Path;
use std::sync::Arc;

use toolgate_runtime::host::{read_file, MAX_FILE_BYTES};
use toolgate_runtime::{Table, TrustedKeys};

use crate::boundary::{
    bytes_arg, err, free_handle, guard, handle_ref, json, out_ref, str_arg, toolgate_buf, with_buf,
    with_handle, Error,
};
use crate::codes::{TOOLGATE_ERR_KEYS, TOOLGATE_ERR_NOT_FOUND, TOOLGATE_ERR_OUT_OF_RANGE};

/// A loaded table (shared: contexts and handles keep it alive).
pub struct toolgate_table {
    pub(crate) table: Arc<Table>,
}

/// The trusted keys argument: one or more PEM public keys, UTF-8.
pub(crate) unsafe fn keys_arg(ptr: *const c_char, len: usize) -> Result<TrustedKeys, Error> {
    let pem = unsafe { str_arg(ptr, len, "public_keys_pem")? };
    TrustedKeys::from_pem(pem).map_err(|e| err(TOOLGATE_ERR_KEYS, e.to_string()))
}

/// The bytes of the regular file at the UTF-8 path (`ptr`, `len`), under
/// the host file rules (`toolgate_runtime::host::file`).
pub(crate) unsafe fn file_arg(ptr: *const c_char, len: usize) -> Result<Vec<u8>, Error> {
    let path = unsafe { str_arg(ptr, len, "path")? };
    Ok(read_file(Path::new(path), MAX_FILE_BYTES)?)
}

pub(crate) fn check_id(t: &Table, id: u32) -> Result<(), Error> {
    if (id as usize) < t.tool_count() {
        Ok(())
    } else {
        Err(err(
            TOOLGATE_ERR_OUT_OF_RANGE,
            format!(
                "tool id {id} is not below the tool count {}",
                t.tool_count()
            ),
        ))
    }
}

fn wrap(table: Table) -> toolgate_table {
    toolgate_table {
        table: Arc::new(table),
    }
}

/// Load a compiled table from its bytes. Fails closed with a
/// `TOOLGATE_ERR_LOAD_*` status and a readable message on any doubt.
#[no_mangle]
pub unsafe extern "C" fn toolgate_table_load(
    bytes: *const c_char,
    len: usize,
    out: *mut *mut toolgate_table,
) -> i32 {
    with_handle(out, || {
        let b = unsafe { bytes_arg(bytes, len, "bytes")? };
        Ok(wrap(Table::load(b)?))
    })
}

/// Load a table that must be signed by one of the trusted keys
/// (`public_keys_pem`: one or more `-----BEGIN PUBLIC KEY-----` blocks, as
/// `toolgate keygen` writes them). Unsigned, signed by another key or
/// altered after signing fails with `TOOLGATE_ERR_LOAD_UNSIGNED`,
/// `_UNTRUSTED_KEY` or `_BAD_SIGNATURE`; bad keys with `TOOLGATE_ERR_KEYS`.
#[no_mangle]
pub unsafe extern "C" fn toolgate_table_load_verified(
    bytes: *const c_char,
    len: usize,
    public_keys_pem: *const c_char,
    public_keys_pem_len: usize,
    out: *mut *mut toolgate_table,
) -> i32 {
    with_handle(out, || {
        let keys = unsafe { keys_arg(public_keys_pem, public_keys_pem_len)? };
        let b = unsafe { bytes_arg(bytes, len, "bytes")? };
        Ok(wrap(Table::load_verified(b, &keys)?))
    })
}

/// Load a table from the file at `path` (UTF-8, `path_len` bytes). Only a
/// regular file is read (a directory, FIFO, device or socket is
/// `TOOLGATE_ERR_FILE_NOT_REGULAR` at once, never a blocking read), at most
/// `TOOLGATE_MAX_FILE_BYTES` (`TOOLGATE_ERR_FILE_TOO_LARGE`); an unreadable
/// one is `TOOLGATE_ERR_FILE_IO`; then as `toolgate_table_load`.
#[no_mangle]
pub unsafe extern "C" fn toolgate_table_load_file(
    path: *const c_char,
    path_len: usize,
    out: *mut *mut toolgate_table,
) -> i32 {
    with_handle(out, || {
        let b = unsafe { file_arg(path, path_len)? };
        Ok(wrap(Table::load(&b)?))
    })
}

/// `toolgate_table_load_file` with a required signature, as
/// `toolgate_table_load_verified`.
#[no_mangle]
pub unsafe extern "C" fn toolgate_table_load_file_verified(
    path: *const c_char,
    path_len: usize,
    public_keys_pem: *const c_char,
    public_keys_pem_len: usize,
    out: *mut *mut toolgate_table,
) -> i32 {
    with_handle(out, || {
        let keys = unsafe { keys_arg(public_keys_pem, public_keys_pem_len)? };
        let b = unsafe { file_arg(path, path_len)? };
        Ok(wrap(Table::load_verified(&b, &keys)?))
    })
}

/// A second reference to the same table (free each with `toolgate_table_free`).
#[no_mangle]
pub unsafe extern "C" fn toolgate_table_clone(
    table: *const toolgate_table,
    out: *mut *mut toolgate_table,
) -> i32 {
    with_handle(out, || {
        let t = unsafe { handle_ref(table, "table")? };
        Ok(toolgate_table {
            table: Arc::clone(&t.table),
        })
    })
}

#[no_mangle]
pub unsafe extern "C" fn toolgate_table_free(table: *mut toolgate_table) {
    unsafe { free_handle(table) }
}

/// The table digest (sha256 of the payload) as 64 lowercase hex digits.
#[no_mangle]
pub unsafe extern "C" fn toolgate_table_digest_hex(
    table: *const toolgate_table,
    out: *mut toolgate_buf,
) -> i32 {
    with_buf(out, || {
        Ok(unsafe { handle_ref(table, "table")? }.table.digest_hex())
    })
}

/// The number of registered tools (ids are 0 to count - 1, registry order).
#[no_mangle]
pub unsafe extern "C" fn toolgate_table_tool_count(
    table: *const toolgate_table,
    out: *mut u32,
) -> i32 {
    guard(|| {
        let t = unsafe { handle_ref(table, "table")? };
        *unsafe { out_ref(out, "out")? } = t.table.tool_count() as u32;
        Ok(())
    })
}

/// The id of a registered tool; `TOOLGATE_ERR_NOT_FOUND` if not registered.
#[no_mangle]
pub unsafe extern "C" fn toolgate_table_tool_id(
    table: *const toolgate_table,
    name: *const c_char,
    name_len: usize,
    out: *mut u32,
) -> i32 {
    guard(|| {
        let t = unsafe { handle_ref(table, "table")? };
        let name = unsafe { str_arg(name, name_len, "name")? };
        let o = unsafe { out_ref(out, "out")? };
        *o = t.table.tool_id(name).ok_or_else(|| {
            err(
                TOOLGATE_ERR_NOT_FOUND,
                format!(
                    "`{}` is not registered",
                    toolgate_runtime::names::escape(name)
                ),
            )
        })?;
        Ok(())
    })
}

/// The name of tool `id`.
#[no_mangle]
pub unsafe extern "C" fn toolgate_table_tool_name(
    table: *const toolgate_table,
    id: u32,
    out: *mut toolgate_buf,
) -> i32 {
    with_buf(out, || {
        let t = &unsafe { handle_ref(table, "table")? }.table;
        check_id(t, id)?;
        Ok(t.tool_name(id).to_string())
    })
}

/// The configuration names, as a JSON array of strings, in table order.
#[no_mangle]
pub unsafe extern "C" fn toolgate_table_configurations_json(
    table: *const toolgate_table,
    out: *mut toolgate_buf,
) -> i32 {
    with_buf(out, || {
        let t = &unsafe { handle_ref(table, "table")? }.table;
        json(&t.configuration_names().collect::<Vec<_>>())
    })
}

/// The gate-relevant policy of the table as plain data (JSON), for hosts
/// that inspect a table or compare their own gate with it:
/// `{"classes", "observe", "remoteVisibility", "unprofiled", "skillLoader",
/// "tools": [{"name","group","remote","enabled","adminOnly","class"}],
/// "configurations": [{"name","groups","excluded","ceiling","allowList"}],
/// "profiles": [{"name","tools","groups","prefixes"}], "consumers": {name: profile}}`
/// (classes and ceilings as ranks, least sensitive first; `groups` null =
/// every group; `allowList` = a new run's skill allow-list, null = none).
#[no_mangle]
pub unsafe extern "C" fn toolgate_table_policy_json(
    table: *const toolgate_table,
    out: *mut toolgate_buf,
) -> i32 {
    with_buf(out, || {
        let t = &unsafe { handle_ref(table, "table")? }.table;
        Ok(t.policy_json().to_string())
    })
}
