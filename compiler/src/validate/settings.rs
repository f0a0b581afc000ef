//! Pass 1: every definition by kind, the class ladder and the file-level
//! settings (`enforcement`, `remote-tools visible-to`,
//! `consumers-without-profile`, `unknown-consumers`, `skill-loader`).

use super::{Defs, Once, Parsed, Scope, Validator};
use crate::diagnostics::{NameKind, Problem, RefKind};
use crate::model;
use crate::syntax::ast::{self, Name, Statement};

/// Every block of every policy file, by kind, in order of definition.
pub(super) struct Defined<'p> {
    pub groups: Defs<'p, ast::GroupProp>,
    pub tools: Defs<'p, ast::ToolProp>,
    pub zones: Defs<'p, ast::ZoneProp>,
    pub providers: Defs<'p, ast::ProviderProp>,
    pub skills: Defs<'p, ast::SkillProp>,
    pub configurations: Defs<'p, ast::ConfigurationProp>,
    pub profiles: Defs<'p, ast::ProfileProp>,
    pub consumers: Defs<'p, ast::ConsumerProp>,
    pub gateways: Defs<'p, ast::GatewayRule>,
}

/// The file-level statements, each of which may be given once.
pub(super) struct Settings<'p> {
    pub ladder: Option<&'p ast::ClassesStmt>,
    pub enforcement: Once<ast::Enforcement>,
    pub visibility: Once<ast::Audience>,
    pub unprofiled: Once<ast::Unprofiled>,
    pub unknown_consumers: Once<ast::UnknownConsumers>,
    pub loader: Once<String>,
}

impl Settings<'_> {
    /// The model's settings: what was given, else the defaults.
    pub fn model(&self, skill_loader: String) -> model::Settings {
        model::Settings {
            enforcement: self
                .enforcement
                .get()
                .copied()
                .unwrap_or(ast::Enforcement::Enforce),
            remote_visibility: self
                .visibility
                .get()
                .copied()
                .unwrap_or(ast::Audience::Admins),
            unprofiled: self
                .unprofiled
                .get()
                .copied()
                .unwrap_or(ast::Unprofiled::Unrestricted),
            // No `unknown-consumers` line: a name the policy does not bind
            // is refused (fail closed).
            unknown_consumers: self
                .unknown_consumers
                .get()
                .copied()
                .unwrap_or(ast::UnknownConsumers::Refused),
            skill_loader,
        }
    }
}

impl<'a> Validator<'a> {
    /// Pass 1: collect definitions (a name defined twice is TG1002) and settings.
    pub(super) fn collect<'p>(&mut self, policies: &[Parsed<'p>]) -> (Defined<'p>, Settings<'p>) {
        let mut d = Defined {
            groups: Defs::new(NameKind::Group),
            tools: Defs::new(NameKind::Tool),
            zones: Defs::new(NameKind::Zone),
            providers: Defs::new(NameKind::Provider),
            skills: Defs::new(NameKind::Skill),
            configurations: Defs::new(NameKind::Configuration),
            profiles: Defs::new(NameKind::Profile),
            consumers: Defs::new(NameKind::Consumer),
            gateways: Defs::new(NameKind::Gateway),
        };
        let mut s = Settings {
            ladder: None,
            enforcement: Once::new(),
            visibility: Once::new(),
            unprofiled: Once::new(),
            unknown_consumers: Once::new(),
            loader: Once::new(),
        };
        let problems = &mut self.problems;
        for p in policies {
            for st in &p.ast.statements {
                match st {
                    Statement::Classes(c) => match s.ladder {
                        None => s.ladder = Some(c),
                        Some(_) => problems.push(Problem::LadderMisuse {
                            span: c.span,
                            message: "the `classes` ladder is given twice".into(),
                        }),
                    },
                    Statement::Enforcement(e) => {
                        s.enforcement
                            .set(e.value, e.value_span, "enforcement", problems);
                    }
                    Statement::RemoteVisibility(e) => {
                        s.visibility.set(
                            e.value,
                            e.value_span,
                            "remote-tools visible-to",
                            problems,
                        );
                    }
                    Statement::Unprofiled(e) => {
                        let what = "consumers-without-profile";
                        s.unprofiled.set(e.value, e.value_span, what, problems);
                    }
                    Statement::UnknownConsumers(e) => {
                        let what = "unknown-consumers";
                        s.unknown_consumers
                            .set(e.value, e.value_span, what, problems);
                    }
                    Statement::SkillLoader(e) => {
                        let name = e.value.text.clone();
                        s.loader.set(name, e.value_span, "skill-loader", problems);
                    }
                    Statement::Group(b) => d.groups.add(b, p.file, problems),
                    Statement::Tool(b) => d.tools.add(b, p.file, problems),
                    Statement::Zone(b) => d.zones.add(b, p.file, problems),
                    Statement::Provider(b) => d.providers.add(b, p.file, problems),
                    Statement::Skill(b) => d.skills.add(b, p.file, problems),
                    Statement::Configuration(b) => d.configurations.add(b, p.file, problems),
                    Statement::Profile(b) => d.profiles.add(b, p.file, problems),
                    Statement::Consumer(b) => d.consumers.add(b, p.file, problems),
                    Statement::Gateway(b) => d.gateways.add(b, p.file, problems),
                }
            }
        }
        (d, s)
    }

    /// The class ladder: the policy's (without repeats, within the limit),
    /// else the default one.
    pub(super) fn classes(&mut self, ladder: Option<&ast::ClassesStmt>) -> Vec<String> {
        let default = || {
            model::DEFAULT_CLASSES
                .iter()
                .map(|s| s.to_string())
                .collect()
        };
        let Some(c) = ladder else {
            return default();
        };
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
        if ladder.is_empty() {
            return default();
        }
        ladder.into_iter().map(|n| n.text.clone()).collect()
    }

    /// The skill loader's name; TG1001 when one is given that the registry
    /// does not hold.
    pub(super) fn skill_loader(&mut self, scope: &Scope<'_>, loader: &Once<String>) -> String {
        let name = loader
            .get()
            .cloned()
            .unwrap_or_else(|| model::DEFAULT_SKILL_LOADER.to_string());
        if let (Some(span), false) = (loader.span(), scope.tool_index.contains_key(name.as_str())) {
            let text = name.clone();
            let suggestion = scope.suggest_tool(&name);
            self.unknown_suggesting(RefKind::Tool, &Name { text, span }, suggestion);
        }
        name
    }
}
