//! Errors across the boundary. Every failure leaves the addon as a JS
//! `Error` whose message is one JSON object, `{"toolgate": {...}}`: the
//! package's class (`LoadError`, `ArgumentError`, ...), the runtime's
//! status name (`host::codes::Status`, the catalogue's `statuses`), the
//! load code when there is one, the message and any facts. `errors.js`
//! turns it into an instance of that class; nothing that fails is ever
//! read as an answer, let alone an allow.

use napi::Status as NapiStatus;
use serde_json::{json, Value};
use toolgate_runtime as rt;
use toolgate_runtime::host::{FileError, Status};

/// A toolgate error of `class` with the runtime's `status`, `message` and
/// extra facts (merged into the object).
pub(crate) fn error(class: &str, status: Status, message: String, extra: Value) -> napi::Error {
    let mut v = json!({
        "class": class,
        "status": status.c_name(),
        "statusNumber": status.number(),
        "message": message,
    });
    if let Some(code) = status.load_code() {
        v["code"] = json!(code);
    }
    if let (Some(o), Value::Object(x)) = (v.as_object_mut(), extra) {
        o.extend(x);
    }
    napi::Error::new(
        NapiStatus::GenericFailure,
        json!({ "toolgate": v }).to_string(),
    )
}

/// `ArgumentError`: an argument the runtime cannot use.
pub(crate) fn argument(message: impl Into<String>) -> napi::Error {
    error(
        "ArgumentError",
        Status::Argument,
        message.into(),
        Value::Null,
    )
}

/// `LoadError` of a table that does not load.
pub(crate) fn load(e: &rt::LoadError) -> napi::Error {
    error("LoadError", e.status(), e.to_string(), Value::Null)
}

/// `LoadError` of a file that cannot be read (`io`, `notAFile`, `tooLarge`).
pub(crate) fn file(what: &str, e: &FileError) -> napi::Error {
    error("LoadError", e.status(), format!("{what} {e}"), Value::Null)
}

/// `ArgumentError` of trusted keys that are not Ed25519 PEM public keys.
pub(crate) fn keys(e: &rt::KeyError) -> napi::Error {
    error("ArgumentError", Status::Keys, e.to_string(), Value::Null)
}

/// `UnknownConfigurationError` or `UnknownConsumerError` (`name`, `suggestion`).
pub(crate) fn context(e: rt::ContextError) -> napi::Error {
    let message = e.to_string();
    match e {
        rt::ContextError::UnknownConfiguration { name, suggestion } => error(
            "UnknownConfigurationError",
            Status::UnknownConfiguration,
            message,
            json!({"name": name, "suggestion": suggestion}),
        ),
        rt::ContextError::UnknownConsumer { name, suggestion } => error(
            "UnknownConsumerError",
            Status::UnknownConsumer,
            message,
            json!({"name": name, "suggestion": suggestion}),
        ),
    }
}

/// `UnknownConfigurationError` or `UnknownSkillError` of a run start.
pub(crate) fn run(e: rt::run::RunError) -> napi::Error {
    let message = e.to_string();
    match e {
        rt::run::RunError::UnknownConfiguration(name) => error(
            "UnknownConfigurationError",
            Status::UnknownConfiguration,
            message,
            json!({"name": name, "suggestion": null}),
        ),
        rt::run::RunError::UnknownSkill(name) => error(
            "UnknownSkillError",
            Status::UnknownSkill,
            message,
            json!({"name": name}),
        ),
    }
}

/// `RunStateError`: the stored run cannot be read; `state` is the stored
/// form of the state to use instead (it admits nothing).
pub(crate) fn run_state(e: &rt::RunStateError) -> napi::Error {
    error(
        "RunStateError",
        Status::Argument,
        e.message.clone(),
        json!({"state": e.state.to_json()}),
    )
}

/// `ArgumentError` with the runtime's message for a live tool it refuses.
pub(crate) fn live_tool(e: rt::LiveToolError) -> napi::Error {
    argument(e.message)
}
