//! Syntax trees + registry -> [`Model`], with every finding as a [`Problem`].
//! Resolution happens in passes: definitions first (so order across files
//! does not matter), then references, then "no effect" checks on the result.

use std::collections::HashMap;

use crate::ast::{self, Block, Name, Prop, Statement};
use crate::diagnostics::{did_you_mean, NameKind, Problem, Severity};
use crate::model::{self, Model};
use crate::names::Lookalikes;
use crate::registry::Registry;
use crate::source::{FileId, SourceMap, Span};
use toolgate_runtime::spec::RuleOutcome;

/// A parsed policy file with the name it is shown under.
pub struct Parsed<'a> {
    pub file: FileId,
    pub ast: &'a ast::PolicyFile,
}

/// Validate policies against a registry. The model is returned only when no
/// problem is an error.
pub fn validate(
    sources: &SourceMap,
    policies: &[Parsed<'_>],
    registry: &Registry,
    provenance: model::Provenance,
) -> (Option<Model>, Vec<Problem>) {
    let mut v = Validator {
        sources,
        registry,
        problems: crate::names::registry_problems(registry),
    };
    for p in policies {
        v.problems.extend(crate::names::invisible_in_policy(
            p.file,
            &sources.get(p.file).text,
        ));
    }
    let model = v.run(policies, provenance);
    let ok = !v.problems.iter().any(|p| p.severity() == Severity::Error);
    v.problems.sort_by_key(|p| p.span());
    (ok.then_some(model), v.problems)
}

struct Validator<'a> {
    sources: &'a SourceMap,
    registry: &'a Registry,
    problems: Vec<Problem>,
}

/// Definitions of one kind, in order, with the span of their first definition.
struct Defs<'b, P> {
    kind: NameKind,
    list: Vec<(&'b Block<P>, FileId)>,
    index: HashMap<&'b str, usize>,
}

impl<'b, P> Defs<'b, P> {
    fn new(kind: NameKind) -> Self {
        Defs {
            kind,
            list: Vec::new(),
            index: HashMap::new(),
        }
    }

    fn add(&mut self, block: &'b Block<P>, file: FileId, problems: &mut Vec<Problem>) {
        if let Some(&first) = self.index.get(block.name.text.as_str()) {
            problems.push(Problem::Duplicate {
                kind: self.kind,
                name: block.name.text.clone(),
                span: block.name.span,
                first: self.list[first].0.name.span,
            });
            return;
        }
        self.index.insert(block.name.text.as_str(), self.list.len());
        self.list.push((block, file));
    }

    fn names(&self) -> impl Iterator<Item = &str> {
        self.list.iter().map(|(b, _)| b.name.text.as_str())
    }
}

/// A setting given once, or twice (repeated or contradicting).
struct Once<T> {
    value: Option<(T, Span)>,
}

impl<T: PartialEq + Clone> Once<T> {
    fn new() -> Self {
        Once { value: None }
    }
    fn set(&mut self, value: T, span: Span, what: &'static str, problems: &mut Vec<Problem>) {
        match &self.value {
            None => self.value = Some((value, span)),
            Some((v, first)) if *v == value => problems.push(Problem::Repeated {
                property: what,
                span,
                first: *first,
            }),
            Some((_, first)) => problems.push(Problem::Contradiction {
                subject: format!("`{what}`"),
                span,
                other: *first,
            }),
        }
    }
    fn get(&self) -> Option<&T> {
        self.value.as_ref().map(|(v, _)| v)
    }
    fn span(&self) -> Option<Span> {
        self.value.as_ref().map(|(_, s)| *s)
    }
}

impl<'a> Validator<'a> {
    fn unknown(&mut self, kind: NameKind, name: &Name, candidates: Vec<&str>) {
        let suggestion = did_you_mean(&name.text, candidates);
        self.problems.push(Problem::Unknown {
            kind,
            name: name.text.clone(),
            span: name.span,
            suggestion,
        });
    }

    /// A reference to a tool the registry does not hold: a lookalike of a
    /// registered name is TG1011 (an error), anything else TG1001.
    fn unknown_tool(&mut self, name: &Name, lookalikes: &Lookalikes<'_>, candidates: Vec<&str>) {
        if !self.lookalike(name, lookalikes) {
            self.unknown(NameKind::Tool, name, candidates);
        }
    }

    /// TG1011 when `name` reads like a registered tool; whether it did.
    fn lookalike(&mut self, name: &Name, lookalikes: &Lookalikes<'_>) -> bool {
        match lookalikes.of(&name.text) {
            Some(registered) => {
                self.problems.push(Problem::Lookalike {
                    name: name.text.clone(),
                    span: name.span,
                    registered: registered.to_string(),
                    detail: crate::names::describe(&name.text),
                });
                true
            }
            None => false,
        }
    }

    /// TG2007 when a name in a list that takes no patterns holds `*`.
    fn pattern_in_list(&mut self, name: &Name, list: &'static str) -> bool {
        if name.text.contains('*') {
            self.problems.push(Problem::PatternInNameList {
                name: name.text.clone(),
                span: name.span,
                list,
            });
            return true;
        }
        false
    }

    /// Warn about names listed twice; return them without repeats.
    fn dedup<'n>(&mut self, names: &'n [Name]) -> Vec<&'n Name> {
        let mut seen: HashMap<&str, Span> = HashMap::new();
        let mut out = Vec::new();
        for n in names {
            if let Some(first) = seen.get(n.text.as_str()) {
                self.problems.push(Problem::ListedTwice {
                    name: n.text.clone(),
                    span: n.span,
                    first: *first,
                });
            } else {
                seen.insert(&n.text, n.span);
                out.push(n);
            }
        }
        out
    }

    fn run(&mut self, policies: &[Parsed<'_>], provenance: model::Provenance) -> Model {
        // ---- pass 1: collect definitions and settings
        let mut ladder: Option<&ast::ClassesStmt> = None;
        let mut enforcement = Once::new();
        let mut visibility = Once::new();
        let mut unprofiled = Once::new();
        let mut loader: Once<String> = Once::new();
        let mut groups_d = Defs::new(NameKind::Group);
        let mut tools_d = Defs::new(NameKind::Tool);
        let mut zones_d = Defs::new(NameKind::Zone);
        let mut providers_d = Defs::new(NameKind::Provider);
        let mut skills_d = Defs::new(NameKind::Skill);
        let mut configs_d = Defs::new(NameKind::Configuration);
        let mut profiles_d = Defs::new(NameKind::Profile);
        let mut consumers_d = Defs::new(NameKind::Consumer);
        let mut gateways_d = Defs::new(NameKind::Gateway);
        let mut problems = Vec::new();
        for p in policies {
            for st in &p.ast.statements {
                match st {
                    Statement::Classes(c) => match ladder {
                        None => ladder = Some(c),
                        Some(_) => problems.push(Problem::LadderMisuse {
                            span: c.span,
                            message: "the `classes` ladder is given twice".into(),
                        }),
                    },
                    Statement::Enforcement(s) => {
                        enforcement.set(s.value, s.value_span, "enforcement", &mut problems)
                    }
                    Statement::RemoteVisibility(s) => visibility.set(
                        s.value,
                        s.value_span,
                        "remote-tools visible-to",
                        &mut problems,
                    ),
                    Statement::Unprofiled(s) => unprofiled.set(
                        s.value,
                        s.value_span,
                        "consumers-without-profile",
                        &mut problems,
                    ),
                    Statement::SkillLoader(s) => loader.set(
                        s.value.text.clone(),
                        s.value_span,
                        "skill-loader",
                        &mut problems,
                    ),
                    Statement::Group(b) => groups_d.add(b, p.file, &mut problems),
                    Statement::Tool(b) => tools_d.add(b, p.file, &mut problems),
                    Statement::Zone(b) => zones_d.add(b, p.file, &mut problems),
                    Statement::Provider(b) => providers_d.add(b, p.file, &mut problems),
                    Statement::Skill(b) => skills_d.add(b, p.file, &mut problems),
                    Statement::Configuration(b) => configs_d.add(b, p.file, &mut problems),
                    Statement::Profile(b) => profiles_d.add(b, p.file, &mut problems),
                    Statement::Consumer(b) => consumers_d.add(b, p.file, &mut problems),
                    Statement::Gateway(b) => gateways_d.add(b, p.file, &mut problems),
                }
            }
        }
        self.problems.append(&mut problems);

        // ---- classes
        let classes: Vec<String> = match ladder {
            None => model::DEFAULT_CLASSES
                .iter()
                .map(|s| s.to_string())
                .collect(),
            Some(c) => {
                if c.ladder.is_empty() {
                    self.problems.push(Problem::LadderMisuse {
                        span: c.span,
                        message: "the `classes` ladder is empty".into(),
                    });
                }
                let ladder = self.dedup(&c.ladder);
                // The one place the class limit is checked (the runtime refuses such a table).
                if let Some(n) = ladder.get(toolgate_runtime::table::MAX_CLASSES) {
                    self.problems.push(Problem::TooManyClasses {
                        span: n.span,
                        count: ladder.len(),
                        limit: toolgate_runtime::table::MAX_CLASSES,
                    });
                }
                ladder.into_iter().map(|n| n.text.clone()).collect()
            }
        };
        let classes = if classes.is_empty() {
            model::DEFAULT_CLASSES
                .iter()
                .map(|s| s.to_string())
                .collect()
        } else {
            classes
        };
        let class_index: HashMap<&str, usize> = classes
            .iter()
            .enumerate()
            .map(|(i, c)| (c.as_str(), i))
            .collect();
        let resolve_class = |v: &mut Self, n: &Name| -> Option<usize> {
            match class_index.get(n.text.as_str()) {
                Some(&i) => Some(i),
                None => {
                    v.unknown(
                        NameKind::Class,
                        n,
                        classes.iter().map(String::as_str).collect(),
                    );
                    None
                }
            }
        };

        // ---- groups: every registry group, in order of first appearance
        let mut groups: Vec<model::Group> = Vec::new();
        let mut group_index: HashMap<String, usize> = HashMap::new();
        for t in &self.registry.tools {
            if !group_index.contains_key(&t.group) {
                group_index.insert(t.group.clone(), groups.len());
                groups.push(model::Group {
                    name: t.group.clone(),
                    state: None,
                    default_class: None,
                });
            }
        }
        let group_names: Vec<String> = groups.iter().map(|g| g.name.clone()).collect();
        let group_candidates = || group_names.iter().map(String::as_str).collect::<Vec<_>>();
        let mut group_state_span: HashMap<usize, Span> = HashMap::new();
        for (b, _) in &groups_d.list {
            let Some(&gi) = group_index.get(b.name.text.as_str()) else {
                self.unknown(NameKind::Group, &b.name, group_candidates());
                continue;
            };
            let mut state = Once::new();
            let mut class = Once::new();
            for Prop { value, span } in &b.props {
                match value {
                    ast::GroupProp::State(s) => {
                        state.set(*s, *span, "enabled/disabled", &mut self.problems)
                    }
                    ast::GroupProp::Class(c) => {
                        class.set(c.text.clone(), *span, "class", &mut self.problems)
                    }
                }
            }
            groups[gi].state = state.get().copied();
            if let Some(s) = state.span() {
                group_state_span.insert(gi, s);
            }
            if let Some((b_prop, _)) = b.props.iter().find_map(|p| match &p.value {
                ast::GroupProp::Class(c) => Some((c, p.span)),
                _ => None,
            }) {
                groups[gi].default_class = resolve_class(self, b_prop);
            }
        }

        // ---- tools: registry facts, then the policy's overrides
        let mut tools: Vec<model::Tool> = Vec::with_capacity(self.registry.tools.len());
        let mut tool_index: HashMap<&str, usize> =
            HashMap::with_capacity(self.registry.tools.len());
        for t in &self.registry.tools {
            let class = match &t.class {
                None => None,
                Some(c) => match class_index.get(c.as_str()) {
                    Some(&i) => Some(i),
                    None => {
                        self.unknown(
                            NameKind::Class,
                            &Name {
                                text: c.clone(),
                                span: t.span,
                            },
                            classes.iter().map(String::as_str).collect(),
                        );
                        None
                    }
                },
            };
            tool_index.insert(t.name.as_str(), tools.len());
            tools.push(model::Tool {
                name: t.name.clone(),
                group: group_index[&t.group],
                remote: t.is_remote(),
                server: match &t.origin {
                    crate::registry::Origin::Remote { server } => Some(server.clone()),
                    crate::registry::Origin::Builtin => None,
                },
                default_enabled: t.enabled,
                state: None,
                admin_only: t.admin_only,
                class,
                description: t.description.clone(),
                input_schema: t.input_schema.clone(),
            });
        }
        fn tool_candidates(tools: &[model::Tool]) -> Vec<&str> {
            tools.iter().map(|t| t.name.as_str()).collect()
        }
        let registry_names: Vec<String> = tools.iter().map(|t| t.name.clone()).collect();
        let (lookalikes, _) = Lookalikes::new(registry_names.iter().map(String::as_str));
        for (b, _) in &tools_d.list {
            let Some(&ti) = tool_index.get(b.name.text.as_str()) else {
                let c = tool_candidates(&tools);
                self.unknown_tool(&b.name, &lookalikes, c);
                continue;
            };
            let mut state = Once::new();
            let mut admin = Once::new();
            let mut class = Once::new();
            for Prop { value, span } in &b.props {
                match value {
                    ast::ToolProp::State(s) => {
                        state.set(*s, *span, "enabled/disabled", &mut self.problems)
                    }
                    ast::ToolProp::AdminOnly(a) => {
                        admin.set(*a, *span, "admin-only", &mut self.problems)
                    }
                    ast::ToolProp::Class(c) => {
                        class.set(c.text.clone(), *span, "class", &mut self.problems)
                    }
                }
            }
            tools[ti].state = state.get().copied();
            if let Some(&a) = admin.get() {
                tools[ti].admin_only = a;
            }
            if let Some(c) = b.props.iter().find_map(|p| match &p.value {
                ast::ToolProp::Class(c) => Some(c),
                _ => None,
            }) {
                if let Some(ci) = resolve_class(self, c) {
                    tools[ti].class = Some(ci);
                }
            }
            let g = tools[ti].group;
            if state.get() == Some(&true) && groups[g].state == Some(false) {
                self.problems.push(Problem::EnableInDisabledGroup {
                    tool: b.name.text.clone(),
                    span: state.span().unwrap_or(b.name.span),
                    group: groups[g].name.clone(),
                    group_span: group_state_span.get(&g).copied(),
                });
            }
        }

        // ---- zones
        let mut zones: Vec<model::Zone> = Vec::new();
        let mut zone_spans: Vec<Span> = Vec::new();
        if zones_d.list.is_empty() {
            for (z, c) in model::DEFAULT_ZONES {
                if let Some(&ci) = class_index.get(c) {
                    zones.push(model::Zone {
                        name: z.to_string(),
                        ceiling: ci,
                    });
                }
            }
            // The default zones are written against the default ladder.
            if zones.len() < model::DEFAULT_ZONES.len() {
                zones.clear();
                if let Some(c) = ladder {
                    self.problems.push(Problem::LadderMisuse {
                        span: c.span,
                        message: "a custom `classes` ladder needs `zone` blocks: the default zones name the default classes".into(),
                    });
                }
            }
        }
        let mut zone_index: HashMap<String, usize> = zones
            .iter()
            .enumerate()
            .map(|(i, z)| (z.name.clone(), i))
            .collect();
        for (b, _) in &zones_d.list {
            let mut ceiling = Once::new();
            for Prop {
                value: ast::ZoneProp::Ceiling(c),
                span,
            } in &b.props
            {
                ceiling.set(c.text.clone(), *span, "ceiling", &mut self.problems);
            }
            let ci = match b.props.first() {
                Some(Prop {
                    value: ast::ZoneProp::Ceiling(c),
                    ..
                }) => resolve_class(self, c),
                None => {
                    self.problems.push(Problem::MissingProperty {
                        kind: NameKind::Zone,
                        name: b.name.text.clone(),
                        property: "ceiling",
                        example: "ceiling editorContent",
                        span: b.name.span,
                    });
                    None
                }
            };
            zone_index.insert(b.name.text.clone(), zones.len());
            zone_spans.push(b.props.first().map(|p| p.span).unwrap_or(b.name.span));
            zones.push(model::Zone {
                name: b.name.text.clone(),
                // An unresolved ceiling is an error already; the lowest class keeps the model closed.
                ceiling: ci.unwrap_or(0),
            });
        }
        let zone_names: Vec<String> = zones.iter().map(|z| z.name.clone()).collect();

        // ---- providers
        let provider_names: Vec<String> = providers_d.names().map(str::to_string).collect();
        let mut providers = Vec::new();
        for (b, _) in &providers_d.list {
            let mut zone = None;
            let mut fallback = Vec::new();
            let mut zone_once = Once::new();
            let mut fb_once = Once::new();
            for Prop { value, span } in &b.props {
                match value {
                    ast::ProviderProp::Zone(z) => {
                        zone_once.set(z.text.clone(), *span, "zone", &mut self.problems);
                        if zone.is_none() {
                            match zone_index.get(&z.text) {
                                Some(&zi) => zone = Some(zi),
                                None => self.unknown(
                                    NameKind::Zone,
                                    z,
                                    zone_names.iter().map(String::as_str).collect(),
                                ),
                            }
                        }
                    }
                    ast::ProviderProp::Fallback(list) => {
                        fb_once.set(
                            list.iter().map(|n| n.text.clone()).collect::<Vec<_>>(),
                            *span,
                            "fallback",
                            &mut self.problems,
                        );
                        if !fallback.is_empty() {
                            continue;
                        }
                        for n in self.dedup(list) {
                            if n.text == b.name.text {
                                self.problems.push(Problem::FallbackToSelf {
                                    provider: n.text.clone(),
                                    span: n.span,
                                });
                            }
                            match providers_d.index.get(n.text.as_str()) {
                                Some(&pi) => fallback.push(pi),
                                None => self.unknown(
                                    NameKind::Provider,
                                    n,
                                    provider_names.iter().map(String::as_str).collect(),
                                ),
                            }
                        }
                    }
                }
            }
            providers.push(model::Provider {
                name: b.name.text.clone(),
                zone,
                fallback,
            });
        }

        // ---- skills
        let mut skills = Vec::new();
        for (b, _) in &skills_d.list {
            let mut once = Once::new();
            let mut declared: Option<Vec<String>> = None;
            for Prop {
                value: ast::SkillProp::Tools(list),
                span,
            } in &b.props
            {
                once.set(
                    list.iter().map(|n| n.text.clone()).collect::<Vec<_>>(),
                    *span,
                    "tools",
                    &mut self.problems,
                );
                if declared.is_some() {
                    continue;
                }
                let mut names = Vec::new();
                for n in self.dedup(list) {
                    if !tool_index.contains_key(n.text.as_str())
                        && !self.pattern_in_list(n, "a skill's `tools`")
                    {
                        let c = tool_candidates(&tools);
                        self.unknown_tool(n, &lookalikes, c);
                    }
                    names.push(n.text.clone());
                }
                declared = Some(names);
            }
            skills.push(model::Skill {
                name: b.name.text.clone(),
                tools: declared,
            });
        }
        let skill_names: Vec<String> = skills.iter().map(|s| s.name.clone()).collect();

        // ---- configurations
        let loader_name = loader
            .get()
            .cloned()
            .unwrap_or_else(|| model::DEFAULT_SKILL_LOADER.to_string());
        if let (Some(span), false) = (loader.span(), tool_index.contains_key(loader_name.as_str()))
        {
            let c = tool_candidates(&tools);
            self.unknown(
                NameKind::Tool,
                &Name {
                    text: loader_name.clone(),
                    span,
                },
                c,
            );
        }
        let mut configurations = Vec::new();
        for (b, file) in &configs_d.list {
            let mut provider = None;
            let mut groups_sel: Option<Vec<usize>> = None;
            let mut excluded: Vec<String> = Vec::new();
            let mut excluded_names: Vec<&Name> = Vec::new();
            let mut cskills = Vec::new();
            let mut seen_prop: HashMap<&'static str, (Span, &ast::ConfigurationProp)> =
                HashMap::new();
            for Prop { value, span } in &b.props {
                let key = match value {
                    ast::ConfigurationProp::Provider(_) => "provider",
                    ast::ConfigurationProp::Groups(_) => "groups",
                    ast::ConfigurationProp::Exclude(_) => "exclude",
                    ast::ConfigurationProp::Skills(_) => "skills",
                };
                if let Some((first, first_value)) = seen_prop.get(key) {
                    self.problems.push(repeated(
                        key,
                        *span,
                        *first,
                        same_names(first_value, value),
                    ));
                    continue;
                }
                seen_prop.insert(key, (*span, value));
                match value {
                    ast::ConfigurationProp::Provider(p) => {
                        match providers_d.index.get(p.text.as_str()) {
                            Some(&pi) => provider = Some(pi),
                            None => self.unknown(
                                NameKind::Provider,
                                p,
                                provider_names.iter().map(String::as_str).collect(),
                            ),
                        }
                    }
                    ast::ConfigurationProp::Groups(list) => {
                        if list.is_empty() {
                            self.problems.push(Problem::EmptyGroups {
                                span: *span,
                                configuration: b.name.text.clone(),
                            });
                            continue;
                        }
                        let mut sel = Vec::new();
                        for n in self.dedup(list) {
                            match group_index.get(n.text.as_str()) {
                                Some(&gi) => sel.push(gi),
                                None => self.unknown(NameKind::Group, n, group_candidates()),
                            }
                        }
                        groups_sel = Some(sel);
                    }
                    ast::ConfigurationProp::Exclude(list) => {
                        for n in self.dedup(list) {
                            excluded.push(n.text.clone());
                            excluded_names.push(n);
                        }
                    }
                    ast::ConfigurationProp::Skills(list) => {
                        for n in self.dedup(list) {
                            match skills_d.index.get(n.text.as_str()) {
                                Some(&si) => cskills.push(si),
                                None => self.unknown(
                                    NameKind::Skill,
                                    n,
                                    skill_names.iter().map(String::as_str).collect(),
                                ),
                            }
                        }
                    }
                }
            }
            for n in excluded_names {
                match tool_index.get(n.text.as_str()) {
                    None if self.pattern_in_list(n, "`exclude`")
                        || self.lookalike(n, &lookalikes) => {}
                    None => {
                        match did_you_mean(&n.text, registry_names.iter().map(String::as_str)) {
                            Some(s) => self.problems.push(Problem::ExclusionTypo {
                                name: n.text.clone(),
                                span: n.span,
                                configuration: b.name.text.clone(),
                                suggestion: s,
                            }),
                            None => self.problems.push(Problem::StaleExclusion {
                                name: n.text.clone(),
                                span: n.span,
                                configuration: b.name.text.clone(),
                            }),
                        }
                    }
                    Some(&ti) => {
                        let g = tools[ti].group;
                        let outside = groups_sel.as_ref().is_some_and(|sel| !sel.contains(&g));
                        if outside && n.text != loader_name {
                            self.problems.push(Problem::ExclusionOutsideGroups {
                                name: n.text.clone(),
                                span: n.span,
                                configuration: b.name.text.clone(),
                                group: groups[g].name.clone(),
                            });
                        }
                    }
                }
            }
            configurations.push(model::Configuration {
                name: b.name.text.clone(),
                file: self.sources.get(*file).name.clone(),
                provider,
                groups: groups_sel,
                excluded,
                skills: cskills,
            });
        }

        // ---- profiles and consumers
        let mut profiles = Vec::new();
        for (b, file) in &profiles_d.list {
            let mut allow = Vec::new();
            let mut first: Option<(Span, &Vec<ast::Selector>)> = None;
            for Prop {
                value: ast::ProfileProp::Allow(list),
                span,
            } in &b.props
            {
                if let Some((first_span, first_list)) = first {
                    let same = strip(first_list) == strip(list);
                    self.problems
                        .push(repeated("allow", *span, first_span, same));
                    continue;
                }
                first = Some((*span, list));
                for sel in list {
                    match sel {
                        ast::Selector::Tool(n) => {
                            if tool_index.contains_key(n.text.as_str()) {
                                allow.push(model::Selector::Tool(n.text.clone()));
                            } else {
                                let c = tool_candidates(&tools);
                                self.unknown_tool(n, &lookalikes, c);
                            }
                        }
                        ast::Selector::Group(n) => match group_index.get(n.text.as_str()) {
                            Some(&gi) => allow.push(model::Selector::Group(gi)),
                            None => self.unknown(NameKind::Group, n, group_candidates()),
                        },
                        // Exactly the tools of one server: remote tools are in
                        // group `mcp_<server>` (TG4002) and no builtin may be
                        // (TG4005), so the server is that group. A server with
                        // no registered tool yet still gets its group, so its
                        // live tools match.
                        ast::Selector::Server(n) => {
                            let group = format!("mcp_{}", n.text);
                            let gi = match group_index.get(group.as_str()) {
                                Some(&gi) => gi,
                                None => {
                                    self.problems.push(Problem::PatternMatchesNothing {
                                        pattern: format!("server {}", n.text),
                                        span: n.span,
                                    });
                                    groups.push(model::Group {
                                        name: group.clone(),
                                        state: None,
                                        default_class: None,
                                    });
                                    group_index.insert(group, groups.len() - 1);
                                    groups.len() - 1
                                }
                            };
                            allow.push(model::Selector::Group(gi));
                        }
                        ast::Selector::Prefix(n) => {
                            let matched: Vec<&model::Tool> = tools
                                .iter()
                                .filter(|t| t.name.starts_with(&n.text))
                                .collect();
                            if matched.is_empty() {
                                match lookalikes.prefix_of(&n.text) {
                                    Some(registered) => self.problems.push(Problem::Lookalike {
                                        name: format!("{}*", n.text),
                                        span: n.span,
                                        registered: registered.to_string(),
                                        detail: crate::names::describe(&n.text),
                                    }),
                                    None => self.problems.push(Problem::PatternMatchesNothing {
                                        pattern: format!("{}*", n.text),
                                        span: n.span,
                                    }),
                                }
                            }
                            if let Some(p) = crosses_servers(&n.text, &matched, n.span) {
                                self.problems.push(p);
                            }
                            allow.push(model::Selector::Prefix(n.text.clone()));
                        }
                    }
                }
            }
            profiles.push(model::Profile {
                name: b.name.text.clone(),
                file: self.sources.get(*file).name.clone(),
                allow,
            });
        }
        let profile_names: Vec<String> = profiles.iter().map(|p| p.name.clone()).collect();
        let mut consumers = Vec::new();
        for (b, _) in &consumers_d.list {
            let mut once = Once::new();
            let mut profile = None;
            for Prop {
                value: ast::ConsumerProp::Profile(n),
                span,
            } in &b.props
            {
                once.set(n.text.clone(), *span, "profile", &mut self.problems);
                if profile.is_some() {
                    continue;
                }
                match profiles_d.index.get(n.text.as_str()) {
                    Some(&pi) => profile = Some(pi),
                    None => self.unknown(
                        NameKind::Profile,
                        n,
                        profile_names.iter().map(String::as_str).collect(),
                    ),
                }
            }
            match profile {
                Some(profile) => consumers.push(model::Consumer {
                    name: b.name.text.clone(),
                    profile,
                }),
                None if b.props.is_empty() => self.problems.push(Problem::MissingProperty {
                    kind: NameKind::Consumer,
                    name: b.name.text.clone(),
                    property: "profile",
                    example: "profile support-readonly",
                    span: b.name.span,
                }),
                None => {}
            }
        }

        // ---- gateways
        let mut gateways = Vec::new();
        for (b, _) in &gateways_d.list {
            let mut rules = Vec::new();
            let mut seen: HashMap<&str, Span> = HashMap::new();
            for Prop { value: r, .. } in &b.props {
                if let Some(first) = seen.get(r.name.text.as_str()) {
                    self.problems.push(Problem::Duplicate {
                        kind: NameKind::Rule,
                        name: r.name.text.clone(),
                        span: r.name.span,
                        first: *first,
                    });
                    continue;
                }
                seen.insert(&r.name.text, r.name.span);
                let mut rule = model::GatewayRule {
                    name: r.name.text.clone(),
                    http_status: None,
                    error_code: None,
                    message: None,
                    data: Vec::new(),
                    result_text: None,
                    outcome: match r.outcome {
                        ast::Outcome::NotInProfile => RuleOutcome::NotInProfile,
                        ast::Outcome::NotRegistered => RuleOutcome::NotRegistered,
                        ast::Outcome::ContentPolicy => RuleOutcome::ContentPolicy,
                        ast::Outcome::Policy => RuleOutcome::Policy,
                        ast::Outcome::ToolFailure => RuleOutcome::ToolFailure,
                    },
                };
                let mut once: HashMap<&'static str, (Span, &ast::Matcher)> = HashMap::new();
                for (m, span) in &r.matchers {
                    let key = match m {
                        ast::Matcher::HttpStatus(_) => "http-status",
                        ast::Matcher::ErrorCode(_) => "error-code",
                        ast::Matcher::Message(_) => "message",
                        ast::Matcher::Data(_, _) => "data",
                        ast::Matcher::ResultText(_) => "result-text",
                    };
                    if key != "data" {
                        if let Some((first, first_m)) = once.get(key) {
                            self.problems
                                .push(repeated(key, *span, *first, *first_m == m));
                            continue;
                        }
                        once.insert(key, (*span, m));
                    }
                    match m {
                        ast::Matcher::HttpStatus(n) => rule.http_status = Some(*n),
                        ast::Matcher::ErrorCode(n) => rule.error_code = Some(*n),
                        ast::Matcher::Message(s) => rule.message = Some(s.clone()),
                        ast::Matcher::Data(f, s) => rule.data.push((f.text.clone(), s.clone())),
                        ast::Matcher::ResultText(s) => rule.result_text = Some(s.clone()),
                    }
                }
                rules.push(rule);
            }
            gateways.push(model::Gateway {
                name: b.name.text.clone(),
                rules,
            });
        }

        let model = Model {
            classes,
            zones,
            groups,
            tools,
            providers,
            skills,
            configurations,
            profiles,
            consumers,
            gateways,
            settings: model::Settings {
                enforcement: enforcement
                    .get()
                    .copied()
                    .unwrap_or(ast::Enforcement::Enforce),
                remote_visibility: visibility.get().copied().unwrap_or(ast::Audience::Admins),
                unprofiled: unprofiled
                    .get()
                    .copied()
                    .unwrap_or(ast::Unprofiled::Unrestricted),
                skill_loader: loader_name,
            },
            provenance,
        };

        // ---- ceilings that refuse nothing (the top class refuses nothing by design)
        let max_class = (0..model.tools.len()).map(|t| model.tool_class(t)).max();
        for (i, z) in model.zones.iter().enumerate() {
            let Some(&span) = zone_spans.get(i) else {
                continue;
            };
            if z.ceiling < model.top_class() && max_class.is_some_and(|m| m <= z.ceiling) {
                self.problems.push(Problem::CeilingUnreached {
                    zone: z.name.clone(),
                    span,
                    ceiling: model.classes[z.ceiling].clone(),
                });
            }
        }
        model
    }
}

/// A property given twice: a warning when both say the same, else an error.
/// TG3007: a prefix `mcp_<server>_` that also matches tools of another server
/// (`mcp_crm_*` admits server `crm_admin`'s `mcp_crm_admin_wipe_all`).
fn crosses_servers(prefix: &str, matched: &[&model::Tool], span: Span) -> Option<Problem> {
    // The prefix names a server that has tools here (a longer prefix inside
    // one server, `mcp_crm_customer-360_*`, names none and is left alone).
    let meant = matched
        .iter()
        .filter_map(|t| t.server.as_deref())
        .find(|s| {
            prefix
                .strip_prefix("mcp_")
                .and_then(|p| p.strip_suffix('_'))
                == Some(*s)
        })?;
    let other = matched
        .iter()
        .find(|t| t.server.as_deref().is_some_and(|s| s != meant))?;
    Some(Problem::PrefixCrossesServers {
        pattern: format!("{prefix}*"),
        span,
        server: meant.to_string(),
        other_server: other.server.clone().unwrap_or_default(),
        example: other.name.clone(),
    })
}

fn repeated(property: &'static str, span: Span, first: Span, same: bool) -> Problem {
    if same {
        Problem::Repeated {
            property,
            span,
            first,
        }
    } else {
        Problem::Contradiction {
            subject: format!("`{property}`"),
            span,
            other: first,
        }
    }
}

fn same_names(a: &ast::ConfigurationProp, b: &ast::ConfigurationProp) -> bool {
    let texts = |p: &ast::ConfigurationProp| -> Vec<String> {
        match p {
            ast::ConfigurationProp::Provider(n) => vec![n.text.clone()],
            ast::ConfigurationProp::Groups(l)
            | ast::ConfigurationProp::Exclude(l)
            | ast::ConfigurationProp::Skills(l) => l.iter().map(|n| n.text.clone()).collect(),
        }
    };
    texts(a) == texts(b)
}

/// Selectors without spans, for comparing two `allow` lists.
fn strip(list: &[ast::Selector]) -> Vec<(u8, String)> {
    list.iter()
        .map(|s| match s {
            ast::Selector::Tool(n) => (0, n.text.clone()),
            ast::Selector::Group(n) => (1, n.text.clone()),
            ast::Selector::Prefix(n) => (2, n.text.clone()),
            ast::Selector::Server(n) => (3, n.text.clone()),
        })
        .collect()
}
