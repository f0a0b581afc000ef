//! Contexts: who is asking. Each holds its table (the runtime's
//! `HostContext`), so a host may free the table first.

use std::ffi::c_char;
use std::sync::Arc;

use toolgate_runtime::{HostContext, Role};

use crate::boundary::{err, Error};
use crate::boundary::{free_handle, handle_ref, opt_str_arg, str_arg, with_handle};
use crate::codes::{
    TOOLGATE_ERR_ARGUMENT, TOOLGATE_ERR_UNKNOWN_CONFIGURATION, TOOLGATE_ERR_UNKNOWN_CONSUMER,
};
use crate::run::toolgate_run;
use crate::table::toolgate_table;

/// Everything a decision depends on besides the tool. Holds its table.
pub struct toolgate_context {
    pub(crate) ctx: HostContext,
}

/// The role of a `TOOLGATE_ROLE_*` code (any other number is an argument error).
fn role_of(code: i32) -> Result<Role, Error> {
    Role::from_number(code).ok_or_else(|| {
        err(
            TOOLGATE_ERR_ARGUMENT,
            format!("role {code} is not TOOLGATE_ROLE_NONE (0), _USER (1) or _ADMIN (2)"),
        )
    })
}

/// Make a context: configuration (required), role (`TOOLGATE_ROLE_*`),
/// consumer (NULL with length 0: not an MCP consumer; a name the policy does
/// not know is `TOOLGATE_ERR_UNKNOWN_CONSUMER`), run (NULL: a new run
/// of the configuration), enforcement (NULL with length 0: the policy's
/// setting; otherwise only `observe`, trimmed, any case, observes). A NULL
/// string with a non-zero length is `TOOLGATE_ERR_NULL`, never "absent".
/// The context keeps its table alive.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn toolgate_context_new(
    table: *const toolgate_table,
    configuration: *const c_char,
    configuration_len: usize,
    role: i32,
    consumer: *const c_char,
    consumer_len: usize,
    run: *const toolgate_run,
    enforcement: *const c_char,
    enforcement_len: usize,
    out: *mut *mut toolgate_context,
) -> i32 {
    with_handle(out, || {
        let t = unsafe { handle_ref(table, "table")? };
        let configuration = unsafe { str_arg(configuration, configuration_len, "configuration")? };
        let role = role_of(role)?;
        let consumer = unsafe { opt_str_arg(consumer, consumer_len, "consumer")? };
        let enforcement = unsafe { opt_str_arg(enforcement, enforcement_len, "enforcement")? };
        // SAFETY: `run` is NULL or a live run handle.
        let run = unsafe { run.as_ref() };
        let mut ctx = HostContext::new(Arc::clone(&t.table), configuration)
            .map_err(|e| err(TOOLGATE_ERR_UNKNOWN_CONFIGURATION, e.to_string()))?
            .role(role)
            .consumer(consumer)
            .map_err(|e| err(TOOLGATE_ERR_UNKNOWN_CONSUMER, e.to_string()))?
            .enforcement(enforcement);
        if let Some(r) = run {
            ctx = ctx.run(&r.run);
        }
        Ok(toolgate_context { ctx })
    })
}

/// A copy of a context (its own reference to the table; free each with
/// `toolgate_context_free`).
#[no_mangle]
pub unsafe extern "C" fn toolgate_context_clone(
    ctx: *const toolgate_context,
    out: *mut *mut toolgate_context,
) -> i32 {
    with_handle(out, || {
        let c = unsafe { handle_ref(ctx, "context")? };
        Ok(toolgate_context { ctx: c.ctx.clone() })
    })
}

#[no_mangle]
pub unsafe extern "C" fn toolgate_context_free(ctx: *mut toolgate_context) {
    unsafe { free_handle(ctx) }
}
