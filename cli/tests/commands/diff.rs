//! `toolgate diff`: a change to the policy as the access it widens or
//! narrows, a reformatting as no change, and `--git` against a revision.

use crate::common::*;

#[test]
fn removing_one_exclusion_is_exactly_one_widening_and_nothing_else() {
    let d = scratch_example("widen", "exclusions");
    let f = d.join("configurations.tg");
    let text = std::fs::read_to_string(&f).unwrap();
    // editor-chat's exclusion line, and only that one.
    let start = text.find("configuration editor-chat").unwrap();
    let line = text[start..]
        .find("exclude [delete_record]\n")
        .map(|i| i + start)
        .unwrap();
    let new = format!(
        "{}{}",
        &text[..line],
        &text[line + "exclude [delete_record]\n".len()..]
    );
    std::fs::write(&f, new).unwrap();
    let o = run(&[
        "diff",
        "policies/exclusions",
        d.to_str().unwrap(),
        "--format",
        "json",
        "--fail-on-widen",
    ]);
    assert_eq!(o.status.code(), Some(1), "--fail-on-widen exits 1");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["summary"]["widened"], 1);
    assert_eq!(v["summary"]["narrowed"], 0);
    assert_eq!(v["summary"]["reasonChanged"], 0);
    let c = &v["changes"][0];
    assert_eq!(
        (
            c["kind"].as_str(),
            c["configuration"].as_str(),
            c["tool"].as_str(),
            c["everywhere"].as_bool()
        ),
        (
            Some("widened"),
            Some("editor-chat"),
            Some("delete_record"),
            Some(true)
        )
    );
    assert_eq!(c["old"]["reason"], "configurationExcluded");
    assert_eq!(c["new"]["allowed"], true);
    // Without --fail-on-widen the diff itself is not a failure.
    assert_eq!(
        run(&["diff", "policies/exclusions", d.to_str().unwrap()])
            .status
            .code(),
        Some(0)
    );
}

#[test]
fn moving_a_tool_between_groups_reports_every_affected_configuration() {
    let d = temp("move");
    let reg = |g: &str| {
        format!("[[tool]]\nname = \"t\"\ngroup = \"{g}\"\n[[tool]]\nname = \"a\"\ngroup = \"one\"\n[[tool]]\nname = \"b\"\ngroup = \"two\"\n")
    };
    let policy = "provider p { zone local }\nconfiguration only-one { provider p  groups [one] }\nconfiguration only-two { provider p  groups [two] }\nconfiguration all { provider p }\n";
    for (dir, g) in [("old", "one"), ("new", "two")] {
        let p = d.join(dir);
        std::fs::create_dir_all(&p).unwrap();
        std::fs::write(
            p.join("toolgate.toml"),
            "registry = \"registry.toml\"\npolicies = [\"p.tg\"]\n",
        )
        .unwrap();
        std::fs::write(p.join("registry.toml"), reg(g)).unwrap();
        std::fs::write(p.join("p.tg"), policy).unwrap();
    }
    let o = toolgate(&d, &["diff", "old", "new"]);
    assert_eq!(
        stdout(&o),
        "1 widened, 1 narrowed, 0 reason changed (162 decisions compared)\n\
         WIDENED        only-two: t: refused: configurationGroup -> offered (every role, consumer and mode)\n\
         narrowed       only-one: t: offered -> refused: configurationGroup (every role, consumer and mode)\n"
    );
}

#[test]
fn a_reformatted_project_diffs_as_no_change() {
    let d = scratch_example("fmt", "trust-zones");
    let f = d.join("policy.tg");
    let text = std::fs::read_to_string(&f).unwrap();
    // Same meaning, another layout: blocks opened over several lines, padded braces.
    let messy: String = text
        .lines()
        .map(|l| {
            if l.trim_start().starts_with('#') {
                format!("{l}\n")
            } else {
                format!("{l}\n")
                    .replace(" { ", "   {\n      ")
                    .replace(" }\n", "\n  }\n")
                    .replace("[", "[ ")
                    .replace(",\n", " ,\n")
            }
        })
        .collect();
    assert_ne!(messy, text);
    std::fs::write(&f, messy).unwrap();
    let o = toolgate(&d, &["fmt", "--check", "."]);
    assert_eq!(o.status.code(), Some(1));
    // The unified diff on stdout, the count and the fix on stderr.
    assert_starts_with(&stdout(&o), "--- policy.tg\n+++ policy.tg (formatted)\n@@ ");
    assert_eq!(stderr(&o), "1 file not formatted: run `toolgate fmt -w`\n");
    let o = run(&[
        "diff",
        "policies/trust-zones",
        d.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["changes"].as_array().map(Vec::len), Some(0));
    assert_eq!(v["summary"]["widened"], 0);
    // fmt -w restores the canonical file byte for byte.
    assert_eq!(toolgate(&d, &["fmt", "-w", "."]).status.code(), Some(0));
    assert_eq!(std::fs::read_to_string(&f).unwrap(), text);
    // Windows line endings are accepted and kept.
    std::fs::write(&f, text.replace('\n', "\r\n")).unwrap();
    let o = toolgate(&d, &["fmt", "--check", "."]);
    assert_eq!((o.status.code(), stdout(&o).as_str()), (Some(0), ""));
    assert_eq!(
        toolgate(&d, &["check", "--format", "plain"]).status.code(),
        Some(0)
    );
}

#[test]
fn diff_git_compares_with_a_revision() {
    let d = temp("git");
    copy_dir(
        &root().join("policies/exclusions"),
        &d.join("policies/exclusions"),
    );
    git_base(&d);
    let f = d.join("policies/exclusions/configurations.tg");
    let text = std::fs::read_to_string(&f).unwrap();
    std::fs::write(
        &f,
        text.replacen(
            "exclude [delete_record]\n",
            "exclude [delete_record, update_record]\n",
            1,
        ),
    )
    .unwrap();
    let o = toolgate(
        &d,
        &[
            "diff",
            "--git",
            "HEAD",
            "policies/exclusions",
            "--fail-on-widen",
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_starts_with(&stdout(&o), "0 widened, 1 narrowed, 0 reason changed");
}
