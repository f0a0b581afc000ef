//! The MCP contract of the runtime (`toolgate_runtime::mcp`), for the
//! Python MCP proxy and client (`toolgate.mcp`): the name mapping both ways
//! (`NameMap`), the definition digest of a pinned tool, the JSON-RPC error
//! of a refused call and of an unknown tool, and their codes. Nothing here
//! is computed by the binding: every value is the runtime's.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};
use serde_json::Value;
use toolgate_runtime::mcp as rtmcp;
use toolgate_runtime::names;
use toolgate_runtime::page_walk;

use crate::args::{bytes_of, is_bytes_like, str_arg, str_list_arg, type_name};
use crate::convert::to_py;
use crate::errors::argument_error;
use crate::refusal::PyRefusal;

/// A JSON value given as JSON text (str, bytes) or as Python data (dicts,
/// lists, str, numbers, bools, None: written with `json.dumps`).
fn json_arg(v: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
    let py = v.py();
    let bytes = if v.cast::<PyString>().is_ok() || is_bytes_like(v)? {
        bytes_of(v, what)?
    } else {
        let text = py
            .import("json")?
            .call_method1("dumps", (v,))
            .map_err(|e| argument_error(py, format!("{what}: not JSON data ({e})")))?;
        bytes_of(&text, what)?
    };
    serde_json::from_slice(&bytes).map_err(|e| argument_error(py, format!("{what}: {e}")))
}

/// The digest of a tool's definition as an upstream lists it (`sha256:`
/// and 64 hex digits over its pinned members: title, description, input
/// and output schema, annotations), the runtime's `definition_digest`.
#[pyfunction]
pub(crate) fn definition_digest(tool: &Bound<'_, PyAny>) -> PyResult<String> {
    let v = json_arg(tool, "tool definition")?;
    if !v.is_object() {
        return Err(argument_error(
            tool.py(),
            "tool definition: expected a JSON object",
        ));
    }
    Ok(rtmcp::definition_digest(&v))
}

/// The JSON-RPC error object (`{"code", "message", "data"?}`) of a call
/// of a tool nobody has: `Unknown tool: NAME`, the name escaped.
#[pyfunction]
pub(crate) fn unknown_tool_error<'py>(
    py: Python<'py>,
    name: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let name = str_arg(name, "tool name")?;
    to_py(py, &rtmcp::unknown_tool_error(&name).to_json())
}

/// The JSON-RPC error object of a refused call: an unknown tool for
/// `notRegistered` (and for every kind in `stealth` mode, with no data),
/// else `CODE_CONFIGURATION_REFUSAL` or `CODE_RUNTIME_REFUSAL` by class,
/// the model text as the message and the typed refusal in `data.toolgate`.
#[pyfunction]
#[pyo3(signature = (refusal, *, decision_id=None, table_digest=None, stealth=false))]
pub(crate) fn refusal_error<'py>(
    py: Python<'py>,
    refusal: &PyRefusal,
    decision_id: Option<&str>,
    table_digest: Option<&str>,
    stealth: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let at = rtmcp::Provenance {
        decision_id,
        table_digest,
    };
    to_py(
        py,
        &rtmcp::refusal_error(&refusal.refusal, at, stealth).to_json(),
    )
}

/// The registry name of server `server`'s tool `name` (`mcp_SERVER_NAME`,
/// what `registry import-mcp --server SERVER` writes).
#[pyfunction]
pub(crate) fn registry_name(
    server: &Bound<'_, PyAny>,
    name: &Bound<'_, PyAny>,
) -> PyResult<String> {
    let server = str_arg(server, "server")?;
    let name = str_arg(name, "tool name")?;
    Ok(names::remote_tool_name(&server, &name))
}

/// What the upstreams list, by registry name: the server and the server's
/// own name of each, and the listed tools that are not mapped (a name that
/// breaks MCP's naming rule, or two tools that give one registry name:
/// neither is offered).
#[pyclass(frozen, name = "NameMap", module = "toolgate._native")]
pub struct PyNameMap {
    map: rtmcp::NameMap,
    problems: Vec<String>,
}

#[pymethods]
impl PyNameMap {
    /// `listed`: `(server, [names the server lists])` pairs, or a mapping
    /// of server to names, in order.
    #[new]
    fn new(listed: &Bound<'_, PyAny>) -> PyResult<PyNameMap> {
        let py = listed.py();
        let items = match listed.cast::<pyo3::types::PyDict>() {
            Ok(d) => d.items().into_any(),
            Err(_) => listed.clone(),
        };
        let mut servers: Vec<(String, Vec<String>)> = Vec::new();
        let bad = || {
            argument_error(
                py,
                format!(
                    "NameMap: expected (server, names) pairs or a mapping of server to names, got {}",
                    type_name(listed)
                ),
            )
        };
        if items.cast::<PyString>().is_ok() {
            return Err(bad());
        }
        for pair in items.try_iter().map_err(|_| bad())? {
            let pair = pair?;
            let t = pair.cast::<PyTuple>().map_err(|_| bad())?;
            if t.len() != 2 {
                return Err(bad());
            }
            let server = str_arg(&t.get_item(0)?, "server")?.into_owned();
            if let Some(why) = names::remote_name_problem(&server) {
                return Err(argument_error(
                    py,
                    format!("server name `{}`: {why}", names::escape(&server)),
                ));
            }
            let names = str_list_arg(&t.get_item(1)?, "tool names")?;
            servers.push((server, names));
        }
        let (map, problems) =
            rtmcp::NameMap::new(servers.iter().map(|(s, n)| (s.as_str(), n.clone())));
        Ok(PyNameMap {
            map,
            problems: problems.iter().map(ToString::to_string).collect(),
        })
    }

    /// `(server, the server's own name)` of a registry name, or `None` when
    /// no upstream lists it unambiguously.
    fn route(&self, registry_name: &Bound<'_, PyAny>) -> PyResult<Option<(String, String)>> {
        let name = str_arg(registry_name, "registry name")?;
        Ok(self
            .map
            .route(&name)
            .map(|(s, n)| (s.to_string(), n.to_string())))
    }

    /// Why listed tools are not mapped (the runtime's messages).
    #[getter]
    fn problems<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        PyList::new(py, &self.problems)
    }

    fn __len__(&self) -> usize {
        self.map.len()
    }

    fn __contains__(&self, registry_name: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(self.route(registry_name)?.is_some())
    }

    fn __repr__(&self) -> String {
        format!(
            "<toolgate.NameMap {} tools, {} not mapped>",
            self.map.len(),
            self.problems.len()
        )
    }
}

/// The constants of the MCP contract, added to the module.
/// The walk through a peer's pages of one list, under the bounds every
/// toolgate client of MCP keeps (`toolgate_runtime::page_walk`): at most
/// `max_pages` pages and `max_items` items, no cursor twice.
#[pyclass(name = "PageWalk", module = "toolgate._native")]
pub struct PyPageWalk(page_walk::PageWalk);

#[pymethods]
impl PyPageWalk {
    #[new]
    fn new(max_pages: usize, max_items: usize) -> PyPageWalk {
        PyPageWalk(page_walk::PageWalk::new(max_pages, max_items))
    }

    /// A page came with `items` items and `next_cursor`: the cursor to ask
    /// the next page with, None when the list is whole; a `ValueError`
    /// saying why the walk stops ("listed more than 7 pages ...",
    /// "repeated the cursor ...").
    fn next(&mut self, items: usize, next_cursor: Option<String>) -> PyResult<Option<String>> {
        self.0
            .next(items, next_cursor.filter(|c| !c.is_empty()))
            .map_err(|stop| PyValueError::new_err(stop.to_string()))
    }

    #[getter]
    fn pages(&self) -> usize {
        self.0.pages()
    }

    #[getter]
    fn items(&self) -> usize {
        self.0.items()
    }
}

pub(crate) fn add(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyNameMap>()?;
    m.add_class::<PyPageWalk>()?;
    m.add_function(wrap_pyfunction!(definition_digest, m)?)?;
    m.add_function(wrap_pyfunction!(unknown_tool_error, m)?)?;
    m.add_function(wrap_pyfunction!(refusal_error, m)?)?;
    m.add_function(wrap_pyfunction!(registry_name, m)?)?;
    m.add("MCP_REVISION", rtmcp::REVISION)?;
    m.add("CODE_UNKNOWN_TOOL", rtmcp::CODE_UNKNOWN_TOOL)?;
    m.add(
        "CODE_CONFIGURATION_REFUSAL",
        rtmcp::CODE_CONFIGURATION_REFUSAL,
    )?;
    m.add("CODE_RUNTIME_REFUSAL", rtmcp::CODE_RUNTIME_REFUSAL)?;
    m.add("CODE_APPROVAL_REQUIRED", rtmcp::CODE_APPROVAL_REQUIRED)?;
    m.add(
        "PINNED_MEMBERS",
        PyTuple::new(m.py(), rtmcp::PINNED_MEMBERS)?,
    )?;
    Ok(())
}
