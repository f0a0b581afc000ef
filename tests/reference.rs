//! Test support: compile policies from text, and a deliberately naive
//! reference interpreter of the validated model, written from the
//! specification (docs/gate-semantics.md) without looking at the table, to
//! check the table against.

use toolgate_compiler::model::{
    Audience, Enforcement, Model, Selector, UnknownConsumers, Unprofiled,
};
use toolgate_compiler::project::Project;
use toolgate_compiler::{lower, report};
use toolgate_runtime::{AllowList, Exclusions, Role, RunState, Table};

/// Compile a registry (TOML) and policy files; panic with the rendered
/// diagnostics if there is an error.
pub fn model(registry: &str, policies: &[&str]) -> Model {
    let named: Vec<(String, &str)> = policies
        .iter()
        .enumerate()
        .map(|(i, p)| (format!("policy{i}.tg"), *p))
        .collect();
    let refs: Vec<(&str, &str)> = named.iter().map(|(n, t)| (n.as_str(), *t)).collect();
    let project = Project::from_texts(("registry.toml", registry), &refs);
    let checked = project.check();
    match checked.model {
        Some(m) => m,
        None => {
            let diags = checked.errors();
            panic!(
                "policy has errors:\n{}",
                report::plain(&project.sources, &diags)
            )
        }
    }
}

pub fn table(registry: &str, policies: &[&str]) -> Table {
    let m = model(registry, policies);
    Table::load(&lower::compile(&m)).expect("compiled table loads")
}

/// A context as the reference interpreter sees it.
#[derive(Debug, Clone)]
pub struct RefCtx {
    pub config: String,
    pub role: Role,
    pub consumer: Option<String>,
    pub enforcement: Option<String>,
    pub run: Option<RunState>,
}

/// The reference's answer: (allowed, reason code, observed only).
pub type RefDecision = (bool, Option<&'static str>, bool);

fn ladder_rank(m: &Model, zone: Option<usize>) -> usize {
    // Unknown or missing zone: the least trusted, i.e. the lowest ceiling.
    match zone {
        Some(z) => m.zones[z].ceiling,
        None => m.zones.iter().map(|z| z.ceiling).min().unwrap_or(0),
    }
}

/// The gate, naively, in the order of docs/gate-semantics.md §0.
pub fn reference_decide(m: &Model, ctx: &RefCtx, name: &str) -> RefDecision {
    // docs/gate-semantics.md §1, notRegistered: the name is not a tool.
    let Some(t) = m.tools.iter().find(|t| t.name == name) else {
        return (false, Some("notRegistered"), false);
    };
    let group = &m.groups[t.group];
    let cfg = m
        .configurations
        .iter()
        .find(|c| c.name == ctx.config)
        .expect("known configuration");

    // docs/gate-semantics.md §2, toolDisabled: enabled = group enabled AND tool
    // (override, else registry default).
    let group_on = group.state != Some(false);
    let tool_on = t.state.unwrap_or(t.default_enabled);
    if !(group_on && tool_on) {
        return (false, Some("toolDisabled"), false);
    }
    // docs/gate-semantics.md §3, requiresAdmin: admin-only and the role is not admin.
    if t.admin_only && ctx.role != Role::Admin {
        return (false, Some("requiresAdmin"), false);
    }
    // docs/gate-semantics.md §4, notInProfile: only for a consumer; a bound one is
    // held to its profile, an unbound one to consumers-without-profile.
    if let Some(c) = &ctx.consumer {
        match m.consumers.iter().find(|x| &x.name == c) {
            Some(binding) => {
                let p = &m.profiles[binding.profile];
                let ok = p.allow.iter().any(|s| match s {
                    Selector::Tool(n) => n == name,
                    Selector::Group(g) => *g == t.group,
                    Selector::Prefix(x) => name.starts_with(x.as_str()),
                });
                if !ok {
                    return (false, Some("notInProfile"), false);
                }
            }
            None => {
                // §4, who is a consumer: a name no block binds is admitted only
                // when the policy says so and it is no slip for a bound one;
                // then consumers-without-profile decides. Otherwise the
                // profile gate is closed (edges refuse the name before this).
                let slip = c.is_empty()
                    || c.trim() != c
                    || c.chars().any(toolgate_runtime::names::is_invisible)
                    || toolgate_runtime::names::did_you_mean(
                        c,
                        m.consumers.iter().map(|x| x.name.as_str()),
                    )
                    .is_some();
                // `*` is the readers' "consumer without a profile".
                let admitted = c == "*"
                    || (m.settings.unknown_consumers == UnknownConsumers::Admitted && !slip);
                if !admitted || m.settings.unprofiled == Unprofiled::Refused {
                    return (false, Some("notInProfile"), false);
                }
            }
        }
    }
    // docs/gate-semantics.md §5, configurationGroup: the configuration's groups and
    // the run's allow-list; the skill loader is exempt unless the stored
    // allow-list is unreadable.
    // No run given: a new run, held to the union of the allow-lists that the
    // configuration's attached skills declare (none declared: no restriction).
    let run = ctx.run.clone().unwrap_or_else(|| {
        let declared: Vec<&Vec<String>> = cfg
            .skills
            .iter()
            .filter_map(|&s| m.skills[s].tools.as_ref())
            .collect();
        let allowed = if declared.is_empty() {
            AllowList::Unrestricted
        } else {
            AllowList::Only(declared.into_iter().flatten().cloned().collect())
        };
        RunState {
            allowed,
            excluded: Exclusions::Names(vec![]),
        }
    });
    let loader = name == m.settings.skill_loader;
    let unreadable = run.allowed == AllowList::Unreadable;
    if unreadable || !loader {
        let in_groups = match &cfg.groups {
            None => true,
            Some(gs) => gs.contains(&t.group),
        };
        let in_run = match &run.allowed {
            AllowList::Unrestricted => true,
            AllowList::Only(n) => n.iter().any(|x| x == name),
            AllowList::Unreadable => false,
        };
        if !(in_groups && in_run) {
            return (false, Some("configurationGroup"), false);
        }
    }
    // docs/gate-semantics.md §6, configurationExcluded: live ∪ stored exclusions.
    let stored_excludes = match &run.excluded {
        Exclusions::Names(n) => n.iter().any(|x| x == name),
        Exclusions::Unreadable => true,
    };
    if cfg.excluded.iter().any(|x| x == name) || stored_excludes {
        return (false, Some("configurationExcluded"), false);
    }
    // docs/gate-semantics.md §7, trustZone, in the enforcement mode of §8.
    let class = t
        .class
        .or(group.default_class)
        .unwrap_or(m.classes.len() - 1);
    let ceiling = match cfg.provider {
        None => ladder_rank(m, None),
        Some(p) => {
            let mut c = ladder_rank(m, m.providers[p].zone);
            for &f in &m.providers[p].fallback {
                c = c.min(ladder_rank(m, m.providers[f].zone));
            }
            c
        }
    };
    let observe = match &ctx.enforcement {
        Some(s) => s
            .trim_matches([' ', '\t', '\n', '\r', '\0', '\x0B'])
            .eq_ignore_ascii_case("observe"),
        None => m.settings.enforcement == Enforcement::Observe,
    };
    if class > ceiling {
        if t.remote || !observe {
            return (false, Some("trustZone"), false);
        }
        return (true, Some("trustZone"), true);
    }
    (true, None, false)
}

/// The unavailable list, naively: every registered tool in registry order,
/// the refusals, remote tools only where visible.
pub fn reference_unavailable(m: &Model, ctx: &RefCtx) -> Vec<(String, &'static str)> {
    let visible = match m.settings.remote_visibility {
        Audience::Admins => ctx.role == Role::Admin,
        Audience::Everyone => true,
        Audience::Nobody => false,
    };
    m.tools
        .iter()
        .filter(|t| visible || !t.remote)
        .filter_map(|t| match reference_decide(m, ctx, &t.name) {
            (false, Some(r), _) => Some((t.name.clone(), r)),
            _ => None,
        })
        .collect()
}

/// Build the runtime context that matches a reference context.
pub fn runtime_ctx<'t>(table: &'t Table, ctx: &RefCtx) -> toolgate_runtime::Context<'t> {
    let mut c = table
        .context(&ctx.config)
        .expect("known configuration")
        .role(ctx.role)
        .consumer(ctx.consumer.as_deref())
        .enforcement(ctx.enforcement.as_deref());
    if let Some(r) = &ctx.run {
        c = c.run(r);
    }
    c
}

/// Shorthand for a context with defaults.
pub fn ctx(config: &str, role: Role) -> RefCtx {
    RefCtx {
        config: config.into(),
        role,
        consumer: None,
        enforcement: None,
        run: None,
    }
}

/// Tool `i` of a table's spec as a live tool (named `live_only_{i}`) with
/// the same group, properties and class: a live tool decides like its twin.
pub fn live_twin(spec: &toolgate_runtime::TableSpec, i: usize) -> toolgate_runtime::LiveTool {
    let tool = &spec.tools[i];
    toolgate_runtime::LiveTool::new(toolgate_runtime::LiveToolSpec {
        name: format!("live_only_{i}"),
        group: spec.groups[tool.group as usize].name.clone(),
        remote: tool.remote,
        enabled: tool.enabled,
        admin_only: tool.admin_only,
        class: Some(spec.classes[tool.class as usize].clone()),
    })
    .expect("a twin's name is a registry name")
}

/// The registries and policies of the reference cases and the exclusion
/// rules (docs/gate-semantics.md §16, §6), shared by the acceptance tests
/// and the conformance corpus.
pub mod fixtures {
    pub const NR_LLM: &str = r#"
[[tool]]
name = "get_page_content"
group = "content"
[[tool]]
name = "create_page_draft"
group = "editing"
[[tool]]
name = "get_env_raw"
group = "system"
admin_only = true
[[tool]]
name = "read_source"
group = "code"
[[tool]]
name = "fetch_logs"
group = "system"
[[tool]]
name = "mcp_logs_fetch"
group = "mcp_logs"
server = "logs"
enabled = true
admin_only = false
[[tool]]
name = "mcp_deepwiki_ask_question"
group = "mcp_deepwiki"
server = "deepwiki"
enabled = true
class = "sourceCode"
"#;

    pub const CLASSES: &str = "
group content { class editorContent }
group editing { class editorContent }
group code { class sourceCode }
group system { class systemDiagnostics }
group mcp_logs { class systemDiagnostics }
provider global { zone externalGlobal }
provider onprem { zone local }
";

    pub const EDIT_REG: &str = r#"
[[tool]]
name = "update_record"
group = "editing"
[[tool]]
name = "delete_record"
group = "editing"
[[tool]]
name = "read_record"
group = "content"
[[tool]]
name = "load_skill"
group = "skills"
[[tool]]
name = "get_env_raw"
group = "system"
admin_only = true
"#;

    pub const EDIT_POLICY: &str = "
provider p { zone local }
group editing { class editorContent }
configuration editor-chat { provider p groups [editing, content, skills] exclude [delete_record] }
configuration other { provider p groups [editing, content, skills] }
";

    /// Two reading tools and a skill loader (the skills cases).
    pub const SKILLS_REG: &str = r#"
[[tool]]
name = "read_a"
group = "reading"
[[tool]]
name = "read_b"
group = "reading"
[[tool]]
name = "load_skill"
group = "skills"
"#;

    /// Case 9 (docs/gate-semantics.md §16): the unavailable list in registry order.
    pub const CASE9_REG: &str = r#"
[[tool]]
name = "get_page_content"
group = "content"
[[tool]]
name = "create_page_draft"
group = "editing"
enabled = false
[[tool]]
name = "get_env_raw"
group = "system"
admin_only = true
[[tool]]
name = "read_source"
group = "code"
"#;

    /// Case 11 (docs/gate-semantics.md §16): remote tools are listed for admins only.
    pub const CASE11_REG: &str = r#"
[[tool]]
name = "get_page_content"
group = "content"
[[tool]]
name = "read_source"
group = "code"
[[tool]]
name = "mcp_deepwiki_ask_question"
group = "mcp_deepwiki"
server = "deepwiki"
enabled = true
admin_only = false
class = "sourceCode"
"#;

    /// The fail-closed scenario (tests/fail_closed.rs).
    pub const FC_REG: &str = "[[tool]]\nname = \"a\"\ngroup = \"g\"\n[[tool]]\nname = \"b\"\ngroup = \"h\"\nadmin_only = true\n";
    pub const FC_POL: &str = "provider p { zone externalGlobal } group h { class systemDiagnostics } configuration c { provider p exclude [a] }";
}
