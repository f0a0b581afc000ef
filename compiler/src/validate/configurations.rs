//! Configurations: a provider, the groups offered, the tools excluded and
//! the skills, each given at most once.

use std::collections::HashMap;

use super::settings::Defined;
use super::{texts, Once, Scope, Validator};
use crate::diagnostics::{Problem, RefKind};
use crate::model;
use crate::source::FileId;
use crate::syntax::ast::{self, Block, Name, Prop};

impl<'a> Validator<'a> {
    /// The configurations, in order of definition.
    pub(super) fn configurations(
        &mut self,
        scope: &Scope<'a>,
        defined: &Defined<'_>,
        skill_loader: &str,
    ) -> Vec<model::Configuration> {
        defined
            .configurations
            .list
            .iter()
            .map(|(b, file)| self.configuration(scope, defined, b, *file, skill_loader))
            .collect()
    }

    fn configuration(
        &mut self,
        scope: &Scope<'a>,
        defined: &Defined<'_>,
        b: &Block<ast::ConfigurationProp>,
        file: FileId,
        skill_loader: &str,
    ) -> model::Configuration {
        let mut provider = None;
        let mut groups: Option<Vec<usize>> = None;
        let mut excluded: Vec<&Name> = Vec::new();
        let mut skills = Vec::new();
        let mut once: HashMap<&'static str, Once<Vec<String>>> = HashMap::new();
        for Prop { value, span } in &b.props {
            let (property, key) = match value {
                ast::ConfigurationProp::Provider(p) => ("provider", texts(std::slice::from_ref(p))),
                ast::ConfigurationProp::Groups(l) => ("groups", texts(l)),
                ast::ConfigurationProp::Exclude(l) => ("exclude", texts(l)),
                ast::ConfigurationProp::Skills(l) => ("skills", texts(l)),
                ast::ConfigurationProp::NeedsApproval(l) => {
                    ("needs-approval", super::profiles::selector_texts(l))
                }
            };
            let first = once.entry(property).or_default();
            if !first.set(key, *span, property, &mut self.problems) {
                continue;
            }
            match value {
                ast::ConfigurationProp::Provider(p) => {
                    match defined.providers.index.get(p.text.as_str()) {
                        Some(&pi) => provider = Some(pi),
                        None => self.unknown(RefKind::Provider, p, defined.providers.names()),
                    }
                }
                ast::ConfigurationProp::Groups(list) if list.is_empty() => {
                    self.problems.push(Problem::EmptyGroups {
                        span: *span,
                        configuration: b.name.text.clone(),
                    });
                }
                ast::ConfigurationProp::Groups(list) => {
                    let mut sel = Vec::new();
                    for n in self.dedup(list) {
                        match scope.group_index.get(n.text.as_str()) {
                            Some(&gi) => sel.push(gi),
                            None => self.unknown(RefKind::Group, n, scope.registry_group_names()),
                        }
                    }
                    groups = Some(sel);
                }
                ast::ConfigurationProp::Exclude(list) => excluded.extend(self.dedup(list)),
                // Resolved by `approvals`, which may add a server's group.
                ast::ConfigurationProp::NeedsApproval(_) => {}
                ast::ConfigurationProp::Skills(list) => {
                    for n in self.dedup(list) {
                        match defined.skills.index.get(n.text.as_str()) {
                            Some(&si) => skills.push(si),
                            None => {
                                let candidates = scope.skills.iter().map(|s| s.name.as_str());
                                self.unknown(RefKind::Skill, n, candidates);
                            }
                        }
                    }
                }
            }
        }
        self.exclusions(
            scope,
            &b.name.text,
            groups.as_deref(),
            &excluded,
            skill_loader,
        );
        model::Configuration {
            name: b.name.text.clone(),
            file: self.sources.get(file).table_name.clone(),
            provider,
            groups,
            excluded: excluded.iter().map(|n| n.text.clone()).collect(),
            skills,
            approval: Vec::new(),
        }
    }

    /// Each configuration's `needs-approval` list (its first), resolved as
    /// a profile's `allow` is.
    pub(super) fn approvals(
        &mut self,
        scope: &mut Scope<'a>,
        defined: &Defined<'_>,
        configurations: &mut [model::Configuration],
    ) {
        for (c, (b, _)) in configurations.iter_mut().zip(&defined.configurations.list) {
            let first = b.props.iter().find_map(|p| match &p.value {
                ast::ConfigurationProp::NeedsApproval(l) => Some(l),
                _ => None,
            });
            if let Some(list) = first {
                c.approval = list
                    .iter()
                    .filter_map(|s| self.selector(scope, s))
                    .collect();
            }
        }
    }

    /// The `exclude` list of `configuration`: a name the registry does not
    /// hold is a lookalike (TG1011), a typo (TG1010, with the likely tool) or
    /// stale (TG1009); a tool outside the configuration's groups is excluded
    /// already (TG3001), unless it is the skill loader.
    fn exclusions(
        &mut self,
        scope: &Scope<'a>,
        configuration: &str,
        groups: Option<&[usize]>,
        excluded: &[&Name],
        skill_loader: &str,
    ) {
        for n in excluded {
            match scope.tool_index.get(n.text.as_str()) {
                None if self.pattern_in_list(n, "`exclude`") || self.lookalike(scope, n) => {}
                None => match scope.suggest_tool(&n.text) {
                    Some(s) => self.problems.push(Problem::ExclusionTypo {
                        name: n.text.clone(),
                        span: n.span,
                        configuration: configuration.to_string(),
                        suggestion: s,
                    }),
                    None => self.problems.push(Problem::StaleExclusion {
                        name: n.text.clone(),
                        span: n.span,
                        configuration: configuration.to_string(),
                    }),
                },
                Some(&ti) => {
                    let g = scope.tools[ti].group;
                    let outside = groups.is_some_and(|sel| !sel.contains(&g));
                    if outside && n.text != skill_loader {
                        self.problems.push(Problem::ExclusionOutsideGroups {
                            name: n.text.clone(),
                            span: n.span,
                            configuration: configuration.to_string(),
                            group: scope.groups[g].name.clone(),
                        });
                    }
                }
            }
        }
    }
}
