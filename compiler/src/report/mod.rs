//! Output formats for diagnostics: `human` (miette's graphical report),
//! `plain` (codespan-reporting, rustc style, no colour), `json` (stable
//! schema, docs/schemas/check.schema.json), `sarif` (2.1.0, [`crate::report::sarif`]) and `github` (workflow
//! commands, plus a Markdown summary).

mod json;
pub mod sarif;

use std::fmt::Write as _;

use crate::diagnostics::{Diagnostic, Severity, CATALOGUE};
use crate::source::SourceMap;

pub use crate::diagnostics::{catalogue_url, DOCS_URL};
use json::location;
pub use json::*;

// ------------------------------------------------------------------ human

#[derive(Debug)]
struct MietteDiag<'a> {
    d: Diagnostic,
    /// `None` for a file diagnostics must not quote: no excerpt, no labels.
    src: Option<Quoted<'a>>,
}

/// A file's text as the renderer quotes it. miette's own `read_span` counts
/// lines from the file's start, so a large file's thousand warnings cost a
/// thousand scans of it; this one hands miette only the text from the
/// context's first line on and shifts the answer back, which is the same
/// answer (a window that starts at a line start changes neither columns nor
/// the lines after it).
#[derive(Debug, Clone)]
struct Quoted<'a> {
    name: String,
    text: std::sync::Arc<str>,
    /// The file's line starts ([`SourceFile::line_starts`]), or `None` when
    /// the text has a lone `\r` (miette counts it as a line end; the window
    /// then is the whole text).
    line_starts: Option<&'a [usize]>,
}

/// `starts`, the line starts of `text`, unless a lone `\r` in it ends a
/// line for miette that does not end one for them.
fn miette_lines<'a>(text: &str, starts: &'a [usize]) -> Option<&'a [usize]> {
    let bytes = text.as_bytes();
    let lone_cr = bytes
        .iter()
        .enumerate()
        .any(|(i, &b)| b == b'\r' && bytes.get(i + 1) != Some(&b'\n'));
    (!lone_cr).then_some(starts)
}

impl miette::SourceCode for Quoted<'_> {
    fn read_span<'a>(
        &'a self,
        span: &miette::SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn miette::SpanContents<'a> + 'a>, miette::MietteError> {
        let (window_line, window) = match &self.line_starts {
            Some(starts) if span.offset() <= self.text.len() => {
                let line = match starts.binary_search(&span.offset()) {
                    Ok(l) => l,
                    Err(l) => l - 1,
                };
                // One line more than the context: miette's end test is
                // `offset + len - 1` saturating, so a window must not start
                // at an empty span.
                let first = line.saturating_sub(context_lines_before + 1);
                (first, starts[first])
            }
            _ => (0, 0),
        };
        let shifted = miette::SourceSpan::new((span.offset() - window).into(), span.len());
        let text: &'a str = &self.text[window..];
        let inner = text.read_span(&shifted, context_lines_before, context_lines_after)?;
        let at = inner.span();
        Ok(Box::new(miette::MietteSpanContents::new_named(
            self.name.clone(),
            inner.data(),
            miette::SourceSpan::new((at.offset() + window).into(), at.len()),
            inner.line() + window_line,
            inner.column(),
            inner.line_count() + window_line,
        )))
    }
}

/// The note that stands for an excerpt of a file that must not be quoted.
fn unquoted_note(sources: &SourceMap, span: crate::source::Span) -> String {
    let f = sources.get(span.file);
    let (line, col) = f.line_col(span.start as usize);
    format!(
        "at {}:{line}:{col} (not quoted: the file is not a policy of the project, or not inside it)",
        f.name
    )
}

impl std::fmt::Display for MietteDiag<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.d.message)
    }
}

impl std::error::Error for MietteDiag<'_> {}

impl miette::Diagnostic for MietteDiag<'_> {
    /// `error[TG1010]`: the severity word and the code, as `plain` and rustc write them.
    fn code<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        Some(Box::new(format!(
            "{}[{}]",
            self.d.severity.as_str(),
            self.d.code
        )))
    }
    fn url<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        Some(Box::new(catalogue_url(self.d.code)))
    }
    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.d.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        })
    }
    fn help<'a>(&'a self) -> Option<Box<dyn std::fmt::Display + 'a>> {
        self.d
            .help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn std::fmt::Display>)
    }
    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        self.src.as_ref().map(|s| s as &dyn miette::SourceCode)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        self.src.as_ref()?;
        let primary = miette::LabeledSpan::new_primary_with_span(
            Some(self.d.label.clone()),
            self.d.span.range(),
        );
        let others = self
            .d
            .labels
            .iter()
            .filter(|l| l.span.file == self.d.span.file)
            .map(|l| miette::LabeledSpan::new_with_span(Some(l.message.clone()), l.span.range()));
        Some(Box::new(std::iter::once(primary).chain(others)))
    }
}

/// miette's graphical report; `color` picks the themed or the plain style.
pub fn human(sources: &SourceMap, diags: &[Diagnostic], color: bool) -> String {
    human_at_most(sources, diags, color, usize::MAX)
}

/// The first `limit` diagnostics, a line saying how many more there are,
/// and the summary line of them all: rendering may be capped, counts never.
fn at_most(diags: &[Diagnostic], limit: usize) -> (&[Diagnostic], String) {
    let shown = &diags[..diags.len().min(limit)];
    let rest = diags.len() - shown.len();
    let mut tail = String::new();
    if rest > 0 {
        let _ = writeln!(
            tail,
            "... and {} more not shown (--format json lists every one)\n",
            thousands(rest)
        );
    }
    tail.push_str(&summary_line(summary(diags)));
    (shown, tail)
}

/// [`human`], rendering at most `limit` diagnostics.
pub fn human_at_most(
    sources: &SourceMap,
    diags: &[Diagnostic],
    color: bool,
    limit: usize,
) -> String {
    let (diags, tail) = at_most(diags, limit);
    let theme = if color {
        miette::GraphicalTheme::unicode()
    } else {
        miette::GraphicalTheme::unicode_nocolor()
    };
    // The catalogue entry's address is printed after the code (no terminal
    // hyperlink escapes: the output is the same on a terminal and in a log).
    let handler = miette::GraphicalReportHandler::new_themed(theme)
        .with_width(100)
        .with_links(false);
    let mut out = String::new();
    // Each file's text made once and shared by its diagnostics (a copy per
    // diagnostic was most of rendering a large file's warnings).
    let mut texts: std::collections::HashMap<
        crate::source::FileId,
        (std::sync::Arc<str>, Option<&[usize]>),
    > = std::collections::HashMap::new();
    for d in diags {
        let file = sources.get(d.span.file);
        let text = file.quote.then(|| {
            texts
                .entry(d.span.file)
                .or_insert_with(|| {
                    let text: std::sync::Arc<str> = if color {
                        // Styled output is written raw: the quoted text must
                        // not carry escape sequences of its own.
                        same_width_visible(&file.text).into()
                    } else {
                        file.text.as_str().into()
                    };
                    // Same bytes per character: the file's line starts hold.
                    let starts = miette_lines(&text, file.line_starts());
                    (text, starts)
                })
                .clone()
        });
        let name = if color {
            toolgate_runtime::names::escape_terminal(&file.name).into_owned()
        } else {
            file.name.clone()
        };
        let md = MietteDiag {
            d: d.clone(),
            src: text.map(|(text, line_starts)| Quoted {
                name,
                text,
                line_starts,
            }),
        };
        let _ = handler.render_report(&mut out, &md);
        if !file.quote {
            let _ = writeln!(out, "  {}", unquoted_note(sources, d.span));
        }
        // Labels in other files (or in a file that must not be quoted) are
        // rendered as notes with their location.
        for l in d
            .labels
            .iter()
            .filter(|l| l.span.file != d.span.file || !file.quote)
        {
            let f = sources.get(l.span.file);
            let (line, col) = f.line_col(l.span.start as usize);
            let _ = writeln!(out, "  note: {} ({}:{}:{})", l.message, f.name, line, col);
        }
        out.push('\n');
    }
    out.push_str(&tail);
    out
}

/// `text` with every control or format character other than newline, tab
/// and carriage return replaced by a visible character of the same UTF-8
/// length (`?`, `¿`, `\u{FFFD}`, `\u{1F6AB}`), so spans into it stay valid
/// and no escape sequence of the file's own reaches a styled terminal.
pub fn same_width_visible(text: &str) -> String {
    text.chars()
        .map(|c| {
            if matches!(c, '\n' | '\t' | '\r') || !toolgate_runtime::names::is_invisible(c) {
                return c;
            }
            match c.len_utf8() {
                1 => '?',
                2 => '¿',
                3 => '\u{FFFD}',
                _ => '\u{1F6AB}',
            }
        })
        .collect()
}

/// `n` with a comma between groups of three digits: `1,375`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub fn summary_line(s: Summary) -> String {
    let plural =
        |n: usize, w: &str| format!("{} {w}{}", thousands(n), if n == 1 { "" } else { "s" });
    format!(
        "{}, {}\n",
        plural(s.errors, "error"),
        plural(s.warnings, "warning")
    )
}

// ------------------------------------------------------------------ plain

/// rustc-style text from codespan-reporting, without colour.
pub fn plain(sources: &SourceMap, diags: &[Diagnostic]) -> String {
    plain_at_most(sources, diags, usize::MAX)
}

/// [`plain`], rendering at most `limit` diagnostics.
pub fn plain_at_most(sources: &SourceMap, diags: &[Diagnostic], limit: usize) -> String {
    let (diags, tail) = at_most(diags, limit);
    use codespan_reporting::diagnostic::{Diagnostic as CsDiag, Label as CsLabel};
    use codespan_reporting::files::SimpleFiles;
    use codespan_reporting::term::{self, termcolor::NoColor};

    let mut files = SimpleFiles::new();
    // A file that must not be quoted is registered without its text.
    let ids: Vec<usize> = sources
        .files()
        .map(|(_, f)| {
            let text = if f.quote {
                f.text.clone()
            } else {
                String::new()
            };
            files.add(f.name.clone(), text)
        })
        .collect();
    let quoted = |span: crate::source::Span| sources.get(span.file).quote;
    let mut buf = NoColor::new(Vec::new());
    let config = term::Config::default();
    for d in diags {
        let base = match d.severity {
            Severity::Error => CsDiag::error(),
            Severity::Warning => CsDiag::warning(),
        };
        let mut labels = Vec::new();
        let mut notes = Vec::new();
        if quoted(d.span) {
            labels.push(
                CsLabel::primary(ids[d.span.file.0 as usize], d.span.range())
                    .with_message(d.label.clone()),
            );
        } else {
            notes.push(unquoted_note(sources, d.span));
        }
        for l in &d.labels {
            if quoted(l.span) {
                labels.push(
                    CsLabel::secondary(ids[l.span.file.0 as usize], l.span.range())
                        .with_message(l.message.clone()),
                );
            } else {
                notes.push(format!("{}: {}", l.message, unquoted_note(sources, l.span)));
            }
        }
        notes.extend(d.help.iter().map(|h| format!("help: {h}")));
        let cs = base
            .with_code(d.code)
            .with_message(d.message.clone())
            .with_labels(labels)
            .with_notes(notes);
        let _ = term::emit(&mut buf, &config, &files, &cs);
    }
    let mut out = String::from_utf8_lossy(&buf.into_inner()).into_owned();
    out.push_str(&tail);
    out
}

// ------------------------------------------------------------------ sarif

pub use crate::report::sarif::{sarif, SarifLog, SrcRoot};

// ------------------------------------------------------------------ github

fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// Workflow commands, one per diagnostic.
pub fn github(sources: &SourceMap, diags: &[Diagnostic]) -> String {
    let mut out = String::new();
    for d in diags {
        let (file, line, column, end_line, end_column) = location(sources, d);
        let kind = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let mut msg = d.message.clone();
        if let Some(h) = &d.help {
            msg.push_str("\nhelp: ");
            msg.push_str(h);
        }
        let _ = writeln!(
            out,
            "::{kind} file={},line={line},col={column},endLine={end_line},endColumn={end_column},title={}::{}",
            escape_property(&file),
            escape_property(&format!("{} {}", d.code, name_of(d.code))),
            escape_data(&msg)
        );
    }
    out
}

fn name_of(code: &str) -> &'static str {
    CATALOGUE
        .iter()
        .find(|c| c.code == code)
        .map(|c| c.name)
        .unwrap_or("")
}

/// The Markdown job summary: counts, then every finding (GitHub shows only
/// ten annotations of a kind per step, so the summary carries the rest).
pub fn github_summary(sources: &SourceMap, diags: &[Diagnostic]) -> String {
    github_summary_at_most(sources, diags, usize::MAX)
}

/// [`github_summary`] with at most `limit` rows (a step summary holds 1 MiB);
/// the counts are of every diagnostic.
pub fn github_summary_at_most(sources: &SourceMap, all: &[Diagnostic], limit: usize) -> String {
    let s = summary(all);
    let diags = &all[..all.len().min(limit)];
    let mut out = String::from("## toolgate check\n\n");
    let _ = writeln!(
        out,
        "| errors | warnings |\n| ---: | ---: |\n| {} | {} |\n",
        thousands(s.errors),
        thousands(s.warnings)
    );
    if diags.is_empty() {
        out.push_str("No findings.\n");
        return out;
    }
    out.push_str("| code | severity | location | message |\n| --- | --- | --- | --- |\n");
    for d in diags {
        let (file, line, column, _, _) = location(sources, d);
        let _ = writeln!(
            out,
            "| [{}]({}) | {} | `{}:{}:{}` | {} |",
            d.code,
            catalogue_url(d.code),
            d.severity.as_str(),
            file,
            line,
            column,
            d.message.replace('|', "\\|")
        );
    }
    if all.len() > diags.len() {
        let _ = writeln!(
            out,
            "\n... and {} more not shown.",
            thousands(all.len() - diags.len())
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{miette_lines, Quoted};
    use crate::source::SourceFile;
    use miette::SourceCode;

    /// Data, span offset and length, line, column, line count, name.
    type Read = (Vec<u8>, usize, usize, usize, usize, usize, Option<String>);

    /// What miette reads for a span, in a form that compares.
    fn read(
        source: &dyn SourceCode,
        offset: usize,
        len: usize,
        before: usize,
        after: usize,
    ) -> Option<Read> {
        let c = source
            .read_span(&(offset, len).into(), before, after)
            .ok()?;
        Some((
            c.data().to_vec(),
            c.span().offset(),
            c.span().len(),
            c.line(),
            c.column(),
            c.line_count(),
            c.name().map(str::to_string),
        ))
    }

    #[test]
    fn a_windowed_read_is_the_read_from_the_start() {
        let long = (0..14).map(|i| format!("line {i}")).collect::<Vec<_>>();
        let (lf, crlf) = (long.join("\n"), long.join("\r\n") + "\r\n");
        let texts = [
            lf.as_str(),
            crlf.as_str(),
            "tool a {\n  description = \"x\"\n}\n\n\ttab \u{e9}t\u{e9}\nlast",
            "one\r\ntwo\r\n\r\nthree\r\nfour",
            "lone\rcarriage\nreturn\r\n",
            "\n\n\nx\n",
            "",
        ];
        for text in texts {
            let named = miette::NamedSource::new("f.tg", text.to_string());
            let file = SourceFile::new("f.tg", text);
            let quoted = Quoted {
                name: "f.tg".into(),
                text: text.into(),
                line_starts: miette_lines(text, file.line_starts()),
            };
            // Spans inside the text, as a diagnostic's are (miette itself
            // panics on one past the end).
            for offset in 0..=text.len() {
                for len in 0..=4.min(text.len() - offset) {
                    for (before, after) in [(0, 0), (1, 1), (2, 0), (0, 3), (5, 5)] {
                        assert_eq!(
                            read(&quoted, offset, len, before, after),
                            read(&named, offset, len, before, after),
                            "{text:?} at {offset}+{len}, context {before}/{after}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn only_a_lone_carriage_return_reads_from_the_start() {
        let starts = [0, 3, 5];
        assert_eq!(miette_lines("a\r\nb\nc", &starts), Some(&starts[..]));
        assert_eq!(SourceFile::new("f", "a\r\nb\nc").line_starts(), &starts);
        assert_eq!(miette_lines("a\rb", &[0]), None);
        assert_eq!(miette_lines("a\r", &[0]), None);
    }
}
