//! Classification of gateway answers: every answer is the runtime's
//! (`classify_raw`, `Table::classify_raw`, `Envelope::read`).

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::Value;
use toolgate_runtime as rt;

use crate::common::{file_bytes, NativeTable};
use crate::errors;

/// What is known of an answer besides its body.
#[napi(object)]
pub struct ClassifyOptions {
    pub origin: Option<String>,
    pub http_status: Option<u32>,
    pub tool: Option<String>,
    /// Header fields as received: name, value, name, value, ... (a name may repeat).
    pub headers: Option<Vec<String>>,
}

struct Known {
    origin: Option<String>,
    http_status: Option<u16>,
    tool: Option<String>,
    headers: Vec<(String, String)>,
}

fn known(o: Option<ClassifyOptions>) -> Result<Known> {
    let Some(o) = o else {
        return Ok(Known {
            origin: None,
            http_status: None,
            tool: None,
            headers: Vec::new(),
        });
    };
    let http_status = o
        .http_status
        .map(|s| {
            u16::try_from(s)
                .map_err(|_| errors::argument(format!("httpStatus {s}: not an HTTP status")))
        })
        .transpose()?;
    let flat = o.headers.unwrap_or_default();
    if flat.len() % 2 != 0 {
        return Err(errors::argument("headers: a name without a value"));
    }
    let headers = flat
        .chunks_exact(2)
        .map(|p| (p[0].clone(), p[1].clone()))
        .collect();
    Ok(Known {
        origin: o.origin,
        http_status,
        tool: o.tool,
        headers,
    })
}

fn json_of(c: &rt::Classified) -> Result<Value> {
    serde_json::to_value(c).map_err(|e| errors::argument(e.to_string()))
}

/// Classify a raw body with `table`'s rules (or the built-in ones only).
pub(crate) fn classify_with(
    table: Option<&rt::Table>,
    body: &[u8],
    options: Option<ClassifyOptions>,
) -> Result<Value> {
    let k = known(options)?;
    let raw = rt::RawAnswer {
        body,
        http_status: k.http_status,
        headers: &k.headers,
        origin: k.origin.as_deref(),
        tool: k.tool.as_deref(),
    };
    json_of(&match table {
        Some(t) => t.classify_raw(&raw),
        None => rt::classify_raw(&raw),
    })
}

/// Classify a gateway answer's raw body (JSON, plain text, HTML, empty),
/// parsed strictly: anything unreadable or ambiguous that no rule
/// recognises is a refusal, never success. `{outcome, text?, refusal?}`.
#[napi]
pub fn classify(
    body: Uint8Array,
    options: Option<ClassifyOptions>,
    table: Option<&NativeTable>,
) -> Result<Value> {
    classify_with(table.map(|t| &*t.table), &body, options)
}

/// Classify an answer file's bytes as `toolgate classify` reads them: an
/// envelope or a bare body. Given `origin` / `httpStatus` win over the
/// envelope's; given `headers` are added to its.
#[napi]
pub fn classify_envelope(
    data: Uint8Array,
    options: Option<ClassifyOptions>,
    table: Option<&NativeTable>,
) -> Result<Value> {
    envelope(&data, options, table)
}

fn envelope(
    data: &[u8],
    options: Option<ClassifyOptions>,
    table: Option<&NativeTable>,
) -> Result<Value> {
    let k = known(options)?;
    let mut e = rt::Envelope::read(data);
    e.headers.extend(k.headers);
    let raw = e.answer(k.http_status, k.origin.as_deref(), k.tool.as_deref());
    json_of(&match table {
        Some(t) => t.table.classify_raw(&raw),
        None => rt::classify_raw(&raw),
    })
}

/// [`classify_envelope`] of a file (the runtime's host file rule).
#[napi]
pub fn classify_file(
    path: String,
    options: Option<ClassifyOptions>,
    table: Option<&NativeTable>,
) -> Result<Value> {
    let bytes = file_bytes(&path, "answer")?;
    envelope(&bytes, options, table)
}
