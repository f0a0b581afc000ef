//! Values across the boundary: JSON values as Python data, reason codes as
//! interned strings, long lists of pairs.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyList, PyString};
use serde_json::Value;
use toolgate_runtime::{Reason, GATE_ORDER};

/// A JSON value as Python data (objects are dicts, in their key order).
pub(crate) fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_pyobject(py)?.into_any(),
            (None, Some(u)) => u.into_pyobject(py)?.into_any(),
            _ => n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any(),
        },
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(a) => {
            let items = a
                .iter()
                .map(|x| to_py(py, x))
                .collect::<PyResult<Vec<_>>>()?;
            PyList::new(py, items)?.into_any()
        }
        Value::Object(o) => {
            let d = PyDict::new(py);
            for (k, x) in o {
                d.set_item(k, to_py(py, x)?)?;
            }
            d.into_any()
        }
    })
}

/// The reason codes as interned Python strings, by gate rank.
static REASONS: PyOnceLock<Vec<Py<PyString>>> = PyOnceLock::new();

/// The interned code of `r`.
pub(crate) fn reason_str(py: Python<'_>, r: Reason) -> &Py<PyString> {
    &REASONS.get_or_init(py, || {
        GATE_ORDER
            .iter()
            .map(|g| PyString::intern(py, g.code()).unbind())
            .collect()
    })[r.rank()]
}

/// A list of `len` 2-tuples, built through the C API (the unavailable list
/// of a large table is thousands of pairs: no intermediate vectors).
pub(crate) fn pairs_list<'py>(
    py: Python<'py>,
    items: impl Iterator<Item = (Bound<'py, PyAny>, Bound<'py, PyAny>)>,
    len: usize,
) -> PyResult<Bound<'py, PyList>> {
    use pyo3::ffi;
    // SAFETY: the list and tuples are new objects owned here; `SetItem`
    // steals the references `into_ptr` hands over; every index is in range
    // (the iterator yields exactly `len` items, checked below).
    unsafe {
        let list = ffi::PyList_New(len as ffi::Py_ssize_t);
        let list = Bound::from_owned_ptr_or_err(py, list)?.cast_into_unchecked::<PyList>();
        let mut k = 0usize;
        for (a, b) in items {
            assert!(k < len, "more pairs than announced");
            let t = Bound::from_owned_ptr_or_err(py, ffi::PyTuple_New(2))?;
            ffi::PyTuple_SetItem(t.as_ptr(), 0, a.into_ptr());
            ffi::PyTuple_SetItem(t.as_ptr(), 1, b.into_ptr());
            ffi::PyList_SetItem(list.as_ptr(), k as ffi::Py_ssize_t, t.into_ptr());
            k += 1;
        }
        assert_eq!(k, len, "fewer pairs than announced");
        Ok(list)
    }
}
