//! `toolgate._native`: the toolgate runtime for Python (PyO3, abi3 from 3.9).
//!
//! Every answer comes from `toolgate-runtime` (never the compiler): this
//! module only moves values across the boundary. Errors are Python
//! exceptions of `toolgate._errors` (never a silent allow); lists over a
//! large table are computed with the GIL released.

use std::io::Read;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyList, PyString, PyTuple};
use serde_json::Value;
use toolgate_runtime as rt;
use toolgate_runtime::{Reason, GATE_ORDER};

/// Lists over at least this many tools run with the GIL released.
const LONG_WORK_TOOLS: usize = 1024;
/// Any input file (table, run, answer): as the CLI caps it.
const MAX_FILE: u64 = 256 << 20;

// ------------------------------------------------------------------ errors

/// An exception of `toolgate._errors`, built with `args`.
fn error<'py, A>(py: Python<'py>, class: &str, args: A) -> PyErr
where
    A: pyo3::call::PyCallArgs<'py>,
{
    match py
        .import("toolgate._errors")
        .and_then(|m| m.getattr(class))
        .and_then(|c| c.call1(args))
    {
        Ok(e) => PyErr::from_value(e),
        Err(e) => e,
    }
}

fn argument_error(py: Python<'_>, message: impl Into<String>) -> PyErr {
    error(py, "ArgumentError", (message.into(),))
}

/// The `trusted_keys` argument: PEM public keys (`str`), or none.
fn trusted_keys(py: Python<'_>, pem: Option<&str>) -> PyResult<Option<rt::TrustedKeys>> {
    pem.map(|p| rt::TrustedKeys::from_pem(p).map_err(|e| argument_error(py, e.to_string())))
        .transpose()
}

fn load_error(py: Python<'_>, e: &rt::LoadError) -> PyErr {
    error(py, "LoadError", (e.code(), e.to_string()))
}

/// Read a regular file, capped while reading (as the CLI reads its inputs).
fn read_capped(py: Python<'_>, path: &PathBuf, what: &str) -> PyResult<Vec<u8>> {
    let io = |m: String| error(py, "LoadError", ("io", m));
    let shown = path.display();
    let file = std::fs::File::open(path).map_err(|e| io(format!("{what} {shown}: {e}")))?;
    let meta = file
        .metadata()
        .map_err(|e| io(format!("{what} {shown}: {e}")))?;
    if !meta.is_file() {
        return Err(io(format!("{what} {shown}: not a regular file")));
    }
    let mut bytes = Vec::new();
    file.take(MAX_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| io(format!("{what} {shown}: {e}")))?;
    if bytes.len() as u64 > MAX_FILE {
        return Err(error(
            py,
            "LoadError",
            (
                "tooLarge",
                format!("{what} {shown}: larger than {MAX_FILE} bytes"),
            ),
        ));
    }
    Ok(bytes)
}

/// Bytes from `bytes`, `bytearray` or `memoryview`, or the UTF-8 of a `str`.
fn bytes_of(py: Python<'_>, v: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<u8>> {
    if let Ok(b) = v.cast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    if let Ok(b) = v.cast::<PyByteArray>() {
        return Ok(b.to_vec());
    }
    if let Ok(s) = v.cast::<PyString>() {
        return s
            .to_cow()
            .map(|c| c.into_owned().into_bytes())
            .map_err(|_| argument_error(py, format!("{what}: a str that is not valid Unicode")));
    }
    if v.hasattr("tobytes")? {
        if let Ok(b) = v.call_method0("tobytes")?.cast::<PyBytes>() {
            return Ok(b.as_bytes().to_vec());
        }
    }
    Err(argument_error(
        py,
        format!(
            "{what}: expected bytes or str, got {}",
            v.get_type().name()?
        ),
    ))
}

fn role_of(py: Python<'_>, role: &str) -> PyResult<rt::Role> {
    match role {
        "admin" => Ok(rt::Role::Admin),
        "user" => Ok(rt::Role::User),
        "none" => Ok(rt::Role::None),
        other => Err(argument_error(
            py,
            format!("role {other:?}: expected \"admin\", \"user\" or \"none\""),
        )),
    }
}

// -------------------------------------------------------------- JSON values

fn to_py<'py>(py: Python<'py>, v: &Value) -> PyResult<Bound<'py, PyAny>> {
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

/// The seven reason codes as interned Python strings, by gate rank.
static REASONS: PyOnceLock<Vec<Py<PyString>>> = PyOnceLock::new();

fn reason_str(py: Python<'_>, r: Reason) -> &Py<PyString> {
    &REASONS.get_or_init(py, || {
        let mut v: Vec<Py<PyString>> = Vec::with_capacity(GATE_ORDER.len());
        for g in GATE_ORDER {
            debug_assert_eq!(g.rank(), v.len());
            v.push(PyString::intern(py, g.code()).unbind());
        }
        v
    })[r.rank()]
}

fn reason_of(py: Python<'_>, code: Option<&str>) -> PyResult<Option<Reason>> {
    code.map(|c| {
        Reason::from_code(c).ok_or_else(|| argument_error(py, format!("unknown reason {c:?}")))
    })
    .transpose()
}

// ------------------------------------------------------------------- Table

/// A compiled table, loaded (fails closed: any defect raises `LoadError`).
#[pyclass(frozen, name = "Table", module = "toolgate._native")]
pub struct PyTable {
    table: Arc<rt::Table>,
    /// Tool names as Python strings, by tool id (built on first use).
    names: PyOnceLock<Vec<Py<PyString>>>,
    /// name -> id, a dict (a str's hash is cached: no UTF-8 conversion per decision).
    index: PyOnceLock<Py<PyDict>>,
}

impl PyTable {
    fn wrap(table: Arc<rt::Table>) -> PyTable {
        PyTable {
            table,
            names: PyOnceLock::new(),
            index: PyOnceLock::new(),
        }
    }

    fn names(&self, py: Python<'_>) -> &[Py<PyString>] {
        self.names.get_or_init(py, || {
            self.table
                .spec()
                .tools
                .iter()
                .map(|t| PyString::new(py, &t.name).unbind())
                .collect()
        })
    }

    fn index(&self, py: Python<'_>) -> PyResult<&Py<PyDict>> {
        self.index.get_or_try_init(py, || {
            let d = PyDict::new(py);
            for (i, n) in self.names(py).iter().enumerate() {
                d.set_item(n.bind(py), i)?;
            }
            Ok(d.unbind())
        })
    }

    fn load_bytes(
        py: Python<'_>,
        bytes: &[u8],
        keys: Option<&rt::TrustedKeys>,
    ) -> PyResult<PyTable> {
        let load = || match keys {
            Some(k) => rt::Table::load_verified(bytes, k),
            None => rt::Table::load(bytes),
        };
        let loaded = if bytes.len() > (1 << 20) {
            py.detach(load)
        } else {
            load()
        };
        loaded
            .map(|t| PyTable::wrap(Arc::new(t)))
            .map_err(|e| load_error(py, &e))
    }

    fn load_from(
        py: Python<'_>,
        source: &Bound<'_, PyAny>,
        keys: Option<&rt::TrustedKeys>,
    ) -> PyResult<PyTable> {
        if let Ok(b) = source.cast::<PyBytes>() {
            return PyTable::load_bytes(py, b.as_bytes(), keys);
        }
        if source.cast::<PyByteArray>().is_ok() || source.hasattr("tobytes")? {
            let bytes = bytes_of(py, source, "table")?;
            return PyTable::load_bytes(py, &bytes, keys);
        }
        if source.cast::<PyString>().is_ok() || source.hasattr("__fspath__")? {
            let path: PathBuf = source.extract()?;
            let bytes = read_capped(py, &path, "table")?;
            return PyTable::load_bytes(py, &bytes, keys);
        }
        Err(argument_error(
            py,
            format!(
                "Table.load: expected bytes or a path, got {}",
                source.get_type().name()?
            ),
        ))
    }

    fn make_context(
        slf: &Bound<'_, PyTable>,
        configuration: &str,
        role: &str,
        consumer: Option<&str>,
        run: Option<&Bound<'_, PyAny>>,
        enforcement: Option<&str>,
    ) -> PyResult<PyContext> {
        let py = slf.py();
        let role = role_of(py, role)?;
        let run = match run {
            None => None,
            Some(r) if r.is_none() => None,
            Some(r) => Some(run_of(py, r)?),
        };
        let arc = slf.get().table.clone();
        let ctx = arc.context(configuration).map_err(|e| match e {
            rt::ContextError::UnknownConfiguration { name, suggestion } => error(
                py,
                "UnknownConfigurationError",
                (
                    rt::ContextError::UnknownConfiguration {
                        name: name.clone(),
                        suggestion: suggestion.clone(),
                    }
                    .to_string(),
                    name,
                    suggestion,
                ),
            ),
        })?;
        let mut ctx = ctx.role(role).consumer(consumer).enforcement(enforcement);
        if let Some(r) = &run {
            ctx = ctx.run(r);
        }
        // SAFETY: the context borrows the table behind `arc` (heap memory an
        // `Arc` never moves). `PyContext` keeps that `Arc` in a field
        // declared after `ctx`, so the table outlives the context, and the
        // 'static lifetime never escapes: every value handed to Python is
        // owned or keeps the table alive itself.
        let ctx: rt::Context<'static> =
            unsafe { std::mem::transmute::<rt::Context<'_>, rt::Context<'static>>(ctx) };
        Ok(PyContext {
            ctx,
            cache: OnceLock::new(),
            table: slf.clone().unbind(),
            _keep: arc,
        })
    }
}

/// A run state from a `RunState`, or the stored form read strictly.
fn run_of(py: Python<'_>, r: &Bound<'_, PyAny>) -> PyResult<rt::RunState> {
    if let Ok(s) = r.cast::<PyRunState>() {
        return Ok(s.get().state.clone());
    }
    let bytes = bytes_of(py, r, "run")?;
    rt::RunState::parse(&bytes).map_err(|e| run_state_error(py, e))
}

fn run_state_error(py: Python<'_>, e: rt::RunStateError) -> PyErr {
    match Py::new(py, PyRunState { state: e.state }) {
        Ok(state) => error(py, "RunStateError", (e.message, state)),
        Err(err) => err,
    }
}

#[pymethods]
impl PyTable {
    /// Load a table from bytes, or from a file path (`str` or `os.PathLike`).
    /// With `trusted_keys` (PEM public keys), only a table signed by one of them.
    #[staticmethod]
    #[pyo3(signature = (source, *, trusted_keys=None))]
    fn load(
        py: Python<'_>,
        source: &Bound<'_, PyAny>,
        trusted_keys: Option<&str>,
    ) -> PyResult<PyTable> {
        let keys = self::trusted_keys(py, trusted_keys)?;
        PyTable::load_from(py, source, keys.as_ref())
    }

    /// A context: who is asking. `run` is a `RunState` or its stored form
    /// (read strictly: `RunStateError` when it cannot be read).
    #[pyo3(signature = (configuration, *, role="none", consumer=None, run=None, enforcement=None))]
    fn context(
        slf: &Bound<'_, PyTable>,
        configuration: &str,
        role: &str,
        consumer: Option<&str>,
        run: Option<&Bound<'_, PyAny>>,
        enforcement: Option<&str>,
    ) -> PyResult<PyContext> {
        PyTable::make_context(slf, configuration, role, consumer, run, enforcement)
    }

    /// The sha256 of the table's payload, hex.
    #[getter]
    fn digest(&self) -> String {
        self.table.digest_hex()
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

    fn tool_id(&self, name: &str) -> Option<u32> {
        self.table.tool_id(name)
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
        py: Python<'_>,
        answer: &Bound<'_, PyAny>,
        origin: Option<&str>,
        http_status: Option<u16>,
        tool: Option<&str>,
        headers: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassification> {
        let headers = headers_of(py, headers)?;
        classify_impl(
            py,
            Some(&self.table),
            answer,
            origin,
            http_status,
            tool,
            &headers,
        )
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

// ----------------------------------------------------------------- Context

/// A list of `len` 2-tuples, built through the C API (the unavailable list of
/// a large table is thousands of pairs: no intermediate vectors).
fn pairs_list<'py>(
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

/// Who is asking (configuration, role, consumer, run, enforcement), fixed.
/// Every answer is the runtime's, for this context.
#[pyclass(frozen, name = "Context", module = "toolgate._native")]
pub struct PyContext {
    /// Borrows `*_keep`; declared first, so dropped first.
    ctx: rt::Context<'static>,
    /// Decision objects by tool id, made on first use.
    cache: OnceLock<Box<[OnceLock<Py<PyDecision>>]>>,
    table: Py<PyTable>,
    _keep: Arc<rt::Table>,
}

impl PyContext {
    fn decision(&self, py: Python<'_>, tool: Py<PyString>, d: &rt::Decision<'_>) -> PyDecision {
        let facts = match (d.class, d.zone, d.ceiling) {
            // SAFETY: these strings live in the table's spec, which the
            // decision keeps alive through `keep` (the `Table` object).
            (Some(c), Some(z), Some(x)) => Some(unsafe {
                [
                    std::mem::transmute::<&str, &'static str>(c),
                    std::mem::transmute::<&str, &'static str>(z),
                    std::mem::transmute::<&str, &'static str>(x),
                ]
            }),
            _ => None,
        };
        PyDecision {
            tool,
            allowed: d.allowed,
            reason: d.reason,
            observed_only: d.observed_only,
            _keep: facts.map(|_| self.table.clone_ref(py)),
            facts,
        }
    }

    /// The tool id of a name, through the table's dict (no UTF-8 conversion).
    fn lookup<'py>(
        &self,
        py: Python<'py>,
        name: &Bound<'py, PyAny>,
    ) -> PyResult<(Bound<'py, PyString>, Option<u32>)> {
        let s = name.cast::<PyString>().map_err(|_| {
            argument_error(
                py,
                format!(
                    "a tool name is a str, got {}",
                    name.get_type()
                        .name()
                        .map(|n| n.to_string())
                        .unwrap_or_default()
                ),
            )
        })?;
        let index = self.table.get().index(py)?;
        let id = match index.bind(py).get_item(s)? {
            Some(id) => Some(id.extract::<u32>()?),
            None => None,
        };
        Ok((s.clone(), id))
    }

    /// The decision object of tool `id`: made once per context (a decision
    /// is an immutable value), then shared.
    fn cached(&self, py: Python<'_>, id: u32) -> PyResult<Py<PyDecision>> {
        let cache = self.cache.get_or_init(|| {
            (0..self.ctx.table().tool_count())
                .map(|_| OnceLock::new())
                .collect()
        });
        let slot = &cache[id as usize];
        if let Some(d) = slot.get() {
            return Ok(d.clone_ref(py));
        }
        let name = self.table.get().names(py)[id as usize].clone_ref(py);
        let d = Py::new(py, self.decision(py, name, &self.ctx.decide_id(id)))?;
        Ok(slot.get_or_init(|| d).clone_ref(py))
    }

    fn decide_impl(&self, py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<Py<PyDecision>> {
        let (s, id) = self.lookup(py, name)?;
        if let Some(id) = id {
            return self.cached(py, id);
        }
        // Not a table name (the runtime has the last word: it answers notRegistered).
        // A str that is not valid Unicode cannot name a tool either.
        let d = match s.to_cow() {
            Ok(text) => {
                let d = self.ctx.decide(&text);
                (d.allowed, d.reason, d.observed_only)
            }
            Err(_) => (false, Some(Reason::NotRegistered), false),
        };
        Py::new(
            py,
            PyDecision {
                tool: s.unbind(),
                allowed: d.0,
                reason: d.1,
                observed_only: d.2,
                _keep: None,
                facts: None,
            },
        )
    }

    fn long(&self) -> bool {
        self.ctx.table().tool_count() >= LONG_WORK_TOOLS
    }

    fn unavailable_ids(&self, py: Python<'_>) -> Vec<(u32, Reason)> {
        if self.long() {
            py.detach(|| self.ctx.unavailable_ids())
        } else {
            self.ctx.unavailable_ids()
        }
    }

    fn refusal_of(&self, py: Python<'_>, d: &rt::Decision<'_>) -> PyResult<Option<PyRefusal>> {
        let _ = py;
        Ok(self.ctx.refusal(d).map(|r| PyRefusal { refusal: r }))
    }
}

#[pymethods]
impl PyContext {
    /// The decision for one tool name (a name the table does not hold: `notRegistered`).
    fn decide(&self, py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<Py<PyDecision>> {
        self.decide_impl(py, name)
    }

    /// Whether a call of `name` may run (observe-only counts as allowed).
    fn is_allowed(&self, py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<bool> {
        Ok(match self.lookup(py, name)? {
            (_, Some(id)) => self.ctx.is_offered(id),
            (s, None) => self.ctx.decide(&s.to_cow()?).allowed,
        })
    }

    /// The check a host runs when a call executes: the decision when
    /// allowed, else `ToolRefused` carrying the decision and the typed refusal.
    fn check_call(&self, py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<Py<PyDecision>> {
        let d = self.decide_impl(py, name)?;
        if d.get().allowed {
            return Ok(d);
        }
        let refusal = self.refusal(py, name)?;
        Err(error(py, "ToolRefused", (d, refusal)))
    }

    /// The decision for a tool the host registered after the table was compiled.
    fn decide_live(&self, py: Python<'_>, tool: &PyLiveTool) -> PyDecision {
        let d = self.ctx.decide_live(&tool.tool);
        let name = PyString::new(py, &tool.tool.name).unbind();
        self.decision(py, name, &d)
    }

    /// The typed refusal for a tool name or a `Decision` (`None` when
    /// allowed). Its texts reach a model: a remote tool whose name this
    /// user may not see is refused exactly as an unregistered name.
    fn refusal(&self, py: Python<'_>, target: &Bound<'_, PyAny>) -> PyResult<Option<PyRefusal>> {
        if let Ok(d) = target.cast::<PyDecision>() {
            let d = d.get();
            let tool = d.tool.bind(py).to_cow()?;
            let rd = rt::Decision {
                tool: &tool,
                allowed: d.allowed,
                reason: d.reason,
                observed_only: d.observed_only,
                class: d.facts.map(|f| f[0]),
                zone: d.facts.map(|f| f[1]),
                ceiling: d.facts.map(|f| f[2]),
            };
            return self.refusal_of(py, &rd);
        }
        let s = target
            .cast::<PyString>()
            .map_err(|_| argument_error(py, "refusal: expected a tool name (str) or a Decision"))?;
        match s.to_cow() {
            Ok(text) => {
                let d = self.ctx.decide(&text);
                self.refusal_of(py, &d)
            }
            Err(_) => {
                let lossy = s.to_string_lossy();
                let d = self.ctx.decide(&lossy);
                let d = rt::Decision {
                    allowed: false,
                    reason: Some(Reason::NotRegistered),
                    observed_only: false,
                    class: None,
                    zone: None,
                    ceiling: None,
                    ..d
                };
                self.refusal_of(py, &d)
            }
        }
    }

    /// Every registered tool's decision, in registry order.
    fn decisions(&self, py: Python<'_>) -> PyResult<Vec<Py<PyDecision>>> {
        (0..self.ctx.table().tool_count() as u32)
            .map(|id| self.cached(py, id))
            .collect()
    }

    /// The tools the model is offered, in registry order.
    fn offered<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let ids = if self.long() {
            py.detach(|| self.ctx.offered_ids())
        } else {
            self.ctx.offered_ids()
        };
        let names = self.table.get().names(py);
        PyList::new(py, ids.into_iter().map(|i| names[i as usize].bind(py)))
    }

    fn offered_count(&self, py: Python<'_>) -> usize {
        if self.long() {
            py.detach(|| self.ctx.offered_count())
        } else {
            self.ctx.offered_count()
        }
    }

    /// The tools that exist but are refused, and why: `(name, reason)` in
    /// registry order, then the refused `live` tools the table does not know.
    /// Remote names this user may not see are left out.
    #[pyo3(signature = (live=None))]
    fn unavailable<'py>(
        &self,
        py: Python<'py>,
        live: Option<Vec<PyRef<'py, PyLiveTool>>>,
    ) -> PyResult<Bound<'py, PyList>> {
        let names = self.table.get().names(py);
        let ids = self.unavailable_ids(py);
        let extra: Vec<(String, Reason)> = match live {
            Some(live) => {
                let tools: Vec<rt::LiveTool> = live.iter().map(|l| l.tool.clone()).collect();
                let with = self.ctx.unavailable_with(&tools);
                with[self.ctx.unavailable_count()..]
                    .iter()
                    .map(|u| (u.tool.to_string(), u.reason))
                    .collect()
            }
            None => Vec::new(),
        };
        let reason = |r: Reason| reason_str(py, r).bind(py).clone().into_any();
        pairs_list(
            py,
            ids.iter()
                .map(|&(i, r)| (names[i as usize].bind(py).clone().into_any(), reason(r)))
                .chain(
                    extra
                        .iter()
                        .map(|(n, r)| (PyString::new(py, n).into_any(), reason(*r))),
                ),
            ids.len() + extra.len(),
        )
    }

    /// `(tool id, reason)` of every unavailable registered tool.
    fn unavailable_ids_list<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let items = self
            .unavailable_ids(py)
            .into_iter()
            .map(|(i, r)| {
                PyTuple::new(
                    py,
                    [
                        i.into_pyobject(py)?.into_any(),
                        reason_str(py, r).bind(py).clone().into_any(),
                    ],
                )
            })
            .collect::<PyResult<Vec<_>>>()?;
        PyList::new(py, items)
    }

    fn unavailable_count(&self, py: Python<'_>) -> usize {
        if self.long() {
            py.detach(|| self.ctx.unavailable_count())
        } else {
            self.ctx.unavailable_count()
        }
    }

    /// The unavailable list as a system-prompt section ("" when nothing is refused).
    fn unavailable_prompt(&self, py: Python<'_>) -> String {
        if self.long() {
            py.detach(|| self.ctx.unavailable_prompt())
        } else {
            self.ctx.unavailable_prompt()
        }
    }

    #[getter]
    fn table(&self, py: Python<'_>) -> Py<PyTable> {
        self.table.clone_ref(py)
    }

    #[getter]
    fn configuration(&self) -> &str {
        self.ctx.configuration_name()
    }

    #[getter]
    fn role(&self) -> &'static str {
        self.ctx.user_role().as_str()
    }

    #[getter]
    fn consumer(&self) -> Option<&str> {
        self.ctx.consumer_name()
    }

    /// The access profile the consumer is held to, if any.
    #[getter]
    fn profile(&self) -> Option<&str> {
        self.ctx.profile_name()
    }

    /// Trust-zone enforcement: "observe" or "enforce".
    #[getter]
    fn mode(&self) -> &'static str {
        self.ctx.mode().as_str()
    }

    fn __repr__(&self) -> String {
        format!(
            "<toolgate.Context configuration={:?} role={} consumer={:?} mode={}>",
            self.ctx.configuration_name(),
            self.ctx.user_role().as_str(),
            self.ctx.consumer_name(),
            self.ctx.mode().as_str()
        )
    }
}

// ---------------------------------------------------------------- Decision

/// One tool's answer (immutable).
#[pyclass(frozen, name = "Decision", module = "toolgate._native")]
pub struct PyDecision {
    tool: Py<PyString>,
    allowed: bool,
    reason: Option<Reason>,
    observed_only: bool,
    /// class, zone, ceiling: present only when the trust-zone gate was reached.
    facts: Option<[&'static str; 3]>,
    /// Keeps the table (and so `facts`) alive; never read.
    _keep: Option<Py<PyTable>>,
}

impl PyDecision {
    fn key(&self, py: Python<'_>) -> (String, bool, Option<Reason>, bool, Option<[&str; 3]>) {
        (
            self.tool.bind(py).to_string_lossy().into_owned(),
            self.allowed,
            self.reason,
            self.observed_only,
            self.facts,
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
    /// The tool's data class (only when the trust-zone gate was reached).
    #[getter]
    fn class_(&self) -> Option<&'static str> {
        self.facts.map(|f| f[0])
    }
    #[getter]
    fn zone(&self) -> Option<&'static str> {
        self.facts.map(|f| f[1])
    }
    #[getter]
    fn ceiling(&self) -> Option<&'static str> {
        self.facts.map(|f| f[2])
    }

    /// As the runtime's JSON (camelCase; zone facts only when present).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("tool", self.tool.bind(py))?;
        d.set_item("allowed", self.allowed)?;
        d.set_item("reason", self.reason.map(Reason::code))?;
        d.set_item("observedOnly", self.observed_only)?;
        if let Some([c, z, x]) = self.facts {
            d.set_item("class", c)?;
            d.set_item("zone", z)?;
            d.set_item("ceiling", x)?;
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
        let q = |o: Option<&str>| o.map_or("None".to_string(), |s| format!("{s:?}"));
        format!(
            "Decision(tool={:?}, allowed={}, reason={}, observed_only={}, class_={}, zone={}, ceiling={})",
            self.tool.bind(py).to_string_lossy(),
            if self.allowed { "True" } else { "False" },
            q(self.reason.map(Reason::code)),
            if self.observed_only { "True" } else { "False" },
            q(self.facts.map(|f| f[0])),
            q(self.facts.map(|f| f[1])),
            q(self.facts.map(|f| f[2])),
        )
    }
}

// ----------------------------------------------------------------- Refusal

/// The typed refusal: what a host needs to react correctly (immutable).
#[pyclass(frozen, name = "Refusal", module = "toolgate._native")]
pub struct PyRefusal {
    refusal: rt::Refusal,
}

fn code_of<T: serde::Serialize>(v: T) -> String {
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
    #[getter]
    fn detail(&self) -> Option<&str> {
        self.refusal.detail.as_deref()
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
        let bytes = bytes_of(py, text, "refusal")?;
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

// ---------------------------------------------------------- Classification

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
    fn refusal(&self, py: Python<'_>) -> Option<Py<PyRefusal>> {
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
fn headers_of(py: Python<'_>, v: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<(String, String)>> {
    let Some(v) = v else {
        return Ok(Vec::new());
    };
    let bad = || {
        argument_error(
            py,
            "headers: expected a mapping of str to str (or list of str), or (name, value) pairs",
        )
    };
    let mut out = Vec::new();
    if let Ok(d) = v.cast::<PyDict>() {
        for (k, val) in d.iter() {
            let name: String = k.extract().map_err(|_| bad())?;
            match val.extract::<String>() {
                Ok(s) => out.push((name, s)),
                Err(_) => {
                    let values: Vec<String> = val.extract().map_err(|_| bad())?;
                    out.extend(values.into_iter().map(|s| (name.clone(), s)));
                }
            }
        }
        return Ok(out);
    }
    v.extract::<Vec<(String, String)>>().map_err(|_| bad())
}

#[allow(clippy::too_many_arguments)]
fn classify_impl(
    py: Python<'_>,
    table: Option<&rt::Table>,
    answer: &Bound<'_, PyAny>,
    origin: Option<&str>,
    http_status: Option<u16>,
    tool: Option<&str>,
    headers: &[(String, String)],
) -> PyResult<PyClassification> {
    let body = bytes_of(py, answer, "answer")?;
    let raw = rt::RawAnswer {
        body: &body,
        http_status,
        headers,
        origin,
        tool,
    };
    let classified = match table {
        Some(t) => t.classify_raw(&raw),
        None => rt::classify_raw(&raw),
    };
    classification(py, classified)
}

fn classification(py: Python<'_>, classified: rt::Classified) -> PyResult<PyClassification> {
    let refusal = match &classified {
        rt::Classified::Refusal { refusal } => Some(Py::new(
            py,
            PyRefusal {
                refusal: (**refusal).clone(),
            },
        )?),
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
fn classify(
    py: Python<'_>,
    answer: &Bound<'_, PyAny>,
    origin: Option<&str>,
    http_status: Option<u16>,
    tool: Option<&str>,
    table: Option<&PyTable>,
    headers: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyClassification> {
    let headers = headers_of(py, headers)?;
    classify_impl(
        py,
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
#[allow(clippy::too_many_arguments)]
fn classify_envelope(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    origin: Option<&str>,
    http_status: Option<u16>,
    tool: Option<&str>,
    table: Option<&PyTable>,
    headers: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyClassification> {
    let bytes = bytes_of(py, data, "answer")?;
    let mut envelope = rt::Envelope::read(&bytes);
    envelope.headers.extend(headers_of(py, headers)?);
    let raw = envelope.answer(http_status, origin, tool);
    let classified = match table {
        Some(t) => t.table.classify_raw(&raw),
        None => rt::classify_raw(&raw),
    };
    classification(py, classified)
}

/// [`classify_envelope`] of a file (a regular file, capped while read).
#[pyfunction]
#[pyo3(signature = (path, *, origin=None, http_status=None, tool=None, table=None, headers=None))]
#[allow(clippy::too_many_arguments)]
fn classify_file(
    py: Python<'_>,
    path: PathBuf,
    origin: Option<&str>,
    http_status: Option<u16>,
    tool: Option<&str>,
    table: Option<&PyTable>,
    headers: Option<&Bound<'_, PyAny>>,
) -> PyResult<PyClassification> {
    let bytes = read_capped(py, &path, "answer")?;
    let data = PyBytes::new(py, &bytes);
    classify_envelope(py, data.as_any(), origin, http_status, tool, table, headers)
}

// ---------------------------------------------------------------- RunState

/// A run's skill allow-list and exclusions from its start, stored with the
/// run and narrowed (never widened) on resume.
#[pyclass(frozen, name = "RunState", module = "toolgate._native")]
pub struct PyRunState {
    state: rt::RunState,
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
    #[pyo3(signature = (allowed_tool_names=None, excluded_tool_names=Vec::new()))]
    fn new(allowed_tool_names: Option<Vec<String>>, excluded_tool_names: Vec<String>) -> Self {
        PyRunState {
            state: rt::RunState {
                allowed: match allowed_tool_names {
                    None => rt::AllowList::Unrestricted,
                    Some(n) => rt::AllowList::Only(n),
                },
                excluded: rt::Exclusions::Names(excluded_tool_names),
            },
        }
    }

    /// Resolve at run start: the configuration's attached skills plus
    /// `skills` (forced or invoked), and the configuration's exclusions now.
    #[staticmethod]
    #[pyo3(signature = (table, configuration, skills=Vec::new()))]
    fn start(
        py: Python<'_>,
        table: &PyTable,
        configuration: &str,
        skills: Vec<String>,
    ) -> PyResult<Self> {
        let skills: Vec<&str> = skills.iter().map(String::as_str).collect();
        rt::RunState::start(&table.table, configuration, &skills)
            .map(|state| PyRunState { state })
            .map_err(|e| {
                let message = e.to_string();
                match e {
                    rt::run::RunError::UnknownConfiguration(name) => error(
                        py,
                        "UnknownConfigurationError",
                        (message, name, None::<String>),
                    ),
                    rt::run::RunError::UnknownSkill(name) => {
                        error(py, "UnknownSkillError", (message, name))
                    }
                }
            })
    }

    /// Read the stored form strictly: `RunStateError` (whose `state` admits
    /// nothing) when it is not exactly a stored run.
    #[staticmethod]
    fn parse(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let bytes = bytes_of(py, data, "run")?;
        rt::RunState::parse(&bytes)
            .map(|state| PyRunState { state })
            .map_err(|e| run_state_error(py, e))
    }

    /// Read the stored form; what cannot be read admits no tool (never raises
    /// for content; see `parse` to learn what was wrong).
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let bytes = bytes_of(py, data, "run")?;
        Ok(PyRunState {
            state: rt::RunState::from_bytes(&bytes),
        })
    }

    /// The state that admits nothing.
    #[staticmethod]
    fn unreadable() -> Self {
        PyRunState {
            state: rt::RunState::unreadable(),
        }
    }

    /// On resume: `self` is stored, `live` resolved now. Allow-lists
    /// intersect, exclusions unite: never wider than either.
    fn resume(&self, live: &PyRunState) -> Self {
        PyRunState {
            state: self.state.resume(&live.state),
        }
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

// ---------------------------------------------------------------- LiveTool

/// A tool the host registered after the table was compiled, with its live metadata.
#[pyclass(frozen, name = "LiveTool", module = "toolgate._native")]
pub struct PyLiveTool {
    tool: rt::LiveTool,
}

#[pymethods]
impl PyLiveTool {
    #[new]
    #[pyo3(signature = (name, group, *, remote=false, enabled=true, admin_only=false, class_=None))]
    fn new(
        name: String,
        group: String,
        remote: bool,
        enabled: bool,
        admin_only: bool,
        class_: Option<String>,
    ) -> Self {
        PyLiveTool {
            tool: rt::LiveTool {
                name,
                group,
                remote,
                enabled,
                admin_only,
                class: class_,
            },
        }
    }
    #[getter]
    fn name(&self) -> &str {
        &self.tool.name
    }
    #[getter]
    fn group(&self) -> &str {
        &self.tool.group
    }
    #[getter]
    fn remote(&self) -> bool {
        self.tool.remote
    }
    #[getter]
    fn enabled(&self) -> bool {
        self.tool.enabled
    }
    #[getter]
    fn admin_only(&self) -> bool {
        self.tool.admin_only
    }
    #[getter]
    fn class_(&self) -> Option<&str> {
        self.tool.class.as_deref()
    }
    fn __repr__(&self) -> String {
        format!("LiveTool({:?}, {:?})", self.tool.name, self.tool.group)
    }
}

// ------------------------------------------------------------- TableHandle

/// Hot reload: swap tables atomically while decisions run (the runtime's
/// `TableHandle`, arc-swap). A table that fails to load never replaces the
/// current one.
#[pyclass(frozen, name = "TableHandle", module = "toolgate._native")]
pub struct PyTableHandle {
    handle: rt::TableHandle,
    /// The `Table` object of the current table, so that its name caches are
    /// built once per table, not once per `current()`.
    current: Mutex<Option<(Arc<rt::Table>, Py<PyTable>)>>,
}

impl PyTableHandle {
    fn wrapped(&self, py: Python<'_>, arc: Arc<rt::Table>) -> PyResult<Py<PyTable>> {
        let mut slot = self.current.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((a, t)) = slot.as_ref() {
            if Arc::ptr_eq(a, &arc) {
                return Ok(t.clone_ref(py));
            }
        }
        let t = Py::new(py, PyTable::wrap(arc.clone()))?;
        *slot = Some((arc, t.clone_ref(py)));
        Ok(t)
    }
}

#[pymethods]
impl PyTableHandle {
    /// With `trusted_keys` (PEM public keys), every `reload` must be signed
    /// by one of them (load `table` itself with `Table.load(..., trusted_keys=...)`).
    #[new]
    #[pyo3(signature = (table, *, trusted_keys=None))]
    fn new(py: Python<'_>, table: &PyTable, trusted_keys: Option<&str>) -> PyResult<Self> {
        let table = (*table.table).clone();
        let handle = match self::trusted_keys(py, trusted_keys)? {
            Some(keys) => rt::TableHandle::with_trusted_keys(table, keys),
            None => rt::TableHandle::new(table),
        };
        Ok(PyTableHandle {
            handle,
            current: Mutex::new(None),
        })
    }

    /// The table to decide with now; hold it (or a context of it) for one request.
    fn current(&self, py: Python<'_>) -> PyResult<Py<PyTable>> {
        self.wrapped(py, self.handle.current())
    }

    /// Put `table` in place; returns the old one.
    fn swap(&self, py: Python<'_>, table: &PyTable) -> PyResult<Py<PyTable>> {
        let old = self.handle.swap((*table.table).clone());
        self.wrapped_old(py, old)
    }

    /// Load `data` (bytes or a path) and swap it in; on any load error the
    /// current table stays and `LoadError` is raised. Returns the old table.
    fn reload(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<Py<PyTable>> {
        let loaded = PyTable::load_from(py, data, self.handle.trusted_keys())?;
        self.swap(py, &loaded)
    }

    /// A context of the current table.
    #[pyo3(signature = (configuration, *, role="none", consumer=None, run=None, enforcement=None))]
    fn context(
        &self,
        py: Python<'_>,
        configuration: &str,
        role: &str,
        consumer: Option<&str>,
        run: Option<&Bound<'_, PyAny>>,
        enforcement: Option<&str>,
    ) -> PyResult<PyContext> {
        let t = self.current(py)?;
        PyTable::make_context(t.bind(py), configuration, role, consumer, run, enforcement)
    }
}

impl PyTableHandle {
    fn wrapped_old(&self, py: Python<'_>, old: Arc<rt::Table>) -> PyResult<Py<PyTable>> {
        let slot = self.current.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((a, t)) = slot.as_ref() {
            if Arc::ptr_eq(a, &old) {
                return Ok(t.clone_ref(py));
            }
        }
        drop(slot);
        Py::new(py, PyTable::wrap(old))
    }
}

// ------------------------------------------------------------------ module

/// The gate order, as reason codes.
#[pyfunction]
fn gate_order() -> Vec<&'static str> {
    GATE_ORDER.iter().map(|r| r.code()).collect()
}

/// The human text of a reason code (as the prompt shows it).
#[pyfunction]
fn reason_message(py: Python<'_>, code: &str) -> PyResult<&'static str> {
    Ok(reason_of(py, Some(code))?
        .map(Reason::message)
        .unwrap_or_default())
}

#[pymodule]
#[pyo3(name = "_native")]
fn native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTable>()?;
    m.add_class::<PyContext>()?;
    m.add_class::<PyDecision>()?;
    m.add_class::<PyRefusal>()?;
    m.add_class::<PyClassification>()?;
    m.add_class::<PyRunState>()?;
    m.add_class::<PyLiveTool>()?;
    m.add_class::<PyTableHandle>()?;
    m.add_function(wrap_pyfunction!(classify, m)?)?;
    m.add_function(wrap_pyfunction!(classify_envelope, m)?)?;
    m.add_function(wrap_pyfunction!(classify_file, m)?)?;
    m.add_function(wrap_pyfunction!(gate_order, m)?)?;
    m.add_function(wrap_pyfunction!(reason_message, m)?)?;
    m.add("MAX_FILE_BYTES", MAX_FILE)?;
    Ok(())
}
