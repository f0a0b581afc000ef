//! `RunState`: a run's skill allow-list and exclusions, stored with the
//! run and read back strictly (`RunState::parse`).

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::{json, Value};
use toolgate_runtime as rt;

use crate::common::NativeTable;
use crate::errors;

/// A run's skill allow-list and exclusions from its start.
#[napi]
pub struct NativeRunState {
    pub(crate) state: rt::RunState,
}

impl From<rt::RunState> for NativeRunState {
    fn from(state: rt::RunState) -> NativeRunState {
        NativeRunState { state }
    }
}

#[napi]
impl NativeRunState {
    /// A run's state from names (`allowed` absent: no allow-list).
    #[napi(constructor)]
    pub fn new(allowed: Option<Vec<String>>, excluded: Option<Vec<String>>) -> NativeRunState {
        NativeRunState {
            state: rt::RunState {
                allowed: match allowed {
                    None => rt::AllowList::Unrestricted,
                    Some(n) => rt::AllowList::Only(n),
                },
                excluded: rt::Exclusions::Names(excluded.unwrap_or_default()),
            },
        }
    }

    /// Resolve at run start: the configuration's attached skills plus
    /// `skills`, and the configuration's exclusions now.
    #[napi(factory)]
    pub fn start(
        table: &NativeTable,
        configuration: String,
        skills: Option<Vec<String>>,
    ) -> Result<NativeRunState> {
        let skills = skills.unwrap_or_default();
        let skills: Vec<&str> = skills.iter().map(String::as_str).collect();
        rt::RunState::start(&table.table, &configuration, &skills)
            .map(NativeRunState::from)
            .map_err(errors::run)
    }

    /// Read the stored form strictly: `RunStateError` when it is not
    /// exactly a stored run.
    #[napi(factory)]
    pub fn parse(data: Uint8Array) -> Result<NativeRunState> {
        rt::RunState::parse(&data)
            .map(NativeRunState::from)
            .map_err(|e| errors::run_state(&e))
    }

    /// Read the stored form; what cannot be read admits no tool.
    #[napi(factory)]
    pub fn from_bytes(data: Uint8Array) -> NativeRunState {
        rt::RunState::from_bytes(&data).into()
    }

    /// The state that admits nothing.
    #[napi(factory)]
    pub fn unreadable() -> NativeRunState {
        rt::RunState::unreadable().into()
    }

    /// On resume: `this` is stored, `live` resolved now. Allow-lists
    /// intersect, exclusions unite: never wider than either.
    #[napi]
    pub fn resume(&self, live: &NativeRunState) -> NativeRunState {
        self.state.resume(&live.state).into()
    }

    /// The stored form (JSON text).
    #[napi]
    pub fn to_json(&self) -> String {
        self.state.to_json()
    }

    #[napi(getter)]
    pub fn is_readable(&self) -> bool {
        self.state.is_readable()
    }

    /// `null`: no allow-list; names; `false`: unreadable (admits nothing).
    #[napi(getter)]
    pub fn allowed_tool_names(&self) -> Value {
        match &self.state.allowed {
            rt::AllowList::Unrestricted => Value::Null,
            rt::AllowList::Only(n) => json!(n),
            rt::AllowList::Unreadable => json!(false),
        }
    }

    /// Names; `false`: unreadable (admits nothing).
    #[napi(getter)]
    pub fn excluded_tool_names(&self) -> Value {
        match &self.state.excluded {
            rt::Exclusions::Names(n) => json!(n),
            rt::Exclusions::Unreadable => json!(false),
        }
    }

    #[napi]
    pub fn equals(&self, other: &NativeRunState) -> bool {
        self.state == other.state
    }
}
