//! Suppressions, as ruff and Regal have them: a `# toolgate: allow CODE`
//! comment on the line of a finding (or alone on the line above it), and
//! per-code levels in the manifest's `[lints]` table.
//!
//! Both only ever hide or lower what cannot widen access unnoticed: any
//! warning may be allowed, and an error only when it is
//! [`Problem::acknowledgeable`] (today TG1010: a stale exclusion that is a
//! near miss of a registered name, kept on purpose after a rename). Raising a
//! warning to an error is always allowed. A suppression that names an
//! unknown code, an unknown level or an error that cannot be lowered is
//! TG0007 and changes nothing; a comment that suppresses nothing is TG0006.

use std::collections::BTreeMap;

use crate::diagnostics::{Problem, Severity, CATALOGUE};
use crate::source::{FileId, SourceMap, Span};
use toolgate_runtime::names::did_you_mean;

/// A code's level, from `[lints]`.
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Allow,
    Warn,
    Error,
}

impl Level {
    const NAMES: [(&'static str, Level); 3] = [
        ("allow", Level::Allow),
        ("warn", Level::Warn),
        ("error", Level::Error),
    ];

    fn parse(s: &str) -> Option<Level> {
        Self::NAMES.iter().find(|(n, _)| *n == s).map(|(_, l)| *l)
    }
}

/// How a finding was suppressed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum By {
    /// A `# toolgate: allow` comment (its span).
    Comment(Span),
    /// `CODE = "allow"` in the manifest's `[lints]` (the entry's span).
    Manifest(Span),
}

/// A finding that was not reported, and why.
#[derive(Debug, Clone)]
pub struct Suppressed {
    pub problem: Problem,
    pub by: By,
}

/// One `[lints]` entry: the level and where it was written.
#[derive(Debug, Clone, Copy)]
pub struct LintLevel {
    pub level: Level,
    pub span: Span,
}

/// The manifest's `[lints]`, checked: unusable entries are TG0007 problems.
#[derive(Debug, Clone, Default)]
pub struct Lints {
    levels: BTreeMap<&'static str, LintLevel>,
}

/// The catalogue entry of `code`, or TG0007 naming the nearest code.
fn known_code(code: &str, span: Span, what: &str) -> Result<&'static str, Problem> {
    if let Some(c) = CATALOGUE.iter().find(|c| c.code == code) {
        return Ok(c.code);
    }
    let help = match CATALOGUE.iter().find(|c| c.name == code) {
        Some(c) => format!("`{code}` is the name of {}; write the code", c.code),
        None => match did_you_mean(code, CATALOGUE.iter().map(|c| c.code)) {
            Some(s) => format!("did you mean `{s}`?"),
            None => "codes are listed in docs/diagnostics.md (TG0001 ...)".into(),
        },
    };
    Err(Problem::InvalidSuppression {
        span,
        message: format!("{what} names `{code}`, which is not a toolgate code"),
        help,
    })
}

fn severity_of(code: &str) -> Severity {
    CATALOGUE
        .iter()
        .find(|c| c.code == code)
        .map_or(Severity::Error, |c| c.severity)
}

/// Whether findings of `code` may be lowered below an error.
fn lowerable(code: &str) -> bool {
    severity_of(code) == Severity::Warning || Problem::acknowledgeable_code(code)
}

fn cannot_lower(code: &'static str, span: Span, what: &str) -> Problem {
    Problem::InvalidSuppression {
        span,
        message: format!("{what} would lower {code}, an error that cannot be suppressed"),
        help: format!(
            "fix what {code} reports; only warnings (and TG1010, a stale exclusion kept on purpose) can be allowed"
        ),
    }
}

impl Lints {
    /// Check `(code, level)` entries as written (each with the span of its
    /// value); the usable ones are kept.
    pub fn new(entries: &[(String, String, Span)]) -> (Lints, Vec<Problem>) {
        let mut lints = Lints::default();
        let mut problems = Vec::new();
        for (code, level, span) in entries {
            let code = match known_code(code, *span, "`[lints]`") {
                Ok(c) => c,
                Err(p) => {
                    problems.push(p);
                    continue;
                }
            };
            let Some(level) = Level::parse(level) else {
                problems.push(Problem::InvalidSuppression {
                    span: *span,
                    message: format!("`{level}` is not a level"),
                    help: match did_you_mean(level, Level::NAMES.iter().map(|(n, _)| *n)) {
                        Some(s) => format!("did you mean `{s}`? (levels: allow, warn, error)"),
                        None => "levels: allow, warn, error".into(),
                    },
                });
                continue;
            };
            if level != Level::Error && !lowerable(code) && severity_of(code) == Severity::Error {
                problems.push(cannot_lower(code, *span, "`[lints]`"));
                continue;
            }
            lints.levels.insert(code, LintLevel { level, span: *span });
        }
        (lints, problems)
    }

    pub fn get(&self, code: &str) -> Option<LintLevel> {
        self.levels.get(code).copied()
    }
}

/// A `# toolgate: allow` comment: the codes it names and the line it covers.
#[derive(Debug, Clone)]
struct Directive {
    span: Span,
    /// 0-based line of the code it covers.
    line: usize,
    codes: Vec<&'static str>,
    used: Vec<bool>,
}

const MARKER: &str = "toolgate:";

/// The comments of a policy file: (byte offset of `#`, comment text after
/// it, whether code precedes it on its line). Strings (`"..."`, no escapes,
/// no newline, as the grammar has them) are skipped.
fn comments(text: &str) -> Vec<(usize, &str, bool)> {
    let mut out = Vec::new();
    let mut in_string = false;
    let mut code_on_line = false;
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\n' => {
                in_string = false;
                code_on_line = false;
            }
            b'"' => {
                in_string = !in_string;
                code_on_line = true;
            }
            b'#' if !in_string => {
                let end = text[i..].find('\n').map_or(text.len(), |e| i + e);
                out.push((i, &text[i + 1..end], code_on_line));
                i = end;
                continue;
            }
            b' ' | b'\t' | b'\r' => {}
            _ => code_on_line = true,
        }
        i += 1;
    }
    out
}

/// The directives of one file, and the problems in how they are written.
fn directives(file: FileId, text: &str, sources: &SourceMap) -> (Vec<Directive>, Vec<Problem>) {
    let f = sources.get(file);
    let mut out = Vec::new();
    let mut problems = Vec::new();
    let lines: Vec<&str> = text.split('\n').collect();
    for (at, body, trailing) in comments(text) {
        let Some(rest) = body.trim_start().strip_prefix(MARKER) else {
            continue;
        };
        let span = Span::new(file, at..at + 1 + body.len());
        // An explanation may follow ` -- `.
        let rest = rest.split(" -- ").next().unwrap_or("");
        let mut words = rest.split([' ', ',', '\t']).filter(|w| !w.is_empty());
        if words.next() != Some("allow") {
            problems.push(Problem::InvalidSuppression {
                span,
                message: "a `# toolgate:` comment that is not `# toolgate: allow CODE`".into(),
                help: "write `# toolgate: allow TG1009` (codes separated by spaces or commas; an explanation may follow ` -- `)".into(),
            });
            continue;
        }
        let words: Vec<&str> = words.collect();
        if words.is_empty() {
            problems.push(Problem::InvalidSuppression {
                span,
                message: "`# toolgate: allow` names no code".into(),
                help: "name the codes it allows: `# toolgate: allow TG1009`".into(),
            });
            continue;
        }
        let mut codes = Vec::new();
        for w in words {
            match known_code(w, span, "the suppression") {
                Ok(c) if lowerable(c) => codes.push(c),
                Ok(c) => problems.push(cannot_lower(c, span, "the suppression")),
                Err(p) => problems.push(p),
            }
        }
        if codes.is_empty() {
            continue;
        }
        let (line, _) = f.line_col(at);
        let line = line - 1;
        // A comment alone on its line covers the next line that holds code.
        let target = if trailing {
            Some(line)
        } else {
            (line + 1..lines.len()).find(|&l| {
                let t = lines[l].trim();
                !t.is_empty() && !t.starts_with('#')
            })
        };
        let Some(target) = target else {
            problems.push(Problem::UnusedSuppression {
                span,
                codes: codes.join(", "),
            });
            continue;
        };
        let used = vec![false; codes.len()];
        out.push(Directive {
            span,
            line: target,
            codes,
            used,
        });
    }
    (out, problems)
}

/// Apply the comments of `policies` and the manifest's `lints` to
/// `problems`: what stays (each with its effective severity), what was
/// suppressed, and the problems of the suppressions themselves.
pub fn apply(
    sources: &SourceMap,
    policies: &[FileId],
    lints: &Lints,
    problems: Vec<Problem>,
) -> (Vec<(Problem, Severity)>, Vec<Suppressed>) {
    let mut dirs = Vec::new();
    let mut extra = Vec::new();
    for &file in policies {
        let (d, p) = directives(file, &sources.get(file).text, sources);
        dirs.extend(d.into_iter().map(|d| (file, d)));
        extra.extend(p);
    }
    let mut kept = Vec::new();
    let mut suppressed = Vec::new();
    for p in problems {
        let code = p.code();
        let span = p.span();
        let line = sources.get(span.file).line_col(span.start as usize).0 - 1;
        let by_comment = dirs.iter_mut().find_map(|(file, d)| {
            let i = d.codes.iter().position(|c| *c == code)?;
            (*file == span.file && d.line == line).then(|| {
                d.used[i] = true;
                d.span
            })
        });
        if let Some(at) = by_comment {
            suppressed.push(Suppressed {
                problem: p,
                by: By::Comment(at),
            });
            continue;
        }
        match lints.get(code) {
            Some(LintLevel {
                level: Level::Allow,
                span,
            }) => suppressed.push(Suppressed {
                problem: p,
                by: By::Manifest(span),
            }),
            Some(LintLevel {
                level: Level::Warn, ..
            }) => kept.push((p, Severity::Warning)),
            Some(LintLevel {
                level: Level::Error,
                ..
            }) => kept.push((p, Severity::Error)),
            None => {
                let s = p.severity();
                kept.push((p, s));
            }
        }
    }
    for (_, d) in &dirs {
        let unused: Vec<&str> = d
            .codes
            .iter()
            .zip(&d.used)
            .filter(|(_, u)| !**u)
            .map(|(c, _)| *c)
            .collect();
        if !unused.is_empty() {
            extra.push(Problem::UnusedSuppression {
                span: d.span,
                codes: unused.join(", "),
            });
        }
    }
    // The suppressions' own findings obey `[lints]` too (TG0006 may be allowed).
    for p in extra {
        match lints.get(p.code()).map(|l| l.level) {
            Some(Level::Allow) => {}
            Some(Level::Error) => kept.push((p, Severity::Error)),
            _ => {
                let s = p.severity();
                kept.push((p, s));
            }
        }
    }
    kept.sort_by_key(|(p, _)| p.span());
    (kept, suppressed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_skip_strings_and_know_trailing() {
        let c = comments("a \"x#y\" # one\n  # two\n");
        assert_eq!(c, vec![(8, " one", true), (16, " two", false)]);
    }

    #[test]
    fn levels_parse() {
        assert_eq!(Level::parse("allow"), Some(Level::Allow));
        assert_eq!(Level::parse("Allow"), None);
    }
}
