//! Every named thing of a project, where it is defined and where it is used:
//! read from the compiler's syntax trees and the parsed registry, with ranges
//! already in LSP positions (so a file's entries can outlive its text while
//! the file does not parse).

use std::path::{Path, PathBuf};

use lsp_types::{DocumentSymbol, Range, SymbolKind};
use toolgate_compiler::diagnostics::NameKind;
use toolgate_compiler::registry::Registry;
use toolgate_compiler::source::{SourceFile, Span};
use toolgate_compiler::syntax::ast::{self, Statement};

use crate::text::LineIndex;

/// One occurrence of a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Occ {
    pub kind: NameKind,
    pub name: String,
    pub path: PathBuf,
    pub range: Range,
    /// A definition (a block's name, a registry entry, a class of the ladder).
    pub def: bool,
}

/// What one policy file contributes: its names and its outline.
#[derive(Debug, Clone, Default)]
pub struct FileFacts {
    pub occs: Vec<Occ>,
    pub symbols: Vec<DocumentSymbol>,
}

struct Collector<'a> {
    path: &'a PathBuf,
    lines: LineIndex<'a>,
    occs: Vec<Occ>,
}

impl Collector<'_> {
    fn range(&self, span: Span) -> Range {
        self.lines.range(span.range())
    }
    fn add(&mut self, kind: NameKind, name: &ast::Name, def: bool) {
        self.occs.push(Occ {
            kind,
            name: name.text.clone(),
            path: self.path.clone(),
            range: self.range(name.span),
            def,
        });
    }
    fn add_all(&mut self, kind: NameKind, names: &[ast::Name]) {
        for n in names {
            self.add(kind, n, false);
        }
    }
}

#[allow(deprecated)] // DocumentSymbol::deprecated is a required field
fn symbol(
    name: &str,
    detail: &str,
    kind: SymbolKind,
    range: Range,
    selection: Range,
    children: Vec<DocumentSymbol>,
) -> DocumentSymbol {
    DocumentSymbol {
        name: name.to_string(),
        detail: Some(detail.to_string()),
        kind,
        tags: None,
        deprecated: None,
        range,
        selection_range: selection,
        children: (!children.is_empty()).then_some(children),
    }
}

/// The names and outline of one parsed policy file.
pub fn file_facts(path: &PathBuf, text: &SourceFile, file: &ast::PolicyFile) -> FileFacts {
    let mut c = Collector {
        path,
        lines: LineIndex::of(text),
        occs: Vec::new(),
    };
    let mut symbols = Vec::new();
    for st in &file.statements {
        add_names(&mut c, st);
        symbols.extend(outline(&c, st));
    }
    FileFacts {
        occs: c.occs,
        symbols,
    }
}

/// The names a statement defines and those it refers to, in source order.
fn add_names(c: &mut Collector, st: &Statement) {
    use NameKind as K;
    match st {
        Statement::Classes(cl) => {
            for n in &cl.ladder {
                c.add(K::Class, n, true);
            }
        }
        Statement::SkillLoader(s) => c.add(K::Tool, &s.value, false),
        Statement::Enforcement(_)
        | Statement::RemoteVisibility(_)
        | Statement::Unprofiled(_)
        | Statement::UnknownConsumers(_) => {}
        Statement::Group(b) => {
            c.add(K::Group, &b.name, false);
            for p in &b.props {
                if let ast::GroupProp::Class(n) = &p.value {
                    c.add(K::Class, n, false);
                }
            }
        }
        Statement::Tool(b) => {
            c.add(K::Tool, &b.name, false);
            for p in &b.props {
                if let ast::ToolProp::Class(n) = &p.value {
                    c.add(K::Class, n, false);
                }
            }
        }
        Statement::Zone(b) => {
            c.add(K::Zone, &b.name, true);
            for p in &b.props {
                let ast::ZoneProp::Ceiling(n) = &p.value;
                c.add(K::Class, n, false);
            }
        }
        Statement::Provider(b) => {
            c.add(K::Provider, &b.name, true);
            for p in &b.props {
                match &p.value {
                    ast::ProviderProp::Zone(n) => c.add(K::Zone, n, false),
                    ast::ProviderProp::Fallback(ns) => c.add_all(K::Provider, ns),
                }
            }
        }
        Statement::Skill(b) => {
            c.add(K::Skill, &b.name, true);
            for p in &b.props {
                let ast::SkillProp::Tools(ns) = &p.value;
                c.add_all(K::Tool, ns);
            }
        }
        Statement::Configuration(b) => {
            c.add(K::Configuration, &b.name, true);
            for p in &b.props {
                match &p.value {
                    ast::ConfigurationProp::Provider(n) => c.add(K::Provider, n, false),
                    ast::ConfigurationProp::Groups(ns) => c.add_all(K::Group, ns),
                    ast::ConfigurationProp::Exclude(ns) => c.add_all(K::Tool, ns),
                    ast::ConfigurationProp::Skills(ns) => c.add_all(K::Skill, ns),
                    ast::ConfigurationProp::NeedsApproval(sels) => add_selectors(c, sels),
                }
            }
        }
        Statement::Profile(b) => {
            c.add(K::Profile, &b.name, true);
            for p in &b.props {
                let (ast::ProfileProp::Allow(sels) | ast::ProfileProp::NeedsApproval(sels)) =
                    &p.value;
                add_selectors(c, sels);
            }
        }
        Statement::Consumer(b) => {
            c.add(K::Consumer, &b.name, true);
            for p in &b.props {
                let ast::ConsumerProp::Profile(n) = &p.value;
                c.add(K::Profile, n, false);
            }
        }
        Statement::Gateway(b) => c.add(K::Gateway, &b.name, true),
    }
}

/// The names a selector list refers to (a server or a prefix names none).
fn add_selectors(c: &mut Collector, sels: &[ast::Selector]) {
    use NameKind as K;
    for s in sels {
        match s {
            ast::Selector::Tool(n) => c.add(K::Tool, n, false),
            ast::Selector::Group(n) => c.add(K::Group, n, false),
            ast::Selector::Server(_) | ast::Selector::Prefix(_) => {}
        }
    }
}

/// A statement's entry in the outline: a block under its name (a gateway
/// with its rules under it), the class ladder as `classes`; `None` for a
/// one-line setting.
fn outline(c: &Collector, st: &Statement) -> Option<DocumentSymbol> {
    let block = |name: &ast::Name, span: Span, kind, children| {
        symbol(
            &name.text,
            st.keyword(),
            kind,
            c.range(span),
            c.range(name.span),
            children,
        )
    };
    Some(match st {
        Statement::Classes(cl) => {
            let r = c.range(cl.span);
            symbol("classes", "classes", SymbolKind::ENUM, r, r, vec![])
        }
        Statement::SkillLoader(_)
        | Statement::Enforcement(_)
        | Statement::RemoteVisibility(_)
        | Statement::Unprofiled(_)
        | Statement::UnknownConsumers(_) => return None,
        Statement::Group(b) => block(&b.name, b.span, SymbolKind::NAMESPACE, vec![]),
        Statement::Tool(b) => block(&b.name, b.span, SymbolKind::FUNCTION, vec![]),
        Statement::Zone(b) => block(&b.name, b.span, SymbolKind::MODULE, vec![]),
        Statement::Provider(b) => block(&b.name, b.span, SymbolKind::INTERFACE, vec![]),
        Statement::Skill(b) => block(&b.name, b.span, SymbolKind::CLASS, vec![]),
        Statement::Configuration(b) => block(&b.name, b.span, SymbolKind::OBJECT, vec![]),
        Statement::Profile(b) => block(&b.name, b.span, SymbolKind::STRUCT, vec![]),
        Statement::Consumer(b) => block(&b.name, b.span, SymbolKind::VARIABLE, vec![]),
        Statement::Gateway(b) => {
            let rules = b
                .props
                .iter()
                .map(|p| {
                    let r = &p.value.name;
                    symbol(
                        &r.text,
                        "rule",
                        SymbolKind::EVENT,
                        c.range(p.span),
                        c.range(r.span),
                        vec![],
                    )
                })
                .collect();
            block(&b.name, b.span, SymbolKind::PACKAGE, rules)
        }
    })
}

/// The registry's tools, each a definition of its name.
pub fn registry_occs(path: &Path, text: &SourceFile, registry: &Registry) -> Vec<Occ> {
    let lines = LineIndex::of(text);
    registry
        .tools
        .iter()
        .map(|t| Occ {
            kind: NameKind::Tool,
            name: t.name.clone(),
            path: path.to_path_buf(),
            range: lines.range(t.span.range()),
            def: true,
        })
        .collect()
}

/// All occurrences of a project.
#[derive(Debug, Clone, Default)]
pub struct Index {
    pub occs: Vec<Occ>,
}

impl Index {
    pub fn of<'a>(&'a self, kind: NameKind, name: &'a str) -> impl Iterator<Item = &'a Occ> + 'a {
        self.occs
            .iter()
            .filter(move |o| o.kind == kind && o.name == name)
    }

    /// Where a name is defined. A group is defined by the registry: its
    /// definition is the first registry tool in it.
    pub fn definitions(&self, kind: NameKind, name: &str, registry: Option<&Registry>) -> Vec<Occ> {
        let defs: Vec<Occ> = self.of(kind, name).filter(|o| o.def).cloned().collect();
        if !defs.is_empty() || kind != NameKind::Group {
            return defs;
        }
        let Some(first) = registry.and_then(|r| r.tools.iter().find(|t| t.group == name)) else {
            return Vec::new();
        };
        self.of(NameKind::Tool, &first.name)
            .filter(|o| o.def)
            .take(1)
            .cloned()
            .collect()
    }

    /// The distinct names defined for a kind, in first-definition order.
    pub fn defined(&self, kind: NameKind) -> Vec<&str> {
        let mut seen = std::collections::HashSet::new();
        self.occs
            .iter()
            .filter(|o| o.kind == kind && o.def)
            .map(|o| o.name.as_str())
            .filter(|n| seen.insert(*n))
            .collect()
    }
}
