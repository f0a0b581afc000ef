//! Output shapes people and tools rely on: exact counts however many
//! findings there are, the severity and code in every human header, the
//! catalogue link, and the version line.

use std::process::Output;

use crate::common::*;

/// A project with `n` stale exclusions (TG1009 warnings).
fn storm(name: &str, n: usize) -> std::path::PathBuf {
    let registry = std::fs::read_to_string(root().join("policies/demo/registry.toml")).unwrap();
    let names: Vec<String> = (0..n).map(|i| format!("gone_{i}")).collect();
    let policy = format!("configuration c {{ exclude [{}] }}\n", names.join(", "));
    scratch_project(name, &registry, &policy)
}

#[test]
fn counts_are_never_capped() {
    let dir = storm("storm", 1375);
    let o = toolgate(&dir, &["check", "--format", "plain"]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout(&o);
    assert_eq!(out.matches("warning[TG1009]").count(), 1000);
    assert!(out.ends_with(
        "... and 375 more not shown (--format json lists every one)\n\n0 errors, 1,375 warnings\n"
    ));
    let o = toolgate(&dir, &["check"]);
    assert!(stdout(&o).ends_with("0 errors, 1,375 warnings\n"));
    let o = toolgate(&dir, &["check", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["diagnostics"].as_array().map(Vec::len), Some(1375));
    assert_eq!(v["summary"]["warnings"], 1375);
    let o = toolgate(&dir, &["check", "--format", "sarif"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["runs"][0]["results"].as_array().map(Vec::len), Some(1375));
    // --deny-warnings counts every one too.
    let o = toolgate(&dir, &["check", "--deny-warnings", "--format", "plain"]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn human_headers_name_severity_code_and_catalogue_entry() {
    let dir = storm("header", 1);
    let o = toolgate(&dir, &["check"]);
    let out = stdout(&o);
    assert!(
        out.starts_with(
            "warning[TG1009] (https://github.com/toolgate/toolgate/blob/main/docs/diagnostics.md#tg1009-stale-exclusion)\n\n  ⚠ `gone_0` is no longer registered\n"
        ),
        "{out}"
    );
}

#[test]
fn version_names_the_table_format() {
    let o = run(&["--version"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stdout(&o),
        format!(
            "toolgate {} (table formats {} to {})\n",
            env!("CARGO_PKG_VERSION"),
            toolgate_runtime::format::OLDEST_FORMAT_VERSION,
            toolgate_runtime::format::FORMAT_VERSION
        )
    );
}

/// `toolgate decide -p PROJECT -c CONFIG FLAG VALUE TOOL`.
fn decide(project: &str, config: &str, flag: &str, value: &str, tool: &str) -> Output {
    run(&["decide", "-p", project, "-c", config, flag, value, tool])
}

#[test]
fn operators_typos_warn_or_fail_with_a_did_you_mean() {
    let profiles = "policies/mcp-profiles";
    for (o, code, err) in [
        // Unknown consumer: warned, decided with its profile gate closed
        // (every edge refuses it).
        (
            decide(profiles, "support-chat", "--consumer", "suport-bot", "refund.issue"),
            1,
            "warning: no `consumer` block names `suport-bot`, so every edge and host refuses it (`unknownConsumer`); decided here with its profile gate closed; did you mean `support-bot`?\n",
        ),
        // An enforcement setting that is neither word: warned, and it enforces.
        (
            decide("policies/demo", "demo-chat", "--enforcement", "Observ", "read_source"),
            1,
            "warning: `--enforcement Observ` is neither `observe` nor `enforce`, so it enforces; did you mean `observe`?\n",
        ),
        // `OBSERVE ` is a spelling of observe: no warning.
        (
            decide("policies/demo", "demo-chat", "--enforcement", "OBSERVE ", "read_source"),
            1,
            "",
        ),
    ] {
        assert_eq!((o.status.code(), stderr(&o).as_str()), (Some(code), err));
    }
    let ex = "policies/exclusions";
    for (args, err) in [
        (
            &["show", "tool", "read_sorce", "-p", "policies/demo"][..],
            "error: `read_sorce` is not a registered tool; did you mean `read_source`?\n",
        ),
        (
            &["show", "config", "demo-caht", "-p", "policies/demo"][..],
            "error: unknown configuration `demo-caht`; did you mean `demo-chat`?\n",
        ),
        (
            &[
                "run",
                "start",
                "-p",
                ex,
                "-c",
                "editor-chat",
                "--skill",
                "page-translaton",
            ][..],
            "error: unknown skill `page-translaton`; did you mean `page-translation`?\n",
        ),
    ] {
        let o = run(args);
        assert_eq!((o.status.code(), stderr(&o).as_str()), (Some(2), err));
    }
}

#[test]
fn a_broken_policy_under_a_query_is_an_input_error_not_a_refusal() {
    let dir = storm("broken", 0);
    std::fs::write(dir.join("policy.tg"), "configuration c { groups [nope] }\n").unwrap();
    let o = toolgate(&dir, &["decide", "-c", "c", "read_source"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stdout(&o), "");
    assert!(stderr(&o).contains("error[TG1002]"), "{}", stderr(&o));
    // `check` and `compile` keep 1 for "the policy has errors".
    assert_eq!(toolgate(&dir, &["check"]).status.code(), Some(1));
}

#[test]
fn snapshot_refuses_past_its_size_limit_and_table_wants_a_file() {
    // The demo's snapshot is 138 lines (plus its two header lines).
    let text = std::fs::read_to_string(root().join("policies/demo/effective-access.txt")).unwrap();
    assert_eq!(text.lines().count(), 140);
    let o = run(&["snapshot", "policies/demo", "--check", "--max-lines", "137"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "error: the snapshot would hold 138 lines (configurations x roles x consumers x tools), over the limit of 137; give --max-lines 138 to write it anyway, or review changes with `toolgate diff`\n"
    );
    let o = run(&["snapshot", "policies/demo", "--check", "--max-lines", "138"]);
    assert_eq!(o.status.code(), Some(0));
    let o = run(&["decide", "--table", "policies", "-c", "x", "y"]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        stderr(&o),
        "error: policies: --table wants a table file (written by `toolgate compile`), not a directory; for a project, use -p\n"
    );
}

#[test]
fn live_tools_are_decided_through_the_runtime_live_path() {
    let dir = temp("live");
    let live = live_tools(&dir);
    let admin_live = ["--admin", "--live", &live];
    let o = run(&demo_chat(
        "decide",
        &[&admin_live[..], &["new_tool"]].concat(),
    ));
    assert_eq!(
        (o.status.code(), stdout(&o).as_str()),
        (Some(0), "new_tool: offered\n")
    );
    // A remote tool registered late arrives switched off.
    let o = run(&demo_chat(
        "decide",
        &[&admin_live[..], &["mcp_crm_new"]].concat(),
    ));
    assert_eq!(
        (o.status.code(), stdout(&o).as_str()),
        (
            Some(1),
            "mcp_crm_new: refused, toolDisabled (switched off by an administrator)\n"
        )
    );
    let o = run(&demo_chat("unavailable", &admin_live));
    assert_ends_with(&stdout(&o), "mcp_crm_new toolDisabled\n");
    // Without --live the name is not registered.
    let o = run(&demo_chat("decide", &["new_tool"]));
    assert_eq!(
        stdout(&o),
        "new_tool: refused, notRegistered (no tool of this name is registered)\n"
    );
    // A fragment with errors is an input error, never a guess.
    std::fs::write(&live, "[[tool]]\nname = \"x\"\n").unwrap();
    let o = run(&demo_chat("decide", &[&admin_live[..], &["x"]].concat()));
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("error[TG0004]"), "{}", stderr(&o));
}

#[test]
fn writers_replace_files_atomically() {
    let dir = scratch(
        "atomic",
        "configuration editor-chat {\n  exclude [delete_record]\n}\n",
    );
    let out = dir.join("out.tgt");
    let target = dir.join("elsewhere.tgt");
    std::fs::write(&target, "not to be touched").unwrap();
    // A symlink at the output path is replaced, never written through.
    #[cfg(unix)]
    {
        let _ = std::fs::remove_file(&out);
        std::os::unix::fs::symlink(&target, &out).unwrap();
        let o = run(&[
            "compile",
            dir.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(
            std::fs::read_to_string(&target).unwrap(),
            "not to be touched"
        );
        assert!(!std::fs::symlink_metadata(&out)
            .unwrap()
            .file_type()
            .is_symlink());
    }
    // A concurrent reader sees the old table or the new one, never a part.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let (out, stop) = (out.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut reads = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                if let Ok(bytes) = std::fs::read(&out) {
                    assert!(
                        toolgate_runtime::Table::load(&bytes).is_ok(),
                        "a reader saw {} bytes of a table being written",
                        bytes.len()
                    );
                    reads += 1;
                }
            }
            reads
        })
    };
    for _ in 0..40 {
        let o = run(&[
            "compile",
            dir.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0));
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(reader.join().unwrap() > 0);
    // A write that fails (the output path is a non-empty directory) leaves
    // what was there, and no temporary file behind.
    let blocker = dir.join("blocker.tgt");
    std::fs::create_dir_all(blocker.join("keep")).unwrap();
    let o = run(&[
        "compile",
        dir.to_str().unwrap(),
        "-o",
        blocker.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(blocker.join("keep").is_dir());
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".toolgate-"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // Every writer goes through the same path: snapshot, fmt -w, import-mcp -o.
    let o = run(&["snapshot", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    std::fs::write(
        dir.join("policy.tg"),
        "configuration   editor-chat   {exclude [delete_record]}\n",
    )
    .unwrap();
    let o = run(&["fmt", "-w", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(dir.join("policy.tg")).unwrap(),
        "configuration editor-chat { exclude [delete_record] }\n"
    );
}

#[test]
fn text_outputs_escape_control_characters_in_names() {
    let o = run(&demo_chat("decide", &["get_page_content\n- x: offered"]));
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        "get_page_content\\u000a- x: offered: refused, notRegistered (no tool of this name is registered)\n"
    );
}
