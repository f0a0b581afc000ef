//! Runs: start, read a stored run, resume, store.

use std::ffi::c_char;

use toolgate_runtime::run::RunError;
use toolgate_runtime::RunState;

use crate::boundary::{
    bytes_arg, err, free_handle, handle_ref, opt_str_arg, str_arg, toolgate_buf, with_buf,
    with_handle,
};
use crate::codes::{
    TOOLGATE_ERR_ARGUMENT, TOOLGATE_ERR_UNKNOWN_CONFIGURATION, TOOLGATE_ERR_UNKNOWN_SKILL,
};
use crate::table::toolgate_table;

/// A run's state: the skill allow-list and the exclusions it started with.
pub struct toolgate_run {
    pub(crate) run: RunState,
}

/// Start a run of `configuration`: the allow-list of its attached skills and
/// of the extra skills (a JSON array of names, or NULL with length 0 for
/// none), and the configuration's exclusions now.
#[no_mangle]
pub unsafe extern "C" fn toolgate_run_start(
    table: *const toolgate_table,
    configuration: *const c_char,
    configuration_len: usize,
    skills_json: *const c_char,
    skills_json_len: usize,
    out: *mut *mut toolgate_run,
) -> i32 {
    with_handle(out, || {
        let t = unsafe { handle_ref(table, "table")? };
        let configuration = unsafe { str_arg(configuration, configuration_len, "configuration")? };
        let skills: Vec<String> =
            match unsafe { opt_str_arg(skills_json, skills_json_len, "skills_json")? } {
                None => Vec::new(),
                Some(text) => serde_json::from_str(text).map_err(|e| {
                    err(
                        TOOLGATE_ERR_ARGUMENT,
                        format!("skills: a JSON array of names: {e}"),
                    )
                })?,
            };
        let names: Vec<&str> = skills.iter().map(String::as_str).collect();
        let run = RunState::start(&t.table, configuration, &names).map_err(|e| {
            let code = match e {
                RunError::UnknownConfiguration(_) => TOOLGATE_ERR_UNKNOWN_CONFIGURATION,
                RunError::UnknownSkill(_) => TOOLGATE_ERR_UNKNOWN_SKILL,
            };
            err(code, e.to_string())
        })?;
        Ok(toolgate_run { run })
    })
}

/// Read a stored run. Never fails on content: what cannot be read (not
/// UTF-8 JSON, an unknown, duplicate or mistyped key) admits no tool at
/// all (the skill loader included).
#[no_mangle]
pub unsafe extern "C" fn toolgate_run_from_json(
    json_text: *const c_char,
    len: usize,
    out: *mut *mut toolgate_run,
) -> i32 {
    with_handle(out, || {
        let b = unsafe { bytes_arg(json_text, len, "json")? };
        Ok(toolgate_run {
            run: RunState::from_bytes(b),
        })
    })
}

/// On resume: the stored state narrowed by the live one (allow-lists
/// intersect, exclusions union). Never wider than either.
#[no_mangle]
pub unsafe extern "C" fn toolgate_run_resume(
    stored: *const toolgate_run,
    live: *const toolgate_run,
    out: *mut *mut toolgate_run,
) -> i32 {
    with_handle(out, || {
        let s = unsafe { handle_ref(stored, "stored")? };
        let l = unsafe { handle_ref(live, "live")? };
        Ok(toolgate_run {
            run: s.run.resume(&l.run),
        })
    })
}

/// A copy of a run (free each with `toolgate_run_free`).
#[no_mangle]
pub unsafe extern "C" fn toolgate_run_clone(
    run: *const toolgate_run,
    out: *mut *mut toolgate_run,
) -> i32 {
    with_handle(out, || {
        let r = unsafe { handle_ref(run, "run")? };
        Ok(toolgate_run { run: r.run.clone() })
    })
}

/// The stored form of a run (JSON), to keep with the run.
#[no_mangle]
pub unsafe extern "C" fn toolgate_run_to_json(
    run: *const toolgate_run,
    out: *mut toolgate_buf,
) -> i32 {
    with_buf(out, || Ok(unsafe { handle_ref(run, "run")? }.run.to_json()))
}

#[no_mangle]
pub unsafe extern "C" fn toolgate_run_free(run: *mut toolgate_run) {
    unsafe { free_handle(run) }
}
