//! `toolgate show`: the readouts one by one and in bulk (`show configs`,
//! `show tools`, `show exclusions`), for the screens where tools are managed
//! (docs/gate-semantics.md §6 rule 7), as text and JSON.

use crate::common::*;

/// Two configurations over the exclusions registry: one excludes a
/// registered tool and one that is gone (`retired_tool`, TG1009).
fn project(name: &str) -> std::path::PathBuf {
    scratch(
        name,
        "group content { class editorContent }\n\
         group editing { class editorContent }\n\
         provider claude-eu { zone externalEu }\n\n\
         configuration editor-chat {\n  provider claude-eu\n  groups [content, editing]\n  \
         exclude [delete_record, retired_tool] # toolgate: allow TG1009 -- kept until the audit\n}\n\n\
         configuration reviewer-chat {\n  groups [content]\n  exclude [delete_record]\n}\n",
    )
}

#[test]
fn show_configs_lists_every_configuration() {
    let p = project("readouts-configs");
    let d = p.to_str().unwrap();
    let o = run(&["show", "configs", "-p", d]);
    assert_eq!(o.status.code(), Some(0));
    // The table's name of the file: relative to the project.
    let f = "policy.tg";
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        [
            "configuration",
            "provider",
            "zone",
            "groups",
            "excluded",
            "no",
            "longer",
            "registered",
            "file"
        ]
    );
    assert_eq!(
        lines[1].split_whitespace().collect::<Vec<_>>(),
        [
            "editor-chat",
            "claude-eu",
            "externalEu",
            "content,",
            "editing",
            "1",
            "1",
            f
        ]
    );
    assert_eq!(
        lines[2].split_whitespace().collect::<Vec<_>>(),
        [
            "reviewer-chat",
            "-",
            "externalGlobal",
            "content",
            "1",
            "0",
            f
        ]
    );
    assert_eq!(&lines[3..], ["", "2 configurations"]);
    let v: serde_json::Value =
        serde_json::from_slice(&run(&["show", "configs", "-p", d, "--format", "json"]).stdout)
            .unwrap();
    assert_eq!(
        v,
        serde_json::json!([
            {"configuration": "editor-chat", "file": f, "provider": "claude-eu", "zone": "externalEu",
             "groups": ["content", "editing"], "excluded": 1, "noLongerRegistered": 1},
            {"configuration": "reviewer-chat", "file": f, "provider": null, "zone": "externalGlobal",
             "groups": ["content"], "excluded": 1, "noLongerRegistered": 0}
        ])
    );
}

#[test]
fn show_tools_names_the_configurations_excluding_each_tool() {
    let p = project("readouts-tools");
    let d = p.to_str().unwrap();
    let o = run(&["show", "tools", "-p", d, "--excluded"]);
    assert_eq!(
        stdout(&o),
        "tool           group    excluded by\n\
         delete_record  editing  editor-chat, reviewer-chat\n\
         \n\
         1 tool, 1 excluded by at least one configuration\n"
    );
    let v: serde_json::Value =
        serde_json::from_slice(&run(&["show", "tools", "-p", d, "--format", "json"]).stdout)
            .unwrap();
    let rows = v.as_array().unwrap();
    assert_eq!(rows.len(), 27, "every registered tool");
    assert_eq!(
        rows[0],
        serde_json::json!({"tool": "get_page_content", "group": "content", "excludedBy": []})
    );
    let del = rows.iter().find(|r| r["tool"] == "delete_record").unwrap();
    assert_eq!(
        del["excludedBy"],
        serde_json::json!(["editor-chat", "reviewer-chat"])
    );
    // A tool that is gone is not a row: it is under its configuration's
    // "no longer registered".
    assert!(rows.iter().all(|r| r["tool"] != "retired_tool"));
}

#[test]
fn show_exclusions_lists_stale_names_apart() {
    let p = project("readouts-exclusions");
    let d = p.to_str().unwrap();
    let o = run(&["show", "exclusions", "-p", d]);
    assert_eq!(
        stdout(&o),
        "editor-chat\n  \
         excluded              delete_record\n  \
         no longer registered  retired_tool\n\
         reviewer-chat\n  \
         excluded              delete_record\n\
         \n\
         2 configurations, 3 exclusions, 1 no longer registered (TG1009: remove them, or keep them with `# toolgate: allow TG1009`)\n"
    );
    let v: serde_json::Value =
        serde_json::from_slice(&run(&["show", "exclusions", "-p", d, "--format", "json"]).stdout)
            .unwrap();
    assert_eq!(
        v,
        serde_json::json!([
            {"configuration": "editor-chat", "excluded": ["delete_record"], "noLongerRegistered": ["retired_tool"]},
            {"configuration": "reviewer-chat", "excluded": ["delete_record"], "noLongerRegistered": []}
        ])
    );
}

#[test]
fn show_tool_and_show_config_align_their_fields() {
    let p = project("readouts-one");
    let d = p.to_str().unwrap();
    let o = run(&["show", "tool", "delete_record", "-p", d]);
    assert_eq!(
        stdout(&o),
        "tool         delete_record\n\
         group        editing\n\
         origin       builtin\n\
         state        enabled\n\
         admin-only   no\n\
         class        editorContent\n\
         excluded by  editor-chat, reviewer-chat\n"
    );
    let o = run(&["show", "config", "editor-chat", "-p", d]);
    assert_eq!(
        stdout(&o),
        format!(
            "configuration         editor-chat  ({})\n\
             provider              claude-eu\n\
             zone                  externalEu\n\
             ceiling               internalConfiguration\n\
             groups                content, editing\n\
             excluded              delete_record\n\
             no longer registered  retired_tool\n\
             skills                -\n",
            // The table's name of the file: relative to the project.
            "policy.tg"
        )
    );
}

#[test]
fn show_readouts_name_excluding_configurations_and_stale_names() {
    let out = stdout(&run(&[
        "show",
        "tool",
        "delete_record",
        "-p",
        "policies/exclusions",
        "--format",
        "json",
    ]));
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["excludedBy"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c == "editor-chat"));
    let dir = scratch("stale", WARN);
    let out = stdout(&run(&[
        "show",
        "config",
        "editor-chat",
        "-p",
        dir.to_str().unwrap(),
    ]));
    assert_contains(&out, "no longer registered  retired_tool");
}
