//! Every reference case of docs/gate-semantics.md (§16), the unavailable
//! list (§10) and every exclusion rule (§6), written as policies in our
//! language and run through the runtime.
//! Each decision is also checked against the reference interpreter.

use toolgate_runtime::{
    AllowList, Exclusions, LiveTool, LiveToolSpec, Reason, Role, RunState, Table,
};

/// A live tool the tests know to be valid.
fn live(spec: LiveToolSpec) -> LiveTool {
    LiveTool::new(spec).expect("a valid live tool")
}
use toolgate_reference::fixtures::{
    CASE11_REG, CASE9_REG, CLASSES, EDIT_POLICY, EDIT_REG, NR_LLM, SKILLS_REG,
};
use toolgate_reference::*;

/// Assert the runtime's decision (and the reference's) for one tool.
/// A policy compiled both ways: the reference interpreter's model and the
/// runtime's table.
struct Both {
    m: toolgate_compiler::model::Model,
    t: Table,
}

impl Both {
    fn check(
        &self,
        c: &RefCtx,
        tool: &str,
        // (allowed, reason, observed only): the decision the runtime and the
        // reference interpreter must both give.
        (allowed, reason, observed): Want,
    ) {
        let d = runtime_ctx(&self.t, c).decide(tool);
        assert_eq!(
            (d.allowed, d.reason, d.observed_only),
            (allowed, reason, observed),
            "runtime, {tool} in {c:?}"
        );
        let r = reference_decide(&self.m, c, tool);
        assert_eq!(
            r,
            (allowed, reason.map(Reason::code), observed),
            "reference, {tool} in {c:?}"
        );
    }

    /// `check` in configuration `config` for `role`, nothing else set.
    fn at(&self, config: &str, role: Role, tool: &str, want: Want) {
        self.check(&ctx(config, role), tool, want);
    }
}

/// The decision a case expects: (allowed, reason, observed only).
type Want = (bool, Option<Reason>, bool);
const OFFERED: Want = (true, None, false);
/// Offered only because the trust zone is observed.
const OBSERVED: Want = (true, Some(Reason::TrustZone), true);
fn refused(r: Reason) -> Want {
    (false, Some(r), false)
}

fn both(registry: &str, policy: &str) -> Both {
    Both {
        m: model(registry, &[policy]),
        t: table(registry, &[policy]),
    }
}

#[test]
fn case_1_unknown_name_is_not_registered() {
    let p = format!("{CLASSES} configuration c {{ provider onprem }}");
    let s = both(NR_LLM, &p);
    s.at(
        "c",
        Role::Admin,
        "no_such_tool",
        refused(Reason::NotRegistered),
    );
}

#[test]
fn case_2_nothing_enabled_is_tool_disabled() {
    let reg = "[[tool]]\nname = \"get_page_content\"\ngroup = \"content\"\nenabled = false\n";
    let s = both(reg, "configuration c { }");
    s.at(
        "c",
        Role::Admin,
        "get_page_content",
        refused(Reason::ToolDisabled),
    );
    // Disabling the group does the same, and a tool override cannot re-enable it.
    let reg = "[[tool]]\nname = \"get_page_content\"\ngroup = \"content\"\n";
    let s = both(
        reg,
        "group content { disabled } tool get_page_content { enabled } configuration c { }",
    );
    s.at(
        "c",
        Role::Admin,
        "get_page_content",
        refused(Reason::ToolDisabled),
    );
}

#[test]
fn case_3_admin_only() {
    let p = format!("{CLASSES} configuration c {{ provider onprem }}");
    let s = both(NR_LLM, &p);
    s.at(
        "c",
        Role::User,
        "get_env_raw",
        refused(Reason::RequiresAdmin),
    );
    s.at(
        "c",
        Role::None,
        "get_env_raw",
        refused(Reason::RequiresAdmin),
    );
    s.at("c", Role::Admin, "get_env_raw", OFFERED);
}

#[test]
fn case_4_allowed_groups() {
    let p = format!("{CLASSES} configuration c {{ provider onprem groups [content] }}");
    let s = both(NR_LLM, &p);
    s.at("c", Role::User, "get_page_content", OFFERED);
    s.at(
        "c",
        Role::User,
        "read_source",
        refused(Reason::ConfigurationGroup),
    );
}

#[test]
fn case_5_observe_and_enforce_for_a_builtin_tool() {
    let p = format!("{CLASSES} enforcement observe configuration g {{ provider global }} configuration l {{ provider onprem }}");
    let s = both(NR_LLM, &p);
    let g = ctx("g", Role::Admin);
    s.check(&g, "fetch_logs", OBSERVED);
    let d = runtime_ctx(&s.t, &g).decide("fetch_logs");
    assert_eq!(
        (d.class, d.ceiling, d.zone),
        (
            Some("systemDiagnostics"),
            Some("editorContent"),
            Some("externalGlobal")
        )
    );
    let enforce = RefCtx {
        enforcement: Some("enforce".into()),
        ..g.clone()
    };
    s.check(&enforce, "fetch_logs", refused(Reason::TrustZone));
    s.at("l", Role::Admin, "fetch_logs", OFFERED);
}

#[test]
fn case_6_remote_tools_are_enforced_in_observe_mode() {
    let p = format!("{CLASSES} enforcement observe configuration g {{ provider global }} configuration l {{ provider onprem }}");
    let s = both(NR_LLM, &p);
    s.at(
        "g",
        Role::Admin,
        "mcp_logs_fetch",
        refused(Reason::TrustZone),
    );
    s.at("g", Role::Admin, "fetch_logs", OBSERVED);
    s.at("l", Role::Admin, "mcp_logs_fetch", OFFERED);
}

#[test]
fn case_7_only_observe_observes() {
    let p = format!("{CLASSES} configuration g {{ provider global }}");
    let s = both(NR_LLM, &p);
    for setting in [
        "observe",
        "OBSERVE ",
        " observe",
        "Observe\t",
        "\r\nobserve\0\x0b",
    ] {
        let c = RefCtx {
            enforcement: Some(setting.into()),
            ..ctx("g", Role::Admin)
        };
        s.check(&c, "fetch_logs", OBSERVED);
    }
    // Only ASCII white space is trimmed (PHP's `trim`): Unicode spaces enforce.
    for setting in [
        "",
        "observ",
        "enforce",
        "off",
        "yes",
        "observe observe",
        "observe\u{a0}",
        "\u{2003}observe",
        "\u{3000}observe\u{3000}",
        "\u{feff}observe",
    ] {
        let c = RefCtx {
            enforcement: Some(setting.into()),
            ..ctx("g", Role::Admin)
        };
        s.check(&c, "fetch_logs", refused(Reason::TrustZone));
    }
}

#[test]
fn case_8_disabled_and_above_ceiling_reports_tool_disabled_silently() {
    let p =
        format!("{CLASSES} tool fetch_logs {{ disabled }} configuration g {{ provider global }}");
    let s = both(NR_LLM, &p);
    let c = RefCtx {
        enforcement: Some("enforce".into()),
        ..ctx("g", Role::Admin)
    };
    s.check(&c, "fetch_logs", refused(Reason::ToolDisabled));
    let d = runtime_ctx(&s.t, &c).decide("fetch_logs");
    assert_eq!((d.class, d.zone, d.ceiling), (None, None, None));
    let json = serde_json::to_string(&d).unwrap();
    assert_eq!(
        json,
        r#"{"tool":"fetch_logs","allowed":false,"reason":"toolDisabled","observedOnly":false}"#
    );
    assert!(!Reason::ToolDisabled.message().contains("zone"));
}

#[test]
fn case_9_unavailable_list_in_registry_order() {
    let s = both(
        CASE9_REG,
        "configuration c { provider p groups [content, editing, system] } provider p { zone local }",
    );
    let c = ctx("c", Role::User);
    let got: Vec<(&str, Reason)> = runtime_ctx(&s.t, &c)
        .unavailable()
        .iter()
        .map(|u| (u.tool, u.reason))
        .collect();
    assert_eq!(
        got,
        vec![
            ("create_page_draft", Reason::ToolDisabled),
            ("get_env_raw", Reason::RequiresAdmin),
            ("read_source", Reason::ConfigurationGroup)
        ]
    );
    let r: Vec<(String, &str)> = reference_unavailable(&s.m, &c);
    assert_eq!(r.len(), 3);
}

#[test]
fn case_10_observe_mode_builtin_trust_refusals_are_not_listed() {
    let p = format!("{CLASSES} configuration g {{ provider global groups [system] }}");
    let t = both(NR_LLM, &p).t;
    let base = t.context("g").unwrap().role(Role::Admin);
    let enforce = base.clone().enforcement(Some("enforce"));
    assert!(enforce
        .unavailable()
        .iter()
        .any(|u| u.tool == "fetch_logs" && u.reason == Reason::TrustZone));
    let observe = base.enforcement(Some("observe"));
    assert!(!observe.unavailable().iter().any(|u| u.tool == "fetch_logs"));
    assert!(observe.offered().contains(&"fetch_logs"));
}

#[test]
fn case_11_remote_tools_listed_for_admins_only() {
    // read_source/code and a remote tool (its group is mcp_deepwiki by the naming
    // rule), allowed groups = content: both are outside the configuration's groups.
    let s = both(
        CASE11_REG,
        "provider p { zone local } configuration c { provider p groups [content] }",
    );
    for role in [Role::User, Role::None] {
        let got: Vec<(&str, Reason)> = runtime_ctx(&s.t, &ctx("c", role))
            .unavailable()
            .iter()
            .map(|u| (u.tool, u.reason))
            .collect();
        assert_eq!(got, vec![("read_source", Reason::ConfigurationGroup)]);
        assert_eq!(
            reference_unavailable(&s.m, &ctx("c", role)),
            vec![("read_source".to_string(), "configurationGroup")]
        );
    }
    let got: Vec<(&str, Reason)> = runtime_ctx(&s.t, &ctx("c", Role::Admin))
        .unavailable()
        .iter()
        .map(|u| (u.tool, u.reason))
        .collect();
    assert_eq!(
        got,
        vec![
            ("read_source", Reason::ConfigurationGroup),
            ("mcp_deepwiki_ask_question", Reason::ConfigurationGroup)
        ]
    );
}

#[test]
fn case_12_remote_above_ceiling_listed_for_admin_in_observe() {
    let p = format!("{CLASSES} enforcement observe configuration g {{ provider global }}");
    let t = both(NR_LLM, &p).t;
    let list = t.context("g").unwrap().role(Role::Admin).unavailable();
    assert!(list
        .iter()
        .any(|u| u.tool == "mcp_logs_fetch" && u.reason == Reason::TrustZone));
    assert!(!list.iter().any(|u| u.tool == "fetch_logs"));
}

#[test]
fn case_14_skill_allow_list_limits_offer_and_call() {
    let p = "provider p { zone local } skill reader { tools [read_a] } configuration c { provider p skills [reader] }";
    let s = both(SKILLS_REG, p);
    let run = RunState::start(&s.t, "c", &[]).unwrap();
    assert_eq!(run.allowed, AllowList::Only(vec!["read_a".into()]));
    let c = RefCtx {
        run: Some(run.clone()),
        ..ctx("c", Role::User)
    };
    let rt = runtime_ctx(&s.t, &c);
    assert_eq!(rt.offered(), vec!["read_a", "load_skill"]);
    assert!(rt.check_call("read_b").is_err());
    s.check(&c, "read_b", refused(Reason::ConfigurationGroup));
    // The skill loader is exempt from the allow-list.
    s.check(&c, "load_skill", OFFERED);
}

#[test]
fn case_15_resume_after_the_declaring_skill_was_removed_keeps_the_stored_list() {
    let p = "provider p { zone local } skill reader { tools [read_a] } configuration c { provider p skills [reader] }";
    let t = table(SKILLS_REG, &[p]);
    let stored = RunState::start(&t, "c", &[]).unwrap();
    // The skill is detached meanwhile: the live allow-list is none.
    let p2 =
        "provider p { zone local } skill reader { tools [read_a] } configuration c { provider p }";
    let t2 = table(SKILLS_REG, &[p2]);
    let live = RunState::start(&t2, "c", &[]).unwrap();
    assert_eq!(live.allowed, AllowList::Unrestricted);
    let resumed = RunState::from_json(&stored.to_json()).resume(&live);
    assert_eq!(resumed.allowed, AllowList::Only(vec!["read_a".into()]));
    assert!(
        !t2.context("c")
            .unwrap()
            .run(&resumed)
            .decide("read_b")
            .allowed
    );
}

#[test]
fn forced_and_invoked_skills_join_the_allow_list() {
    let p = "provider p { zone local } skill reader { tools [read_a] } skill other { tools [read_b] } skill free { } configuration c { provider p skills [reader, free] }";
    let t = table(SKILLS_REG, &[p]);
    let run = RunState::start(&t, "c", &["other"]).unwrap();
    assert_eq!(
        run.allowed,
        AllowList::Only(vec!["read_a".into(), "read_b".into()])
    );
    let run = RunState::start(&t, "c", &[]).unwrap();
    assert_eq!(run.allowed, AllowList::Only(vec!["read_a".into()]));
    assert!(RunState::start(&t, "c", &["nope"]).is_err());
}

// ------------------------ the unavailable list (docs/gate-semantics.md §10)

#[test]
fn demo_chat_holds_back_sixteen_developer_tools_one_prompt_line_each() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../policies/demo");
    let project = toolgate_compiler::project::Project::load(std::path::Path::new(dir)).unwrap();
    let m = project.check().model.expect("demo compiles");
    let t = toolgate_compiler::lower::table(&m).unwrap();
    let c = ctx("demo-chat", Role::User);
    let list = runtime_ctx(&t, &c).unavailable();
    assert_eq!(list.len(), 16);
    assert_eq!(
        list.iter()
            .filter(|u| u.reason == Reason::ConfigurationGroup)
            .count(),
        15
    );
    assert_eq!(
        list.iter()
            .find(|u| u.tool == "get_env_raw")
            .map(|u| u.reason),
        Some(Reason::RequiresAdmin)
    );
    let r = reference_unavailable(&m, &c);
    assert_eq!(r.len(), 16);
    // The prompt section: a heading, then one `- name: text` line per tool.
    let prompt = runtime_ctx(&t, &c).unavailable_prompt();
    assert_eq!(prompt.lines().count(), 17);
    assert!(prompt.contains("\n- get_env_raw: only administrators may use it\n"));
    // Nothing at all for an empty list.
    let admin_dev = t
        .context("developer-chat")
        .unwrap()
        .role(Role::Admin)
        .enforcement(Some("observe"));
    assert_eq!(admin_dev.unavailable_prompt(), "");
}

#[test]
fn unavailable_list_covers_every_registered_tool_including_switched_off_ones() {
    let reg = "[[tool]]\nname = \"a\"\ngroup = \"g\"\nenabled = false\n[[tool]]\nname = \"b\"\ngroup = \"g\"\n";
    let t = table(
        reg,
        &["provider p { zone local } configuration c { provider p }"],
    );
    let list = t.context("c").unwrap().unavailable();
    assert_eq!(list.len(), 1);
    assert_eq!((list[0].tool, list[0].reason), ("a", Reason::ToolDisabled));
}

// --- exclusions (docs/gate-semantics.md §6; `exclusion_rule_N` is its rule N)

#[test]
fn exclusion_rule_1_and_2_withhold_the_named_tool_in_that_configuration_only() {
    let s = both(EDIT_REG, EDIT_POLICY);
    s.at(
        "editor-chat",
        Role::User,
        "delete_record",
        refused(Reason::ConfigurationExcluded),
    );
    s.at("editor-chat", Role::User, "update_record", OFFERED);
    s.at("other", Role::User, "delete_record", OFFERED);
}

#[test]
fn exclusion_rule_2_reported_only_when_earlier_gates_pass_and_before_the_trust_zone() {
    let p = "provider g { zone externalGlobal } group system { class systemDiagnostics }
             configuration c { provider g groups [content] exclude [get_env_raw, update_record] }
             configuration d { provider g exclude [get_env_raw] }";
    let s = both(EDIT_REG, p);
    // Admin gate first, then the group gate, each before the exclusion.
    s.at(
        "d",
        Role::User,
        "get_env_raw",
        refused(Reason::RequiresAdmin),
    );
    s.at(
        "c",
        Role::Admin,
        "update_record",
        refused(Reason::ConfigurationGroup),
    );
    // Exclusion before the trust zone: observe mode cannot offer an excluded tool.
    let c = RefCtx {
        enforcement: Some("observe".into()),
        ..ctx("d", Role::Admin)
    };
    s.check(&c, "get_env_raw", refused(Reason::ConfigurationExcluded));
}

#[test]
fn exclusion_rule_3_offer_and_execution_use_the_same_decision() {
    let t = table(EDIT_REG, &[EDIT_POLICY]);
    let c = t.context("editor-chat").unwrap().role(Role::User);
    assert!(!c.offered().contains(&"delete_record"));
    let refused = c.check_call("delete_record").unwrap_err();
    assert_eq!(refused.reason, Some(Reason::ConfigurationExcluded));
    assert!(c.check_call("update_record").is_ok());
}

#[test]
fn exclusion_rule_4_stored_exclusions_union_with_live_ones() {
    let t = table(EDIT_REG, &[EDIT_POLICY]);
    let stored = RunState::start(&t, "editor-chat", &[]).unwrap();
    assert_eq!(
        stored.to_json(),
        r#"{"allowedToolNames":null,"excludedToolNames":["delete_record"]}"#
    );
    // The exclusion is removed while the run waits: it still holds for this run.
    let t2 = table(
        EDIT_REG,
        &[&EDIT_POLICY.replace("exclude [delete_record]", "")],
    );
    let live = RunState::start(&t2, "editor-chat", &[]).unwrap();
    assert_eq!(live.to_json(), r#"{"allowedToolNames":null}"#);
    let resumed = stored.resume(&live);
    let c = t2.context("editor-chat").unwrap().run(&resumed);
    assert_eq!(
        c.decide("delete_record").reason,
        Some(Reason::ConfigurationExcluded)
    );
    // A new run gets it back.
    assert!(
        t2.context("editor-chat")
            .unwrap()
            .run(&live)
            .decide("delete_record")
            .allowed
    );
    // An exclusion added while the run waits applies at once (live list).
    let t3 = table(
        EDIT_REG,
        &[&EDIT_POLICY.replace(
            "exclude [delete_record]",
            "exclude [delete_record, update_record]",
        )],
    );
    let c = t3.context("editor-chat").unwrap().run(&stored);
    assert_eq!(
        c.decide("update_record").reason,
        Some(Reason::ConfigurationExcluded)
    );
}

#[test]
fn exclusion_rule_4_a_run_stored_without_exclusions_is_held_to_the_live_list() {
    let t = table(EDIT_REG, &[EDIT_POLICY]);
    let old = RunState::from_json(r#"{"allowedToolNames":null}"#);
    assert_eq!(old.excluded, Exclusions::Names(vec![]));
    let c = t.context("editor-chat").unwrap().run(&old);
    assert_eq!(
        c.decide("delete_record").reason,
        Some(Reason::ConfigurationExcluded)
    );
    assert!(c.decide("update_record").allowed);
}

#[test]
fn exclusion_rule_4_unreadable_stored_exclusions_admit_no_tool() {
    let s = both(EDIT_REG, EDIT_POLICY);
    for bad in [
        r#"{"excludedToolNames":"delete_record"}"#,
        r#"{"excludedToolNames":{"a":1}}"#,
        r#"{"excludedToolNames":[1,2]}"#,
        "[]",
        "garbage",
    ] {
        let run = RunState::from_json(bad);
        let c = RefCtx {
            run: Some(run.clone()),
            ..ctx("other", Role::Admin)
        };
        let rt = runtime_ctx(&s.t, &c);
        assert!(rt.offered().is_empty(), "{bad}");
        s.check(
            &c,
            "load_skill",
            (false, Some(rt.decide("load_skill").reason.unwrap()), false),
        );
        assert!(!rt.decide("load_skill").allowed);
    }
}

#[test]
fn exclusion_rule_5_a_tool_registered_later_is_not_excluded() {
    let t = table(EDIT_REG, &[EDIT_POLICY]);
    let c = t.context("editor-chat").unwrap().role(Role::User);
    let new_tool = LiveToolSpec {
        name: "archive_record".into(),
        group: "editing".into(),
        remote: false,
        enabled: true,
        admin_only: false,
        class: None,
    };
    let new_live = live(new_tool.clone());
    let d = c.decide_live(&new_live);
    assert!(d.allowed, "{d:?}");
    assert_eq!(d.class, Some("editorContent"));
    // A live tool goes through the same gates: admin-only live metadata refuses.
    let admin_tool = LiveToolSpec {
        admin_only: true,
        ..new_tool.clone()
    };
    assert_eq!(
        c.decide_live(&live(admin_tool.clone())).reason,
        Some(Reason::RequiresAdmin)
    );
    // A declared class the ladder does not know is the most sensitive, never
    // the group's default: refused above an editor zone's ceiling.
    let unknown_class = LiveToolSpec {
        class: Some("editorKontent".into()),
        ..new_tool.clone()
    };
    let unknown_live = live(unknown_class.clone());
    let d = c.decide_live(&unknown_live);
    assert_eq!(d.class, Some("secretAdjacent"));
    // Outside the allowed groups.
    let other = LiveToolSpec {
        group: "system".into(),
        ..new_tool.clone()
    };
    assert_eq!(
        c.decide_live(&live(other.clone())).reason,
        Some(Reason::ConfigurationGroup)
    );
    // Without live metadata it is simply not registered.
    assert_eq!(
        c.decide("archive_record").reason,
        Some(Reason::NotRegistered)
    );
    // The unavailable list covers live tools too.
    let other_live = [live(other.clone())];
    let list = c.unavailable_with(&other_live);
    assert_eq!(
        list.last().map(|u| (u.tool, u.reason)),
        Some(("archive_record", Reason::ConfigurationGroup))
    );
}

#[test]
fn exclusion_rule_6_no_exemption_for_the_skill_loader() {
    let p = format!("{EDIT_POLICY} configuration no-skills {{ provider p exclude [load_skill] }}");
    let s = both(EDIT_REG, &p);
    s.at(
        "no-skills",
        Role::User,
        "load_skill",
        refused(Reason::ConfigurationExcluded),
    );
    // ... while it stays exempt from the group gate.
    s.at("editor-chat", Role::User, "load_skill", OFFERED);
    let p2 = format!("{EDIT_POLICY} configuration narrow {{ provider p groups [content] }}");
    let s = both(EDIT_REG, &p2);
    s.at("narrow", Role::User, "load_skill", OFFERED);
}

#[test]
fn exclusion_rule_7_readouts_and_the_unavailable_reason() {
    let p = format!(
        "{EDIT_POLICY} configuration stale {{ provider p exclude [delete_record, retired_tool] }}"
    );
    let t = table(EDIT_REG, &[&p]);
    assert_eq!(
        t.configurations_excluding("delete_record"),
        vec!["editor-chat", "stale"]
    );
    let (reg, stale) = t.exclusions_of("stale").unwrap();
    assert_eq!((reg, stale), (vec!["delete_record"], vec!["retired_tool"]));
    let list = t
        .context("editor-chat")
        .unwrap()
        .role(Role::Admin)
        .unavailable();
    assert_eq!(
        list.iter().map(|u| (u.tool, u.reason)).collect::<Vec<_>>(),
        vec![
            ("delete_record", Reason::ConfigurationExcluded),
            ("get_env_raw", Reason::ConfigurationGroup)
        ]
    );
}

#[test]
fn a_stale_exclusion_still_excludes_a_live_tool_of_that_name() {
    let p = format!("{EDIT_POLICY} configuration stale {{ provider p exclude [retired_tool] }}");
    let t = table(EDIT_REG, &[&p]);
    let back = LiveToolSpec {
        name: "retired_tool".into(),
        group: "editing".into(),
        remote: false,
        enabled: true,
        admin_only: false,
        class: None,
    };
    assert_eq!(
        t.context("stale")
            .unwrap()
            .decide_live(&live(back.clone()))
            .reason,
        Some(Reason::ConfigurationExcluded)
    );
}

#[test]
fn decision_log_and_stats_records_carry_the_table_digest() {
    let t = table(EDIT_REG, &[EDIT_POLICY]);
    let c = t.context("editor-chat").unwrap().role(Role::User);
    let mut log = toolgate_runtime::log::DecisionLog::new(Vec::new());
    log.record(&c, &c.decide("delete_record")).unwrap();
    let line = String::from_utf8(log.into_inner()).unwrap();
    let rec: toolgate_runtime::log::LogRecord = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(rec.table, t.digest_hex());
    assert_eq!(
        (
            rec.configuration.as_str(),
            rec.role.as_str(),
            rec.tool.as_str()
        ),
        ("editor-chat", "user", "delete_record")
    );
    assert_eq!(
        (rec.allowed, rec.reason.as_deref(), rec.observed_only),
        (false, Some("configurationExcluded"), false)
    );
}
