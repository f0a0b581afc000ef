//! The pipeline of a check: parse every policy file, validate against the
//! registry, run the lints that need the table, then apply the project's
//! suppressions. [`crate::project`] reads the files; this runs the stages.

use crate::diagnostics::suppress::{self, Suppressed};
use crate::diagnostics::{Diagnostic, Problem, Severity};
use crate::model::{Model, Provenance};
use crate::project::{redact_problem, sha256_hex, Project};
use crate::source::FileId;
use crate::syntax::{ast, parse};
use crate::{lower, registry, validate};
use toolgate_runtime::Table;

/// The outcome of checking a project.
pub struct Checked {
    /// The model, when no error is left after suppressions.
    pub model: Option<Model>,
    /// What is reported, in span order (suppressed findings are not here).
    pub problems: Vec<Problem>,
    /// Each reported problem's severity after `[lints]`, parallel to `problems`.
    severities: Vec<Severity>,
    /// What `# toolgate: allow` comments and `[lints]` suppressed.
    pub suppressed: Vec<Suppressed>,
    /// The syntax tree of every policy file that parsed (an editor's outline
    /// and name index read them; nothing is parsed twice).
    pub asts: Vec<(FileId, ast::PolicyFile)>,
    /// The model lowered for the no-effect lint ([`lower::lowered`], no
    /// digest), kept with the model: `compile` encodes its spec
    /// ([`Project::check_with`]).
    pub lowered: Option<Table>,
}

impl Checked {
    /// The reported problems as diagnostics, each at its effective severity.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        self.problems
            .iter()
            .zip(&self.severities)
            .map(|(p, &s)| Diagnostic {
                severity: s,
                ..p.diagnostic()
            })
            .collect()
    }

    /// Only the errors, as diagnostics: what stopped the model.
    pub fn errors(&self) -> Vec<Diagnostic> {
        let mut d = self.diagnostics();
        d.retain(|d| d.severity == Severity::Error);
        d
    }

    /// Whether an error is left after suppressions.
    pub fn has_errors(&self) -> bool {
        self.severities.contains(&Severity::Error)
    }
}

impl Project {
    /// Parse, validate, lint and apply the suppressions: [`check`].
    pub fn check(&self) -> Checked {
        check(self)
    }

    /// [`Project::check`], and `with_table` run on the lowered table
    /// ([`Checked::lowered`]) on a second thread while the no-effect lint
    /// runs: `toolgate compile` encodes and verifies its table file there,
    /// rather than after the lint. `None` when no table was lowered; its
    /// answer is for a check without errors only (a suppression may still
    /// turn a finding into one: then [`Checked::model`] is `None`).
    pub fn check_with<T: Send>(
        &self,
        with_table: impl FnOnce(&Table) -> T + Send,
    ) -> (Checked, Option<T>) {
        check_inner(self, Some(with_table))
    }
}

/// Parse, validate, lint, then apply the suppressions: every stage of
/// `toolgate check` over a loaded project, in order.
pub fn check(project: &Project) -> Checked {
    check_inner(project, None::<fn(&Table)>).0
}

/// [`check`], with [`Project::check_with`]'s work on the table when given.
fn check_inner<T: Send>(
    project: &Project,
    with_table: Option<impl FnOnce(&Table) -> T + Send>,
) -> (Checked, Option<T>) {
    let mut problems = project.problems.clone();
    let Some(reg_id) = project.registry else {
        return (finish(project, None, None, problems, Vec::new()), None);
    };
    let parsed_here;
    let (registry, reg_problems) = match project.parsed_registry.as_deref() {
        Some(r) => r,
        None => {
            let file = project.sources.get(reg_id);
            parsed_here = registry::load(reg_id, &file.text, file.name.ends_with(".json"));
            &parsed_here
        }
    };
    problems.extend(reg_problems.iter().cloned());
    // The digests of the texts (a pass over the registry's, 42 ms at 61 MiB)
    // on a second thread while the policies parse.
    let (provenance, (asts, syntax_errors)) = std::thread::scope(|threads| {
        let digests = threads.spawn(|| provenance(project, reg_id));
        let parsed = parse_policies(project, &mut problems);
        (join(digests), parsed)
    });
    // Names defined in a file that did not parse (or was not read: over
    // its limit) would be reported as unknown elsewhere: report those
    // errors alone.
    let unread = project
        .problems
        .iter()
        .any(|p| matches!(p, Problem::TooLarge { .. }));
    if syntax_errors || unread {
        return (finish(project, None, None, problems, asts), None);
    }
    let parsed: Vec<validate::Parsed> = asts
        .iter()
        .map(|(file, ast)| validate::Parsed { file: *file, ast })
        .collect();
    let (model, mut found) = validate::validate(&project.sources, &parsed, registry, provenance);
    // The no-effect lint needs the table, so it runs on a model that
    // validated (a model the runtime would refuse to load gets no lint here;
    // `compile` reports the load error).
    let lowered = model.as_ref().and_then(|m| lower::lowered(m).ok());
    let mut done = None;
    if let (Some(m), Some(table)) = (&model, &lowered) {
        let lint = || crate::lints::no_effect::lint(m, registry, &parsed, table);
        let lints = match with_table {
            Some(work) => std::thread::scope(|threads| {
                let beside = threads.spawn(|| work(table));
                let lints = lint();
                done = Some(join(beside));
                lints
            }),
            None => lint(),
        };
        if !lints.is_empty() {
            found.extend(lints);
            found.sort_by_key(|p| p.span());
        }
    }
    problems.append(&mut found);
    (finish(project, model, lowered, problems, asts), done)
}

/// What a scoped thread returned; its panic (a bug) goes on in this thread.
fn join<T>(thread: std::thread::ScopedJoinHandle<'_, T>) -> T {
    thread
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Every policy file's syntax tree, and whether any file failed to parse
/// (its error is among `problems`, redacted when the file must not be quoted).
fn parse_policies(
    project: &Project,
    problems: &mut Vec<Problem>,
) -> (Vec<(FileId, ast::PolicyFile)>, bool) {
    let mut asts = Vec::new();
    let mut syntax_errors = false;
    for &id in &project.policies {
        let file = project.sources.get(id);
        match parse::parse_policy(id, &file.text) {
            Ok(ast) => asts.push((id, ast)),
            Err(p) => {
                syntax_errors = true;
                problems.push(if file.quote { p } else { redact_problem(p) });
            }
        }
    }
    (asts, syntax_errors)
}

/// The digests of the texts a table is compiled from.
fn provenance(project: &Project, registry: FileId) -> Provenance {
    Provenance {
        policies: project
            .policies
            .iter()
            .map(|&id| {
                let f = project.sources.get(id);
                (f.table_name.clone(), sha256_hex(f.text.as_bytes()))
            })
            .collect(),
        registry: sha256_hex(project.sources.get(registry).text.as_bytes()),
    }
}

/// Apply the suppressions; the model survives only when no error is left.
fn finish(
    project: &Project,
    model: Option<Model>,
    lowered: Option<Table>,
    problems: Vec<Problem>,
    asts: Vec<(FileId, ast::PolicyFile)>,
) -> Checked {
    let (kept, suppressed) = suppress::apply(
        &project.sources,
        &project.policies,
        &project.lints,
        problems,
    );
    let (problems, severities): (Vec<Problem>, Vec<Severity>) = kept.into_iter().unzip();
    let mut checked = Checked {
        model,
        problems,
        severities,
        suppressed,
        asts,
        lowered,
    };
    if checked.has_errors() {
        checked.model = None;
        checked.lowered = None;
    }
    checked
}
