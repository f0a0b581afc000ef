//! What the classes share: `PyTable`'s data (a loaded table and its name
//! index) and its loading. The Python methods of `Table` are in `table`;
//! `run`, `classify`, `context` and `handle` take a `PyTable` from here, so
//! they need nothing of `table`, which uses them.

use std::sync::Arc;

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyDict, PyString};
use toolgate_runtime as rt;

use crate::args::{bytes_of, file_arg, is_bytes_like, is_path, type_name};
use crate::errors::{argument_error, load_error};

/// Tables over this many bytes load with the GIL released.
const LONG_LOAD_BYTES: usize = 1 << 20;

/// A compiled table, loaded (fails closed: any defect raises `LoadError`).
#[pyclass(frozen, name = "Table", module = "toolgate._native")]
pub struct PyTable {
    pub(crate) table: Arc<rt::Table>,
    /// Tool names as Python strings, by tool id (built on first use).
    names: PyOnceLock<Vec<Py<PyString>>>,
    /// name -> id, a dict of exact `str` keys (a str's hash is cached: no
    /// UTF-8 conversion per decision).
    index: PyOnceLock<Py<PyDict>>,
}

impl PyTable {
    pub(crate) fn wrap(table: Arc<rt::Table>) -> PyTable {
        PyTable {
            table,
            names: PyOnceLock::new(),
            index: PyOnceLock::new(),
        }
    }

    /// Tool names by id.
    pub(crate) fn names(&self, py: Python<'_>) -> &[Py<PyString>] {
        self.names.get_or_init(py, || {
            self.table
                .spec()
                .tools
                .iter()
                .map(|t| PyString::new(py, &t.name).unbind())
                .collect()
        })
    }

    /// The name -> id dict. Look names up in it only with an exact `str`:
    /// a subclass could answer `==` for another key.
    pub(crate) fn index(&self, py: Python<'_>) -> PyResult<&Py<PyDict>> {
        self.index.get_or_try_init(py, || {
            let d = PyDict::new(py);
            for (i, n) in self.names(py).iter().enumerate() {
                d.set_item(n.bind(py), i)?;
            }
            Ok(d.unbind())
        })
    }

    fn load_bytes(
        py: Python<'_>,
        bytes: &[u8],
        keys: Option<&rt::TrustedKeys>,
    ) -> PyResult<PyTable> {
        let load = || match keys {
            Some(k) => rt::Table::load_verified(bytes, k),
            None => rt::Table::load(bytes),
        };
        let loaded = if bytes.len() > LONG_LOAD_BYTES {
            py.detach(load)
        } else {
            load()
        };
        loaded
            .map(|t| PyTable::wrap(Arc::new(t)))
            .map_err(|e| load_error(py, &e))
    }

    /// A table from bytes or a path (read by the runtime's host file rule).
    pub(crate) fn load_from(
        source: &Bound<'_, PyAny>,
        keys: Option<&rt::TrustedKeys>,
    ) -> PyResult<PyTable> {
        let py = source.py();
        if let Ok(b) = source.cast::<PyBytes>() {
            return PyTable::load_bytes(py, b.as_bytes(), keys);
        }
        if is_bytes_like(source)? {
            let bytes = bytes_of(source, "table")?;
            return PyTable::load_bytes(py, &bytes, keys);
        }
        if is_path(source)? {
            let bytes = file_arg(source, "table")?;
            return PyTable::load_bytes(py, &bytes, keys);
        }
        Err(argument_error(
            py,
            format!(
                "Table.load: expected bytes or a path, got {}",
                type_name(source)
            ),
        ))
    }
}
