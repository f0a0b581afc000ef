//! `Refusal`: the typed refusal (docs/refusals.md), what a host needs to
//! react correctly, and what the model is shown.

use pyo3::prelude::*;
use serde_json::Value;
use toolgate_runtime as rt;

use crate::args::bytes_of;
use crate::convert::to_py;
use crate::errors::argument_error;

/// The typed refusal: what a host needs to react correctly (immutable).
#[pyclass(frozen, name = "Refusal", module = "toolgate._native")]
pub struct PyRefusal {
    pub(crate) refusal: rt::Refusal,
}

impl From<rt::Refusal> for PyRefusal {
    fn from(refusal: rt::Refusal) -> PyRefusal {
        PyRefusal { refusal }
    }
}

pub(crate) fn code_of<T: serde::Serialize>(v: T) -> String {
    match serde_json::to_value(v) {
        Ok(Value::String(s)) => s,
        _ => String::new(),
    }
}

#[pymethods]
impl PyRefusal {
    /// The refusal kind: a gate reason, or "contentPolicy" / "policy".
    #[getter]
    fn kind(&self) -> String {
        code_of(self.refusal.kind)
    }
    /// Who can fix it: "configuration" or "runtime".
    #[getter]
    fn class_(&self) -> String {
        code_of(self.refusal.class)
    }
    #[getter]
    fn retryable(&self) -> bool {
        self.refusal.retryable
    }
    /// "stop", "rephrase" or "escalate".
    #[getter]
    fn action(&self) -> String {
        code_of(self.refusal.action)
    }
    #[getter]
    fn tool(&self) -> Option<&str> {
        self.refusal.tool.as_deref()
    }
    #[getter]
    fn profile(&self) -> Option<&str> {
        self.refusal.profile.as_deref()
    }
    #[getter]
    fn consumer(&self) -> Option<&str> {
        self.refusal.consumer.as_deref()
    }
    #[getter]
    fn configuration(&self) -> Option<&str> {
        self.refusal.configuration.as_deref()
    }
    #[getter]
    fn file(&self) -> Option<&str> {
        self.refusal.file.as_deref()
    }
    #[getter]
    fn policy(&self) -> Option<&str> {
        self.refusal.policy.as_deref()
    }
    #[getter]
    fn origin(&self) -> Option<&str> {
        self.refusal.origin.as_deref()
    }
    #[getter]
    fn rule(&self) -> Option<&str> {
        self.refusal.rule.as_deref()
    }
    /// The gateway's own message, as received; for a grant that did not
    /// let the call run, why.
    #[getter]
    fn detail(&self) -> Option<&str> {
        self.refusal.detail.as_deref()
    }
    /// For `approvalRequired` with a grant that did not let the call run:
    /// its code (`grantReplayed`, `grantExpired`, `grantOtherArguments`,
    /// ...); None otherwise.
    #[getter]
    fn grant_error(&self) -> Option<&str> {
        self.refusal.grant_error.as_deref()
    }
    /// The text to show the model.
    #[getter]
    fn model_text(&self) -> &str {
        &self.refusal.model_text
    }
    /// The exact fix, for the person who can make it.
    #[getter]
    fn remediation(&self) -> &str {
        &self.refusal.remediation
    }

    /// The refusal of a kind with what is known about it, its class,
    /// action and texts the runtime's (`Refusal::new`): what a gateway
    /// answers when it refuses by itself (`definitionChanged`). An unknown
    /// kind raises `ArgumentError`.
    #[staticmethod]
    #[pyo3(signature = (kind, *, tool=None, profile=None, consumer=None, configuration=None, origin=None, detail=None))]
    #[allow(clippy::too_many_arguments)]
    fn of_kind(
        py: Python<'_>,
        kind: &str,
        tool: Option<String>,
        profile: Option<String>,
        consumer: Option<String>,
        configuration: Option<String>,
        origin: Option<String>,
        detail: Option<String>,
    ) -> PyResult<PyRefusal> {
        let kind = rt::RefusalKind::from_code(kind)
            .ok_or_else(|| argument_error(py, format!("unknown refusal kind {kind:?}")))?;
        let facts = rt::refusal::Facts {
            tool,
            profile,
            consumer,
            configuration,
            origin,
            detail,
            ..Default::default()
        };
        Ok(PyRefusal {
            refusal: rt::Refusal::new(kind, facts),
        })
    }

    /// As the runtime's JSON (camelCase keys, every key present).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let v =
            serde_json::to_value(&self.refusal).map_err(|e| argument_error(py, e.to_string()))?;
        to_py(py, &v)
    }

    fn to_json(&self, py: Python<'_>) -> PyResult<String> {
        serde_json::to_string(&self.refusal).map_err(|e| argument_error(py, e.to_string()))
    }

    /// Read a refusal back from its JSON (as `to_json` writes it).
    #[staticmethod]
    fn from_json(py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<PyRefusal> {
        let bytes = bytes_of(text, "refusal")?;
        serde_json::from_slice::<rt::Refusal>(&bytes)
            .map(|refusal| PyRefusal { refusal })
            .map_err(|e| argument_error(py, format!("refusal: {e}")))
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<PyRefusal>()
            .is_ok_and(|o| o.get().refusal == self.refusal)
    }

    fn __repr__(&self) -> String {
        format!(
            "Refusal(kind={:?}, tool={}, action={:?})",
            code_of(self.refusal.kind),
            self.refusal
                .tool
                .as_deref()
                .map_or("None".into(), |t| format!("{t:?}")),
            code_of(self.refusal.action)
        )
    }
}
