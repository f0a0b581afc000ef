//! Groups and tools: the registry's facts, then the policy's `group` and
//! `tool` blocks over them.

use std::collections::HashMap;

use super::{Defs, Once, Scope, Validator};
use crate::diagnostics::{Problem, RefKind};
use crate::model;
use crate::registry::Origin;
use crate::source::Span;
use crate::syntax::ast::{self, Name, Prop};

impl<'a> Validator<'a> {
    /// Every registry group in order of first appearance, with the policy's
    /// `group` blocks applied. Returns where each group's state was set, and
    /// each registry tool's group (so no tool's group is looked up twice).
    pub(super) fn groups(
        &mut self,
        scope: &mut Scope<'a>,
        defs: &Defs<'_, ast::GroupProp>,
    ) -> (HashMap<usize, Span>, Vec<usize>) {
        let mut tool_groups = Vec::with_capacity(self.registry.tools.len());
        for t in &self.registry.tools {
            let gi = match scope.group_index.get(&t.group) {
                Some(&gi) => gi,
                None => {
                    scope
                        .group_index
                        .insert(t.group.clone(), scope.groups.len());
                    scope.groups.push(model::Group {
                        name: t.group.clone(),
                        state: None,
                        default_class: None,
                    });
                    scope.groups.len() - 1
                }
            };
            tool_groups.push(gi);
        }
        scope.registry_groups = scope.groups.len();
        let mut state_spans = HashMap::new();
        for (b, _) in &defs.list {
            let Some(&gi) = scope.group_index.get(b.name.text.as_str()) else {
                self.unknown(RefKind::Group, &b.name, scope.registry_group_names());
                continue;
            };
            let mut state = Once::new();
            let mut class = Once::new();
            let mut first_class = None;
            for Prop { value, span } in &b.props {
                let problems = &mut self.problems;
                match value {
                    ast::GroupProp::State(s) => {
                        state.set(*s, *span, "enabled/disabled", problems);
                    }
                    ast::GroupProp::Class(c) => {
                        if class.set(c.text.clone(), *span, "class", problems) {
                            first_class = Some(c);
                        }
                    }
                }
            }
            scope.groups[gi].state = state.get().copied();
            if let Some(s) = state.span() {
                state_spans.insert(gi, s);
            }
            if let Some(c) = first_class {
                scope.groups[gi].default_class = self.class(scope, c);
            }
        }
        (state_spans, tool_groups)
    }

    /// The registry's tools (their classes resolved), then the policy's
    /// `tool` blocks over them. `tool_groups` is each registry tool's group.
    pub(super) fn tools(
        &mut self,
        scope: &mut Scope<'a>,
        defs: &Defs<'_, ast::ToolProp>,
        group_state_spans: &HashMap<usize, Span>,
        tool_groups: &[usize],
    ) {
        for (t, &group) in self.registry.tools.iter().zip(tool_groups) {
            // Looked up as written; a name is made only for the diagnostic.
            let class = t.class.as_ref().and_then(|c| {
                scope.class_index.get(c.as_str()).copied().or_else(|| {
                    let name = Name {
                        text: c.clone(),
                        span: t.span,
                    };
                    self.class(scope, &name)
                })
            });
            scope.tool_index.insert(t.name.as_str(), scope.tools.len());
            scope.tools.push(model::Tool {
                name: t.name.clone(),
                group,
                remote: t.is_remote(),
                server: match &t.origin {
                    Origin::Remote { server } => Some(server.clone()),
                    Origin::Builtin => None,
                },
                default_enabled: t.enabled,
                state: None,
                admin_only: t.admin_only,
                class,
                description: t.description.clone(),
                input_schema: t.input_schema.clone(),
            });
        }
        for (b, _) in &defs.list {
            let Some(&ti) = scope.tool_index.get(b.name.text.as_str()) else {
                self.unknown_tool(scope, &b.name);
                continue;
            };
            let mut state = Once::new();
            let mut admin = Once::new();
            let mut class = Once::new();
            let mut first_class = None;
            for Prop { value, span } in &b.props {
                let problems = &mut self.problems;
                match value {
                    ast::ToolProp::State(s) => {
                        state.set(*s, *span, "enabled/disabled", problems);
                    }
                    ast::ToolProp::AdminOnly(a) => {
                        admin.set(*a, *span, "admin-only", problems);
                    }
                    ast::ToolProp::Class(c) => {
                        if class.set(c.text.clone(), *span, "class", problems) {
                            first_class = Some(c);
                        }
                    }
                }
            }
            scope.tools[ti].state = state.get().copied();
            if let Some(&a) = admin.get() {
                scope.tools[ti].admin_only = a;
            }
            if let Some(ci) = first_class.and_then(|c| self.class(scope, c)) {
                scope.tools[ti].class = Some(ci);
            }
            let g = scope.tools[ti].group;
            if state.get() == Some(&true) && scope.groups[g].state == Some(false) {
                self.problems.push(Problem::EnableInDisabledGroup {
                    tool: b.name.text.clone(),
                    span: state.span().unwrap_or(b.name.span),
                    group: scope.groups[g].name.clone(),
                    group_span: group_state_spans.get(&g).copied(),
                });
            }
        }
    }
}
