//! `Table`: a compiled table, loaded (fails closed). Its data and loading
//! are `common::PyTable`'s; here are its Python methods and its contexts.

use pyo3::prelude::*;
use pyo3::types::{PyList, PyString};
use toolgate_runtime as rt;
use toolgate_runtime::HostContext;

use crate::args::{opt_str_arg, role_arg, str_arg, trusted_keys_arg};
use crate::classify::{classify_impl, headers_of, PyClassification};
use crate::common::PyTable;
use crate::context::PyContext;
use crate::convert::to_py;
use crate::errors::{argument_error, context_error};
use crate::run::run_of;

impl PyTable {
    /// A context of this table, every argument read strictly.
    pub(crate) fn make_context(
        slf: &Bound<'_, PyTable>,
        configuration: &Bound<'_, PyAny>,
        role: &Bound<'_, PyAny>,
        consumer: Option<&Bound<'_, PyAny>>,
        run: Option<&Bound<'_, PyAny>>,
        enforcement: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyContext> {
        let py = slf.py();
        let configuration = str_arg(configuration, "configuration")?;
        let role = role_arg(role)?;
        let consumer = opt_str_arg(consumer, "consumer")?;
        let enforcement = opt_str_arg(enforcement, "enforcement")?;
        let run = match run {
            Some(r) if !r.is_none() => Some(run_of(r)?),
            _ => None,
        };
        let mut ctx = HostContext::new(slf.get().table.clone(), &configuration)
            .map_err(|e| context_error(py, e))?
            .role(role)
            .consumer(consumer.as_deref())
            .map_err(|e| context_error(py, e))?
            .enforcement(enforcement.as_deref());
        if let Some(r) = &run {
            ctx = ctx.run(r);
        }
        Ok(PyContext::new(ctx, slf.clone().unbind()))
    }
}

#[pymethods]
impl PyTable {
    /// Load a table from bytes, or from a file path (`str` or `os.PathLike`).
    /// With `trusted_keys` (PEM public keys), only a table signed by one of them.
    #[staticmethod]
    #[pyo3(signature = (source, *, trusted_keys=None))]
    fn load(
        source: &Bound<'_, PyAny>,
        trusted_keys: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyTable> {
        let keys = trusted_keys_arg(trusted_keys)?;
        PyTable::load_from(source, keys.as_ref())
    }

    /// A context: who is asking. `run` is a `RunState` or its stored form
    /// (read strictly: `RunStateError` when it cannot be read).
    #[pyo3(signature = (configuration, *, role=None, consumer=None, run=None, enforcement=None))]
    fn context(
        slf: &Bound<'_, PyTable>,
        configuration: &Bound<'_, PyAny>,
        role: Option<&Bound<'_, PyAny>>,
        consumer: Option<&Bound<'_, PyAny>>,
        run: Option<&Bound<'_, PyAny>>,
        enforcement: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyContext> {
        let none = PyString::new(slf.py(), "none");
        let role = role.unwrap_or(none.as_any());
        PyTable::make_context(slf, configuration, role, consumer, run, enforcement)
    }

    /// The sha256 of the table's payload, hex.
    #[getter]
    fn digest(&self) -> String {
        self.table.digest_hex()
    }

    /// The id of the key the table was verified with, when it was loaded
    /// with `trusted_keys`.
    #[getter]
    fn verified_by(&self) -> Option<String> {
        self.table.verified_by().map(rt::format::key_id)
    }

    /// Every registered tool, in registry order (tool ids are positions here).
    #[getter]
    fn tools<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, self.names(py).iter().map(|n| n.bind(py)))
    }

    #[getter]
    fn configurations(&self) -> Vec<&str> {
        self.table.configuration_names().collect()
    }

    #[getter]
    fn consumers(&self) -> Vec<&str> {
        self.table
            .spec()
            .consumers
            .iter()
            .map(|c| c.name.as_str())
            .collect()
    }

    #[getter]
    fn skills(&self) -> Vec<&str> {
        self.table
            .spec()
            .skills
            .iter()
            .map(|s| s.name.as_str())
            .collect()
    }

    #[getter]
    fn skill_loader(&self) -> &str {
        &self.table.spec().skill_loader
    }

    fn __len__(&self) -> usize {
        self.table.tool_count()
    }

    /// The id of a registered name (its exact value), else `None`.
    fn tool_id(&self, name: &Bound<'_, PyAny>) -> PyResult<Option<u32>> {
        Ok(self.table.tool_id(&str_arg(name, "tool name")?))
    }

    fn tool_name(&self, py: Python<'_>, id: usize) -> PyResult<Py<PyString>> {
        self.names(py)
            .get(id)
            .map(|n| n.clone_ref(py))
            .ok_or_else(|| argument_error(py, format!("no tool with id {id}")))
    }

    /// The gate-relevant policy as plain data (the input of a hand-written gate).
    fn policy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_py(py, &self.table.policy_json())
    }

    /// Classify a gateway answer with this table's rules for its origin.
    #[pyo3(signature = (answer, *, origin=None, http_status=None, tool=None, headers=None))]
    fn classify(
        &self,
        answer: &Bound<'_, PyAny>,
        origin: Option<&Bound<'_, PyAny>>,
        http_status: Option<u16>,
        tool: Option<&Bound<'_, PyAny>>,
        headers: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassification> {
        let headers = headers_of(answer.py(), headers)?;
        classify_impl(
            Some(&self.table),
            answer,
            origin,
            http_status,
            tool,
            &headers,
        )
    }

    /// [`Self::classify`], raising for a refusal: the exception of its kind
    /// (`ToolNotInProfile`, ..., every one a `PolicyViolation`). Success
    /// and a tool failure (`isError: true`) are returned, never raised.
    #[pyo3(signature = (answer, *, origin=None, http_status=None, tool=None, headers=None))]
    fn classify_or_raise(
        &self,
        answer: &Bound<'_, PyAny>,
        origin: Option<&Bound<'_, PyAny>>,
        http_status: Option<u16>,
        tool: Option<&Bound<'_, PyAny>>,
        headers: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassification> {
        let py = answer.py();
        let c = self.classify(answer, origin, http_status, tool, headers)?;
        match c.refusal(py) {
            Some(r) => Err(crate::errors::error(py, "_refused", (r, py.None()))),
            None => Ok(c),
        }
    }

    fn __repr__(&self) -> String {
        format!(
            "<toolgate.Table {} tools, {} configurations, digest {}>",
            self.table.tool_count(),
            self.table.spec().configurations.len(),
            &self.table.digest_hex()[..12]
        )
    }
}
