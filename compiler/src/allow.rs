//! Keeping a warning on purpose: a `# toolgate: allow TG3008` comment on the
//! line a warning points at, or on the line just above it, silences that
//! warning there (several codes: `allow TG3008, TG1009`). Errors cannot be
//! silenced.

use crate::diagnostics::{Problem, Severity};
use crate::source::SourceMap;

const MARK: &str = "toolgate: allow ";

/// Whether a comment allows `p` where it points.
pub fn allowed(p: &Problem, sources: &SourceMap) -> bool {
    if p.severity() != Severity::Warning {
        return false;
    }
    let span = p.span();
    let text = &sources.get(span.file).text;
    let at = (span.start as usize).min(text.len());
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let above = if start == 0 {
        ""
    } else {
        let prev_start = text[..start - 1].rfind('\n').map_or(0, |i| i + 1);
        &text[prev_start..start - 1]
    };
    [&text[start..end], above]
        .iter()
        .any(|line| allows(line, p.code()))
}

/// Whether a line's comment names `code` after `toolgate: allow`.
fn allows(line: &str, code: &str) -> bool {
    let Some(hash) = line.find('#') else {
        return false;
    };
    let comment = line[hash + 1..].trim_start();
    let Some(list) = comment.strip_prefix(MARK) else {
        return false;
    };
    list.split([',', ' '])
        .filter(|c| !c.is_empty())
        .take_while(|c| c.starts_with("TG"))
        .any(|c| c == code)
}

#[cfg(test)]
mod tests {
    use super::allows;

    #[test]
    fn a_comment_names_the_codes_it_allows() {
        assert!(allows(
            "group system { class x } # toolgate: allow TG3008",
            "TG3008"
        ));
        assert!(allows("# toolgate: allow TG1009, TG3008", "TG3008"));
        assert!(!allows("# toolgate: allow TG1009", "TG3008"));
        assert!(!allows("# toolgate allow TG3008", "TG3008"));
        assert!(!allows("group system { class x }", "TG3008"));
        assert!(!allows("# toolgate: allow because TG3008", "TG3008"));
    }
}
