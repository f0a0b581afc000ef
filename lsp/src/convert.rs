//! The compiler's diagnostics as LSP diagnostics: the same code, severity,
//! message and help, the secondary labels as related locations, and a link
//! to the code's entry in the catalogue (docs/diagnostics.md).

use std::path::{Path, PathBuf};

use lsp_types::{
    CodeDescription, Diagnostic, DiagnosticRelatedInformation, DiagnosticSeverity, Location,
    NumberOrString, Position, Range, Url,
};
use toolgate_compiler::diagnostics::{Diagnostic as Finding, Severity};
use toolgate_compiler::project::ProjectError;
use toolgate_compiler::report::catalogue_url;
use toolgate_compiler::source::{SourceMap, Span};

use crate::text::LineIndex;

/// The `file:` URL of a path, as the client names documents.
pub fn url_of(path: &Path) -> Option<Url> {
    Url::from_file_path(path).ok()
}

pub fn range(sources: &SourceMap, span: Span) -> Range {
    LineIndex::of(sources.get(span.file)).range(span.range())
}

/// One finding, at its effective severity (after `[lints]`), located in its
/// file (`paths`: canonical path by `FileId`).
pub fn diagnostic(d: &Finding, sources: &SourceMap, paths: &[PathBuf]) -> Diagnostic {
    let related: Vec<DiagnosticRelatedInformation> = d
        .labels
        .iter()
        .filter_map(|l| {
            let uri = url_of(paths.get(l.span.file.0 as usize)?)?;
            Some(DiagnosticRelatedInformation {
                location: Location::new(uri, range(sources, l.span)),
                message: l.message.clone(),
            })
        })
        .collect();
    let mut message = d.message.clone();
    if let Some(h) = &d.help {
        message.push_str("\nhelp: ");
        message.push_str(h);
    }
    Diagnostic {
        range: range(sources, d.span),
        severity: Some(match d.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
        }),
        code: Some(NumberOrString::String(d.code.to_string())),
        code_description: Url::parse(&catalogue_url(d.code))
            .ok()
            .map(|href| CodeDescription { href }),
        source: Some("toolgate".into()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        tags: None,
        data: None,
    }
}

/// A project that cannot be read at all (what `check` exits 2 for).
pub fn load_error(e: &ProjectError) -> Diagnostic {
    Diagnostic {
        range: Range::new(Position::new(0, 0), Position::new(0, 0)),
        severity: Some(DiagnosticSeverity::ERROR),
        code: None,
        code_description: None,
        source: Some("toolgate".into()),
        message: format!("the project cannot be read: {e}"),
        related_information: None,
        tags: None,
        data: None,
    }
}
