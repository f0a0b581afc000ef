//! `needs-approval` (docs/approvals.md): a tool a person approves call by
//! call is offered, and a call of it is refused `approvalRequired` until
//! approved; approval comes after every refusing gate; a table with
//! approvals is format 4, one without is byte for byte format 3.

use toolgate_compiler::lower;
use toolgate_compiler::project::Project;
use toolgate_reference::{model, table};
use toolgate_runtime::format::{self, FORMAT_VERSION, OLDEST_FORMAT_VERSION};
use toolgate_runtime::host::codes::packed;
use toolgate_runtime::refusal::{Action, RefusalClass};
use toolgate_runtime::{LoadError, Reason, RefusalKind, Role, Table};

const REG: &str = "[[tool]]\nname = \"read\"\ngroup = \"g\"\n\
[[tool]]\nname = \"refund\"\ngroup = \"g\"\n\
[[tool]]\nname = \"wipe\"\ngroup = \"h\"\n\
[[tool]]\nname = \"mcp_s_x\"\ngroup = \"mcp_s\"\nserver = \"s\"\n";

const POLICY: &str = "remote-tools visible-to everyone
provider p { zone local }
group g { class publicContent }
group h { class publicContent }
group mcp_s { class publicContent }
tool mcp_s_x { enabled  not admin-only }
configuration c {
  provider p
  groups [g, h, mcp_s]
  exclude [wipe]
  needs-approval [refund, wipe]
}
configuration d {
  provider p
  groups [g]
}
profile careful {
  allow [group g, server s]
  needs-approval [server s]
}
consumer bot { profile careful }
";

/// (allowed, reason, needs approval) of `tool` in `config` for `consumer`.
fn decided(
    t: &Table,
    config: &str,
    consumer: Option<&str>,
    tool: &str,
) -> (bool, Option<Reason>, bool) {
    let ctx = t
        .context(config)
        .unwrap()
        .role(Role::User)
        .known_consumer(consumer)
        .unwrap();
    let d = ctx.decide(tool);
    (d.allowed, d.reason, d.needs_approval)
}

#[test]
fn a_tool_that_needs_approval_is_offered_and_only_after_every_refusing_gate() {
    let t = table(REG, &[POLICY]);
    // The configuration's list.
    assert_eq!(decided(&t, "c", None, "read"), (true, None, false));
    assert_eq!(decided(&t, "c", None, "refund"), (true, None, true));
    // Refused first: never "approvable".
    assert_eq!(
        decided(&t, "c", None, "wipe"),
        (false, Some(Reason::ConfigurationExcluded), false)
    );
    // The profile's list, for its consumer only.
    assert_eq!(decided(&t, "c", None, "mcp_s_x"), (true, None, false));
    assert_eq!(decided(&t, "c", Some("bot"), "mcp_s_x"), (true, None, true));
    assert_eq!(decided(&t, "c", Some("bot"), "refund"), (true, None, true));
    // Another configuration: its own lists (none); the profile's tool is
    // outside its groups.
    assert_eq!(decided(&t, "d", Some("bot"), "refund"), (true, None, false));
    assert_eq!(
        decided(&t, "d", Some("bot"), "mcp_s_x"),
        (false, Some(Reason::ConfigurationGroup), false)
    );
}

#[test]
fn a_call_waits_for_approval_with_its_typed_refusal() {
    let t = table(REG, &[POLICY]);
    let ctx = t
        .context("c")
        .unwrap()
        .role(Role::User)
        .known_consumer(Some("bot"))
        .unwrap();
    assert!(ctx.check_call("read").is_ok());
    let d = ctx.check_call("refund").expect_err("waits for approval");
    assert!(d.allowed && d.needs_approval);
    // An offered tool has no refusal; a call of it has.
    assert_eq!(ctx.refusal(&d), None);
    let r = ctx.call_refusal(&d).expect("a call refusal");
    assert_eq!(
        (r.kind, r.class, r.retryable, r.action),
        (
            RefusalKind::ApprovalRequired,
            RefusalClass::Approval,
            false,
            Action::AskPerson
        )
    );
    assert_eq!(
        (
            r.configuration.as_deref(),
            r.profile.as_deref(),
            r.file.as_deref()
        ),
        (Some("c"), None, Some("policy0.tg"))
    );
    assert_eq!(
        r.model_text,
        "The call to `refund` needs a person's approval before it runs. Do not retry it on your own; a person will be asked to approve it."
    );
    assert_eq!(
        r.remediation,
        "configuration `c` requires a person's approval for each call of `refund`: an approver approves this call (its tool and arguments), then the call is made again with the grant (in policy0.tg)"
    );
    // The profile's list names the profile.
    let d = ctx.check_call("mcp_s_x").expect_err("waits for approval");
    let r = ctx.call_refusal(&d).expect("a call refusal");
    assert_eq!(
        (r.profile.as_deref(), r.file.as_deref()),
        (Some("careful"), Some("policy0.tg"))
    );
    // A refused tool's call refusal is its refusal.
    let d = ctx.check_call("wipe").expect_err("refused");
    assert_eq!(ctx.call_refusal(&d), ctx.refusal(&d));
    // The packed byte and the "may call" question say the same.
    let i = t.tool_id("refund").unwrap();
    assert!(ctx.is_offered(i) && !ctx.may_call(i));
    assert_eq!(
        packed::of(&ctx.decide("refund")),
        packed::ALLOWED | packed::NEEDS_APPROVAL
    );
    assert_eq!(
        packed::unpack(packed::ALLOWED | packed::NEEDS_APPROVAL),
        Some((true, false, None))
    );
    // The model is told which tools a person approves.
    assert_eq!(
        ctx.unavailable_prompt(),
        format!(
            "{}\n- wipe: not in this consumer's access profile\n{}\n- refund\n- mcp_s_x\n",
            toolgate_runtime::lists::PROMPT_HEADING,
            toolgate_runtime::lists::APPROVAL_HEADING
        )
    );
}

#[test]
fn observe_mode_never_skips_an_approval() {
    let observed = format!("enforcement observe\n{POLICY}");
    let t = table(REG, &[&observed]);
    assert_eq!(decided(&t, "c", None, "refund"), (true, None, true));
}

#[test]
fn a_table_with_approvals_is_format_4_and_one_without_is_format_3_unchanged() {
    let with = lower::compile(&model(REG, &[POLICY]));
    assert_eq!(with[8..12], FORMAT_VERSION.to_le_bytes());
    let plain = POLICY
        .replace("  needs-approval [refund, wipe]\n", "")
        .replace("  needs-approval [server s]\n", "");
    let without = lower::compile(&model(REG, &[&plain]));
    assert_eq!(without[8..12], OLDEST_FORMAT_VERSION.to_le_bytes());
    // Read back, the approvals are the ones written.
    let t = Table::load(&with).unwrap();
    assert_eq!(decided(&t, "c", None, "refund"), (true, None, true));
    let (spec, _) = format::decode(&with).unwrap();
    assert_eq!(spec.configurations[0].approval.tools, ["refund", "wipe"]);
    assert_eq!(spec.profiles[0].approval.groups.len(), 1);
    // A format 3 header on a payload with approvals: its bytes are left over.
    let mut relabelled = with.clone();
    relabelled[8..12].copy_from_slice(&OLDEST_FORMAT_VERSION.to_le_bytes());
    assert!(matches!(
        Table::load(&relabelled),
        Err(LoadError::Checksum { .. })
    ));
    // And format 4 on a table without approvals is refused (the CRC fixed up).
    let mut fake = without.clone();
    fake[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    let payload = &fake[format::HEADER_LEN..];
    let mut h = crc32fast::Hasher::new();
    h.update(&fake[8..52]);
    h.update(payload);
    let crc = h.finalize().to_le_bytes();
    fake[52..56].copy_from_slice(&crc);
    assert!(matches!(Table::load(&fake), Err(LoadError::Corrupt(_))));
}

#[test]
fn check_reports_a_needs_approval_list_as_it_reports_an_allow_list() {
    let bad = POLICY.replace(
        "needs-approval [refund, wipe]",
        "needs-approval [refnud]\n  needs-approval [refund]",
    );
    let project = Project::from_texts(("registry.toml", REG), &[("policy.tg", &bad)]);
    let checked = project.check();
    let found: Vec<(&str, usize)> = checked
        .problems
        .iter()
        .map(|p| {
            let d = p.diagnostic();
            (d.code, d.span.start as usize)
        })
        .collect();
    let at = |needle: &str| bad.find(needle).unwrap();
    assert_eq!(
        found,
        [
            ("TG1001", at("refnud")),
            ("TG2002", at("needs-approval [refund]")),
        ]
    );
    // The formatter writes it back as written.
    let formatted = toolgate_compiler::syntax::formatter::format(POLICY).expect("formats");
    assert!(
        formatted.contains("  needs-approval [refund, wipe]\n"),
        "{formatted}"
    );
    assert!(
        formatted.contains("  needs-approval [server s]\n"),
        "{formatted}"
    );
}

#[test]
fn a_needs_approval_entry_a_refusing_gate_already_stops_has_no_effect() {
    let project = Project::from_texts(("registry.toml", REG), &[("policy.tg", POLICY)]);
    let checked = project.check();
    // (The classes are the lowest rank: without effect too, said elsewhere.)
    let found: Vec<(&str, usize, String)> = checked
        .problems
        .iter()
        .map(|p| {
            let d = p.diagnostic();
            (d.code, d.span.start as usize, d.message)
        })
        .filter(|(_, _, m)| m.contains("approval"))
        .collect();
    // `wipe` is excluded from configuration c: never offered there, never asked about.
    let wipe = POLICY.find("wipe]\n}").unwrap();
    assert_eq!(
        found,
        [(
            "TG3009",
            wipe,
            "needing approval for `wipe` in configuration `c` has no effect".to_string()
        )]
    );
    let why = checked
        .problems
        .iter()
        .find(|p| p.diagnostic().message.contains("approval"))
        .map(|p| {
            let d = p.diagnostic();
            format!("{} {}", d.label, d.help.unwrap_or_default())
        })
        .unwrap_or_default();
    assert!(
        why.contains(
            "no context of configuration `c` offers `wipe`: a refusing gate stops it first"
        ),
        "{why}"
    );
    // A profile entry no consumer's configuration offers.
    let unused = POLICY.replace("consumer bot { profile careful }\n", "");
    let project = Project::from_texts(("registry.toml", REG), &[("policy.tg", &unused)]);
    let codes: Vec<&str> = project
        .check()
        .problems
        .iter()
        .map(|p| p.diagnostic().code)
        .collect();
    assert!(
        codes.iter().filter(|c| **c == "TG3009").count() >= 2,
        "{codes:?}"
    );
}

#[test]
fn diff_reports_now_needs_approval_as_narrowed_and_no_longer_as_widened() {
    use toolgate_review::diff::{diff, ChangeKind};
    let plain = POLICY.replace("  needs-approval [refund, wipe]\n", "");
    let (before, after) = (table(REG, &[&plain]), table(REG, &[POLICY]));
    let d = diff(&before, &after);
    let changes: Vec<(ChangeKind, &str, &str, String)> = d
        .changes
        .iter()
        .map(|c| {
            (
                c.kind,
                c.configuration.as_str(),
                c.tool.as_str(),
                c.new.text(),
            )
        })
        .collect();
    assert_eq!(
        changes,
        [(
            ChangeKind::Narrowed,
            "c",
            "refund",
            "offered, needs approval".to_string()
        )]
    );
    assert!(d.changes[0].everywhere);
    let back = diff(&after, &before);
    assert_eq!(
        back.changes
            .iter()
            .map(|c| (c.kind, c.tool.as_str()))
            .collect::<Vec<_>>(),
        [(ChangeKind::Widened, "refund")]
    );
    assert_eq!((back.summary.widened, back.summary.narrowed), (1, 0));
}
