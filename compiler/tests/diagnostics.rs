//! One case per diagnostic code: the exact code, span and message, and
//! snapshots of the human (miette) and JSON renderings.

use toolgate_compiler::diagnostics::{Diagnostic, CATALOGUE};
use toolgate_compiler::project::Project;
use toolgate_compiler::report;
use toolgate_runtime::Reason;

const REGISTRY: &str = r#"
[[tool]]
name = "get_page_content"
group = "content"

[[tool]]
name = "update_record"
group = "editing"

[[tool]]
name = "delete_record"
group = "editing"

[[tool]]
name = "read_source"
group = "code"
class = "sourceCode"

[[tool]]
name = "mcp_crm_lookup"
group = "mcp_crm"
server = "crm"
"#;

/// Check a policy; return the diagnostics with `code`, and the project for rendering.
fn run(registry: (&str, &str), policy: &str, code: &str) -> (Project, Vec<Diagnostic>) {
    let project = Project::from_texts(registry, &[("policy.tg", policy)]);
    let checked = project.check();
    let diags: Vec<Diagnostic> = checked
        .problems
        .iter()
        .map(|p| p.diagnostic())
        .filter(|d| d.code == code)
        .collect();
    assert!(
        !diags.is_empty(),
        "no {code} for {policy:?}; got {:?}",
        checked
            .problems
            .iter()
            .map(|p| p.code())
            .collect::<Vec<_>>()
    );
    (project, diags)
}

/// Assert code, the text under the primary span, and the message; snapshot both renderings.
fn case(code: &str, registry: (&str, &str), policy: &str, spanned: &str, message: &str) {
    let (project, diags) = run(registry, policy, code);
    let d = &diags[0];
    assert!(
        CATALOGUE
            .iter()
            .any(|c| c.code == code && c.severity == d.severity),
        "{code} not in the catalogue"
    );
    assert_eq!(project.sources.text(d.span), spanned, "span of {code}");
    assert_eq!(d.message, message);
    let human = report::human(&project.sources, &diags[..1], false);
    let json = report::json(&project.sources, &diags[..1]);
    insta::assert_snapshot!(format!("{code}-human"), human);
    insta::assert_snapshot!(format!("{code}-json"), json);
}

fn reg() -> (&'static str, &'static str) {
    ("registry.toml", REGISTRY)
}

#[test]
fn tg0001_syntax_error() {
    case(
        "TG0001",
        reg(),
        "configuration c {\n  provder openai\n}\n",
        "provder",
        "expected `exclude`, `groups`, `needs-approval`, `provider`, `skills` or `}`, found `provder`",
    );
}

#[test]
fn tg0001_syntax_error_at_end_of_file() {
    // The file ends inside a block: reported at the `{` that opened it.
    let (p, d) = run(reg(), "group content {", "TG0001");
    assert_eq!(
        d[0].message,
        "this `{` is never closed: expected `}` before end of file"
    );
    assert_eq!(p.sources.text(d[0].span), "{");
    assert_eq!(p.sources.text(d[0].labels[0].span), "");
    // Inside a block that is closed, the end of file is an ordinary error.
    let (_, d) = run(reg(), "group content { class", "TG0001");
    assert!(
        d[0].message.ends_with("found end of file"),
        "{}",
        d[0].message
    );
}

#[test]
fn tg0002_input_too_large() {
    let big = "# ".repeat(toolgate_compiler::syntax::parse::MAX_POLICY_BYTES / 2 + 1);
    let (_, d) = run(reg(), &big, "TG0002");
    assert!(d[0]
        .message
        .starts_with("policy file is 8388610 bytes, over the limit of 8388608 bytes"));
}

#[test]
fn tg0003_invalid_manifest() {
    let dir = std::env::temp_dir().join(format!("tg0003-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("toolgate.toml"),
        "registry = \"r.toml\"\npolicy = [\"p.tg\"]\n",
    )
    .unwrap();
    let project = Project::load(&dir).unwrap();
    let d: Vec<Diagnostic> = project
        .check()
        .problems
        .iter()
        .map(|p| p.diagnostic())
        .collect();
    assert_eq!(d[0].code, "TG0003");
    assert!(
        d[0].message.contains("unknown field `policy`"),
        "{}",
        d[0].message
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tg0004_invalid_registry() {
    case(
        "TG0004",
        ("registry.toml", "[[tool]]\nname = \"a\"\n"),
        "",
        "[[tool]]",
        "invalid registry: missing field `group`",
    );
}

#[test]
fn tg1001_unknown_tool() {
    case(
        "TG1001",
        reg(),
        "tool read_sorce { disabled }",
        "read_sorce",
        "unknown tool `read_sorce`",
    );
}

#[test]
fn tg1002_unknown_group() {
    case(
        "TG1002",
        reg(),
        "configuration c { groups [contnet] }",
        "contnet",
        "unknown group `contnet`",
    );
}

#[test]
fn tg1003_unknown_zone() {
    case(
        "TG1003",
        reg(),
        "provider p { zone externalGlobl }",
        "externalGlobl",
        "unknown zone `externalGlobl`",
    );
}

#[test]
fn tg1004_unknown_class() {
    case(
        "TG1004",
        reg(),
        "group code { class sourcecode }",
        "sourcecode",
        "unknown class `sourcecode`",
    );
}

#[test]
fn tg1005_unknown_provider() {
    case(
        "TG1005",
        reg(),
        "provider openai { zone local }\nconfiguration c { provider opneai }",
        "opneai",
        "unknown provider `opneai`",
    );
}

#[test]
fn tg1006_unknown_skill() {
    case(
        "TG1006",
        reg(),
        "skill triage { tools [read_source] }\nconfiguration c { skills [traige] }",
        "traige",
        "unknown skill `traige`",
    );
}

#[test]
fn tg1007_unknown_profile() {
    case(
        "TG1007",
        reg(),
        "profile support { allow [get_page_content] }\nconsumer bot { profile suport }",
        "suport",
        "unknown profile `suport`",
    );
}

#[test]
fn tg1008_unknown_configuration() {
    // Configurations are referenced from outside the policy: the CLI and test files.
    use toolgate_compiler::diagnostics::{Problem, RefKind};
    use toolgate_compiler::source::Span;
    let project = Project::from_texts(reg(), &[("policy.tg", "configuration editor-chat { }")]);
    let p = Problem::Unknown {
        kind: RefKind::Configuration,
        name: "editor-caht".into(),
        span: Span::new(toolgate_compiler::source::FileId(2), 14..25),
        suggestion: toolgate_runtime::names::did_you_mean("editor-caht", ["editor-chat"])
            .map(str::to_string),
    };
    let d = p.diagnostic();
    assert_eq!(
        (d.code, d.help.as_deref()),
        ("TG1008", Some("did you mean `editor-chat`?"))
    );
    insta::assert_snapshot!(
        "TG1008-human",
        report::human(&project.sources, std::slice::from_ref(&d), false)
    );
    insta::assert_snapshot!("TG1008-json", report::json(&project.sources, &[d]));
}

#[test]
fn tg1009_stale_exclusion() {
    case(
        "TG1009",
        reg(),
        "configuration c { exclude [retired_tool] }",
        "retired_tool",
        "`retired_tool` is no longer registered",
    );
}

#[test]
fn tg1010_exclusion_typo_suggests_the_registered_tool() {
    case(
        "TG1010",
        reg(),
        "configuration editor-chat {\n  exclude [delete_recrod]\n}\n",
        "delete_recrod",
        "excluded tool `delete_recrod` is not registered; did you mean `delete_record`?",
    );
}

#[test]
fn tg2001_duplicate_definition() {
    case(
        "TG2001",
        reg(),
        "configuration c { }\nconfiguration c { }",
        "c",
        "configuration `c` is defined twice",
    );
}

#[test]
fn tg2002_contradiction() {
    case(
        "TG2002",
        reg(),
        "tool read_source {\n  enabled\n  disabled\n}",
        "disabled",
        "contradictory statements about `enabled/disabled`",
    );
}

#[test]
fn tg2003_repeated_property() {
    case(
        "TG2003",
        reg(),
        "enforcement observe\nenforcement observe\n",
        "observe",
        "`enforcement` is given twice",
    );
}

#[test]
fn tg2004_listed_twice() {
    case(
        "TG2004",
        reg(),
        "configuration c { groups [content, editing, content] }",
        "content",
        "`content` is listed twice",
    );
}

#[test]
fn tg2005_invalid_ladder() {
    case(
        "TG2005",
        reg(),
        "classes []",
        "classes []",
        "the `classes` ladder is empty",
    );
}

#[test]
fn tg0005_too_many_classes() {
    let ladder: Vec<String> = (0..65).map(|i| format!("c{i}")).collect();
    case(
        "TG0005",
        reg(),
        &format!("classes [{}]", ladder.join(", ")),
        "c64",
        "the `classes` ladder has 65 classes, over the limit of 64",
    );
    // 64 is within the limit: no TG0005 (and the table loads).
    let ladder: Vec<String> = (0..64).map(|i| format!("c{i}")).collect();
    let checked = Project::from_texts(
        ("registry.toml", REGISTRY),
        &[("policy.tg", &format!("classes [{}]", ladder.join(", ")))],
    )
    .check();
    assert!(checked.problems.iter().all(|p| p.code() != "TG0005"));
}

#[test]
fn tg0006_unused_suppression() {
    case(
        "TG0006",
        reg(),
        "configuration c {\n  exclude [delete_record] # toolgate: allow TG1009\n}\n",
        "# toolgate: allow TG1009",
        "`# toolgate: allow TG1009` suppresses nothing",
    );
}

#[test]
fn tg0007_invalid_suppression() {
    // An error cannot be lowered: the comment is reported and TG1002 stays.
    let policy = "configuration c {\n  # toolgate: allow TG1002\n  groups [contnet]\n}\n";
    case(
        "TG0007",
        reg(),
        policy,
        "# toolgate: allow TG1002",
        "the suppression would lower TG1002, an error that cannot be suppressed",
    );
    let (_, d) = run(reg(), policy, "TG1002");
    assert_eq!(d.len(), 1);
    // A rule's name instead of its code: a did-you-mean that names the code.
    let (_, d) = run(
        reg(),
        "configuration c { exclude [retired] } # toolgate: allow stale-exclusion\n",
        "TG0007",
    );
    assert_eq!(
        d[0].help.as_deref(),
        Some("`stale-exclusion` is the name of TG1009; write the code")
    );
    let (_, d) = run(
        reg(),
        "configuration c { exclude [retired] } # toolgate: allow TG1090\n",
        "TG0007",
    );
    assert_eq!(d[0].help.as_deref(), Some("did you mean `TG1009`?"));
}

/// What a suppression covers: its own line (trailing) or the next line of
/// code (alone on its line), only the codes it names, never a string's `#`.
#[test]
fn suppressions_cover_their_line_and_codes_only() {
    let policy = "\
configuration a { exclude [gone_one] } # toolgate: allow TG1009
configuration a2 {
  # toolgate: allow TG1009, TG3004 -- kept while the tool is away

  exclude [gone_two]
  groups []
}
configuration \"b#x\" { exclude [gone_three] }
";
    let project = Project::from_texts(reg(), &[("policy.tg", policy)]);
    let checked = project.check();
    let left: Vec<(&str, &str)> = checked
        .problems
        .iter()
        .map(|p| (p.code(), project.sources.text(p.span())))
        .collect();
    // `groups []` is not on the covered line (the comment covers `exclude
    // [gone_two]`), so TG3004 is not suppressed and the comment's TG3004 is unused.
    assert_eq!(
        left,
        vec![
            (
                "TG0006",
                "# toolgate: allow TG1009, TG3004 -- kept while the tool is away"
            ),
            ("TG3004", "groups []"),
            ("TG1009", "gone_three"),
        ]
    );
    let hidden: Vec<(&str, &str, &str)> = checked
        .suppressed
        .iter()
        .map(|s| {
            let at = match s.by {
                toolgate_compiler::diagnostics::suppress::By::Comment(span) => {
                    project.sources.text(span)
                }
                toolgate_compiler::diagnostics::suppress::By::Manifest(_) => "manifest",
            };
            (s.problem.code(), project.sources.text(s.problem.span()), at)
        })
        .collect();
    assert_eq!(
        hidden,
        vec![
            ("TG1009", "gone_one", "# toolgate: allow TG1009"),
            (
                "TG1009",
                "gone_two",
                "# toolgate: allow TG1009, TG3004 -- kept while the tool is away"
            ),
        ]
    );
    assert!(checked.model.is_some());
}

/// TG1010 is the one error a comment may acknowledge: the model then keeps
/// the name as a stale exclusion and the tool it resembles stays offered.
#[test]
fn an_acknowledged_exclusion_typo_compiles_as_a_stale_exclusion() {
    let policy = "configuration c {\n  exclude [delete_recrod] # toolgate: allow TG1010\n}\n";
    let checked = Project::from_texts(reg(), &[("policy.tg", policy)]).check();
    assert!(checked.problems.is_empty(), "{:?}", checked.problems);
    let model = checked.model.expect("a model");
    let table = toolgate_compiler::lower::table(&model).expect("a table");
    let (registered, stale) = table.exclusions_of("c").expect("configuration c");
    assert!(registered.is_empty());
    assert_eq!(stale, vec!["delete_recrod"]);
    let ctx = table.context("c").expect("context");
    // Refused by the trust zone, a later gate: the exclusion gate passed it.
    let d = ctx.decide("delete_record");
    assert_eq!((d.allowed, d.reason), (false, Some(Reason::TrustZone)));
    // Without the comment it is an error and there is no model.
    let checked = Project::from_texts(
        reg(),
        &[(
            "policy.tg",
            "configuration c {\n  exclude [delete_recrod]\n}\n",
        )],
    )
    .check();
    assert!(checked.model.is_none() && checked.has_errors());
}

/// Syntax errors with a fix: a keyword's near miss, a dotted name without
/// quotes, and a missing `}` reported at the brace that opened the block.
#[test]
fn tg0001_syntax_errors_name_the_fix() {
    let first = |policy: &str| {
        let (project, d) = run(reg(), policy, "TG0001");
        let d = d[0].clone();
        let under = project.sources.text(d.span).to_string();
        (project, d, under)
    };
    let (_, d, under) = first("configuration chat { excludes [delete_record] }");
    assert_eq!(under, "excludes");
    assert_eq!(d.help.as_deref(), Some("did you mean `exclude`?"));

    // A name after a multi-byte character (a byte-order mark here) is cut
    // on a character boundary (a proptest found this panic).
    let (_, d, _) = first("\u{feff}.");
    assert_eq!(
        d.help.as_deref(),
        Some("see grammar/README.md for the statements and properties the language has")
    );
    let (_, d, under) = first("configuration chat { exclude [refund.issue] }");
    assert_eq!(under, ".issue");
    assert_eq!(
        d.help.as_deref(),
        Some("a name that holds `.` is written in quotes: \"refund.issue\"")
    );

    let policy = "configuration chat {\n  exclude [delete_record]\n\nconfiguration b { }\n";
    let (project, d, under) = first(policy);
    assert_eq!(under, "{");
    assert_eq!(
        project
            .sources
            .get(d.span.file)
            .line_col(d.span.start as usize),
        (1, 20)
    );
    assert_eq!(
        d.message,
        "this `{` is never closed: expected `}` before `configuration`"
    );
    assert_eq!(d.labels.len(), 1);
    assert_eq!(project.sources.text(d.labels[0].span), "configuration");
    insta::assert_snapshot!(
        "TG0001-unclosed-human",
        report::human(&project.sources, &[d], false)
    );
}

#[test]
fn tg2006_missing_property() {
    case(
        "TG2006",
        reg(),
        "zone onprem { }",
        "onprem",
        "zone `onprem` has no `ceiling`",
    );
}

#[test]
fn tg3001_exclusion_without_effect() {
    case(
        "TG3001",
        reg(),
        "configuration c { groups [content] exclude [read_source] }",
        "read_source",
        "excluding `read_source` has no effect",
    );
}

#[test]
fn tg3002_enable_in_disabled_group() {
    case(
        "TG3002",
        reg(),
        "group code { disabled }\ntool read_source { enabled }",
        "enabled",
        "enabling `read_source` has no effect: its group `code` is disabled",
    );
}

#[test]
fn tg3009_no_effect() {
    case(
        "TG3009",
        reg(),
        "group code { disabled }\nconfiguration c { exclude [read_source] }",
        "read_source",
        "excluding `read_source` in configuration `c` has no effect",
    );
    // Every kind of statement it covers, each without effect here.
    let policy = "group content { enabled }
tool mcp_crm_lookup { disabled admin-only }
tool read_source { class sourceCode }
provider a { zone local fallback [b] }
provider b { zone local }
skill s { tools [get_page_content] }
skill t { tools [get_page_content] }
profile p { allow [get_page_content, group editing] }
configuration c { provider a skills [s, t] }";
    let (project, d) = run(reg(), policy, "TG3009");
    let found: Vec<(&str, &str, &str)> = d
        .iter()
        .map(|d| {
            (
                project.sources.text(d.span),
                d.message.as_str(),
                d.help.as_deref().unwrap().split(';').next().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        found,
        vec![
            ("enabled", "`enabled` in group `content` has no effect", "a group is enabled unless it is disabled"),
            ("disabled", "`disabled` in tool `mcp_crm_lookup` has no effect", "the registry already has it disabled"),
            ("admin-only", "`admin-only` in tool `mcp_crm_lookup` has no effect", "the registry already has it admin-only"),
            ("class sourceCode", "`class sourceCode` in tool `read_source` has no effect", "without it the class is `sourceCode` all the same"),
            ("b", "fallback `b` in provider `a` has no effect", "without it, every configuration using the provider keeps a ceiling that refuses the same tools"),
            ("get_page_content", "`get_page_content` in skill `s` has no effect", "every configuration that allows `get_page_content` gets it from another skill it attaches"),
            ("get_page_content", "`get_page_content` in skill `t` has no effect", "every configuration that allows `get_page_content` gets it from another skill it attaches"),
            ("get_page_content", "`get_page_content` in profile `p` has no effect", "no consumer uses profile `p`"),
            ("editing", "`group editing` in profile `p` has no effect", "no consumer uses profile `p`"),
        ]
    );
    // Kept on purpose: silenced by a comment on its line or the line above.
    let kept = "group code { disabled }\nconfiguration c {\n  # toolgate: allow TG3009 -- until the code tools are retired\n  exclude [read_source]\n}";
    let checked = Project::from_texts(reg(), &[("policy.tg", kept)]).check();
    assert_eq!(checked.problems, vec![]);
}

#[test]
fn tg3003_ceiling_unreached() {
    case(
        "TG3003",
        reg(),
        "group content { class publicContent }\ngroup editing { class publicContent }\ngroup mcp_crm { class publicContent }\nzone eu { ceiling internalConfiguration }\nzone top { ceiling secretAdjacent }",
        "ceiling internalConfiguration",
        "the ceiling of zone `eu` refuses no registered tool",
    );
}

#[test]
fn tg3004_empty_groups() {
    case(
        "TG3004",
        reg(),
        "configuration c { groups [] }",
        "groups []",
        "an empty `groups` list puts no restriction on configuration `c`",
    );
}

#[test]
fn tg3005_pattern_matches_nothing() {
    case(
        "TG3005",
        reg(),
        "profile p { allow [mcp_billing_*] }",
        "mcp_billing_*",
        "`mcp_billing_*` matches no registered tool",
    );
}

#[test]
fn tg3006_fallback_to_self() {
    case(
        "TG3006",
        reg(),
        "provider p { zone local fallback [p] }",
        "p",
        "provider `p` falls back to itself",
    );
}

#[test]
fn tg4001_remote_name_invalid() {
    let r = "[[tool]]\nname = \"mcp_crm_look up\"\ngroup = \"mcp_crm\"\nserver = \"crm\"\n";
    case("TG4001", ("registry.toml", r), "", "\"mcp_crm_look up\"", "remote tool name `mcp_crm_look up` breaks the naming rule: it contains ` `, outside [a-zA-Z0-9_-]");
}

#[test]
fn tg4002_remote_group_mismatch() {
    let r = "[[tool]]\nname = \"mcp_crm_lookup\"\ngroup = \"crm\"\nserver = \"crm\"\n";
    case(
        "TG4002",
        ("registry.toml", r),
        "",
        "\"mcp_crm_lookup\"",
        "remote tool `mcp_crm_lookup` must be in group `mcp_crm`",
    );
}

#[test]
fn tg4003_duplicate_registry_tool() {
    let r = "[[tool]]\nname = \"a\"\ngroup = \"g\"\n[[tool]]\nname = \"a\"\ngroup = \"g\"\n";
    case(
        "TG4003",
        ("registry.toml", r),
        "",
        "\"a\"",
        "the registry lists `a` twice",
    );
}

/// Assert code, primary span text and message of a finding outside `check`
/// (the MCP import and sync); snapshot both renderings.
fn case_of(
    code: &str,
    sources: &toolgate_compiler::source::SourceMap,
    problems: &[toolgate_compiler::diagnostics::Problem],
    spanned: &str,
    message: &str,
) {
    let diags: Vec<Diagnostic> = problems
        .iter()
        .map(|p| p.diagnostic())
        .filter(|d| d.code == code)
        .collect();
    assert_eq!(diags.len(), 1, "{problems:?}");
    let d = &diags[0];
    assert!(CATALOGUE
        .iter()
        .any(|c| c.code == code && c.severity == d.severity));
    assert_eq!(sources.text(d.span), spanned, "span of {code}");
    assert_eq!(d.message, message);
    insta::assert_snapshot!(
        format!("{code}-human"),
        report::human(sources, &diags, false)
    );
    insta::assert_snapshot!(format!("{code}-json"), report::json(sources, &diags));
}

#[test]
fn tg4006_server_lists_twice() {
    use toolgate_compiler::registry::import_mcp;
    let answer = "{\"tools\": [\n  {\"name\": \"lookup\"},\n  {\"name\": \"export\"},\n  {\"name\": \"lookup\", \"description\": \"again\"}\n]}\n";
    let mut sources = toolgate_compiler::source::SourceMap::new();
    let id = sources.add("tools-list.json", answer);
    let (reg, problems) = import_mcp(id, answer, "crm");
    // The first entry is kept, so what is returned holds each name once.
    let names: Vec<&str> = reg.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["mcp_crm_lookup", "mcp_crm_export"]);
    assert_eq!(reg.tools[0].description, None);
    case_of(
        "TG4006",
        &sources,
        &problems,
        "\"lookup\"",
        "the server lists tool `lookup` twice",
    );
    let d = problems[0].diagnostic();
    assert_eq!((d.span.range(), d.labels[0].span.range()), (67..75, 23..31));
}

#[test]
fn tg4007_remote_name_collision() {
    use toolgate_compiler::{mcp_sync, registry};
    let reg = "[[tool]]\nname = \"mcp_a_b_c\"\ngroup = \"mcp_a\"\nserver = \"a\"\n";
    let answer = "{\"tools\": [{\"name\": \"c\"}, {\"name\": \"d\"}]}";
    let mut sources = toolgate_compiler::source::SourceMap::new();
    let rid = sources.add("registry.toml", reg);
    let aid = sources.add("tools-list.json", answer);
    let (current, p) = registry::load(rid, reg, false);
    assert!(p.is_empty(), "{p:?}");
    let (live, p) = registry::import_mcp(aid, answer, "a_b");
    assert!(p.is_empty(), "{p:?}");
    let problems = mcp_sync::collisions(&current, "a_b", &live);
    case_of(
        "TG4007",
        &sources,
        &problems,
        "\"c\"",
        "server `a_b` lists a tool that becomes `mcp_a_b_c`, which the registry holds as a tool of server `a`",
    );
    assert_eq!(
        sources.text(problems[0].diagnostic().labels[0].span),
        "\"mcp_a_b_c\""
    );
    // The other way round: server `a` asked, the registry holding `a_b`'s tool.
    let reg = "[[tool]]\nname = \"mcp_a_b_c\"\ngroup = \"mcp_a_b\"\nserver = \"a_b\"\n";
    let (current, _) = registry::load(rid, reg, false);
    let (live, _) = registry::import_mcp(aid, "{\"tools\": [{\"name\": \"b_c\"}]}", "a");
    let got: Vec<String> = mcp_sync::collisions(&current, "a", &live)
        .iter()
        .map(|p| p.diagnostic().message)
        .collect();
    assert_eq!(
        got,
        ["server `a` lists a tool that becomes `mcp_a_b_c`, which the registry holds as a tool of server `a_b`"]
    );
    // The server's own tools never collide with themselves.
    assert_eq!(
        mcp_sync::collisions(
            &current,
            "a_b",
            &registry::import_mcp(aid, "{\"tools\": [{\"name\": \"c\"}]}", "a_b").0
        ),
        []
    );
}

#[test]
fn tg1011_lookalike_name() {
    // Cyrillic `е` (U+0435) for Latin `e`: reads as the real tool, excludes nothing.
    case(
        "TG1011",
        reg(),
        "configuration editor-chat {\n  exclude [\"d\u{435}l\u{435}t\u{435}_r\u{435}cord\"]\n}\n",
        "\"d\u{435}l\u{435}t\u{435}_r\u{435}cord\"",
        "`d\u{435}l\u{435}t\u{435}_r\u{435}cord` reads like registered tool `delete_record` but is a different name",
    );
    // Zero-width spaces after the real name: the same finding, and the
    // invisible characters themselves.
    let got = codes(
        reg(),
        &[(
            "p.tg",
            "configuration c { exclude [\"delete_record\u{200b}\u{200b}\"] }",
        )],
    );
    assert_eq!(got, vec!["TG1011", "TG1012", "TG1012"]);
    // In a profile, a skill and a tool override too; never "unknown tool".
    for policy in [
        "profile p { allow [\"g\u{435}t_page_content\"] }",
        "skill s { tools [\"g\u{435}t_page_content\"] }",
        "tool \"g\u{435}t_page_content\" { disabled }",
        "profile p { allow [\"g\u{435}t_*\"] }",
    ] {
        assert_eq!(
            codes(reg(), &[("p.tg", policy)]),
            vec!["TG1011"],
            "{policy}"
        );
    }
}

#[test]
fn tg1012_invisible_character() {
    // A right-to-left override in a comment can reorder what a reviewer sees.
    case(
        "TG1012",
        reg(),
        "# note \u{202e}\nconfiguration c { }\n",
        "\u{202e}",
        "a control or format character U+202E in a policy file",
    );
    // A newline in a registry name would inject lines into the prompt.
    let r = "[[tool]]\nname = \"a\\nb\"\ngroup = \"g\"\n";
    let (p, d) = run(("registry.toml", r), "", "TG1012");
    assert_eq!(p.sources.text(d[0].span), "\"a\\nb\"");
    assert_eq!(
        d[0].message,
        "a control or format character U+000A in the tool name of registry tool `a\\u000ab`"
    );
    // A byte-order mark at the start is accepted.
    assert!(codes(reg(), &[("p.tg", "\u{feff}configuration c { }")]).is_empty());
}

#[test]
fn tg1012_line_and_paragraph_separators_in_registry_names() {
    // U+2028 after a registered name: a second `delete_record` row in the
    // report, and a forged line for a host that splits on Unicode line ends.
    // Written as a TOML escape and as the raw character, beside the name it
    // imitates; the span is the quoted name.
    for (written, quoted) in [
        ("\\u2028", "\"delete_record\\u2028\""),
        ("\u{2028}", "\"delete_record\u{2028}\""),
    ] {
        let r = format!(
            "[[tool]]\nname = \"delete_record\"\ngroup = \"g\"\n\n[[tool]]\nname = \"delete_record{written}\"\ngroup = \"g\"\n"
        );
        let r: &'static str = Box::leak(r.into_boxed_str());
        let (p, d) = run(("registry.toml", r), "", "TG1012");
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(p.sources.text(d[0].span), quoted);
        let start = r.rfind(quoted).expect("the second name");
        assert_eq!(
            (d[0].span.start as usize, d[0].span.end as usize),
            (start, start + quoted.len())
        );
        assert_eq!(
            d[0].message,
            "a line or paragraph separator U+2028 in the tool name of registry tool `delete_record\\u2028`"
        );
    }
    // U+2029 in a group, U+0085 NEXT LINE (a control) in a name.
    let r = "[[tool]]\nname = \"a\"\ngroup = \"g\\u2029\"\n\n[[tool]]\nname = \"b\\u0085\"\ngroup = \"g\"\n";
    let (_, d) = run(("registry.toml", r), "", "TG1012");
    let messages: Vec<&str> = d.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "a line or paragraph separator U+2029 in the group of registry tool `a`",
            "a control or format character U+0085 in the tool name of registry tool `b\\u0085`",
        ]
    );
    // In a policy file, anywhere, as any other invisible character.
    let (p, d) = run(reg(), "# one\u{2028}two\nconfiguration c { }\n", "TG1012");
    assert_eq!(p.sources.text(d[0].span), "\u{2028}");
    assert_eq!(
        d[0].message,
        "a line or paragraph separator U+2028 in a policy file"
    );
}

#[test]
fn tg2007_pattern_in_name_list() {
    case(
        "TG2007",
        reg(),
        "configuration c { exclude [\"refund.*\"] }",
        "\"refund.*\"",
        "`refund.*` in `exclude` is not a pattern",
    );
    assert_eq!(
        codes(reg(), &[("p.tg", "skill s { tools [\"read_*\"] }")]),
        vec!["TG2007"]
    );
}

#[test]
fn tg3007_prefix_crosses_servers() {
    let r = format!(
        "{REGISTRY}\n[[tool]]\nname = \"mcp_crm_admin_wipe_all\"\ngroup = \"mcp_crm_admin\"\nserver = \"crm_admin\"\n"
    );
    let r: &'static str = Box::leak(r.into_boxed_str());
    case(
        "TG3007",
        ("registry.toml", r),
        "profile p { allow [mcp_crm_*] }",
        "mcp_crm_*",
        "`mcp_crm_*` also admits tools of server `crm_admin`",
    );
    // The server selector admits exactly one server's tools: no finding.
    assert!(codes(
        ("registry.toml", r),
        &[("p.tg", "profile p { allow [server crm] }")]
    )
    .is_empty());
}

#[test]
fn tg4004_registry_twins() {
    // U+0406 (Cyrillic І) reads as `l`.
    let r = "[[tool]]\nname = \"flush_cache\"\ngroup = \"g\"\n[[tool]]\nname = \"f\u{406}ush_cache\"\ngroup = \"g\"\n";
    case(
        "TG4004",
        ("registry.toml", r),
        "",
        "\"f\u{406}ush_cache\"",
        "registry tools `flush_cache` and `f\u{406}ush_cache` read alike",
    );
}

#[test]
fn tg4005_builtin_in_remote_namespace() {
    let r = "[[tool]]\nname = \"mcp_crm_export\"\ngroup = \"tools\"\n[[tool]]\nname = \"export\"\ngroup = \"mcp_crm\"\n";
    case(
        "TG4005",
        ("registry.toml", r),
        "",
        "\"mcp_crm_export\"",
        "builtin tool `mcp_crm_export` has a remote tool's name (`mcp_<server>_<tool>`) but no `server`",
    );
    let (_, d) = run(("registry.toml", r), "", "TG4005");
    assert_eq!(
        d[1].message,
        "builtin tool `export` is in remote group `mcp_crm` but has no `server`"
    );
}

#[test]
fn every_catalogue_code_has_a_test_and_a_docs_entry() {
    let tests = include_str!("diagnostics.rs");
    let docs = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/diagnostics.md"
    ))
    .unwrap_or_default();
    for c in CATALOGUE {
        assert!(
            tests.contains(&format!("fn {}_", c.code.to_lowercase())),
            "no test for {}",
            c.code
        );
        assert!(
            docs.contains(&format!("## {} {}", c.code, c.name)),
            "no docs entry `## {} {}`",
            c.code,
            c.name
        );
    }
}

#[test]
fn json_registries_get_spans_too() {
    let r = r#"{"tool": [{"name": "mcp_crm_bad name", "group": "mcp_crm", "server": "crm"}]}"#;
    let (p, d) = run(("registry.json", r), "", "TG4001");
    assert_eq!(p.sources.text(d[0].span), "\"mcp_crm_bad name\"");
}

fn codes(registry: (&str, &str), policies: &[(&str, &str)]) -> Vec<&'static str> {
    Project::from_texts(registry, policies)
        .check()
        .problems
        .iter()
        .map(|p| p.code())
        .collect()
}

#[test]
fn a_second_exclude_line_with_other_names_is_a_contradiction_not_ignored() {
    assert_eq!(
        codes(
            reg(),
            &[(
                "p.tg",
                "configuration c { exclude [read_source] exclude [update_record] }"
            )]
        ),
        vec!["TG2002"]
    );
    assert_eq!(
        codes(
            reg(),
            &[(
                "p.tg",
                "configuration c { exclude [read_source] exclude [read_source] }"
            )]
        ),
        vec!["TG2003"]
    );
    assert_eq!(
        codes(
            reg(),
            &[(
                "p.tg",
                "profile p { allow [read_source] allow [update_record] }"
            )]
        ),
        vec!["TG2002"]
    );
}

#[test]
fn a_custom_ladder_without_zones_is_an_error() {
    let r = (
        "registry.toml",
        "[[tool]]\nname = \"a\"\ngroup = \"g\"\nclass = \"high\"\n",
    );
    assert_eq!(
        codes(r, &[("p.tg", "classes [low, high]\nconfiguration c { }")]),
        vec!["TG2005"]
    );
    assert!(codes(
        r,
        &[(
            "p.tg",
            "classes [low, high]\nzone z { ceiling low }\nconfiguration c { }"
        )]
    )
    .is_empty());
}

#[test]
fn a_syntax_error_does_not_cascade_into_other_files() {
    let got = codes(
        reg(),
        &[
            ("a.tg", "provider p { zone local "),
            ("b.tg", "configuration c { provider p }"),
        ],
    );
    assert_eq!(got, vec!["TG0001"]);
}

#[test]
fn an_explicit_skill_loader_must_be_registered() {
    assert_eq!(
        codes(reg(), &[("p.tg", "skill-loader load_skills")]),
        vec!["TG1001"]
    );
    assert!(codes(reg(), &[("p.tg", "skill-loader read_source")]).is_empty());
}

/// `Project::load_cached`: a file the overlay holds is read from it, not
/// from disk (an editor's unsaved text), under the same limits; the registry
/// parsed once is reused while its text is unchanged, and parsed again when
/// it changes.
#[test]
fn a_project_loads_over_an_overlay_and_reuses_an_unchanged_registry() {
    use toolgate_compiler::project::RegistryCache;
    let dir = std::env::temp_dir().join(format!("tg-overlay-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("toolgate.toml"),
        "registry = \"r.toml\"\npolicies = [\"p.tg\"]\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("r.toml"),
        "[[tool]]\nname = \"read_source\"\ngroup = \"code\"\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("p.tg"),
        "configuration c { exclude [read_source] }\n",
    )
    .unwrap();
    let policy = std::fs::canonicalize(dir.join("p.tg")).unwrap();
    let registry = std::fs::canonicalize(dir.join("r.toml")).unwrap();
    let codes = |p: &Project| -> Vec<&'static str> {
        p.check().problems.iter().map(|p| p.code()).collect()
    };
    let mut cache = RegistryCache::default();
    let clean = Project::load_cached(&dir, &|_| None, &mut cache).unwrap();
    assert_eq!(codes(&clean), Vec::<&str>::new());
    assert_eq!(clean.file_at(&dir.join("p.tg")), Some(clean.policies[0]));

    let typo = |p: &std::path::Path| {
        (p == policy).then(|| "configuration c { exclude [read_sourc] }\n".to_string())
    };
    let edited = Project::load_cached(&dir, &typo, &mut cache).unwrap();
    assert_eq!(codes(&edited), ["TG1010"]);
    assert_eq!(
        edited.sources.get(edited.policies[0]).text,
        "configuration c { exclude [read_sourc] }\n"
    );
    // The registry changed in the editor: parsed again, the exclusion is stale.
    let renamed = |p: &std::path::Path| {
        (p == registry).then(|| "[[tool]]\nname = \"write_file\"\ngroup = \"code\"\n".to_string())
    };
    let edited = Project::load_cached(&dir, &renamed, &mut cache).unwrap();
    assert_eq!(codes(&edited), ["TG1009"]);
    // Over the policy limit in the overlay: TG0002, as on disk.
    let huge = |p: &std::path::Path| {
        (p == policy).then(|| "#".repeat(toolgate_compiler::syntax::parse::MAX_POLICY_BYTES + 1))
    };
    let big = Project::load_with(&dir, &huge).unwrap();
    assert_eq!(codes(&big), ["TG0002"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tg2008_unknown_capture() {
    case(
        "TG2008",
        reg(),
        "gateway g {\n  rule r {\n    message \"denied: {tol}\"\n    => not-in-profile\n  }\n}\n",
        "{tol}",
        "`{tol}` is not a capture",
    );
    // In a header glob and a remediation too; the two captures and a `{` that opens no name are fine.
    assert_eq!(
        codes(
            reg(),
            &[(
                "p.tg",
                "gateway g { rule r { header X-Why = \"{scope}\" remediation \"fix {who}\" => policy } }"
            )]
        ),
        vec!["TG2008", "TG2008"]
    );
    assert!(codes(
        reg(),
        &[(
            "p.tg",
            "gateway g { rule r { body \"{ {tool} {profile} {\" remediation \"widen {profile} for {tool}\" => policy } }"
        )]
    )
    .is_empty());
}

#[test]
fn tg3008_rule_never_matches() {
    case(
        "TG3008",
        reg(),
        "gateway g {\n  rule any-403 {\n    http-status 403\n    => not-in-profile\n  }\n  rule scope-403 {\n    http-status 403\n    header WWW-Authenticate = \"*insufficient_scope*\"\n    => not-in-profile\n  }\n}\n",
        "scope-403",
        "rule `scope-403` of gateway `g` can never match",
    );
    let why = |policy: &str| -> Vec<String> {
        let project = Project::from_texts(reg(), &[("policy.tg", policy)]);
        project
            .check()
            .problems
            .iter()
            .map(|p| p.diagnostic())
            .filter(|d| d.code == "TG3008")
            .map(|d| d.label)
            .collect()
    };
    assert_eq!(
        why("gateway g { rule r { => policy } }"),
        vec!["it has no matcher"]
    );
    assert_eq!(
        why("gateway g { rule r { error-code 1 result-text \"x\" => policy } }"),
        vec!["it needs both a JSON-RPC error and an `isError` result"]
    );
    assert_eq!(
        why("gateway g { rule r { http-status 1000 => policy } }"),
        vec!["no HTTP status is outside 100 to 599"]
    );
    assert_eq!(
        why("gateway g { rule r { header \"X Why\" = \"*\" => policy } }"),
        vec!["`X Why` is not an HTTP header name"]
    );
    // Header names compare without case; a narrower rule first is fine; another gateway is not compared.
    assert_eq!(
        why("gateway g { rule a { header x-why = \"no\" => policy } rule b { header X-Why = \"no\" body \"\" => policy } }"),
        vec!["rule `a` above matches every answer this one does"]
    );
    assert!(why("gateway g { rule b { http-status 403 body \"\" => policy } rule a { http-status 403 => policy } }").is_empty());
    assert!(why("gateway g { rule a { http-status 403 => policy } } gateway h { rule b { http-status 403 body \"\" => policy } }").is_empty());
    // A transport-only rule is fine on its own.
    assert!(why("gateway g { rule a { http-status 403 => not-in-profile } }").is_empty());
}
