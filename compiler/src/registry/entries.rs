//! Each entry of a registry turned into a tool, a prompt or a problem as it
//! is read: the serde seeds ([`RegistrySeed`]) hand every entry to the
//! [`LoadState`], which locates its name, undoes TOML's `$json` escapes,
//! checks it and refuses a name seen before ([`FirstSeen`]).

use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserializer;

use super::locate::locate;
use super::model::{JsonText, Origin, RawOrigin, RawTool, Tool, MAX_TOOLS};
use super::prompts::{self, Prompt, RawPrompt};
use super::{remote_name_problem, toml_json};
use crate::diagnostics::Problem;
use crate::source::{FileId, Span};

/// A reading's failure: where in the file, and the parser's message.
pub(super) type ReadError = (std::ops::Range<usize>, String);

/// What the registry reader builds as it goes: the valid tools, a problem for
/// each invalid entry, and (by name hash) where each name was first seen.
pub(super) struct LoadState<'t> {
    file: FileId,
    pub(super) text: &'t str,
    /// JSON file: its JSON values are read as written (no TOML escapes).
    is_json: bool,
    pub(super) tools: Vec<Tool>,
    pub(super) prompts: Vec<Prompt>,
    pub(super) problems: Vec<Problem>,
    pub(super) seen: FirstSeen,
    /// Each prompt's name and where it was first seen (prompts are few).
    prompt_seen: std::collections::HashMap<String, Span>,
    cursor: usize,
    /// Where the next prompt's name is looked for: prompts are in order
    /// among themselves, not among the tools.
    prompt_cursor: usize,
    /// Entries read, valid or not.
    pub(super) count: usize,
}

/// Where each name was first seen, by a 64-bit hash of it (a hit is
/// confirmed by comparing names, so no second copy of every name is kept).
/// The hash is foldhash, seeded per reader: a registry a server wrote cannot
/// be made of names that collide.
#[derive(Default)]
pub(super) struct FirstSeen {
    by_hash: foldhash::HashMap<u64, u32>,
    hasher: foldhash::fast::RandomState,
}

impl FirstSeen {
    pub(super) fn reserve(&mut self, n: usize) {
        self.by_hash.reserve(n);
    }

    fn clear(&mut self) {
        self.by_hash.clear();
    }

    /// The index in `tools` of an earlier tool named `name`; if there is
    /// none, `name` is recorded as the next tool's (the caller adds it).
    pub(super) fn earlier(&mut self, name: &str, tools: &[Tool]) -> Option<usize> {
        use std::collections::hash_map::Entry;
        use std::hash::BuildHasher;
        match self.by_hash.entry(self.hasher.hash_one(name)) {
            Entry::Occupied(e) => match *e.get() as usize {
                i if tools[i].name == name => Some(i),
                // Two names with one 64-bit hash: look the slow way.
                _ => tools.iter().position(|x| x.name == name),
            },
            Entry::Vacant(e) => {
                e.insert(tools.len() as u32);
                None
            }
        }
    }
}

impl<'t> LoadState<'t> {
    pub(super) fn new(file: FileId, text: &'t str, is_json: bool) -> LoadState<'t> {
        LoadState {
            file,
            text,
            is_json,
            tools: Vec::new(),
            prompts: Vec::new(),
            problems: Vec::new(),
            seen: FirstSeen::default(),
            prompt_seen: std::collections::HashMap::new(),
            cursor: 0,
            prompt_cursor: 0,
            count: 0,
        }
    }

    /// Back to nothing read, to read the file again from the start.
    pub(super) fn reset(&mut self) {
        self.tools.clear();
        self.prompts.clear();
        self.problems.clear();
        self.seen.clear();
        self.prompt_seen.clear();
        self.cursor = 0;
        self.prompt_cursor = 0;
        self.count = 0;
    }

    /// Turn one prompt entry into a prompt, or a problem.
    fn add_prompt(&mut self, mut p: RawPrompt) {
        let span = locate(
            self.file,
            self.text,
            &p.name,
            &mut self.prompt_cursor,
            self.is_json,
        );
        if !self.is_json {
            if let Err(e) = unescape_toml(&mut p.arguments) {
                self.problems.push(Problem::RegistryInvalid {
                    span,
                    message: format!("`arguments` of prompt `{}`: {e}", p.name),
                });
                return;
            }
        }
        let prompt = p.into_prompt(span);
        if let Some(problem) = prompts::check(&prompt) {
            self.problems.push(problem);
            return;
        }
        if let Some(first) = self.prompt_seen.get(&prompt.name) {
            self.problems.push(Problem::DuplicateRegistryTool {
                name: prompt.name.clone(),
                span,
                first: *first,
            });
            return;
        }
        self.prompt_seen.insert(prompt.name.clone(), span);
        self.prompts.push(prompt);
    }

    /// Turn one entry into a tool, or a problem.
    fn add(&mut self, mut t: RawTool) {
        let span = locate(
            self.file,
            self.text,
            &t.name,
            &mut self.cursor,
            self.is_json,
        );
        if !self.is_json {
            for (field, value) in [
                ("input_schema", &mut t.input_schema),
                ("output_schema", &mut t.output_schema),
                ("annotations", &mut t.annotations),
            ] {
                if let Err(e) = unescape_toml(value) {
                    self.problems.push(Problem::RegistryInvalid {
                        span,
                        message: format!("`{field}` of tool `{}`: {e}", t.name),
                    });
                    return;
                }
            }
        }
        let origin = match (t.origin, t.server) {
            (Some(RawOrigin::Remote), None) => {
                self.problems.push(Problem::RegistryInvalid {
                    span,
                    message: format!("remote tool `{}` has no `server`", t.name),
                });
                return;
            }
            (Some(RawOrigin::Builtin), Some(_)) => {
                self.problems.push(Problem::RegistryInvalid {
                    span,
                    message: format!(
                        "builtin tool `{}` names a `server`; only remote tools have one",
                        t.name
                    ),
                });
                return;
            }
            (_, Some(server)) => Origin::Remote { server },
            (_, None) => Origin::Builtin,
        };
        let remote = matches!(origin, Origin::Remote { .. });
        let tool = Tool {
            name: t.name,
            span,
            group: t.group,
            origin,
            // Remote tools are admin-only and disabled unless the registry says otherwise.
            admin_only: t.admin_only.unwrap_or(remote),
            enabled: t.enabled.unwrap_or(!remote),
            class: t.class,
            description: t.description,
            input_schema: t.input_schema,
            output_schema: t.output_schema,
            title: t.title,
            annotations: t.annotations,
        };
        if let Some(p) = check_tool(&tool) {
            self.problems.push(p);
            return;
        }
        if let Some(i) = self.seen.earlier(&tool.name, &self.tools) {
            self.problems.push(Problem::DuplicateRegistryTool {
                name: tool.name.clone(),
                span,
                first: self.tools[i].span,
            });
            return;
        }
        self.tools.push(tool);
    }
}

/// A JSON value read from TOML with its `$json` escapes undone
/// ([`crate::registry::toml_json`]). Only a value that holds the key is parsed again.
fn unescape_toml(value: &mut Option<JsonText>) -> Result<(), String> {
    let Some(raw) = value else { return Ok(()) };
    if !raw.get().contains(toml_json::ESCAPE_KEY) {
        return Ok(());
    }
    let v: serde_json::Value = serde_json::from_str(raw.get()).map_err(|e| e.to_string())?;
    let v = toml_json::unescape(v)?;
    *raw = JsonText(serde_json::value::to_raw_value(&v).map_err(|e| e.to_string())?);
    Ok(())
}

/// Where the reader puts the entries it reads: the [`LoadState`] (each
/// turned into a tool at once), or a list (one table parsed on a thread of
/// [`read_tables`](super::toml_tables::read_tables), added later in file order).
pub(super) trait Entries {
    fn entry(&mut self, t: RawTool);
    fn prompt(&mut self, p: RawPrompt);
    /// Past [`MAX_TOOLS`]: the rest is counted, not kept.
    fn full(&self) -> bool;
    fn count_one(&mut self);
}

impl Entries for LoadState<'_> {
    fn entry(&mut self, t: RawTool) {
        if self.full() {
            self.count_one();
            return;
        }
        self.count += 1;
        self.add(t);
    }
    fn prompt(&mut self, p: RawPrompt) {
        if self.full() {
            self.count_one();
            return;
        }
        self.count += 1;
        self.add_prompt(p);
    }
    fn full(&self) -> bool {
        self.count >= MAX_TOOLS
    }
    fn count_one(&mut self) {
        self.count += 1;
    }
}

/// The top level: `tool` (or `tools`), `prompt` (or `prompts`), and nothing else.
pub(super) struct RegistrySeed<'s, E>(pub(super) &'s mut E);

impl<'de, E: Entries> DeserializeSeed<'de> for RegistrySeed<'_, E> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, E: Entries> Visitor<'de> for RegistrySeed<'_, E> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a registry: a table with a `tool` list")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let (mut had_list, mut had_prompts) = (false, false);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "tool" | "tools" => {
                    if had_list {
                        return Err(serde::de::Error::duplicate_field("tool"));
                    }
                    had_list = true;
                    map.next_value_seed(ToolsSeed(&mut *self.0))?;
                }
                "prompt" | "prompts" => {
                    if had_prompts {
                        return Err(serde::de::Error::duplicate_field("prompt"));
                    }
                    had_prompts = true;
                    for p in map.next_value::<Vec<RawPrompt>>()? {
                        self.0.prompt(p);
                    }
                }
                other => {
                    return Err(serde::de::Error::unknown_field(
                        other,
                        &["tool", "tools", "prompt", "prompts"],
                    ));
                }
            }
        }
        Ok(())
    }
}

/// The list of entries, each handed on as soon as it is read.
struct ToolsSeed<'s, E>(&'s mut E);

impl<'de, E: Entries> DeserializeSeed<'de> for ToolsSeed<'_, E> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de, E: Entries> Visitor<'de> for ToolsSeed<'_, E> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of tools")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        loop {
            if self.0.full() {
                // Over the limit: count the rest without keeping anything.
                match seq.next_element::<IgnoredAny>()? {
                    Some(_) => self.0.count_one(),
                    None => return Ok(()),
                }
                continue;
            }
            match seq.next_element::<RawTool>()? {
                Some(t) => self.0.entry(t),
                None => return Ok(()),
            }
        }
    }
}

fn check_tool(tool: &Tool) -> Option<Problem> {
    if tool.name.is_empty() {
        return Some(Problem::RegistryInvalid {
            span: tool.span,
            message: "a tool has an empty name".into(),
        });
    }
    if let Origin::Remote { server } = &tool.origin {
        let prefix = format!("mcp_{server}_");
        if !tool.name.starts_with(&prefix) || tool.name.len() == prefix.len() {
            return Some(Problem::RemoteNameInvalid {
                name: tool.name.clone(),
                span: tool.span,
                reason: format!("it does not have the form `{prefix}<remote>`"),
            });
        }
        if let Some(reason) = remote_name_problem(&tool.name) {
            return Some(Problem::RemoteNameInvalid {
                name: tool.name.clone(),
                span: tool.span,
                reason,
            });
        }
        let expected = format!("mcp_{server}");
        if tool.group != expected {
            return Some(Problem::RemoteGroupMismatch {
                tool: tool.name.clone(),
                span: tool.span,
                expected,
            });
        }
    }
    None
}
