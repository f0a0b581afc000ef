//! Profiles (what a consumer may be offered) and consumers (a profile each).

use super::{Defs, Once, Scope, Validator};
use crate::diagnostics::{NameKind, Problem, RefKind};
use crate::model;
use crate::syntax::ast::{self, Prop};

impl<'a> Validator<'a> {
    /// The profiles, in order of definition.
    pub(super) fn profiles(
        &mut self,
        scope: &mut Scope<'a>,
        defs: &Defs<'_, ast::ProfileProp>,
    ) -> Vec<model::Profile> {
        let mut profiles = Vec::new();
        for (b, file) in &defs.list {
            let (mut allow, mut approval) = (Vec::new(), Vec::new());
            let (mut once, mut once_approval) = (Once::new(), Once::new());
            for Prop { value, span } in &b.props {
                let (list, once, property, into) = match value {
                    ast::ProfileProp::Allow(l) => (l, &mut once, "allow", &mut allow),
                    ast::ProfileProp::NeedsApproval(l) => {
                        (l, &mut once_approval, "needs-approval", &mut approval)
                    }
                };
                if !once.set(selectors(list), *span, property, &mut self.problems) {
                    continue;
                }
                into.extend(list.iter().filter_map(|sel| self.selector(scope, sel)));
            }
            profiles.push(model::Profile {
                name: b.name.text.clone(),
                file: self.sources.get(*file).table_name.clone(),
                allow,
                approval,
            });
        }
        profiles
    }

    /// One entry of an `allow` list, resolved; `None` when it names nothing
    /// (reported).
    pub(super) fn selector(
        &mut self,
        scope: &mut Scope<'a>,
        sel: &ast::Selector,
    ) -> Option<model::Selector> {
        match sel {
            ast::Selector::Tool(n) => {
                if scope.tool_index.contains_key(n.text.as_str()) {
                    return Some(model::Selector::Tool(n.text.clone()));
                }
                self.unknown_tool(scope, n);
                None
            }
            ast::Selector::Group(n) => match scope.group_index.get(n.text.as_str()) {
                Some(&gi) => Some(model::Selector::Group(gi)),
                None => {
                    self.unknown(RefKind::Group, n, scope.registry_group_names());
                    None
                }
            },
            // Exactly the tools of one server: remote tools are in group
            // `mcp_<server>` (TG4002) and no builtin may be (TG4005), so the
            // server is that group. A server with no registered tool yet
            // still gets its group, so its live tools match.
            ast::Selector::Server(n) => {
                let group = format!("mcp_{}", n.text);
                if let Some(&gi) = scope.group_index.get(group.as_str()) {
                    return Some(model::Selector::Group(gi));
                }
                self.problems.push(Problem::PatternMatchesNothing {
                    pattern: format!("server {}", n.text),
                    span: n.span,
                });
                scope.groups.push(model::Group {
                    name: group.clone(),
                    state: None,
                    default_class: None,
                });
                scope.group_index.insert(group, scope.groups.len() - 1);
                Some(model::Selector::Group(scope.groups.len() - 1))
            }
            ast::Selector::Prefix(n) => {
                let found = *scope
                    .prefixes
                    .entry(n.text.clone())
                    .or_insert_with(|| prefix_match(&scope.tools, &n.text));
                if !found.any {
                    self.problems
                        .push(match scope.lookalikes.get().0.prefix_of(&n.text) {
                            Some(registered) => Problem::Lookalike {
                                name: format!("{}*", n.text),
                                span: n.span,
                                registered: registered.to_string(),
                                detail: crate::validate::confusables::describe(&n.text),
                            },
                            None => Problem::PatternMatchesNothing {
                                pattern: format!("{}*", n.text),
                                span: n.span,
                            },
                        });
                }
                if let Some(other) = found.crossing {
                    let other = &scope.tools[other];
                    let server = n.text["mcp_".len()..n.text.len() - 1].to_string();
                    self.problems.push(Problem::PrefixCrossesServers {
                        pattern: format!("{}*", n.text),
                        span: n.span,
                        server,
                        other_server: other.server.clone().unwrap_or_default(),
                        example: other.name.clone(),
                    });
                }
                Some(model::Selector::Prefix(n.text.clone()))
            }
        }
    }

    /// The consumers with a profile, in order of definition.
    pub(super) fn consumers(
        &mut self,
        defs: &Defs<'_, ast::ConsumerProp>,
        profiles: &Defs<'_, ast::ProfileProp>,
    ) -> Vec<model::Consumer> {
        let mut consumers = Vec::new();
        for (b, _) in &defs.list {
            let mut once = Once::new();
            let mut profile = None;
            for Prop {
                value: ast::ConsumerProp::Profile(n),
                span,
            } in &b.props
            {
                once.set(n.text.clone(), *span, "profile", &mut self.problems);
                // A repeat is resolved too while no profile is known (the
                // first named none).
                if profile.is_some() {
                    continue;
                }
                match profiles.index.get(n.text.as_str()) {
                    Some(&pi) => profile = Some(pi),
                    None => self.unknown(RefKind::Profile, n, profiles.names()),
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
        consumers
    }
}

/// An `allow` list as compared with a repeat of it: the selectors without spans.
/// A selector list as words, to tell a repeated property's lists apart.
pub(super) fn selector_texts(list: &[ast::Selector]) -> Vec<String> {
    selectors(list)
        .into_iter()
        .map(|(kind, text)| format!("{kind}:{text}"))
        .collect()
}

fn selectors(list: &[ast::Selector]) -> Vec<(u8, String)> {
    list.iter()
        .map(|s| match s {
            ast::Selector::Tool(n) => (0, n.text.clone()),
            ast::Selector::Group(n) => (1, n.text.clone()),
            ast::Selector::Prefix(n) => (2, n.text.clone()),
            ast::Selector::Server(n) => (3, n.text.clone()),
        })
        .collect()
}

/// What a prefix selector matches, found in one pass over the tools (a
/// profile list is resolved per selector, and at a million tools collecting
/// the matches of each one cost more than the rest of validation).
#[derive(Clone, Copy)]
pub(super) struct PrefixMatch {
    /// Whether any tool's name starts with the prefix.
    any: bool,
    /// TG3007: the prefix is `mcp_<server>_` for a server with tools it
    /// matches, and this is the first tool (registry order) of another
    /// server it matches too.
    crossing: Option<usize>,
}

/// TG3007 is a prefix `mcp_<server>_` that also matches tools of another
/// server (`mcp_crm_*` admits server `crm_admin`'s `mcp_crm_admin_wipe_all`).
/// A longer prefix inside one server (`mcp_crm_customer-360_*`) names no
/// server with tools here and is left alone.
fn prefix_match(tools: &[model::Tool], prefix: &str) -> PrefixMatch {
    let named = prefix
        .strip_prefix("mcp_")
        .and_then(|p| p.strip_suffix('_'));
    let mut any = false;
    let mut meant = false;
    let mut other = None;
    for (i, t) in tools.iter().enumerate() {
        if !t.name.starts_with(prefix) {
            continue;
        }
        any = true;
        match t.server.as_deref() {
            Some(s) if Some(s) == named => meant = true,
            Some(_) => other = other.or(Some(i)),
            None => {}
        }
    }
    PrefixMatch {
        any,
        crossing: other.filter(|_| meant),
    }
}
