//! The exceptions of `toolgate._errors`, made from the runtime's errors.
//! Every failure is one of them: nothing that fails is treated as allowed.

use pyo3::prelude::*;
use toolgate_runtime as rt;
use toolgate_runtime::host::FileError;

/// An exception of `toolgate._errors`, built with `args`.
pub(crate) fn error<'py, A>(py: Python<'py>, class: &str, args: A) -> PyErr
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

/// `ArgumentError`: an argument the runtime cannot use.
pub(crate) fn argument_error(py: Python<'_>, message: impl Into<String>) -> PyErr {
    error(py, "ArgumentError", (message.into(),))
}

/// `LoadError` of a table that does not load (`.code` the host code of its
/// status: `notATable` ... `badSignature`).
pub(crate) fn load_error(py: Python<'_>, e: &rt::LoadError) -> PyErr {
    error(py, "LoadError", (e.code(), e.to_string()))
}

/// `LoadError` of a file that cannot be read (`io`, `notAFile`, `tooLarge`).
pub(crate) fn file_error(py: Python<'_>, what: &str, e: &FileError) -> PyErr {
    error(py, "LoadError", (e.code(), format!("{what} {e}")))
}

/// `UnknownConfigurationError` or `UnknownConsumerError` (`.name`, `.suggestion`).
pub(crate) fn context_error(py: Python<'_>, e: rt::ContextError) -> PyErr {
    let message = e.to_string();
    match e {
        rt::ContextError::UnknownConfiguration { name, suggestion } => {
            error(py, "UnknownConfigurationError", (message, name, suggestion))
        }
        rt::ContextError::UnknownConsumer { name, suggestion } => {
            error(py, "UnknownConsumerError", (message, name, suggestion))
        }
    }
}

/// `UnknownConfigurationError` or `UnknownSkillError` of a run start.
pub(crate) fn run_error(py: Python<'_>, e: rt::run::RunError) -> PyErr {
    let message = e.to_string();
    match e {
        rt::run::RunError::UnknownConfiguration(name) => error(
            py,
            "UnknownConfigurationError",
            (message, name, None::<String>),
        ),
        rt::run::RunError::UnknownSkill(name) => error(py, "UnknownSkillError", (message, name)),
    }
}

/// `ArgumentError` with the runtime's message for a live tool it refuses.
pub(crate) fn live_tool_error(py: Python<'_>, e: rt::LiveToolError) -> PyErr {
    argument_error(py, e.message)
}
