//! The terminal: `--color`, `NO_COLOR`, `--quiet`, `-o FILE`, `-` for
//! standard input, and tables laid out by display width.

use std::process::Output;

use crate::common::*;

/// `toolgate ARGS` at the repository root with `NO_COLOR` as given.
fn with_env(no_color: Option<&str>, args: &[&str]) -> Output {
    let mut c = bin();
    c.current_dir(root()).env_remove("GITHUB_STEP_SUMMARY");
    match no_color {
        Some(v) => c.env("NO_COLOR", v),
        None => c.env_remove("NO_COLOR"),
    };
    c.args(args).output().unwrap()
}

/// A project whose one policy excludes `delete_recrod` (TG1010).
fn typo_project(name: &str) -> std::path::PathBuf {
    scratch(
        name,
        "configuration editor-chat {\n  exclude [delete_recrod]\n}\n",
    )
}

#[test]
fn color_always_styles_the_verdict_never_and_no_color_do_not() {
    let styled = "\u{1b}[1mread_source\u{1b}[0m: \u{1b}[1m\u{1b}[31mrefused\u{1b}[0m, configurationGroup (not among the tools this configuration allows)\n";
    let plain = "read_source: refused, configurationGroup (not among the tools this configuration allows)\n";
    // --color always wins over NO_COLOR (no-color.org: a flag overrides it).
    let o = with_env(
        Some("1"),
        &demo_chat("decide", &["read_source", "--color", "always"]),
    );
    assert_eq!((stdout(&o).as_str(), o.status.code()), (styled, Some(1)));
    let o = with_env(
        None,
        &demo_chat("decide", &["read_source", "--color=always"]),
    );
    assert_eq!(stdout(&o), styled);
    // auto off a terminal, never, and NO_COLOR: plain.
    for (env, extra) in [(None, "auto"), (None, "never"), (Some("1"), "auto")] {
        let o = with_env(
            env,
            &demo_chat("decide", &["read_source", "--color", extra]),
        );
        assert_eq!(stdout(&o), plain, "{env:?} {extra}");
    }
    // The flag is global: before the subcommand too.
    let o = with_env(
        None,
        &[
            &["--color", "always"][..],
            &demo_chat("decide", &["read_source"]),
        ]
        .concat(),
    );
    assert_eq!(stdout(&o), styled);
    // A wrong value is clap's usage error.
    let o = with_env(
        None,
        &demo_chat("decide", &["read_source", "--color", "sometimes"]),
    );
    assert_eq!(o.status.code(), Some(2));
    assert_contains(
        &stderr(&o),
        "invalid value 'sometimes' for '--color <WHEN>'",
    );
}

#[test]
fn explain_marks_each_gate_in_colour() {
    let o = with_env(
        None,
        &demo_chat("explain", &["read_source", "--color", "always"]),
    );
    let out = stdout(&o);
    assert_contains(
        &out,
        "  \u{1b}[1m\u{1b}[32mpass   \u{1b}[0m requiresAdmin\n",
    );
    assert_contains(
        &out,
        "  \u{1b}[1m\u{1b}[31mREFUSE \u{1b}[0m configurationGroup\n",
    );
}

#[test]
fn a_styled_check_report_never_passes_the_files_own_escapes() {
    let dir = typo_project("styled-check");
    // An ESC sequence that would clear the screen, in a comment next to a typo.
    std::fs::write(
        dir.join("policy.tg"),
        "# \u{1b}[2J cleared\nconfiguration editor-chat {\n  exclude [delete_recrod]\n}\n",
    )
    .unwrap();
    let d = dir.to_str().unwrap();
    let o = with_env(None, &["check", d, "--color", "always"]);
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(out.contains("\u{1b}["), "styled: {out}");
    assert!(
        !out.contains("\u{1b}[2J"),
        "the file's own escape is not written: {out}"
    );
    assert!(
        out.contains("# ?[2J cleared"),
        "it is shown as `?`, the span unchanged: {out}"
    );
    // Unstyled, miette drops the sequence from the quoted line (as before).
    let o = with_env(None, &["check", d]);
    assert!(!stdout(&o).contains('\u{1b}'));
    assert!(stdout(&o).contains(" 1 │ #  cleared\n"), "{}", stdout(&o));
}

#[test]
fn quiet_keeps_answers_and_diagnostics_and_drops_notes_and_summaries() {
    let dir = temp("quiet");
    let table = dir.join("t.tgt");
    let t = table.to_str().unwrap();
    let o = with_env(Some("1"), &["compile", "policies/demo", "-o", t]);
    assert!(stderr(&o).starts_with("compiled "), "{}", stderr(&o));
    let o = with_env(Some("1"), &["--quiet", "compile", "policies/demo", "-o", t]);
    assert_eq!((stderr(&o).as_str(), o.status.code()), ("", Some(0)));
    // check: the summary lines go; a clean run prints nothing at all.
    let o = with_env(Some("1"), &["check", "policies"]);
    assert_ends_with(&stdout(&o), "6 projects: 0 errors, 0 warnings\n");
    let o = with_env(Some("1"), &["check", "policies", "-q"]);
    assert_eq!((stdout(&o).as_str(), o.status.code()), ("", Some(0)));
    // The answer itself stays.
    let o = with_env(Some("1"), &demo_chat("decide", &["read_source", "-q"]));
    assert_eq!(
        stdout(&o),
        "read_source: refused, configurationGroup (not among the tools this configuration allows)\n"
    );
}

#[test]
fn output_file_takes_the_report_and_keeps_the_exit_code() {
    let dir = temp("output");
    let proj = typo_project("output-project");
    let sarif = dir.join("check.sarif");
    // `check` of the project in FORMAT, written to OUT.
    let check = |format: &str, out: &str| {
        let p = proj.to_str().unwrap();
        with_env(Some("1"), &["check", p, "--format", format, "-o", out])
    };
    let o = check("sarif", sarif.to_str().unwrap());
    assert_eq!((stdout(&o).as_str(), o.status.code()), ("", Some(1)));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&sarif).unwrap()).unwrap();
    assert_eq!(v["runs"][0]["results"][0]["ruleId"], "TG1010");
    // -o - is standard output.
    let o = check("json", "-");
    assert!(stdout(&o).contains("\"TG1010\""));
    // Reports of test and diff, and the query commands, too.
    let junit = dir.join("junit.xml");
    let o = with_env(
        Some("1"),
        &[
            "test",
            "policies/demo",
            "--format",
            "junit",
            "-o",
            junit.to_str().unwrap(),
        ],
    );
    assert_eq!((stdout(&o).as_str(), o.status.code()), ("", Some(0)));
    assert!(std::fs::read_to_string(&junit)
        .unwrap()
        .starts_with("<?xml"));
    let list = dir.join("unavailable.json");
    let o = with_env(
        Some("1"),
        &demo_chat(
            "unavailable",
            &["--format", "json", "-o", list.to_str().unwrap()],
        ),
    );
    assert_eq!((stdout(&o).as_str(), o.status.code()), ("", Some(0)));
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&list).unwrap()).unwrap();
    assert_eq!(v[0]["reason"], "configurationGroup");
}

#[test]
fn a_dash_reads_standard_input() {
    let log = "{\"timeUnixMs\":1,\"table\":\"ab\",\"configuration\":\"demo-chat\",\"role\":\"user\",\"consumer\":null,\"tool\":\"t\",\"allowed\":false,\"reason\":\"configurationGroup\",\"observedOnly\":false}\n";
    let o = with_stdin(&["stats", "-", "--format", "json"], log.as_bytes());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        (v["decisions"].as_u64(), v["refused"].as_u64()),
        (Some(1), Some(1))
    );
    // A gateway answer from a pipe.
    let o = with_stdin(
        &["classify", "-", "--tool", "read_source"],
        br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}"#,
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["outcome"], "success", "{v}");
}

#[test]
fn simulate_lays_out_columns_by_display_width() {
    let dir = scratch_project(
        "widths",
        "[[tool]]\nname = \"größe_prüfen\"\ngroup = \"content\"\n\n[[tool]]\nname = \"検索\"\ngroup = \"content\"\n\n[[tool]]\nname = \"delete_page\"\ngroup = \"content\"\n",
        "group content { class editorContent }\nprovider p { zone externalEu }\n\nconfiguration chat {\n  provider p\n  groups [content]\n  exclude [delete_page]\n}\n",
    );
    let o = with_env(
        Some("1"),
        &["simulate", "-p", dir.to_str().unwrap(), "-c", "chat"],
    );
    assert_eq!(
        stdout(&o),
        "tool          offered  reason                 class\n\
         größe_prüfen  yes      -                      editorContent\n\
         検索          yes      -                      editorContent\n\
         delete_page   no       configurationExcluded  -\n\
         \n\
         2 of 3 tools offered to configuration chat (user, enforce, trust zone externalEu)\n"
    );
}

/// `script` gives the command a terminal (util-linux, in every Debian).
fn on_a_terminal(cmd: &str) -> String {
    let o = std::process::Command::new("script")
        .current_dir(root())
        .env("NO_COLOR", "1")
        .args(["-qec", cmd, "/dev/null"])
        .output()
        .expect("`script` (util-linux) runs the command on a terminal");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn progress_is_drawn_on_a_terminal_only_and_never_under_quiet() {
    let bin = env!("CARGO_BIN_EXE_toolgate");
    let dir = temp("progress");
    let out = dir.join("snap.txt");
    let cmd = format!("{bin} snapshot policies/demo -o {}", out.display());
    // On a terminal: the bar over the configurations, cleared at the end.
    let tty = on_a_terminal(&cmd);
    assert!(tty.contains("snapshot ["), "{tty:?}");
    assert!(tty.contains("0/2"), "{tty:?}");
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        std::fs::read_to_string(root().join("policies/demo/effective-access.txt")).unwrap()
    );
    // Under --quiet, nothing, even on a terminal.
    assert_eq!(on_a_terminal(&format!("{cmd} --quiet")), "");
    // Piped: nothing on standard error.
    let o = bin_at_root(&["snapshot", "policies/demo", "-o", out.to_str().unwrap()]);
    assert_eq!((stderr(&o).as_str(), o.status.code()), ("", Some(0)));
    let o = bin_at_root(&["diff", "policies/demo", "policies/demo"]);
    assert_eq!(stderr(&o), "");
    // check over several projects on a terminal.
    let tty = on_a_terminal(&format!("{bin} check policies"));
    assert!(tty.contains("check ["), "{tty:?}");
    assert!(
        tty.ends_with("6 projects: 0 errors, 0 warnings\r\n"),
        "{tty:?}"
    );
}

fn bin_at_root(args: &[&str]) -> Output {
    with_env(Some("1"), args)
}

#[test]
fn diff_and_fmt_check_colour_what_changed() {
    let dir = temp("colour-diff");
    crate::common::copy_dir(&root().join("policies/exclusions"), &dir);
    let cfg = dir.join("configurations.tg");
    let text = std::fs::read_to_string(&cfg).unwrap();
    std::fs::write(
        &cfg,
        text.replacen("exclude [delete_record]", "exclude []", 1),
    )
    .unwrap();
    let o = with_env(
        None,
        &[
            "diff",
            "policies/exclusions",
            dir.to_str().unwrap(),
            "--color",
            "always",
        ],
    );
    assert_eq!(
        stdout(&o),
        "1 widened, 0 narrowed, 0 reason changed (1944 decisions compared)\n\
         \u{1b}[1m\u{1b}[31mWIDENED\u{1b}[0m        editor-chat: delete_record: refused: configurationExcluded -> offered (every role, consumer and mode)\n"
    );
    let f = dir.join("f.tg");
    std::fs::write(&f, "configuration  x {\n}\n").unwrap();
    let o = with_env(
        None,
        &["fmt", "--check", f.to_str().unwrap(), "--color", "always"],
    );
    let name = f.display();
    assert_eq!(
        stdout(&o),
        format!(
            "\u{1b}[1m--- {name}\u{1b}[0m\n\u{1b}[1m+++ {name} (formatted)\u{1b}[0m\n\u{1b}[1m@@ -1,2 +1 @@\u{1b}[0m\n\
             \u{1b}[31m-configuration  x {{\u{1b}[0m\n\u{1b}[31m-}}\u{1b}[0m\n\u{1b}[32m+configuration x {{ }}\u{1b}[0m\n"
        )
    );
    assert_eq!(o.status.code(), Some(1));
}

/// Run with standard output (or error) a pipe whose reader is already gone:
/// the read end is closed before the child starts, so its first write fails
/// whatever the scheduling.
fn with_closed(stream: &str, args: &[&str]) -> Output {
    let mut cmd = bin();
    cmd.current_dir(root()).env("NO_COLOR", "1").args(args);
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    if stream == "stdout" {
        cmd.stdout(writer).stderr(std::process::Stdio::piped());
    } else {
        cmd.stdout(std::process::Stdio::null()).stderr(writer);
    }
    cmd.output().unwrap()
}

#[test]
fn a_closed_stdout_or_stderr_ends_quietly_never_with_a_panic() {
    let table = std::env::temp_dir().join(format!("toolgate-pipe-{}.tgt", std::process::id()));
    for args in [
        demo_chat("simulate", &[]),
        vec!["check", "--format", "sarif", "policies/demo"],
        demo_chat("unavailable", &["--format", "prompt"]),
        vec!["--help"],
    ] {
        let o = with_closed("stdout", &args);
        assert_eq!(o.status.code(), Some(141), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{args:?}: {}", stderr(&o));
    }
    // A closed standard error drops the message; the status is the command's.
    let o = with_closed(
        "stderr",
        &["compile", "policies/demo", "-o", table.to_str().unwrap()],
    );
    assert_eq!(o.status.code(), Some(0));
    let o = with_closed("stderr", &["check", "/nonexistent/project"]);
    assert_eq!(o.status.code(), Some(2));
    let o = with_closed("stderr", &demo_chat("simulate", &[]));
    assert_eq!(o.status.code(), Some(0));
}

/// A binary table and an HTML page are not written to a terminal: without
/// `-o`, `compile` and `report` say how instead; piped, they write to
/// standard output as every other command does.
#[test]
fn compile_and_report_write_no_binary_or_html_to_a_terminal() {
    let bin = env!("CARGO_BIN_EXE_toolgate");
    let tty = on_a_terminal(&format!("{bin} compile policies/demo; echo \"exit $?\""));
    assert_eq!(
        tty,
        "error: a table is binary and standard output is a terminal: give -o FILE (for example `toolgate compile policies/demo -o policy.tgt`), or redirect standard output\r\nexit 2\r\n"
    );
    let tty = on_a_terminal(&format!("{bin} report policies/demo; echo \"exit $?\""));
    assert_eq!(
        tty,
        "error: the report is an HTML page and standard output is a terminal: give -o FILE (for example `toolgate report policies/demo -o report.html`), or redirect standard output\r\nexit 2\r\n"
    );
    // Piped: the table itself, the one `-o` writes.
    let dir = temp("compile-piped");
    let file = dir.join("demo.tgt");
    let o = bin_at_root(&["compile", "policies/demo", "-o", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stderr(&o),
        format!(
            "compiled 23 tools, 2 configurations into {} ({} bytes, digest {})\n",
            file.display(),
            std::fs::metadata(&file).unwrap().len(),
            toolgate_runtime::Table::load(&std::fs::read(&file).unwrap())
                .unwrap()
                .digest_hex()
        )
    );
    let o = bin_at_root(&["compile", "policies/demo"]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(o.stdout, std::fs::read(&file).unwrap());
}
