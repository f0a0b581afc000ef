//! Syntax trees + registry -> [`Model`], with every finding as a [`Problem`].
//! Resolution happens in passes: definitions first (so order across files
//! does not matter), then references, then "no effect" checks on the result.
//!
//! One stage per file, run in this order by `Validator::run`; each fills
//! the `Scope` that the later ones read:
//!
//! | stage | file | fills |
//! | --- | --- | --- |
//! | definitions, the class ladder, the settings (the skill loader after skills) | `settings.rs` | `Defined`, `Settings`, `Scope::classes` |
//! | groups and tools | `tools.rs` | `Scope::groups`, `Scope::tools` |
//! | zones and providers (and, on the model, ceilings that refuse nothing) | `zones.rs` | `Scope::zones`, `Scope::providers` |
//! | skills | `skills.rs` | `Scope::skills` |
//! | configurations | `configurations.rs` | — |
//! | profiles and consumers | `profiles.rs` | `Scope::groups` (a `server` selector's group) |
//! | gateways | `gateways.rs` | — |
//!
//! A property that may be given once is recorded with `Once::set`, the one
//! place a repeat is reported (TG2003 when it says the same, TG2002 when not).

mod configurations;
pub mod confusables;
mod gateways;
mod profiles;
mod settings;
mod skills;
pub mod suggest;
mod tools;
mod zones;

use std::collections::HashMap;

use crate::diagnostics::{NameKind, Problem, RefKind, Severity};
use crate::model::{self, Model};
use crate::registry::Registry;
use crate::source::{FileId, SourceMap, Span};
use crate::syntax::ast::{self, Block, Name};
use crate::validate::confusables::Lookalikes;
use toolgate_runtime::names::did_you_mean;

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
        problems: Vec::new(),
    };
    for p in policies {
        v.problems
            .extend(crate::validate::confusables::invisible_in_policy(
                p.file,
                &sources.get(p.file).text,
            ));
    }
    // One skeleton index of the registry's names serves both its twins
    // (TG4004) and the policies' lookalikes (TG1011). It is a pass over
    // every name, independent of the policies: built on a second thread
    // while the stages run, and waited for when a stage first asks it.
    let (model, twins) = std::thread::scope(|threads| {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        threads.spawn(move || {
            // The receiver is gone only once validation has ended.
            let _ = tx.send(Lookalikes::new(
                registry.tools.iter().map(|t| t.name.as_str()),
            ));
        });
        v.run(policies, provenance, Pending::new(rx))
    });
    let registry_problems = crate::validate::confusables::registry_problems(registry, &twins);
    v.problems.splice(0..0, registry_problems);
    // An error that a suppression may acknowledge keeps the model: whether it
    // stays an error is decided with the project's suppressions
    // (`project::Project::check`).
    let ok = !v
        .problems
        .iter()
        .any(|p| p.severity() == Severity::Error && !Problem::acknowledgeable_code(p.code()));
    v.problems.sort_by_key(|p| p.span());
    (ok.then_some(model), v.problems)
}

/// A value another thread is making, received the first time it is asked.
struct Pending<T> {
    rx: std::sync::mpsc::Receiver<T>,
    value: std::cell::OnceCell<T>,
}

impl<T> Pending<T> {
    fn new(rx: std::sync::mpsc::Receiver<T>) -> Self {
        Pending {
            rx,
            value: std::cell::OnceCell::new(),
        }
    }

    fn get(&self) -> &T {
        self.value.get_or_init(|| receive(&self.rx))
    }

    fn into_inner(self) -> T {
        let Pending { rx, value } = self;
        value.into_inner().unwrap_or_else(|| receive(&rx))
    }
}

fn receive<T>(rx: &std::sync::mpsc::Receiver<T>) -> T {
    // The sender ends only by sending, or by a panic: a bug, which the
    // thread scope carries on once this thread has unwound.
    rx.recv()
        .unwrap_or_else(|_| panic!("the thread making a validation index stopped"))
}

struct Validator<'a> {
    sources: &'a SourceMap,
    registry: &'a Registry,
    problems: Vec<Problem>,
}

/// What the stages resolve against: filled stage by stage, read by the later
/// ones, and the resolved parts of the [`Model`] at the end.
struct Scope<'a> {
    /// The class ladder, lowest first (settings).
    classes: Vec<String>,
    /// This index, the groups' and the tools' are asked once or twice per
    /// registered tool, a million times at a million tools: foldhash,
    /// seeded per process as the registry reader's index of names, not the
    /// slower SipHash.
    class_index: foldhash::HashMap<String, usize>,
    /// Every registry group in order of first appearance (tools), plus the
    /// groups of `server` selectors with no registered tool (profiles).
    groups: Vec<model::Group>,
    group_index: foldhash::HashMap<String, usize>,
    /// How many of `groups` are the registry's (the rest come from profiles).
    registry_groups: usize,
    /// The registry's tools with the policy's overrides (tools).
    tools: Vec<model::Tool>,
    tool_index: foldhash::HashMap<&'a str, usize>,
    /// The registered tool names, in registry order: the candidates of every
    /// "did you mean" for a tool name.
    tool_names: Vec<&'a str>,
    /// The index over `tool_names` answering "did you mean", built the first
    /// time a tool name is unknown (a clean policy never pays for it).
    suggest: std::cell::OnceCell<crate::validate::suggest::SuggestIndex>,
    /// Registered names by confusable skeleton (TG1011), and the registry's
    /// twins (TG4004).
    lookalikes: Pending<(Lookalikes<'a>, Vec<(usize, usize)>)>,
    /// The zones and, per `zone` block, the span its ceiling is reported at (zones).
    zones: Vec<model::Zone>,
    zone_index: HashMap<String, usize>,
    zone_spans: Vec<Span>,
    /// Providers and skills, in order of definition (zones, skills).
    providers: Vec<model::Provider>,
    skills: Vec<model::Skill>,
    /// What each prefix selector matches, by its text (profiles): a profile
    /// list repeats its prefixes, and each is a pass over every tool.
    prefixes: HashMap<String, profiles::PrefixMatch>,
}

impl<'a> Scope<'a> {
    fn new(
        registry: &'a Registry,
        classes: Vec<String>,
        lookalikes: Pending<(Lookalikes<'a>, Vec<(usize, usize)>)>,
    ) -> Self {
        let tool_names: Vec<&'a str> = registry.tools.iter().map(|t| t.name.as_str()).collect();
        Scope {
            class_index: classes
                .iter()
                .enumerate()
                .map(|(i, c)| (c.clone(), i))
                .collect(),
            classes,
            groups: Vec::new(),
            group_index: foldhash::HashMap::default(),
            registry_groups: 0,
            tools: Vec::with_capacity(registry.tools.len()),
            tool_index: foldhash::HashMap::with_capacity_and_hasher(
                registry.tools.len(),
                Default::default(),
            ),
            tool_names,
            suggest: std::cell::OnceCell::new(),
            lookalikes,
            zones: Vec::new(),
            zone_index: HashMap::new(),
            zone_spans: Vec::new(),
            providers: Vec::new(),
            skills: Vec::new(),
            prefixes: HashMap::new(),
        }
    }

    /// The registry's group names: the candidates of every "did you mean"
    /// for a group name.
    fn registry_group_names(&self) -> impl Iterator<Item = &str> {
        self.groups[..self.registry_groups]
            .iter()
            .map(|g| g.name.as_str())
    }

    /// The registered tool `name` most likely meant, if any.
    /// Exactly `did_you_mean` over the registered names, by an index: over a
    /// million tools, milliseconds for twenty unknown names, not seconds.
    fn suggest_tool(&self, name: &str) -> Option<String> {
        self.suggest
            .get_or_init(|| {
                crate::validate::suggest::SuggestIndex::new(self.tool_names.iter().copied())
            })
            .did_you_mean(name)
    }
}

/// Name -> position, for names in order.
fn index<'n>(names: impl Iterator<Item = &'n str>) -> HashMap<String, usize> {
    names.enumerate().map(|(i, n)| (n.to_string(), i)).collect()
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

/// A property that may be given once: its first value (as compared, without
/// spans) and where it was given.
struct Once<T> {
    value: Option<(T, Span)>,
}

impl<T> Default for Once<T> {
    fn default() -> Self {
        Once { value: None }
    }
}

impl<T: PartialEq> Once<T> {
    fn new() -> Self {
        Self::default()
    }

    /// Record `property` given with `value` at `span`; whether it is the
    /// first time. A later time is reported against the first: TG2003
    /// (a warning) when it says the same, TG2002 (an error) when not.
    fn set(
        &mut self,
        value: T,
        span: Span,
        property: &'static str,
        problems: &mut Vec<Problem>,
    ) -> bool {
        let Some((v, first)) = &self.value else {
            self.value = Some((value, span));
            return true;
        };
        problems.push(if *v == value {
            Problem::Repeated {
                property,
                span,
                first: *first,
            }
        } else {
            Problem::Contradiction {
                subject: format!("`{property}`"),
                span,
                other: *first,
            }
        });
        false
    }

    fn get(&self) -> Option<&T> {
        self.value.as_ref().map(|(v, _)| v)
    }

    fn span(&self) -> Option<Span> {
        self.value.as_ref().map(|(_, s)| *s)
    }
}

/// The texts of a list of names: what two occurrences of a list property
/// are compared by.
fn texts(names: &[Name]) -> Vec<String> {
    names.iter().map(|n| n.text.clone()).collect()
}

impl<'a> Validator<'a> {
    fn run(
        &mut self,
        policies: &[Parsed<'_>],
        provenance: model::Provenance,
        lookalikes: Pending<(Lookalikes<'a>, Vec<(usize, usize)>)>,
    ) -> (Model, Vec<(usize, usize)>) {
        let (defined, settings) = self.collect(policies);
        let classes = self.classes(settings.ladder);
        let mut scope = Scope::new(self.registry, classes, lookalikes);
        let (group_state_spans, tool_groups) = self.groups(&mut scope, &defined.groups);
        self.tools(&mut scope, &defined.tools, &group_state_spans, &tool_groups);
        self.zones(&mut scope, &defined.zones, settings.ladder);
        self.providers(&mut scope, &defined.providers);
        self.skills(&mut scope, &defined.skills);
        let skill_loader = self.skill_loader(&scope, &settings.loader);
        let mut configurations = self.configurations(&scope, &defined, &skill_loader);
        self.approvals(&mut scope, &defined, &mut configurations);
        let profiles = self.profiles(&mut scope, &defined.profiles);
        let consumers = self.consumers(&defined.consumers, &defined.profiles);
        let gateways = self.gateways(&defined.gateways);
        let zone_spans = std::mem::take(&mut scope.zone_spans);
        let (_, twins) = scope.lookalikes.into_inner();
        let model = Model {
            classes: scope.classes,
            zones: scope.zones,
            groups: scope.groups,
            tools: scope.tools,
            providers: scope.providers,
            skills: scope.skills,
            configurations,
            profiles,
            consumers,
            gateways,
            settings: settings.model(skill_loader),
            provenance,
        };
        self.unreached_ceilings(&model, &zone_spans);
        (model, twins)
    }

    fn unknown<'c>(
        &mut self,
        kind: RefKind,
        name: &Name,
        candidates: impl IntoIterator<Item = &'c str>,
    ) {
        let suggestion = did_you_mean(&name.text, candidates).map(str::to_string);
        self.unknown_suggesting(kind, name, suggestion);
    }

    fn unknown_suggesting(&mut self, kind: RefKind, name: &Name, suggestion: Option<String>) {
        self.problems.push(Problem::Unknown {
            kind,
            name: name.text.clone(),
            span: name.span,
            suggestion,
        });
    }

    /// A reference to a tool the registry does not hold: a lookalike of a
    /// registered name is TG1011 (an error), anything else TG1001.
    fn unknown_tool(&mut self, scope: &Scope<'_>, name: &Name) {
        if !self.lookalike(scope, name) {
            self.unknown_suggesting(RefKind::Tool, name, scope.suggest_tool(&name.text));
        }
    }

    /// TG1011 when `name` reads like a registered tool; whether it did.
    fn lookalike(&mut self, scope: &Scope<'_>, name: &Name) -> bool {
        match scope.lookalikes.get().0.of(&name.text) {
            Some(registered) => {
                self.problems.push(Problem::Lookalike {
                    name: name.text.clone(),
                    span: name.span,
                    registered: registered.to_string(),
                    detail: crate::validate::confusables::describe(&name.text),
                });
                true
            }
            None => false,
        }
    }

    /// The class `n` names, or TG1001 with the ladder as candidates.
    fn class(&mut self, scope: &Scope<'_>, n: &Name) -> Option<usize> {
        let found = scope.class_index.get(n.text.as_str()).copied();
        if found.is_none() {
            self.unknown(RefKind::Class, n, scope.classes.iter().map(String::as_str));
        }
        found
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
}
