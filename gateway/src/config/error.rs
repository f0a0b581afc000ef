//! A configuration error: where, what, and how to fix it.

use std::path::Path;

/// A configuration error: where, what, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    /// 1-based line and column, when the error has a place.
    pub at: Option<(usize, usize)>,
    pub message: String,
    pub help: Option<String>,
}

impl ConfigError {
    pub(super) fn new(message: impl Into<String>, help: Option<String>) -> ConfigError {
        ConfigError {
            at: None,
            message: message.into(),
            help,
        }
    }

    /// `FILE:LINE:COL: error: MESSAGE` and a `help:` line, as the compiler's short format.
    pub fn render(&self, file: &Path) -> String {
        let at = match self.at {
            Some((l, c)) => format!("{}:{l}:{c}", file.display()),
            None => file.display().to_string(),
        };
        let mut out = format!("{at}: error[gateway-config]: {}", self.message);
        if let Some(h) = &self.help {
            out.push_str(&format!("\n  help: {h}"));
        }
        out
    }
}

pub(super) fn line_col(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// What to write for a required key the file lacks.
pub(super) fn missing_field_help(key: &str) -> Option<&'static str> {
    Some(match key {
        "identity" => "add `[identity]` with how callers are known: `auth = \"credentials.toml\"` (API keys or JWTs), `[identity.trusted-header]` (an authenticating proxy in front), or `consumer = \"NAME\"` and `role = \"user\"` (one fixed identity, loopback only); docs/gateway.md, \"Identity\"",
        "configuration" => "add `configuration = \"NAME\"`: the policy's configuration every request is decided under",
        "name" => "give each `[[upstream]]` a `name`: its tool NAME is the registry's mcp_NAME_TOOL",
        _ => return None,
    })
}
