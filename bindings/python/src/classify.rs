//! Classification of gateway answers: `classify`, `classify_envelope`,
//! `classify_file`, `Classification`. Every answer is the runtime's.

use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};
use toolgate_runtime as rt;

use crate::args::{bytes_of, file_arg, opt_str_arg, text_of};
use crate::common::PyTable;
use crate::convert::to_py;
use crate::errors::argument_error;
use crate::refusal::{code_of, PyRefusal};

/// What a gateway answer means: "success", "toolFailure" (with `text`) or
/// "refusal" (with `refusal`).
#[pyclass(frozen, name = "Classification", module = "toolgate._native")]
pub struct PyClassification {
    classified: rt::Classified,
    refusal: Option<Py<PyRefusal>>,
}

#[pymethods]
impl PyClassification {
    #[getter]
    fn outcome(&self) -> &'static str {
        match self.classified {
            rt::Classified::Success => "success",
            rt::Classified::ToolFailure { .. } => "toolFailure",
            rt::Classified::Refusal { .. } => "refusal",
        }
    }
    #[getter]
    fn text(&self) -> Option<&str> {
        match &self.classified {
            rt::Classified::ToolFailure { text } => Some(text),
            _ => None,
        }
    }
    #[getter]
    pub(crate) fn refusal(&self, py: Python<'_>) -> Option<Py<PyRefusal>> {
        self.refusal.as_ref().map(|r| r.clone_ref(py))
    }
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let v = serde_json::to_value(&self.classified)
            .map_err(|e| argument_error(py, e.to_string()))?;
        to_py(py, &v)
    }
    fn __repr__(&self) -> String {
        match &self.classified {
            rt::Classified::Refusal { refusal } => {
                format!("Classification(refusal {:?})", code_of(refusal.kind))
            }
            _ => format!("Classification({})", self.outcome()),
        }
    }
}

/// HTTP headers from Python: a mapping of name to a str or a list of str (a
/// field received several times), or an iterable of (name, value) pairs.
pub(crate) fn headers_of(
    py: Python<'_>,
    v: Option<&Bound<'_, PyAny>>,
) -> PyResult<Vec<(String, String)>> {
    let Some(v) = v.filter(|v| !v.is_none()) else {
        return Ok(Vec::new());
    };
    let bad = || {
        argument_error(
            py,
            "headers: expected a mapping of str to str (or list of str), or (name, value) pairs",
        )
    };
    let text = |x: &Bound<'_, PyAny>, what: &str| -> PyResult<String> {
        let s = x.cast::<PyString>().map_err(|_| bad())?;
        Ok(text_of(s, what)?.into_owned())
    };
    let mut out = Vec::new();
    if let Ok(d) = v.cast::<PyDict>() {
        for (k, val) in d.iter() {
            let name = text(&k, "header name")?;
            if val.cast::<PyString>().is_ok() {
                out.push((name.clone(), text(&val, "header value")?));
                continue;
            }
            let values = val.try_iter().map_err(|_| bad())?;
            for x in values {
                out.push((name.clone(), text(&x?, "header value")?));
            }
        }
        return Ok(out);
    }
    if v.cast::<PyString>().is_ok() {
        return Err(bad());
    }
    for pair in v.try_iter().map_err(|_| bad())? {
        let pair = pair?;
        let (k, val): (Bound<'_, PyAny>, Bound<'_, PyAny>) = pair.extract().map_err(|_| bad())?;
        out.push((text(&k, "header name")?, text(&val, "header value")?));
    }
    Ok(out)
}

pub(crate) fn classify_impl(
    table: Option<&rt::Table>,
    answer: &Bound<'_, PyAny>,
    origin: Option<&Bound<'_, PyAny>>,
    http_status: Option<u16>,
    tool: Option<&Bound<'_, PyAny>>,
    headers: &[(String, String)],
) -> PyResult<PyClassification> {
    let py = answer.py();
    let body = bytes_of(answer, "answer")?;
    let origin = opt_str_arg(origin, "origin")?;
    let tool = opt_str_arg(tool, "tool")?;
    let raw = rt::RawAnswer {
        body: &body,
        http_status,
        headers,
        origin: origin.as_deref(),
        tool: tool.as_deref(),
    };
    let classified = match table {
        Some(t) => t.classify_raw(&raw),
        None => rt::classify_raw(&raw),
    };
    classification(py, classified)
}

fn classification(py: Python<'_>, classified: rt::Classified) -> PyResult<PyClassification> {
    let refusal = match &classified {
        rt::Classified::Refusal { refusal } => {
            Some(Py::new(py, PyRefusal::from((**refusal).clone()))?)
        }
        _ => None,
    };
    Ok(PyClassification {
        classified,
        refusal,
    })
}

/// Classify a gateway answer's raw body (bytes or str: JSON, plain text,
/// HTML, empty), parsed strictly, with its HTTP headers: anything unreadable
/// or ambiguous that no rule recognises is a refusal, never success.
#[pyfunction]
#[pyo3(signature = (answer, *, origin=None, http_status=None, tool=None, table=None, headers=None))]
pub(crate) fn classify(
    answer: &Bound<'_, PyAny>,
    origin: Option<&Bound<'_, PyAny>>,
    http_status: Option<u16>,
    tool: Option<&Bound<'_, PyAny>>,
    table: Option<&PyTable>,
    headers: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyClassification> {
    let headers = headers_of(answer.py(), headers)?;
    classify_impl(
        table.map(|t| &*t.table),
        answer,
        origin,
        http_status,
        tool,
        &headers,
    )
}

/// Classify an answer file's bytes as `toolgate classify` reads them: an
/// envelope `{"httpStatus", "origin", "headers", "body" | "bodyText"}` or a
/// bare body. Given `origin` / `http_status` win over the envelope's; given
/// `headers` are added to its.
#[pyfunction]
#[pyo3(signature = (data, *, origin=None, http_status=None, tool=None, table=None, headers=None))]
pub(crate) fn classify_envelope(
    data: &Bound<'_, PyAny>,
    origin: Option<&Bound<'_, PyAny>>,
    http_status: Option<u16>,
    tool: Option<&Bound<'_, PyAny>>,
    table: Option<&PyTable>,
    headers: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyClassification> {
    let py = data.py();
    let bytes = bytes_of(data, "answer")?;
    let origin = opt_str_arg(origin, "origin")?;
    let tool = opt_str_arg(tool, "tool")?;
    let mut envelope = rt::Envelope::read(&bytes);
    envelope.headers.extend(headers_of(py, headers)?);
    let raw = envelope.answer(http_status, origin.as_deref(), tool.as_deref());
    let classified = match table {
        Some(t) => t.table.classify_raw(&raw),
        None => rt::classify_raw(&raw),
    };
    classification(py, classified)
}

/// [`classify_envelope`] of a file (a regular file, read by the runtime's
/// host file rule).
#[pyfunction]
#[pyo3(signature = (path, *, origin=None, http_status=None, tool=None, table=None, headers=None))]
pub(crate) fn classify_file(
    path: &Bound<'_, PyAny>,
    origin: Option<&Bound<'_, PyAny>>,
    http_status: Option<u16>,
    tool: Option<&Bound<'_, PyAny>>,
    table: Option<&PyTable>,
    headers: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyClassification> {
    let bytes = file_arg(path, "answer")?;
    let data = PyBytes::new(path.py(), &bytes);
    classify_envelope(data.as_any(), origin, http_status, tool, table, headers)
}
