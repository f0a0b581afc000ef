//! Reading a registry file, TOML or JSON ([`load`], [`parse`]): JSON
//! through serde_json in one pass, TOML table by table
//! ([`super::toml_tables`]) or, when the cut is not sure, as one document.

use serde::de::DeserializeSeed;

use super::entries::{LoadState, ReadError, RegistrySeed};
use super::locate::offset_of;
use super::model::{Registry, MAX_TOOLS};
use super::toml_tables::{read_tables, toml_tables};
use crate::diagnostics::Problem;
use crate::source::{FileId, Span};

/// Registry files larger than this are refused with TG0002.
pub const MAX_REGISTRY_BYTES: usize = 256 * 1024 * 1024;

/// Read a registry file; `is_json` picks the syntax. Returns the tools that
/// are valid and a problem for each that is not.
pub fn load(file: FileId, text: &str, is_json: bool) -> (Registry, Vec<Problem>) {
    parse(file, text, is_json).unwrap_or_else(|p| (Registry::default(), vec![p]))
}

/// Like [`load`], but a file that is not a registry at all (over the limits,
/// or not in the registry schema) is `Err`, told apart from a registry with
/// invalid entries.
pub fn parse(file: FileId, text: &str, is_json: bool) -> Result<(Registry, Vec<Problem>), Problem> {
    Problem::check_size(file, text, "registry file", MAX_REGISTRY_BYTES)?;
    let mut state = LoadState::new(file, text, is_json);
    let read: Result<(), ReadError> = if is_json {
        let mut de = serde_json::Deserializer::from_str(text);
        RegistrySeed(&mut state)
            .deserialize(&mut de)
            .and_then(|()| de.end())
            .map_err(|e| {
                let at = offset_of(text, e.line(), e.column());
                (at..at, e.to_string())
            })
    } else {
        // The toml crate parses a whole document into its own tree before
        // serde sees it (about 26x the file). A registry is a run of
        // `[[tool]]` tables, so read it table by table (on several threads:
        // `read_tables`): the peak is a few runs of tables' trees. Anything
        // the split cannot be sure of (text before the first table, a table
        // that does not parse on its own, such as a multi-line string
        // holding a `[[tool]]` line) is read whole again, so errors and
        // results are those of the whole document.
        match toml_tables(text) {
            Some(chunks) => {
                let mut ok = read_tables(&chunks, &mut state);
                if ok.is_err() {
                    state.reset();
                    ok = toml_whole(text, &mut state);
                }
                ok
            }
            None => toml_whole(text, &mut state),
        }
    };
    if let Err((range, message)) = read {
        return Err(Problem::RegistryInvalid {
            span: Span::new(file, range),
            message,
        });
    }
    if state.count > MAX_TOOLS {
        return Err(Problem::too_large(
            file,
            "registry (tools)",
            MAX_TOOLS,
            state.count,
        ));
    }
    state.tools.shrink_to_fit();
    Ok((
        Registry {
            tools: state.tools,
            prompts: state.prompts,
        },
        state.problems,
    ))
}

/// The TOML `text` read as one document: what a cut that is not sure, or a
/// table that fails alone, falls back to.
pub(super) fn toml_whole(text: &str, state: &mut LoadState<'_>) -> Result<(), ReadError> {
    toml::Deserializer::parse(text)
        .and_then(|de| RegistrySeed(state).deserialize(de))
        .map_err(|e| (e.span().unwrap_or(0..0), e.message().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::{prompts, to_json, to_toml, JsonText};

    /// Prompts read from TOML and JSON alike, written back the same, and
    /// each bad one a problem with its span (the rest kept).
    #[test]
    fn prompts_are_read_checked_and_written_back() {
        let toml_text = "[[tool]]\nname = \"mcp_s_a\"\ngroup = \"mcp_s\"\nserver = \"s\"\n\n[[prompt]]\nname = \"mcp_s_greet\"\nserver = \"s\"\ntitle = \"Greet\"\ndescription = \"Say hello.\"\narguments = [{ name = \"who\", required = true }]\n\n[[prompt]]\nname = \"mcp_t_greet\"\nserver = \"s\"\n\n[[prompt]]\nname = \"mcp_s_greet\"\nserver = \"s\"\n";
        let (reg, problems) = load(FileId(0), toml_text, false);
        assert_eq!(reg.tools.len(), 1);
        assert_eq!(reg.prompts.len(), 1);
        let p = &reg.prompts[0];
        assert_eq!(
            (p.name.as_str(), p.server.as_str(), p.title.as_deref()),
            ("mcp_s_greet", "s", Some("Greet"))
        );
        assert_eq!(
            p.arguments.as_ref().map(JsonText::get),
            Some(r#"[{"name":"who","required":true}]"#)
        );
        let at = |needle: &str, nth: usize| {
            let start = toml_text
                .match_indices(needle)
                .nth(nth)
                .map(|(i, _)| i)
                .unwrap();
            (start as u32, (start + needle.len()) as u32)
        };
        assert_eq!(p.span.start, at("\"mcp_s_greet\"", 0).0);
        let got: Vec<(&str, u32, u32)> = problems
            .iter()
            .map(|p| {
                let d = p.diagnostic();
                (d.code, d.span.start, d.span.end)
            })
            .collect();
        let (t0, t1) = at("\"mcp_t_greet\"", 0);
        let (d0, d1) = at("\"mcp_s_greet\"", 1);
        assert_eq!(got, [("TG4001", t0, t1), ("TG4003", d0, d1)]);
        // Written and read back, in both syntaxes, the same.
        for (text, json) in [(to_toml(&reg), false), (to_json(&reg), true)] {
            let (again, problems) = load(FileId(0), &text, json);
            assert!(problems.is_empty(), "{text}");
            assert_eq!(
                again
                    .prompts
                    .iter()
                    .map(prompts::digest)
                    .collect::<Vec<_>>(),
                reg.prompts.iter().map(prompts::digest).collect::<Vec<_>>(),
                "{text}"
            );
            assert_eq!(again.tools.len(), 1);
        }
        assert!(to_toml(&reg).contains("[[prompt]]\nname = \"mcp_s_greet\"\nserver = \"s\"\ntitle = \"Greet\"\ndescription = \"Say hello.\"\narguments = [{ name = \"who\", required = true }]\n"));
        // The pin is the runtime's digest of the definition as a server lists it.
        assert_eq!(
            prompts::digest(p),
            toolgate_runtime::mcp::prompt_digest(&serde_json::json!({
                "name": "greet", "title": "Greet", "description": "Say hello.",
                "arguments": [{"required": true, "name": "who"}]
            }))
        );
    }
}
