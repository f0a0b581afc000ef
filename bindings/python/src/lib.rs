//! `toolgate._native`: the toolgate runtime for Python (PyO3, abi3 from 3.9).
//!
//! Every answer comes from `toolgate-runtime` (never the compiler): this
//! module only moves values across the boundary, through the runtime's host
//! layer (`HostContext`, `host::codes`, `host::read_file`), and has no
//! lifetime-extending `unsafe` of its own. Errors are Python exceptions of
//! `toolgate._errors` (never a silent allow); lists over a large table are
//! computed with the GIL released.
//!
//! | module | what |
//! | --- | --- |
//! | `errors` | the exceptions, from the runtime's errors |
//! | `args` | arguments read strictly (exact `str` values, no bare `UnicodeEncodeError`) |
//! | `convert` | JSON values, interned reason codes, pair lists |
//! | `common` | what the classes share: `Table`'s data (the loaded table, its name index) and its loading |
//! | `table` | `Table`'s methods and contexts |
//! | `context` | `Context` |
//! | `decision` | `Decision` |
//! | `refusal` | `Refusal` |
//! | `classify` | `Classification`, `classify`, `classify_envelope`, `classify_file` |
//! | `run` | `RunState` |
//! | `live` | `LiveTool` |
//! | `handle` | `TableHandle` |
//! | `mcp` | the MCP contract: `NameMap`, `definition_digest`, `refusal_error`, `unknown_tool_error`, the codes |

mod args;
mod classify;
mod common;
mod context;
mod convert;
mod decision;
mod errors;
mod handle;
mod live;
mod mcp;
mod refusal;
mod run;
mod table;

use pyo3::prelude::*;
use toolgate_runtime::host;

/// Every code the library exposes, as Python data: `gates` (code, number,
/// letter, message, in gate order), `refusalKinds`, `roles`, `statuses`,
/// `packed`, `maxFileBytes` (the runtime's `host::catalogue`, the same
/// document as the C ABI's `toolgate_codes_json`).
#[pyfunction]
fn codes(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    convert::to_py(py, &host::catalogue())
}

#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<common::PyTable>()?;
    m.add_class::<context::PyContext>()?;
    m.add_class::<decision::PyDecision>()?;
    m.add_class::<refusal::PyRefusal>()?;
    m.add_class::<classify::PyClassification>()?;
    m.add_class::<run::PyRunState>()?;
    m.add_class::<live::PyLiveTool>()?;
    m.add_class::<handle::PyTableHandle>()?;
    m.add_function(wrap_pyfunction!(classify::classify, m)?)?;
    m.add_function(wrap_pyfunction!(classify::classify_envelope, m)?)?;
    m.add_function(wrap_pyfunction!(classify::classify_file, m)?)?;
    m.add_function(wrap_pyfunction!(codes, m)?)?;
    m.add("MAX_FILE_BYTES", host::MAX_FILE_BYTES)?;
    mcp::add(m)?;
    Ok(())
}
