//! `Context`: who is asking, fixed; every answer is the runtime's, through
//! a `HostContext` (the runtime's context that owns its table: the binding
//! extends no lifetime of its own).

use std::sync::OnceLock;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use toolgate_runtime as rt;
use toolgate_runtime::{HostContext, Reason};

use crate::args::{approver_keys_arg, call_arguments_arg, grant_arg, str_arg, text_of, type_name};
use crate::common::PyTable;
use crate::convert::{pairs_list, reason_str};
use crate::decision::PyDecision;
use crate::errors::{argument_error, error};
use crate::live::PyLiveTool;
use crate::refusal::PyRefusal;

/// Lists over at least this many tools run with the GIL released.
const LONG_WORK_TOOLS: usize = 1024;

/// Who is asking (configuration, role, consumer, run, enforcement), fixed.
/// Every answer is the runtime's, for this context.
#[pyclass(frozen, name = "Context", module = "toolgate._native")]
pub struct PyContext {
    ctx: HostContext,
    /// Decision objects by tool id, made on first use.
    cache: OnceLock<Box<[OnceLock<Py<PyDecision>>]>>,
    table: Py<PyTable>,
}

/// A tool name asked about: the exact `str` of its value and its id when
/// the table holds it.
struct Asked<'py> {
    name: Bound<'py, PyString>,
    id: Option<u32>,
}

impl PyContext {
    pub(crate) fn new(ctx: HostContext, table: Py<PyTable>) -> PyContext {
        PyContext {
            ctx,
            cache: OnceLock::new(),
            table,
        }
    }

    fn rt(&self) -> &rt::Context<'_> {
        self.ctx.get()
    }

    /// The tool id of a name. An exact `str` is looked up in the table's
    /// dict (its cached hash, no UTF-8 conversion); a subclass is decided
    /// on its value, never through its own `__eq__`/`__hash__`, so it can
    /// never select another tool's decision.
    fn lookup<'py>(&self, name: &Bound<'py, PyAny>) -> PyResult<Asked<'py>> {
        let py = name.py();
        let s = name.cast::<PyString>().map_err(|_| {
            argument_error(py, format!("a tool name is a str, got {}", type_name(name)))
        })?;
        if s.is_exact_instance_of::<PyString>() {
            let index = self.table.get().index(py)?;
            if let Some(id) = index.bind(py).get_item(s)? {
                return Ok(Asked {
                    name: s.clone(),
                    id: Some(id.extract::<u32>()?),
                });
            }
            // Not a table name; a str that is not valid Unicode names nothing.
            text_of(s, "tool name")?;
            return Ok(Asked {
                name: s.clone(),
                id: None,
            });
        }
        let text = text_of(s, "tool name")?;
        Ok(Asked {
            id: self.ctx.table().tool_id(&text),
            name: PyString::new(py, &text),
        })
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
        let remote = self.ctx.table().spec().tools[id as usize].remote;
        let d = Py::new(
            py,
            PyDecision::new(py, name, &self.rt().decide_id(id), remote),
        )?;
        Ok(slot.get_or_init(|| d).clone_ref(py))
    }

    fn decide_asked(&self, py: Python<'_>, asked: Asked<'_>) -> PyResult<Py<PyDecision>> {
        if let Some(id) = asked.id {
            return self.cached(py, id);
        }
        // Not a table name: the runtime has the last word (notRegistered).
        let text = text_of(&asked.name, "tool name")?;
        let d = self.rt().decide(&text);
        let decision = PyDecision::new(py, asked.name.clone().unbind(), &d, false);
        Py::new(py, decision)
    }

    fn decide_impl(&self, py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<Py<PyDecision>> {
        let asked = self.lookup(name)?;
        self.decide_asked(py, asked)
    }

    fn long(&self) -> bool {
        self.ctx.table().tool_count() >= LONG_WORK_TOOLS
    }

    /// `f` over the context, with the GIL released on a large table.
    fn work<T: Send>(&self, py: Python<'_>, f: impl FnOnce(&rt::Context<'_>) -> T + Send) -> T {
        if self.long() {
            py.detach(|| f(self.rt()))
        } else {
            f(self.rt())
        }
    }

    /// The refusal of a decision object, with this context's facts. The
    /// decision is hidden when it was hidden where it was made, or when it
    /// would be here (a decision of another context cannot unhide a name).
    fn refusal_of_decision(&self, d: &PyDecision, py: Python<'_>) -> PyResult<Option<PyRefusal>> {
        self.refusal_of(d, py, false)
    }

    /// [`Self::refusal_of_decision`]; for a call (`call`), an offered tool
    /// a person approves call by call is refused `approvalRequired`.
    fn refusal_of(
        &self,
        d: &PyDecision,
        py: Python<'_>,
        call: bool,
    ) -> PyResult<Option<PyRefusal>> {
        let tool = text_of(d.tool.bind(py), "tool name")?;
        let facts = d.facts_text(py)?;
        let hidden = d.hidden || (!d.allowed && d.remote && !self.rt().remote_names_visible());
        let rd = rt::Decision {
            tool: &tool,
            allowed: d.allowed,
            reason: d.reason,
            observed_only: d.observed_only,
            needs_approval: d.needs_approval,
            class: facts.as_ref().map(|f| &*f[0]),
            zone: facts.as_ref().map(|f| &*f[1]),
            ceiling: facts.as_ref().map(|f| &*f[2]),
            hidden,
        };
        let refusal = if call {
            self.rt().call_refusal(&rd)
        } else {
            self.rt().refusal(&rd)
        };
        Ok(refusal.map(PyRefusal::from))
    }

    fn live_tools(live: Option<Vec<PyRef<'_, PyLiveTool>>>) -> Option<Vec<rt::LiveTool>> {
        live.map(|l| l.iter().map(|t| t.tool.clone()).collect())
    }
}

#[pymethods]
impl PyContext {
    /// The decision for one tool name (a name the table does not hold: `notRegistered`).
    fn decide(&self, py: Python<'_>, name: &Bound<'_, PyAny>) -> PyResult<Py<PyDecision>> {
        self.decide_impl(py, name)
    }

    /// Whether a call of `name` may run (observe-only counts as allowed; a
    /// tool a person approves call by call does not, until approved).
    fn is_allowed(&self, name: &Bound<'_, PyAny>) -> PyResult<bool> {
        let asked = self.lookup(name)?;
        Ok(match asked.id {
            Some(id) => self.rt().may_call(id),
            None => {
                let name = text_of(&asked.name, "tool name")?;
                let d = self.rt().decide(&name);
                d.allowed && !d.needs_approval
            }
        })
    }

    /// What a person is asked to approve for a call of `name` with
    /// `arguments` (a dict, as `check_call` takes them): the runtime's
    /// `Context::approval_request` as a dict (`tool`, `argumentsDigest`,
    /// `configuration`, `consumer`, `role`, `tableDigest`, `requestId`).
    #[pyo3(signature = (name, arguments=None, request_id=None))]
    fn approval_request<'py>(
        &self,
        py: Python<'py>,
        name: &Bound<'_, PyAny>,
        arguments: Option<&Bound<'_, PyAny>>,
        request_id: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let name = str_arg(name, "name")?;
        let request_id = match request_id.filter(|v| !v.is_none()) {
            Some(v) => str_arg(v, "request_id")?,
            None => "".into(),
        };
        let arguments = call_arguments_arg(arguments)?;
        let r = self
            .rt()
            .approval_request(&name, arguments.as_ref(), &request_id);
        let out = PyDict::new(py);
        out.set_item("tool", r.tool)?;
        out.set_item("argumentsDigest", r.arguments_digest)?;
        out.set_item("configuration", r.configuration)?;
        out.set_item("consumer", r.consumer)?;
        out.set_item("role", r.role)?;
        out.set_item("tableDigest", r.table_digest)?;
        out.set_item("requestId", r.request_id)?;
        Ok(out)
    }

    /// The check a host runs when a call executes: the decision when the
    /// call may run, else the exception of the refusal's kind
    /// (`ToolNotInProfile`, ..., every one a `PolicyViolation`) carrying
    /// the decision and the typed refusal. A tool a person approves call by
    /// call runs only with `grant`, the signed grant of this very call
    /// (the runtime's `Context::check_call_granted`: `arguments` a dict,
    /// `approver_keys` PEM, `now` Unix seconds, None or 0 the system clock);
    /// otherwise `ApprovalRequired`, its refusal's `grant_error` naming why
    /// a grant given did not fit.
    #[pyo3(signature = (name, arguments=None, *, grant=None, approver_keys=None, now=None))]
    fn check_call(
        &self,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        arguments: Option<&Bound<'_, PyAny>>,
        grant: Option<&Bound<'_, PyAny>>,
        approver_keys: Option<&Bound<'_, PyAny>>,
        now: Option<u64>,
    ) -> PyResult<Py<PyDecision>> {
        let arguments = call_arguments_arg(arguments)?;
        let grant = grant_arg(grant)?;
        let keys = approver_keys_arg(approver_keys)?;
        let d = self.decide_impl(py, name)?;
        if d.get().allowed && !d.get().needs_approval {
            return Ok(d);
        }
        let with_grant = arguments.is_some() || grant.is_some() || keys.is_some() || now.is_some();
        if !with_grant {
            let refusal = self.refusal_of(d.get(), py, true)?;
            return Err(error(py, "_refused", (refusal, d)));
        }
        let tool = text_of(d.get().tool.bind(py), "tool name")?;
        let checked = self.rt().check_call_granted(
            &tool,
            arguments.as_ref(),
            grant.as_deref(),
            keys.as_ref(),
            rt::host::check_time(now.unwrap_or(0)),
        );
        match checked {
            Ok(_) => Ok(d),
            Err(refused) => Err(error(py, "_refused", (PyRefusal::from(refused.refusal), d))),
        }
    }

    /// What this consumer is offered and what is held back, the runtime's
    /// `Context::tool_set` as a `toolgate.ToolSet`. `audience="host"` (the
    /// default) lists every held-back tool, each marked with `name_visible`;
    /// `audience="model"` leaves out those whose name this user may not see
    /// (hidden remote tools), as every model-facing output does.
    #[pyo3(signature = (*, audience="host"))]
    fn tool_set<'py>(&self, py: Python<'py>, audience: &str) -> PyResult<Bound<'py, PyAny>> {
        let model = match audience {
            "host" => false,
            "model" => true,
            other => {
                return Err(argument_error(
                    py,
                    format!("tool_set: audience is \"host\" or \"model\", got {other:?}"),
                ))
            }
        };
        let mut v = self
            .work(py, |c| serde_json::to_value(c.tool_set()))
            .map_err(|e| argument_error(py, e.to_string()))?;
        if model {
            v["audience"] = serde_json::json!("model");
            if let Some(serde_json::Value::Array(ex)) = v.get_mut("excluded") {
                ex.retain(|e| e["nameVisible"] == serde_json::json!(true));
            }
        }
        let data = crate::convert::to_py(py, &v)?;
        py.import("toolgate._toolset")?
            .getattr("ToolSet")?
            .call_method1("_from_native", (data,))
    }

    /// The decision for a tool the host registered after the table was compiled.
    fn decide_live(&self, py: Python<'_>, tool: &PyLiveTool) -> PyDecision {
        let d = self.rt().decide_live(&tool.tool);
        let name = PyString::new(py, tool.tool.name()).unbind();
        PyDecision::new(py, name, &d, tool.is_remote_in(self.ctx.table()))
    }

    /// The typed refusal for a tool name, a `Decision` or a `LiveTool`
    /// (`None` when allowed). Its texts reach a model: a remote tool whose
    /// name this user may not see is refused exactly as an unregistered name.
    fn refusal(&self, py: Python<'_>, target: &Bound<'_, PyAny>) -> PyResult<Option<PyRefusal>> {
        if let Ok(d) = target.cast::<PyDecision>() {
            return self.refusal_of_decision(d.get(), py);
        }
        if let Ok(l) = target.cast::<PyLiveTool>() {
            let d = self.rt().decide_live(&l.get().tool);
            return Ok(self.rt().refusal(&d).map(PyRefusal::from));
        }
        if target.cast::<PyString>().is_err() {
            return Err(argument_error(
                py,
                format!(
                    "refusal: expected a tool name (str), a Decision or a LiveTool, got {}",
                    type_name(target)
                ),
            ));
        }
        let d = self.decide_impl(py, target)?;
        self.refusal_of_decision(d.get(), py)
    }

    /// Every registered tool's decision, in registry order.
    fn decisions(&self, py: Python<'_>) -> PyResult<Vec<Py<PyDecision>>> {
        (0..self.ctx.table().tool_count() as u32)
            .map(|id| self.cached(py, id))
            .collect()
    }

    /// The tools the model is offered, in registry order.
    fn offered<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let ids = self.work(py, |c| c.offered_ids());
        let names = self.table.get().names(py);
        PyList::new(py, ids.into_iter().map(|i| names[i as usize].bind(py)))
    }

    fn offered_count(&self, py: Python<'_>) -> usize {
        self.work(py, |c| c.offered_count())
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
        let ids = self.work(py, |c| c.unavailable_ids());
        let extra: Vec<(String, Reason)> = match Self::live_tools(live) {
            Some(tools) => {
                let c = self.rt();
                let with = c.unavailable_with(&tools);
                with[ids.len()..]
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
            .work(py, |c| c.unavailable_ids())
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
        self.work(py, |c| c.unavailable_count())
    }

    /// The unavailable list as a system-prompt section ("" when nothing is
    /// refused), over the table's tools and then the `live` tools: the
    /// runtime's rendering, names escaped, hidden remote names left out.
    #[pyo3(signature = (live=None))]
    fn unavailable_prompt(
        &self,
        py: Python<'_>,
        live: Option<Vec<PyRef<'_, PyLiveTool>>>,
    ) -> String {
        match Self::live_tools(live) {
            Some(tools) => self.work(py, |c| c.unavailable_prompt_with(&tools)),
            None => self.work(py, |c| c.unavailable_prompt()),
        }
    }

    #[getter]
    fn table(&self, py: Python<'_>) -> Py<PyTable> {
        self.table.clone_ref(py)
    }

    #[getter]
    fn configuration(&self) -> &str {
        self.rt().configuration_name()
    }

    #[getter]
    fn role(&self) -> &'static str {
        self.rt().user_role().as_str()
    }

    #[getter]
    fn consumer(&self) -> Option<&str> {
        self.rt().consumer_name()
    }

    /// The access profile the consumer is held to, if any.
    #[getter]
    fn profile(&self) -> Option<&str> {
        self.rt().profile_name()
    }

    /// Trust-zone enforcement: "observe" or "enforce".
    #[getter]
    fn mode(&self) -> &'static str {
        self.rt().mode().as_str()
    }

    fn __repr__(&self) -> String {
        let c = self.rt();
        format!(
            "<toolgate.Context configuration={:?} role={} consumer={:?} mode={}>",
            c.configuration_name(),
            c.user_role().as_str(),
            c.consumer_name(),
            c.mode().as_str()
        )
    }
}
