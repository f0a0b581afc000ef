//! `Table`: the methods of a compiled table, loaded (fails closed); its
//! data and loading are `common`'s.

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::Value;
use toolgate_runtime as rt;
use toolgate_runtime::HostContext;

use crate::classify::{classify_with, ClassifyOptions};
use crate::common::{file_bytes, trusted_keys, NativeTable};
use crate::context::NativeContext;
use crate::errors;
use crate::run::NativeRunState;

/// The `role` argument: `"admin"`, `"user"` or `"none"`, exactly.
pub(crate) fn role(name: Option<&str>) -> Result<rt::Role> {
    let name = name.unwrap_or("none");
    rt::Role::from_name(name).ok_or_else(|| {
        errors::argument(format!(
            "role {name:?}: expected \"admin\", \"user\" or \"none\""
        ))
    })
}

#[napi]
impl NativeTable {
    /// Load a table from its bytes (with `trustedKeys`, only a table signed
    /// by one of them).
    #[napi(factory)]
    pub fn load(bytes: Uint8Array, trusted_keys: Option<String>) -> Result<NativeTable> {
        let keys = self::trusted_keys(trusted_keys)?;
        NativeTable::from_bytes(&bytes, keys.as_ref())
    }

    /// Load a table from a file (the runtime's host file rule).
    #[napi(factory)]
    pub fn load_file(path: String, trusted_keys: Option<String>) -> Result<NativeTable> {
        let keys = self::trusted_keys(trusted_keys)?;
        let bytes = file_bytes(&path, "table")?;
        NativeTable::from_bytes(&bytes, keys.as_ref())
    }

    /// A context: who is asking.
    #[napi]
    pub fn context(
        &self,
        configuration: String,
        role: Option<String>,
        consumer: Option<String>,
        run: Option<&NativeRunState>,
        enforcement: Option<String>,
    ) -> Result<NativeContext> {
        let role = self::role(role.as_deref())?;
        let mut ctx = HostContext::new(self.table.clone(), &configuration)
            .map_err(errors::context)?
            .role(role)
            .consumer(consumer.as_deref())
            .map_err(errors::context)?
            .enforcement(enforcement.as_deref());
        if let Some(r) = run {
            ctx = ctx.run(&r.state);
        }
        Ok(NativeContext::new(ctx))
    }

    /// The sha256 of the payload, hex.
    #[napi(getter)]
    pub fn digest(&self) -> String {
        self.table.digest_hex()
    }

    /// The id of the key the table was verified with, if it was.
    #[napi(getter)]
    pub fn verified_by(&self) -> Option<String> {
        self.table.verified_by().map(rt::format::key_id)
    }

    /// Every registered tool, in registry order (ids are positions).
    #[napi(getter)]
    pub fn tools(&self) -> Vec<String> {
        self.table
            .spec()
            .tools
            .iter()
            .map(|t| t.name.clone())
            .collect()
    }

    /// Whether each tool (by id) is remote.
    #[napi(getter)]
    pub fn remote(&self) -> Vec<bool> {
        self.table.spec().tools.iter().map(|t| t.remote).collect()
    }

    #[napi(getter)]
    pub fn configurations(&self) -> Vec<String> {
        self.table
            .configuration_names()
            .map(str::to_string)
            .collect()
    }

    #[napi(getter)]
    pub fn consumers(&self) -> Vec<String> {
        self.table.consumer_names().map(str::to_string).collect()
    }

    #[napi(getter)]
    pub fn skills(&self) -> Vec<String> {
        self.table
            .spec()
            .skills
            .iter()
            .map(|s| s.name.clone())
            .collect()
    }

    #[napi(getter)]
    pub fn skill_loader(&self) -> String {
        self.table.spec().skill_loader.clone()
    }

    /// The gate-relevant policy as plain data (the input of a hand-written gate).
    #[napi]
    pub fn policy(&self) -> Value {
        self.table.policy_json()
    }

    /// Classify a gateway answer with this table's rules for its origin.
    #[napi]
    pub fn classify(&self, body: Uint8Array, options: Option<ClassifyOptions>) -> Result<Value> {
        classify_with(Some(&self.table), &body, options)
    }

    /// Whether `other` is this very table (the same loaded table, not an equal one).
    #[napi]
    pub fn is_same(&self, other: &NativeTable) -> bool {
        Arc::ptr_eq(&self.table, &other.table)
    }
}
