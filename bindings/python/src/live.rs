//! `LiveTool`: a tool the host registered after the table was compiled. It
//! is made by the runtime's `LiveTool::new`, which checks its name as the
//! registry checks one; a name it refuses is an `ArgumentError` with the
//! runtime's message.

use pyo3::prelude::*;
use toolgate_runtime as rt;

use crate::args::{bytes_of, opt_str_arg, str_arg};
use crate::errors::live_tool_error;

/// A tool the host registered after the table was compiled, with its live metadata.
#[pyclass(frozen, name = "LiveTool", module = "toolgate._native")]
pub struct PyLiveTool {
    pub(crate) tool: rt::LiveTool,
}

impl PyLiveTool {
    /// Whether the tool is remote for `table`: the table's fact when the
    /// table knows the name (its decision is the table's), else the live one.
    pub(crate) fn is_remote_in(&self, table: &rt::Table) -> bool {
        match table.tool_id(self.tool.name()) {
            Some(id) => table.spec().tools[id as usize].remote,
            None => self.tool.remote(),
        }
    }
}

#[pymethods]
impl PyLiveTool {
    #[new]
    #[pyo3(signature = (name, group, *, remote=false, enabled=true, admin_only=false, class_=None))]
    fn new(
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        group: &Bound<'_, PyAny>,
        remote: bool,
        enabled: bool,
        admin_only: bool,
        class_: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let spec = rt::LiveToolSpec {
            name: str_arg(name, "live tool name")?.into_owned(),
            group: str_arg(group, "live tool group")?.into_owned(),
            remote,
            enabled,
            admin_only,
            class: opt_str_arg(class_, "live tool class")?.map(|c| c.into_owned()),
        };
        rt::LiveTool::new(spec)
            .map(|tool| PyLiveTool { tool })
            .map_err(|e| live_tool_error(py, e))
    }

    /// A live tool from its JSON object `{"name", "group", "remote",
    /// "enabled", "adminOnly", "class"}` (every key but `class` required),
    /// as the C ABI and PHP take it.
    #[staticmethod]
    fn from_json(py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<Self> {
        let bytes = bytes_of(text, "live tool")?;
        rt::LiveTool::from_json(&bytes)
            .map(|tool| PyLiveTool { tool })
            .map_err(|e| live_tool_error(py, e))
    }

    #[getter]
    fn name(&self) -> &str {
        self.tool.name()
    }
    #[getter]
    fn group(&self) -> &str {
        self.tool.group()
    }
    #[getter]
    fn remote(&self) -> bool {
        self.tool.remote()
    }
    #[getter]
    fn enabled(&self) -> bool {
        self.tool.enabled()
    }
    #[getter]
    fn admin_only(&self) -> bool {
        self.tool.admin_only()
    }
    #[getter]
    fn class_(&self) -> Option<&str> {
        self.tool.class()
    }
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyLiveTool>()
            .is_ok_and(|o| o.get().tool == self.tool)
    }
    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let t = &self.tool;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (
            t.name(),
            t.group(),
            t.remote(),
            t.enabled(),
            t.admin_only(),
            t.class(),
        )
            .hash(&mut h);
        h.finish()
    }
    fn __repr__(&self) -> String {
        format!("LiveTool({:?}, {:?})", self.tool.name(), self.tool.group())
    }
}
