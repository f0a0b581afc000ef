//! `Decision`: one tool's answer, an immutable value. It owns everything
//! it shows (the tool name and the trust-zone facts are Python strings), so
//! it borrows nothing from the table.

use std::borrow::Cow;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use toolgate_runtime as rt;
use toolgate_runtime::Reason;

use crate::args::text_of;
use crate::convert::reason_str;

/// One tool's answer (immutable).
#[pyclass(frozen, name = "Decision", module = "toolgate._native")]
pub struct PyDecision {
    pub(crate) tool: Py<PyString>,
    pub(crate) allowed: bool,
    pub(crate) reason: Option<Reason>,
    pub(crate) observed_only: bool,
    /// Offered, and a person approves each call (`needs-approval`).
    pub(crate) needs_approval: bool,
    /// class, zone, ceiling (interned): only when the trust-zone gate was reached.
    facts: Option<[Py<PyString>; 3]>,
    /// A refused remote tool whose name the user of the context that made
    /// it may not see: its refusal is that of an unregistered name.
    pub(crate) hidden: bool,
    /// Whether the tool is remote (for the visibility rule of a context the
    /// decision is handed to later).
    pub(crate) remote: bool,
}

type Key = (
    String,
    bool,
    Option<Reason>,
    bool,
    Option<[String; 3]>,
    bool,
    bool,
);

impl PyDecision {
    pub(crate) fn new(
        py: Python<'_>,
        tool: Py<PyString>,
        d: &rt::Decision<'_>,
        remote: bool,
    ) -> PyDecision {
        let facts = match (d.class, d.zone, d.ceiling) {
            (Some(c), Some(z), Some(x)) => {
                Some([c, z, x].map(|s| PyString::intern(py, s).unbind()))
            }
            _ => None,
        };
        PyDecision {
            tool,
            allowed: d.allowed,
            reason: d.reason,
            observed_only: d.observed_only,
            needs_approval: d.needs_approval,
            facts,
            hidden: d.hidden,
            remote,
        }
    }

    /// class, zone, ceiling as text.
    pub(crate) fn facts_text<'a>(&'a self, py: Python<'a>) -> PyResult<Option<[Cow<'a, str>; 3]>> {
        let Some([c, z, x]) = &self.facts else {
            return Ok(None);
        };
        Ok(Some([
            text_of(c.bind(py), "class")?,
            text_of(z.bind(py), "zone")?,
            text_of(x.bind(py), "ceiling")?,
        ]))
    }

    fn fact(&self, py: Python<'_>, i: usize) -> Option<Py<PyString>> {
        self.facts.as_ref().map(|f| f[i].clone_ref(py))
    }

    fn key(&self, py: Python<'_>) -> Key {
        let s = |p: &Py<PyString>| p.bind(py).to_string_lossy().into_owned();
        (
            s(&self.tool),
            self.allowed,
            self.reason,
            self.observed_only,
            self.facts.as_ref().map(|f| [s(&f[0]), s(&f[1]), s(&f[2])]),
            self.hidden,
            self.needs_approval,
        )
    }
}

#[pymethods]
impl PyDecision {
    #[getter]
    fn tool(&self, py: Python<'_>) -> Py<PyString> {
        self.tool.clone_ref(py)
    }
    #[getter]
    fn allowed(&self) -> bool {
        self.allowed
    }
    /// The first refusing gate's code; for an observed-only decision, "trustZone".
    #[getter]
    fn reason(&self, py: Python<'_>) -> Option<Py<PyString>> {
        self.reason.map(|r| reason_str(py, r).clone_ref(py))
    }
    #[getter]
    fn observed_only(&self) -> bool {
        self.observed_only
    }
    /// Offered, and a person approves each call (`needs-approval`): a call
    /// may not run without that (`Context.check_call` raises
    /// `ApprovalRequired`).
    #[getter]
    fn needs_approval(&self) -> bool {
        self.needs_approval
    }
    /// The tool's data class (only when the trust-zone gate was reached).
    #[getter]
    fn class_(&self, py: Python<'_>) -> Option<Py<PyString>> {
        self.fact(py, 0)
    }
    #[getter]
    fn zone(&self, py: Python<'_>) -> Option<Py<PyString>> {
        self.fact(py, 1)
    }
    #[getter]
    fn ceiling(&self, py: Python<'_>) -> Option<Py<PyString>> {
        self.fact(py, 2)
    }
    /// A refused remote tool whose name this user may not see: shown to a
    /// person or a model as an unregistered name (`Context.refusal`); the
    /// host keeps the true reason.
    #[getter]
    fn hidden(&self) -> bool {
        self.hidden
    }

    /// As the runtime's JSON (camelCase; zone facts only when present;
    /// `hidden` is not part of it, as in the runtime).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("tool", self.tool.bind(py))?;
        d.set_item("allowed", self.allowed)?;
        d.set_item("reason", self.reason(py))?;
        d.set_item("observedOnly", self.observed_only)?;
        if self.needs_approval {
            d.set_item("needsApproval", true)?;
        }
        if let Some([c, z, x]) = &self.facts {
            d.set_item("class", c.bind(py))?;
            d.set_item("zone", z.bind(py))?;
            d.set_item("ceiling", x.bind(py))?;
        }
        Ok(d)
    }

    fn __eq__(&self, py: Python<'_>, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyDecision>()
            .is_ok_and(|o| o.get().key(py) == self.key(py))
    }

    fn __hash__(&self, py: Python<'_>) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        self.key(py).hash(&mut h);
        h.finish()
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let (tool, _, _, _, facts, _, _) = self.key(py);
        let q = |o: Option<&str>| o.map_or("None".to_string(), |s| format!("{s:?}"));
        let b = |v: bool| if v { "True" } else { "False" };
        let f = |i: usize| q(facts.as_ref().map(|f| f[i].as_str()));
        format!(
            "Decision(tool={tool:?}, allowed={}, reason={}, observed_only={}, class_={}, zone={}, ceiling={}, hidden={}{})",
            b(self.allowed),
            q(self.reason.map(Reason::code)),
            b(self.observed_only),
            f(0),
            f(1),
            f(2),
            b(self.hidden),
            if self.needs_approval {
                ", needs_approval=True"
            } else {
                ""
            },
        )
    }
}
