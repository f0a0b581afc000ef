//! The `json` format: the stable schema of docs/schemas/check.schema.json
//! (one project's diagnostics, or a whole run's report), and the pretty
//! printing every JSON output of the compiler shares.

use serde::Serialize;

use crate::diagnostics::{Diagnostic, Severity};
use crate::source::SourceMap;

/// Counts of a run.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub errors: usize,
    pub warnings: usize,
}

pub fn summary(diags: &[Diagnostic]) -> Summary {
    Summary {
        errors: diags
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count(),
        warnings: diags
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .count(),
    }
}

/// Location of a diagnostic: file, 1-based line/column of start and end.
pub(super) fn location(
    sources: &SourceMap,
    d: &Diagnostic,
) -> (String, usize, usize, usize, usize) {
    let f = sources.get(d.span.file);
    let (l1, c1) = f.line_col(d.span.start as usize);
    let (l2, c2) = f.line_col(d.span.end as usize);
    (f.name.clone(), l1, c1, l2, c2)
}

/// A place in a file: 1-based line and column (in characters).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Position {
    pub file: String,
    pub line: usize,
    pub column: usize,
}

impl Position {
    fn of(sources: &SourceMap, span: crate::source::Span) -> Position {
        let f = sources.get(span.file);
        let (line, column) = f.line_col(span.start as usize);
        Position {
            file: f.name.clone(),
            line,
            column,
        }
    }
}

/// A secondary location of a diagnostic, with what it says there.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JsonLabel {
    pub message: String,
    #[serde(flatten)]
    pub at: Position,
}

/// One diagnostic of `--format json` (docs/diagnostics.md has the codes).
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JsonDiagnostic {
    /// The catalogue code (`TG1010`).
    pub code: &'static str,
    pub severity: Severity,
    pub message: String,
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub end_line: usize,
    pub end_column: usize,
    pub help: Option<String>,
    pub labels: Vec<JsonLabel>,
    /// The project it belongs to (`check`: its directory as given or found).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
}

impl JsonDiagnostic {
    fn of(sources: &SourceMap, d: &Diagnostic, project: Option<&str>) -> JsonDiagnostic {
        let (file, line, column, end_line, end_column) = location(sources, d);
        JsonDiagnostic {
            code: d.code,
            severity: d.severity,
            message: d.message.clone(),
            file,
            line,
            column,
            end_line,
            end_column,
            help: d.help.clone(),
            labels: d
                .labels
                .iter()
                .map(|l| JsonLabel {
                    message: l.message.clone(),
                    at: Position::of(sources, l.span),
                })
                .collect(),
            project: project.map(str::to_string),
        }
    }
}

/// What hid a finding.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SuppressedBy {
    /// A `# toolgate: allow CODE` comment on the line or the line above.
    Comment,
    /// `CODE = "allow"` in the manifest's `[lints]`.
    Manifest,
}

/// A finding that suppressions hid: where it stood and what suppressed it.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JsonSuppressed {
    pub code: &'static str,
    pub message: String,
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub by: SuppressedBy,
    /// Where the comment or the `[lints]` entry is.
    pub at: Position,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
}

impl JsonSuppressed {
    fn of(
        sources: &SourceMap,
        s: &crate::diagnostics::suppress::Suppressed,
        project: Option<&str>,
    ) -> JsonSuppressed {
        use crate::diagnostics::suppress::By;
        let d = s.problem.diagnostic();
        let (by, span) = match s.by {
            By::Comment(span) => (SuppressedBy::Comment, span),
            By::Manifest(span) => (SuppressedBy::Manifest, span),
        };
        let (file, line, column, _, _) = location(sources, &d);
        JsonSuppressed {
            code: d.code,
            message: d.message,
            file,
            line,
            column,
            by,
            at: Position::of(sources, span),
            project: project.map(str::to_string),
        }
    }
}

/// One project's diagnostics in `--format json` (schema version 1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct JsonDiagnostics {
    pub version: u32,
    pub diagnostics: Vec<JsonDiagnostic>,
    pub summary: Summary,
}

/// One project of a `check` run and its counts.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProjectSummary {
    /// The project's directory as given or found.
    pub path: String,
    pub summary: Summary,
}

/// `toolgate check --format json`: one shape whatever the number of
/// projects (schema version 1). Every diagnostic names its project.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CheckReport {
    /// The schema version of this document: 1.
    pub version: u32,
    /// Every diagnostic of every project, never capped.
    pub diagnostics: Vec<JsonDiagnostic>,
    /// Counts over every project.
    pub summary: Summary,
    /// What suppressions hid (not counted in the summary).
    pub suppressed: Vec<JsonSuppressed>,
    pub projects: Vec<ProjectSummary>,
}

impl Default for CheckReport {
    fn default() -> CheckReport {
        CheckReport {
            version: 1,
            diagnostics: Vec::new(),
            summary: Summary::default(),
            suppressed: Vec::new(),
            projects: Vec::new(),
        }
    }
}

impl CheckReport {
    /// Add one project's diagnostics and what suppressions hid.
    pub fn add(
        &mut self,
        project: &str,
        sources: &SourceMap,
        diags: &[Diagnostic],
        suppressed: &[crate::diagnostics::suppress::Suppressed],
    ) {
        let s = summary(diags);
        self.summary.errors += s.errors;
        self.summary.warnings += s.warnings;
        self.diagnostics.extend(
            diags
                .iter()
                .map(|d| JsonDiagnostic::of(sources, d, Some(project))),
        );
        self.suppressed.extend(
            suppressed
                .iter()
                .map(|x| JsonSuppressed::of(sources, x, Some(project))),
        );
        self.projects.push(ProjectSummary {
            path: project.to_string(),
            summary: s,
        });
    }

    /// Pretty JSON and a final newline.
    pub fn to_json(&self) -> String {
        pretty(self)
    }
}

/// Pretty JSON and a final newline (these types always serialise).
pub fn pretty(v: &impl Serialize) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s
}

/// One project's diagnostics as JSON, without the project's name.
pub fn json(sources: &SourceMap, diags: &[Diagnostic]) -> String {
    pretty(&JsonDiagnostics {
        version: 1,
        diagnostics: diags
            .iter()
            .map(|d| JsonDiagnostic::of(sources, d, None))
            .collect(),
        summary: summary(diags),
    })
}
