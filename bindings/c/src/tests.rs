//! Tests of the boundary rules, through the exported functions.

use std::ffi::c_char;

use crate::*;

#[test]
fn a_panic_becomes_an_error_status_with_its_message() {
    let status = guard(|| panic!("boom"));
    assert_eq!(status, TOOLGATE_ERR_PANIC);
    let mut b = EMPTY_BUF;
    let code = unsafe { toolgate_last_error(&mut b) };
    assert_eq!(code, TOOLGATE_ERR_PANIC);
    let text = unsafe { std::slice::from_raw_parts(b.ptr, b.len) };
    assert_eq!(text, b"internal error (panic): boom");
    unsafe { toolgate_buf_free(b) };
}

#[test]
fn an_envelope_carries_headers_and_a_raw_body_to_the_rules() {
    let classify = |data: &[u8]| -> serde_json::Value {
        let mut b = EMPTY_BUF;
        let code = unsafe {
            toolgate_classify_envelope(
                std::ptr::null(),
                data.as_ptr().cast(),
                data.len(),
                std::ptr::null(),
                0,
                &mut b,
            )
        };
        assert_eq!(code, TOOLGATE_OK);
        let text = unsafe { std::slice::from_raw_parts(b.ptr, b.len) }.to_vec();
        unsafe { toolgate_buf_free(b) };
        serde_json::from_slice(&text).expect("JSON")
    };
    // The built-in insufficient_scope rule needs the header: it is seen.
    let v = classify(
        br#"{"httpStatus":403,"headers":{"www-authenticate":"Bearer error=\"insufficient_scope\""},"bodyText":""}"#,
    );
    assert_eq!(v["refusal"]["kind"], "notInProfile");
    assert_eq!(v["refusal"]["rule"], "mcp-insufficient-scope");
    // Without it, the same empty 403 is the generic policy refusal.
    let v = classify(br#"{"httpStatus":403,"bodyText":""}"#);
    assert_eq!(v["refusal"]["kind"], "policy");
    // A body given as text is the body: here a JSON-RPC success.
    let v = classify(
        br#"{"httpStatus":200,"bodyText":"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"}"#,
    );
    assert_eq!(v["outcome"], "success");
    let mut b = EMPTY_BUF;
    assert_eq!(
        unsafe {
            toolgate_classify_envelope(
                std::ptr::null(),
                std::ptr::null(),
                1,
                std::ptr::null(),
                0,
                &mut b,
            )
        },
        TOOLGATE_ERR_NULL
    );
}

#[test]
fn many_names_at_once_decide_as_one_at_a_time_and_errors_refuse_all() {
    let bytes = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../conformance/tables/acceptance-edit.tgt"
    ))
    .expect("a conformance table");
    let mut t = std::ptr::null_mut();
    assert_eq!(
        unsafe { toolgate_table_load(bytes.as_ptr().cast(), bytes.len(), &mut t) },
        TOOLGATE_OK
    );
    let mut n = 0u32;
    assert_eq!(unsafe { toolgate_table_tool_count(t, &mut n) }, TOOLGATE_OK);
    let table = unsafe { &(*t).table };
    let config = table
        .configuration_names()
        .next()
        .expect("a configuration")
        .to_string();
    let mut ctx = std::ptr::null_mut();
    let status = unsafe {
        toolgate_context_new(
            t,
            config.as_ptr().cast(),
            config.len(),
            TOOLGATE_ROLE_USER,
            std::ptr::null(),
            0,
            std::ptr::null(),
            std::ptr::null(),
            0,
            &mut ctx,
        )
    };
    assert_eq!(status, TOOLGATE_OK);
    let mut asked: Vec<String> = (0..n).map(|i| table.tool_name(i).to_string()).collect();
    asked.push("retired_zzz_tool".into());
    let ptrs: Vec<*const c_char> = asked.iter().map(|a| a.as_ptr().cast()).collect();
    let lens: Vec<usize> = asked.iter().map(String::len).collect();
    let none = toolgate_decision {
        allowed: 9,
        observed_only: 9,
        reason: 9,
        needs_approval: 9,
    };
    // The batch call over (pointers, lengths): its status and answers.
    let many = |ptrs: &[*const c_char], lens: &[usize]| {
        let mut out = vec![none; ptrs.len()];
        let status = unsafe {
            toolgate_decide_many(
                ctx,
                ptrs.as_ptr(),
                lens.as_ptr(),
                ptrs.len(),
                out.as_mut_ptr(),
            )
        };
        (status, out)
    };
    let (status, out) = many(&ptrs, &lens);
    assert_eq!(status, TOOLGATE_OK);
    for (a, o) in asked.iter().zip(&out) {
        let mut one = none;
        assert_eq!(
            unsafe { toolgate_decide(ctx, a.as_ptr().cast(), a.len(), &mut one) },
            TOOLGATE_OK
        );
        assert_eq!(
            (o.allowed, o.observed_only, o.reason),
            (one.allowed, one.observed_only, one.reason),
            "{a}"
        );
    }
    let last = out.last().expect("the stranger");
    assert_eq!(
        (last.allowed, last.reason),
        (0, TOOLGATE_REASON_NOT_REGISTERED)
    );
    assert!(out.iter().any(|o| o.allowed == 1) && out.iter().any(|o| o.allowed == 0));
    // A name that is not UTF-8: the whole call fails and refuses every entry.
    let bad = [0xffu8];
    let mut ptrs2 = ptrs.clone();
    ptrs2[1] = bad.as_ptr().cast();
    let mut lens2 = lens.clone();
    lens2[1] = 1;
    let (status, out) = many(&ptrs2, &lens2);
    assert_eq!(status, TOOLGATE_ERR_UTF8);
    assert!(out
        .iter()
        .all(|o| (o.allowed, o.observed_only, o.reason) == (0, 0, TOOLGATE_REASON_NONE)));
    // NULL arrays with a count, and NULL with count 0.
    let mut out = vec![none; 2];
    let status =
        unsafe { toolgate_decide_many(ctx, std::ptr::null(), lens.as_ptr(), 2, out.as_mut_ptr()) };
    assert_eq!(status, TOOLGATE_ERR_NULL);
    assert_eq!(out[0].allowed, 0);
    let status = unsafe {
        toolgate_decide_many(
            ctx,
            std::ptr::null(),
            std::ptr::null(),
            0,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(status, TOOLGATE_OK);
    // The packed form over one buffer of names: the packed decision of
    // each, as toolgate_decide_packed gives it.
    let packed = |text: &[u8], lens: &[usize]| {
        let mut out = vec![0xeeu8; lens.len()];
        let status = unsafe {
            toolgate_decide_many_packed(
                ctx,
                text.as_ptr().cast(),
                text.len(),
                lens.as_ptr(),
                lens.len(),
                out.as_mut_ptr(),
            )
        };
        (status, out)
    };
    let text = asked.concat();
    let (status, out) = packed(text.as_bytes(), &lens);
    assert_eq!(status, TOOLGATE_OK);
    for (a, &o) in asked.iter().zip(&out) {
        let one = unsafe { toolgate_decide_packed(ctx, a.as_ptr().cast(), a.len()) };
        assert_eq!(i32::from(o), one, "{a}");
    }
    assert_eq!(
        out.last().copied(),
        Some(TOOLGATE_REASON_NOT_REGISTERED << 2)
    );
    // Lengths that do not add up, short or long, and a name that is not
    // UTF-8: an error, and every entry refused.
    let mut short = lens.clone();
    short[0] -= 1;
    let mut long = lens.clone();
    long[0] += 1;
    let mut bad = text.clone().into_bytes();
    bad[0] = 0xff;
    for (status_want, text, lens) in [
        (TOOLGATE_ERR_ARGUMENT, text.as_bytes(), &short),
        (TOOLGATE_ERR_ARGUMENT, text.as_bytes(), &long),
        (TOOLGATE_ERR_UTF8, &bad[..], &lens),
    ] {
        let (status, out) = packed(text, lens);
        assert_eq!(status, status_want);
        assert!(out.iter().all(|&o| o == 0));
    }
    let mut b = EMPTY_BUF;
    assert_eq!(unsafe { toolgate_last_error(&mut b) }, TOOLGATE_ERR_UTF8);
    let message = unsafe { std::slice::from_raw_parts(b.ptr, b.len) };
    assert!(
        message.starts_with(b"name 0 in names: not UTF-8"),
        "{}",
        String::from_utf8_lossy(message)
    );
    unsafe { toolgate_buf_free(b) };
    // Nothing asked: OK with NULL everywhere; NULL names with a count is an error.
    let status = unsafe {
        toolgate_decide_many_packed(
            ctx,
            std::ptr::null(),
            0,
            std::ptr::null(),
            0,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(status, TOOLGATE_OK);
    let (status, _) = packed(&[], &lens);
    assert_eq!(status, TOOLGATE_ERR_ARGUMENT);
    let mut out = [7u8; 1];
    let status = unsafe {
        toolgate_decide_many_packed(
            ctx,
            std::ptr::null(),
            3,
            [3usize].as_ptr(),
            1,
            out.as_mut_ptr(),
        )
    };
    assert_eq!((status, out[0]), (TOOLGATE_ERR_NULL, 0));
    unsafe {
        toolgate_context_free(ctx);
        toolgate_table_free(t);
    }
}

#[test]
fn null_and_invalid_utf8_arguments_are_errors() {
    let mut t = std::ptr::null_mut();
    assert_eq!(
        unsafe { toolgate_table_load(std::ptr::null(), 3, &mut t) },
        TOOLGATE_ERR_NULL
    );
    assert!(t.is_null());
    assert_eq!(
        unsafe { toolgate_run_from_json(std::ptr::null(), 0, std::ptr::null_mut()) },
        TOOLGATE_ERR_NULL
    );
    let bad = [0xffu8, 0xfe];
    let mut r = std::ptr::null_mut();
    assert_eq!(
        unsafe { toolgate_run_from_json(bad.as_ptr().cast(), 2, &mut r) },
        TOOLGATE_OK
    );
    let mut b = EMPTY_BUF;
    assert_eq!(unsafe { toolgate_run_to_json(r, &mut b) }, TOOLGATE_OK);
    let text = unsafe { std::slice::from_raw_parts(b.ptr, b.len) };
    assert_eq!(
        text,
        br#"{"allowedToolNames":false,"excludedToolNames":false}"#
    );
    unsafe {
        toolgate_buf_free(b);
        toolgate_run_free(r);
    }
    assert_eq!(
        unsafe { toolgate_decide_packed(std::ptr::null(), bad.as_ptr().cast(), 2) },
        -TOOLGATE_ERR_NULL
    );
}

fn corpus_table(name: &str) -> *mut toolgate_table {
    let bytes = std::fs::read(format!(
        "{}/../../conformance/tables/{name}.tgt",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("a conformance table");
    let mut t = std::ptr::null_mut();
    assert_eq!(
        unsafe { toolgate_table_load(bytes.as_ptr().cast(), bytes.len(), &mut t) },
        TOOLGATE_OK
    );
    t
}

fn last_message() -> String {
    let mut b = EMPTY_BUF;
    unsafe { toolgate_last_error(&mut b) };
    let text = if b.len == 0 {
        String::new()
    } else {
        String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(b.ptr, b.len) }).into_owned()
    };
    unsafe { toolgate_buf_free(b) };
    text
}

#[test]
fn a_null_optional_string_with_a_length_is_an_error_never_absent() {
    let t = corpus_table("acceptance-edit");
    let config = b"editor-chat";
    let mut ctx = std::ptr::dangling_mut::<toolgate_context>();
    // A consumer passed as NULL with a length is an error: read as absent, it
    // would silently drop the consumer and so its access profile.
    let status = unsafe {
        toolgate_context_new(
            t,
            config.as_ptr().cast(),
            config.len(),
            TOOLGATE_ROLE_USER,
            std::ptr::null(),
            7,
            std::ptr::null(),
            std::ptr::null(),
            0,
            &mut ctx,
        )
    };
    assert_eq!(status, TOOLGATE_ERR_NULL);
    assert!(ctx.is_null());
    assert_eq!(
        last_message(),
        "consumer: NULL pointer with length 7 (absent is NULL with length 0)"
    );
    let status = unsafe {
        toolgate_context_new(
            t,
            config.as_ptr().cast(),
            config.len(),
            TOOLGATE_ROLE_USER,
            std::ptr::null(),
            0,
            std::ptr::null(),
            std::ptr::null(),
            3,
            &mut ctx,
        )
    };
    assert_eq!(status, TOOLGATE_ERR_NULL);
    let mut run = std::ptr::null_mut();
    let status = unsafe {
        toolgate_run_start(
            t,
            config.as_ptr().cast(),
            config.len(),
            std::ptr::null(),
            2,
            &mut run,
        )
    };
    assert_eq!(status, TOOLGATE_ERR_NULL);
    assert!(run.is_null());
    unsafe { toolgate_table_free(t) };
}

#[test]
fn a_length_no_buffer_can_have_is_an_argument_error() {
    let byte = [0u8; 1];
    let mut t = std::ptr::null_mut();
    let status = unsafe { toolgate_table_load(byte.as_ptr().cast(), usize::MAX, &mut t) };
    assert_eq!(status, TOOLGATE_ERR_ARGUMENT);
    assert_eq!(
        last_message(),
        format!(
            "bytes: length {} is larger than any buffer can be",
            usize::MAX
        )
    );
    let status =
        unsafe { toolgate_table_load(byte.as_ptr().cast(), isize::MAX as usize + 1, &mut t) };
    assert_eq!(status, TOOLGATE_ERR_ARGUMENT);
    // A count whose byte size overflows: out is not written.
    let t = corpus_table("acceptance-edit");
    let config = b"editor-chat";
    let mut ctx = std::ptr::null_mut();
    assert_eq!(
        unsafe {
            toolgate_context_new(
                t,
                config.as_ptr().cast(),
                config.len(),
                TOOLGATE_ROLE_USER,
                std::ptr::null(),
                0,
                std::ptr::null(),
                std::ptr::null(),
                0,
                &mut ctx,
            )
        },
        TOOLGATE_OK
    );
    let mut out = [REFUSED; 1];
    let huge = usize::MAX / 2;
    let status = unsafe {
        toolgate_decide_many(
            ctx,
            [byte.as_ptr().cast::<c_char>()].as_ptr(),
            [1usize].as_ptr(),
            huge,
            out.as_mut_ptr(),
        )
    };
    assert_eq!(status, TOOLGATE_ERR_ARGUMENT);
    assert_eq!(
        last_message(),
        format!("out: length {huge} is larger than any buffer can be")
    );
    unsafe {
        toolgate_context_free(ctx);
        toolgate_table_free(t);
    }
}

#[test]
fn a_table_file_must_be_a_regular_file_read_under_the_cap() {
    let mut t = std::ptr::null_mut();
    let dir = std::env::temp_dir();
    let dir_s = dir.to_string_lossy().into_owned();
    let status = unsafe { toolgate_table_load_file(dir_s.as_ptr().cast(), dir_s.len(), &mut t) };
    assert_eq!(status, TOOLGATE_ERR_FILE_NOT_REGULAR);
    assert!(last_message().ends_with("not a regular file (a directory)"));
    let fifo = dir.join(format!("toolgate-c-fifo-{}", std::process::id()));
    let _ = std::fs::remove_file(&fifo);
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let fifo_s = fifo.to_string_lossy().into_owned();
    // Without a writer, opening a FIFO blocks: refused at once instead.
    let status = unsafe { toolgate_table_load_file(fifo_s.as_ptr().cast(), fifo_s.len(), &mut t) };
    assert_eq!(status, TOOLGATE_ERR_FILE_NOT_REGULAR);
    assert!(last_message().ends_with("not a regular file (a FIFO)"));
    let _ = std::fs::remove_file(&fifo);
    let path = format!(
        "{}/../../conformance/tables/acceptance-edit.tgt",
        env!("CARGO_MANIFEST_DIR")
    );
    let status = unsafe { toolgate_table_load_file(path.as_ptr().cast(), path.len(), &mut t) };
    assert_eq!(status, TOOLGATE_OK);
    let mut n = 0u32;
    assert_eq!(unsafe { toolgate_table_tool_count(t, &mut n) }, TOOLGATE_OK);
    assert!(n > 0);
    unsafe { toolgate_table_free(t) };
    let missing = "/nonexistent/toolgate.tgt";
    let status =
        unsafe { toolgate_table_load_file(missing.as_ptr().cast(), missing.len(), &mut t) };
    assert_eq!(status, TOOLGATE_ERR_FILE_IO);
}

#[test]
fn clones_are_independent_references_freed_in_any_order() {
    let t = corpus_table("acceptance-edit");
    let mut t2 = std::ptr::null_mut();
    assert_eq!(unsafe { toolgate_table_clone(t, &mut t2) }, TOOLGATE_OK);
    unsafe { toolgate_table_free(t) };
    let config = b"editor-chat";
    let mut ctx = std::ptr::null_mut();
    assert_eq!(
        unsafe {
            toolgate_context_new(
                t2,
                config.as_ptr().cast(),
                config.len(),
                TOOLGATE_ROLE_USER,
                std::ptr::null(),
                0,
                std::ptr::null(),
                std::ptr::null(),
                0,
                &mut ctx,
            )
        },
        TOOLGATE_OK
    );
    unsafe { toolgate_table_free(t2) };
    let mut ctx2 = std::ptr::null_mut();
    assert_eq!(
        unsafe { toolgate_context_clone(ctx, &mut ctx2) },
        TOOLGATE_OK
    );
    let name = b"delete_record";
    let before = unsafe { toolgate_decide_packed(ctx, name.as_ptr().cast(), name.len()) };
    unsafe { toolgate_context_free(ctx) };
    let after = unsafe { toolgate_decide_packed(ctx2, name.as_ptr().cast(), name.len()) };
    assert_eq!(before, after);
    assert_eq!(
        after,
        i32::from(TOOLGATE_REASON_CONFIGURATION_EXCLUDED << TOOLGATE_PACKED_REASON_SHIFT)
    );
    unsafe { toolgate_context_free(ctx2) };
}

#[test]
fn the_codes_json_holds_every_constant_of_the_header() {
    let mut b = EMPTY_BUF;
    assert_eq!(unsafe { toolgate_codes_json(&mut b) }, TOOLGATE_OK);
    let text = unsafe { std::slice::from_raw_parts(b.ptr, b.len) }.to_vec();
    unsafe { toolgate_buf_free(b) };
    let v: serde_json::Value = serde_json::from_slice(&text).expect("JSON");
    let status = |name: &str| {
        v["statuses"]
            .as_array()
            .and_then(|a| a.iter().find(|s| s["name"] == name))
            .map(|s| s["number"].as_i64().unwrap_or(-1))
    };
    assert_eq!(status("ERR_NULL"), Some(i64::from(TOOLGATE_ERR_NULL)));
    assert_eq!(
        status("ERR_FILE_TOO_LARGE"),
        Some(i64::from(TOOLGATE_ERR_FILE_TOO_LARGE))
    );
    assert_eq!(status("ERR_PANIC"), Some(i64::from(TOOLGATE_ERR_PANIC)));
    assert_eq!(v["gates"][6]["code"], "trustZone");
    assert_eq!(v["gates"][6]["number"], TOOLGATE_REASON_TRUST_ZONE);
    assert_eq!(v["packed"]["reasonShift"], TOOLGATE_PACKED_REASON_SHIFT);
    assert_eq!(v["maxFileBytes"], TOOLGATE_MAX_FILE_BYTES);
}

#[test]
fn the_tool_set_is_the_runtimes_with_hidden_names_marked() {
    let t = corpus_table("mcp-profiles");
    let (config, consumer) = ("support-chat", "support-bot");
    let mut ctx = std::ptr::null_mut();
    assert_eq!(
        unsafe {
            toolgate_context_new(
                t,
                config.as_ptr().cast(),
                config.len(),
                TOOLGATE_ROLE_USER,
                consumer.as_ptr().cast(),
                consumer.len(),
                std::ptr::null(),
                std::ptr::null(),
                0,
                &mut ctx,
            )
        },
        TOOLGATE_OK
    );
    let mut b = EMPTY_BUF;
    assert_eq!(unsafe { toolgate_tool_set_json(ctx, &mut b) }, TOOLGATE_OK);
    let text = unsafe { std::slice::from_raw_parts(b.ptr, b.len) }.to_vec();
    unsafe { toolgate_buf_free(b) };
    let v: serde_json::Value = serde_json::from_slice(&text).expect("JSON");
    let expected = serde_json::to_value(unsafe { &*ctx }.ctx.get().tool_set()).expect("JSON");
    assert_eq!(v, expected);
    assert_eq!(v["audience"], "host");
    assert_eq!(v["profile"], "support-readonly");
    assert_eq!(
        v["excluded"][0],
        serde_json::json!({"tool": "refund.issue", "reason": "notInProfile", "nameVisible": true})
    );
    assert!(v["excluded"]
        .as_array()
        .expect("a list")
        .iter()
        .any(|e| e["nameVisible"] == false));
    let mut b = EMPTY_BUF;
    assert_eq!(
        unsafe { toolgate_tool_set_json(std::ptr::null(), &mut b) },
        TOOLGATE_ERR_NULL
    );
    unsafe {
        toolgate_context_free(ctx);
        toolgate_table_free(t);
    }
}
