//! Arguments from Python. A `str` is read by its exact value (never through
//! a subclass's `__eq__`/`__hash__`/`__str__`), and a `str` that cannot be
//! encoded as UTF-8 (a lone surrogate) is an `ArgumentError` naming the
//! argument, never a bare `UnicodeEncodeError`, in every argument.

use std::borrow::Cow;
use std::path::PathBuf;

use pyo3::exceptions::PyUnicodeEncodeError;
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyString};
use toolgate_runtime as rt;
use toolgate_runtime::host::{read_file, MAX_FILE_BYTES};

use crate::errors::{argument_error, file_error};

/// The type name of `v`, for messages.
pub(crate) fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// The text of a `str` (or a subclass: its value, not what it claims),
/// as UTF-8. Not a `str`: `ArgumentError`; not encodable: `ArgumentError`.
pub(crate) fn text_of<'a>(s: &'a Bound<'_, PyString>, what: &str) -> PyResult<Cow<'a, str>> {
    s.to_cow().map_err(|e| {
        argument_error(
            s.py(),
            format!(
                "{what}: a str that is not valid Unicode ({})",
                e.value(s.py())
            ),
        )
    })
}

/// A `str` argument (see [`text_of`]).
pub(crate) fn str_arg<'a>(v: &'a Bound<'_, PyAny>, what: &str) -> PyResult<Cow<'a, str>> {
    let s = v.cast::<PyString>().map_err(|_| {
        argument_error(
            v.py(),
            format!("{what}: expected str, got {}", type_name(v)),
        )
    })?;
    text_of(s, what)
}

/// An optional `str` argument (`None` is absent).
pub(crate) fn opt_str_arg<'a>(
    v: Option<&'a Bound<'_, PyAny>>,
    what: &str,
) -> PyResult<Option<Cow<'a, str>>> {
    match v {
        Some(v) if !v.is_none() => str_arg(v, what).map(Some),
        _ => Ok(None),
    }
}

/// A sequence of `str` (an iterable; a lone `str` or bytes is refused, not
/// read as its characters).
pub(crate) fn str_list_arg(v: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<String>> {
    let py = v.py();
    if v.cast::<PyString>().is_ok() || v.cast::<PyBytes>().is_ok() {
        return Err(argument_error(
            py,
            format!("{what}: expected a sequence of str, got {}", type_name(v)),
        ));
    }
    let items = v.try_iter().map_err(|_| {
        argument_error(
            py,
            format!("{what}: expected a sequence of str, got {}", type_name(v)),
        )
    })?;
    items
        .enumerate()
        .map(|(i, item)| Ok(str_arg(&item?, &format!("{what}[{i}]"))?.into_owned()))
        .collect()
}

/// The `role` argument: `"admin"`, `"user"` or `"none"`, exactly.
pub(crate) fn role_arg(v: &Bound<'_, PyAny>) -> PyResult<rt::Role> {
    let name = str_arg(v, "role")?;
    rt::Role::from_name(&name).ok_or_else(|| {
        argument_error(
            v.py(),
            format!("role {name:?}: expected \"admin\", \"user\" or \"none\""),
        )
    })
}

/// The `trusted_keys` argument: PEM public keys (`str`), or none.
pub(crate) fn trusted_keys_arg(v: Option<&Bound<'_, PyAny>>) -> PyResult<Option<rt::TrustedKeys>> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let pem = str_arg(v, "trusted_keys")?;
    rt::TrustedKeys::from_pem(&pem)
        .map(Some)
        .map_err(|e| argument_error(v.py(), e.to_string()))
}

/// The `approver_keys` argument of a call with a grant: PEM public keys
/// (`str`), or none.
pub(crate) fn approver_keys_arg(v: Option<&Bound<'_, PyAny>>) -> PyResult<Option<rt::TrustedKeys>> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let pem = str_arg(v, "approver_keys")?;
    rt::TrustedKeys::from_pem(&pem)
        .map(Some)
        .map_err(|e| argument_error(v.py(), format!("approver_keys: {e}")))
}

/// The `arguments` of a call: a `dict` (written with `json.dumps`, then read
/// by the runtime's host rule: one JSON object, no key twice), or none.
pub(crate) fn call_arguments_arg(
    v: Option<&Bound<'_, PyAny>>,
) -> PyResult<Option<serde_json::Value>> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(None);
    };
    let py = v.py();
    if v.cast::<PyDict>().is_err() {
        return Err(argument_error(
            py,
            format!("arguments: expected a dict, got {}", type_name(v)),
        ));
    }
    let kwargs = PyDict::new(py);
    kwargs.set_item("allow_nan", false)?;
    let text = py
        .import("json")?
        .call_method("dumps", (v,), Some(&kwargs))
        .map_err(|e| argument_error(py, format!("arguments: not JSON data ({})", e.value(py))))?;
    let text = str_arg(&text, "arguments")?;
    rt::host::call_arguments(text.as_bytes())
        .map(Some)
        .map_err(|e| argument_error(py, e.to_string()))
}

/// The `grant` of a call: the signed grant's JSON (`str` or bytes), or none.
pub(crate) fn grant_arg(v: Option<&Bound<'_, PyAny>>) -> PyResult<Option<Vec<u8>>> {
    match v {
        Some(v) if !v.is_none() => {
            if v.cast::<PyString>().is_ok() || is_bytes_like(v)? {
                bytes_of(v, "grant").map(Some)
            } else {
                Err(argument_error(
                    v.py(),
                    format!("grant: expected str or bytes, got {}", type_name(v)),
                ))
            }
        }
        _ => Ok(None),
    }
}

/// Bytes from `bytes`, `bytearray` or `memoryview`, or the UTF-8 of a `str`.
pub(crate) fn bytes_of(v: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<u8>> {
    if let Ok(b) = v.cast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    if let Ok(b) = v.cast::<PyByteArray>() {
        return Ok(b.to_vec());
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(text_of(s, what)?.into_owned().into_bytes());
    }
    if v.hasattr("tobytes")? {
        if let Ok(b) = v.call_method0("tobytes")?.cast::<PyBytes>() {
            return Ok(b.as_bytes().to_vec());
        }
    }
    Err(argument_error(
        v.py(),
        format!("{what}: expected bytes or str, got {}", type_name(v)),
    ))
}

/// Whether `v` is bytes-like (bytes, bytearray, a buffer with `tobytes`).
pub(crate) fn is_bytes_like(v: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(v.cast::<PyBytes>().is_ok() || v.cast::<PyByteArray>().is_ok() || v.hasattr("tobytes")?)
}

/// Whether `v` is a path (`str` or `os.PathLike`).
pub(crate) fn is_path(v: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(v.cast::<PyString>().is_ok() || v.hasattr("__fspath__")?)
}

/// A path argument (`str`, `bytes` or `os.PathLike`), encoded as the
/// operating system's file name by `os.fsencode`: a `str` it cannot encode
/// is an `ArgumentError` (pyo3's own path conversion would panic on it).
pub(crate) fn path_arg(v: &Bound<'_, PyAny>, what: &str) -> PyResult<PathBuf> {
    let py = v.py();
    let raw = py
        .import("os")?
        .call_method1("fsencode", (v,))
        .map_err(|e: PyErr| {
            if e.is_instance_of::<PyUnicodeEncodeError>(py) {
                argument_error(
                    py,
                    format!("{what}: a path that cannot be encoded ({})", e.value(py)),
                )
            } else {
                e
            }
        })?;
    let bytes = raw.cast::<PyBytes>()?.as_bytes();
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Ok(PathBuf::from(std::ffi::OsStr::from_bytes(bytes)))
    }
    #[cfg(not(unix))]
    {
        std::str::from_utf8(bytes)
            .map(PathBuf::from)
            .map_err(|_| argument_error(py, format!("{what}: a path that is not UTF-8")))
    }
}

/// The file at a path argument, read by the runtime's host rule (a regular
/// file, checked before opening, under `MAX_FILE_BYTES`): `LoadError`
/// (`io`, `notAFile`, `tooLarge`) when it cannot be read.
pub(crate) fn file_arg(v: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<u8>> {
    let py = v.py();
    let path = path_arg(v, what)?;
    py.detach(|| read_file(&path, MAX_FILE_BYTES))
        .map_err(|e| file_error(py, what, &e))
}
