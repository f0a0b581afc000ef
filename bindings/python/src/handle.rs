//! `TableHandle`: hot reload. The runtime's `TableHandle` (arc-swap); with
//! `trusted_keys` it requires a signature of its first table, of every
//! `swap` and of every `reload` (the runtime's `with_trusted_keys` and
//! `install`), as the C and PHP verified handles do.

use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use toolgate_runtime as rt;

use crate::args::trusted_keys_arg;
use crate::common::PyTable;
use crate::context::PyContext;
use crate::errors::load_error;

/// Hot reload: swap tables atomically while decisions run. A table that
/// fails to load (or, with trusted keys, is not verified by one of them)
/// never replaces the current one.
#[pyclass(frozen, name = "TableHandle", module = "toolgate._native")]
pub struct PyTableHandle {
    handle: rt::TableHandle,
    /// The `Table` object of the current table, so that its name caches are
    /// built once per table, not once per `current()`.
    current: Mutex<Option<(Arc<rt::Table>, Py<PyTable>)>>,
}

impl PyTableHandle {
    /// The `Table` object of `arc`: the remembered one when it is the same table.
    fn wrapped(
        &self,
        py: Python<'_>,
        arc: Arc<rt::Table>,
        remember: bool,
    ) -> PyResult<Py<PyTable>> {
        let mut slot = self.current.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((a, t)) = slot.as_ref() {
            if Arc::ptr_eq(a, &arc) {
                return Ok(t.clone_ref(py));
            }
        }
        let t = Py::new(py, PyTable::wrap(arc.clone()))?;
        if remember {
            *slot = Some((arc, t.clone_ref(py)));
        }
        Ok(t)
    }

    /// Put `table` in place under the handle's rule; the old table's object.
    fn install(&self, py: Python<'_>, table: &Bound<'_, PyTable>) -> PyResult<Py<PyTable>> {
        let arc = table.get().table.clone();
        let mut slot = self.current.lock().unwrap_or_else(|p| p.into_inner());
        let old = self
            .handle
            .install(arc.clone())
            .map_err(|e| load_error(py, &e))?;
        let previous = slot.replace((arc, table.clone().unbind()));
        drop(slot);
        match previous {
            Some((a, t)) if Arc::ptr_eq(&a, &old) => Ok(t),
            _ => Py::new(py, PyTable::wrap(old)),
        }
    }
}

#[pymethods]
impl PyTableHandle {
    /// With `trusted_keys` (PEM public keys), `table` must have been loaded
    /// with `Table.load(..., trusted_keys=...)` by one of them, and so must
    /// every table `swap` puts in place and every `reload` reads (LoadError
    /// `unsigned`, `untrustedKey`, `badSignature`).
    #[new]
    #[pyo3(signature = (table, *, trusted_keys=None))]
    fn new(table: &Bound<'_, PyTable>, trusted_keys: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let py = table.py();
        let arc = table.get().table.clone();
        let handle = match trusted_keys_arg(trusted_keys)? {
            Some(keys) => {
                // Checked before the table is copied into the handle.
                keys.check_table(&arc).map_err(|e| load_error(py, &e))?;
                rt::TableHandle::with_trusted_keys((*arc).clone(), keys)
                    .map_err(|e| load_error(py, &e))?
            }
            None => rt::TableHandle::new((*arc).clone()),
        };
        // The handle's current table is this very table (and `Table` object).
        handle
            .install(arc.clone())
            .map_err(|e| load_error(py, &e))?;
        Ok(PyTableHandle {
            handle,
            current: Mutex::new(Some((arc, table.clone().unbind()))),
        })
    }

    /// The table to decide with now; hold it (or a context of it) for one request.
    fn current(&self, py: Python<'_>) -> PyResult<Py<PyTable>> {
        self.wrapped(py, self.handle.current(), true)
    }

    /// Put `table` in place; returns the old one. With trusted keys, a
    /// table not loaded verified by one of them raises `LoadError` and the
    /// current table stays.
    fn swap(&self, table: &Bound<'_, PyTable>) -> PyResult<Py<PyTable>> {
        self.install(table.py(), table)
    }

    /// Load `data` (bytes or a path) and swap it in; on any load error (or,
    /// with trusted keys, any signature error) the current table stays and
    /// `LoadError` is raised. Returns the old table.
    fn reload(&self, data: &Bound<'_, PyAny>) -> PyResult<Py<PyTable>> {
        let py = data.py();
        let loaded = Bound::new(py, PyTable::load_from(data, self.handle.trusted_keys())?)?;
        self.install(py, &loaded)
    }

    /// The ids of the trusted keys, when the handle requires a signature.
    #[getter]
    fn trusted_key_ids(&self) -> Option<Vec<String>> {
        self.handle.trusted_keys().map(|k| k.key_ids())
    }

    /// A context of the current table.
    #[pyo3(signature = (configuration, *, role=None, consumer=None, run=None, enforcement=None))]
    fn context(
        &self,
        py: Python<'_>,
        configuration: &Bound<'_, PyAny>,
        role: Option<&Bound<'_, PyAny>>,
        consumer: Option<&Bound<'_, PyAny>>,
        run: Option<&Bound<'_, PyAny>>,
        enforcement: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyContext> {
        let t = self.current(py)?;
        let none = pyo3::types::PyString::new(py, "none");
        let role = role.unwrap_or(none.as_any());
        PyTable::make_context(t.bind(py), configuration, role, consumer, run, enforcement)
    }
}
