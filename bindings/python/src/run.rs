//! `RunState`: a run's skill allow-list and exclusions, stored with the run
//! and read back strictly.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyList};
use toolgate_runtime as rt;

use crate::args::{bytes_of, str_arg, str_list_arg};
use crate::common::PyTable;
use crate::errors::{error, run_error};

/// A run's skill allow-list and exclusions from its start, stored with the
/// run and narrowed (never widened) on resume.
#[pyclass(frozen, name = "RunState", module = "toolgate._native")]
pub struct PyRunState {
    pub(crate) state: rt::RunState,
}

impl From<rt::RunState> for PyRunState {
    fn from(state: rt::RunState) -> PyRunState {
        PyRunState { state }
    }
}

/// `RunStateError`, carrying the state to use instead (it admits nothing).
/// Here rather than in `errors`, which needs nothing of the classes.
fn run_state_error(py: Python<'_>, e: rt::RunStateError) -> PyErr {
    match Py::new(py, PyRunState::from(e.state)) {
        Ok(state) => error(py, "RunStateError", (e.message, state)),
        Err(err) => err,
    }
}

/// A run state from a `RunState`, or the stored form read strictly.
pub(crate) fn run_of(r: &Bound<'_, PyAny>) -> PyResult<rt::RunState> {
    if let Ok(s) = r.cast::<PyRunState>() {
        return Ok(s.get().state.clone());
    }
    let bytes = bytes_of(r, "run")?;
    rt::RunState::parse(&bytes).map_err(|e| run_state_error(r.py(), e))
}

fn names_or_false<'py>(py: Python<'py>, names: Option<&[String]>) -> PyResult<Bound<'py, PyAny>> {
    match names {
        Some(n) => Ok(PyList::new(py, n)?.into_any()),
        None => Ok(PyBool::new(py, false).to_owned().into_any()),
    }
}

#[pymethods]
impl PyRunState {
    /// A run's state from names (`allowed_tool_names=None`: no allow-list).
    #[new]
    #[pyo3(signature = (allowed_tool_names=None, excluded_tool_names=None))]
    fn new(
        allowed_tool_names: Option<&Bound<'_, PyAny>>,
        excluded_tool_names: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let allowed = match allowed_tool_names.filter(|v| !v.is_none()) {
            None => rt::AllowList::Unrestricted,
            Some(v) => rt::AllowList::Only(str_list_arg(v, "allowed_tool_names")?),
        };
        let excluded = match excluded_tool_names.filter(|v| !v.is_none()) {
            None => Vec::new(),
            Some(v) => str_list_arg(v, "excluded_tool_names")?,
        };
        Ok(PyRunState {
            state: rt::RunState {
                allowed,
                excluded: rt::Exclusions::Names(excluded),
            },
        })
    }

    /// Resolve at run start: the configuration's attached skills plus
    /// `skills` (forced or invoked), and the configuration's exclusions now.
    #[staticmethod]
    #[pyo3(signature = (table, configuration, skills=None))]
    fn start(
        py: Python<'_>,
        table: &PyTable,
        configuration: &Bound<'_, PyAny>,
        skills: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let configuration = str_arg(configuration, "configuration")?;
        let skills = match skills.filter(|v| !v.is_none()) {
            None => Vec::new(),
            Some(v) => str_list_arg(v, "skills")?,
        };
        let skills: Vec<&str> = skills.iter().map(String::as_str).collect();
        rt::RunState::start(&table.table, &configuration, &skills)
            .map(PyRunState::from)
            .map_err(|e| run_error(py, e))
    }

    /// Read the stored form strictly: `RunStateError` (whose `state` admits
    /// nothing) when it is not exactly a stored run.
    #[staticmethod]
    fn parse(data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let bytes = bytes_of(data, "run")?;
        rt::RunState::parse(&bytes)
            .map(PyRunState::from)
            .map_err(|e| run_state_error(data.py(), e))
    }

    /// Read the stored form; what cannot be read admits no tool (never raises
    /// for content; see `parse` to learn what was wrong).
    #[staticmethod]
    fn from_bytes(data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let bytes = bytes_of(data, "run")?;
        Ok(rt::RunState::from_bytes(&bytes).into())
    }

    /// The state that admits nothing.
    #[staticmethod]
    fn unreadable() -> Self {
        rt::RunState::unreadable().into()
    }

    /// On resume: `self` is stored, `live` resolved now. Allow-lists
    /// intersect, exclusions unite: never wider than either.
    fn resume(&self, live: &PyRunState) -> Self {
        self.state.resume(&live.state).into()
    }

    /// The stored form (JSON text).
    fn to_json(&self) -> String {
        self.state.to_json()
    }

    #[getter]
    fn is_readable(&self) -> bool {
        self.state.is_readable()
    }

    /// `None`: no allow-list; a list of names; `False`: unreadable (admits nothing).
    #[getter]
    fn allowed_tool_names<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match &self.state.allowed {
            rt::AllowList::Unrestricted => Ok(py.None().into_bound(py)),
            rt::AllowList::Only(n) => names_or_false(py, Some(n)),
            rt::AllowList::Unreadable => names_or_false(py, None),
        }
    }

    /// A list of names; `False`: unreadable (admits nothing).
    #[getter]
    fn excluded_tool_names<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        match &self.state.excluded {
            rt::Exclusions::Names(n) => names_or_false(py, Some(n)),
            rt::Exclusions::Unreadable => names_or_false(py, None),
        }
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyRunState>()
            .is_ok_and(|o| o.get().state == self.state)
    }

    fn __repr__(&self) -> String {
        format!("RunState({})", self.state.to_json())
    }
}
