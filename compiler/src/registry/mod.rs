//! The registry: the tools that exist, in registry order. Read from TOML or
//! JSON (one schema, docs/registry.md), or imported from an MCP `tools/list`
//! answer.

pub mod mcp_pages;
pub mod prompts;
pub mod toml_json;

pub use prompts::Prompt;
use prompts::{McpPrompt, RawPrompt};

use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;

use crate::diagnostics::Problem;
use crate::source::{FileId, Span};

/// Registry files larger than this are refused with TG0002.
pub const MAX_REGISTRY_BYTES: usize = 256 * 1024 * 1024;
/// At most this many tools in one registry (TG0002 beyond).
pub const MAX_TOOLS: usize = 1 << 20;
/// At most this many threads parse a TOML registry's tables (and only when
/// each gets [`MIN_TABLES_PER_THREAD`] tables: a thread costs more than a
/// small registry's parse).
pub const PARSE_THREADS: usize = 4;
const MIN_TABLES_PER_THREAD: usize = 4096;
/// How many tables a parser thread parses and hands on at a time.
const PARSE_RUN: usize = 16384;
/// Consecutive tables parsed as one document: the parser's fixed cost per
/// document (its token buffer, its tree) is most of one small table's.
const TABLES_PER_DOCUMENT: usize = 64;
/// The longest a remote tool's local name may be.
pub use toolgate_runtime::names::MAX_REMOTE_NAME;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    Builtin,
    Remote { server: String },
}

/// One registered tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Tool {
    pub name: String,
    pub span: Span,
    pub group: String,
    pub origin: Origin,
    pub admin_only: bool,
    pub enabled: bool,
    pub class: Option<String>,
    pub description: Option<String>,
    /// The input schema as compact JSON text (only its size and its text
    /// are ever used: a value tree per tool would cost tens of times the file).
    pub input_schema: Option<JsonText>,
    /// MCP `outputSchema`, kept as given (compact JSON).
    pub output_schema: Option<JsonText>,
    /// MCP `title` and `annotations`, kept as given (annotations as compact JSON).
    pub title: Option<String>,
    pub annotations: Option<JsonText>,
}

impl Tool {
    pub fn is_remote(&self) -> bool {
        matches!(self.origin, Origin::Remote { .. })
    }
}

#[derive(Debug, Clone, Default)]
pub struct Registry {
    pub tools: Vec<Tool>,
    /// The remote servers' prompts, pinned (docs/registry.md, "Prompts").
    pub prompts: Vec<Prompt>,
}

/// The file schema (TOML `[[tool]]` tables, or JSON `{"tool": [...]}`), as
/// written by [`to_toml`] and [`to_json`]. Reading goes through
/// [`RegistrySeed`], which turns each entry into a [`Tool`] as it is read.
#[derive(Debug, Serialize)]
struct RawRegistry {
    tool: Vec<RawTool>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    prompt: Vec<RawPrompt>,
}

#[derive(Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
struct RawTool {
    name: String,
    group: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    origin: Option<RawOrigin>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    server: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    admin_only: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    enabled: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    class: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "compact_json",
        serialize_with = "as_value"
    )]
    input_schema: Option<JsonText>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "compact_json",
        serialize_with = "as_value"
    )]
    output_schema: Option<JsonText>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "compact_json",
        serialize_with = "as_value"
    )]
    annotations: Option<JsonText>,
}

/// A JSON value kept as its compact text.
#[derive(Debug, Clone)]
pub struct JsonText(Box<RawValue>);

impl JsonText {
    /// The compact JSON text.
    pub fn get(&self) -> &str {
        self.0.get()
    }
}

impl PartialEq for JsonText {
    fn eq(&self, other: &JsonText) -> bool {
        self.get() == other.get()
    }
}

/// Any value (from TOML or JSON) as compact JSON text. The value tree exists
/// only while this one value is read.
fn compact_json<'de, D: Deserializer<'de>>(d: D) -> Result<Option<JsonText>, D::Error> {
    let v = serde_json::Value::deserialize(d)?;
    serde_json::value::to_raw_value(&v)
        .map(|r| Some(JsonText(r)))
        .map_err(serde::de::Error::custom)
}

/// Compact JSON text written back as a value (so TOML output gets tables).
fn as_value<S: Serializer>(v: &Option<JsonText>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        None => s.serialize_none(),
        Some(raw) => serde_json::from_str::<serde_json::Value>(raw.get())
            .map_err(serde::ser::Error::custom)?
            .serialize(s),
    }
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum RawOrigin {
    Builtin,
    Remote,
}

/// Byte offset of a 1-based line and column.
fn offset_of(text: &str, line: usize, col: usize) -> usize {
    let mut off = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            return off
                + l.char_indices()
                    .nth(col.saturating_sub(1))
                    .map(|(b, _)| b)
                    .unwrap_or(l.len());
        }
        off += l.len();
    }
    text.len()
}

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

fn toml_whole(text: &str, state: &mut LoadState<'_>) -> Result<(), ReadError> {
    toml::Deserializer::parse(text)
        .and_then(|de| RegistrySeed(state).deserialize(de))
        .map_err(|e| (e.span().unwrap_or(0..0), e.message().to_string()))
}

type ReadError = (std::ops::Range<usize>, String);

/// Every table's entries added to `state` in file order, or the first
/// failing group's error (its range in the file; the caller then reads the
/// whole document, whose errors are the ones reported).
///
/// Parsing is most of a large registry's cost and the tables are
/// independent, so a registry of many tables is cut into runs of
/// [`PARSE_RUN`] tables that up to [`PARSE_THREADS`] threads parse (thread
/// `k` the runs `k`, `k + threads`, ...), each handing on one run at a time
/// while it parses the next. This thread adds the runs in file order, so
/// spans, duplicates, problems and the limit are those of one pass; at most
/// two runs per thread wait parsed. The threads live for the whole read: a
/// thread per run would give the allocator a new heap, and the kernel new
/// pages to clear, every run.
fn read_tables(chunks: &[(usize, &str)], state: &mut LoadState<'_>) -> Result<(), ReadError> {
    // One tool a table, at most MAX_TOOLS kept: grown once, not by doubling
    // a million-entry vector and map.
    let text = state.text;
    let expected = chunks.len().min(MAX_TOOLS);
    state.tools.reserve(expected);
    state.seen.reserve(expected);
    let add = |state: &mut LoadState<'_>, parsed: Parsed| {
        for (start, read) in parsed {
            match read {
                Ok(entries) => entries.into_iter().for_each(|e| match e {
                    RawEntry::Tool(t) => state.entry(t),
                    RawEntry::Prompt(p) => state.prompt(p),
                }),
                Err(e) => {
                    let r = e.span().unwrap_or(0..0);
                    return Err((start + r.start..start + r.end, e.message().to_string()));
                }
            }
        }
        Ok(())
    };
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(PARSE_THREADS)
        .min(chunks.len() / MIN_TABLES_PER_THREAD);
    if threads < 2 {
        return add(state, parse_run(text, chunks));
    }
    let runs: Vec<&[(usize, &str)]> = chunks.chunks(PARSE_RUN).collect();
    std::thread::scope(|scope| {
        let parsed: Vec<_> = (0..threads)
            .map(|k| {
                let (tx, rx) = std::sync::mpsc::sync_channel::<Parsed>(1);
                let mine: Vec<_> = runs.iter().skip(k).step_by(threads).copied().collect();
                scope.spawn(move || {
                    for run in mine {
                        let parsed = parse_run(text, run);
                        let failed = parsed.last().is_some_and(|(_, r)| r.is_err());
                        // A send fails once the adding stopped at an error.
                        if tx.send(parsed).is_err() || failed {
                            break;
                        }
                    }
                });
                rx
            })
            .collect();
        for i in 0..runs.len() {
            // A thread stops sending only after a failed run (added, and
            // returned from, above) or a panic, which the scope carries here.
            let Ok(run) = parsed[i % threads].recv() else {
                break;
            };
            add(state, run)?;
        }
        Ok(())
    })
}

/// Groups of tables parsed: each group's offset in the file and its entries
/// or error.
type Parsed = Vec<(usize, Result<Vec<RawEntry>, toml::de::Error>)>;

/// One entry of a table parsed on a thread, added later in file order.
enum RawEntry {
    Tool(RawTool),
    Prompt(RawPrompt),
}

/// Each group of [`TABLES_PER_DOCUMENT`] tables of `run` parsed as one
/// document, in file order, up to the first group that fails.
fn parse_run<'t>(text: &'t str, run: &[(usize, &'t str)]) -> Parsed {
    let mut out = Vec::with_capacity(run.len().div_ceil(TABLES_PER_DOCUMENT));
    for group in run.chunks(TABLES_PER_DOCUMENT) {
        let (Some(&(start, _)), Some(&(last, piece))) = (group.first(), group.last()) else {
            continue;
        };
        let mut tools = Vec::with_capacity(group.len());
        let r = match text.get(start..last + piece.len()) {
            Some(doc) => toml::Deserializer::parse(doc)
                .and_then(|de| RegistrySeed(&mut tools).deserialize(de)),
            // Offsets of line starts in this text: always a range of it.
            None => Err(serde::de::Error::custom(
                "the registry's tables could not be cut",
            )),
        };
        let failed = r.is_err();
        out.push((start, r.map(|()| tools)));
        if failed {
            break;
        }
    }
    out
}

/// A TOML registry cut before each line that is exactly `[[tool]]` (or
/// each that is `[[tools]]`) or `[[prompt]]` (`[[prompts]]`), with each
/// piece's byte offset; `None` when anything but blank lines and comments
/// precedes the first such line, or when both spellings of one header
/// appear (the document's error is the whole reading's).
fn toml_tables(text: &str) -> Option<Vec<(usize, &str)>> {
    let mut starts = Vec::new();
    let mut header = None;
    let mut prompt_header = None;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let t = line.trim();
        let slot = match t {
            "[[tool]]" | "[[tools]]" => Some(&mut header),
            "[[prompt]]" | "[[prompts]]" => Some(&mut prompt_header),
            _ => None,
        };
        if let Some(slot) = slot {
            if *slot.get_or_insert(t) != t {
                return None;
            }
            starts.push(at);
        } else if starts.is_empty() && !(t.is_empty() || t.starts_with('#')) {
            return None;
        }
        at += line.len();
    }
    starts.first()?;
    let mut out = Vec::with_capacity(starts.len());
    for (i, &s) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(text.len());
        out.push((s, &text[s..end]));
    }
    Some(out)
}

/// What the registry reader builds as it goes: the valid tools, a problem for
/// each invalid entry, and (by name hash) where each name was first seen.
struct LoadState<'t> {
    file: FileId,
    text: &'t str,
    /// JSON file: its JSON values are read as written (no TOML escapes).
    is_json: bool,
    tools: Vec<Tool>,
    prompts: Vec<Prompt>,
    problems: Vec<Problem>,
    seen: FirstSeen,
    /// Each prompt's name and where it was first seen (prompts are few).
    prompt_seen: std::collections::HashMap<String, Span>,
    cursor: usize,
    /// Where the next prompt's name is looked for: prompts are in order
    /// among themselves, not among the tools.
    prompt_cursor: usize,
    /// Entries read, valid or not.
    count: usize,
}

/// Where each name was first seen, by a 64-bit hash of it (a hit is
/// confirmed by comparing names, so no second copy of every name is kept).
/// The hash is foldhash, seeded per reader: a registry a server wrote cannot
/// be made of names that collide.
#[derive(Default)]
struct FirstSeen {
    by_hash: foldhash::HashMap<u64, u32>,
    hasher: foldhash::fast::RandomState,
}

impl FirstSeen {
    fn reserve(&mut self, n: usize) {
        self.by_hash.reserve(n);
    }

    fn clear(&mut self) {
        self.by_hash.clear();
    }

    /// The index in `tools` of an earlier tool named `name`; if there is
    /// none, `name` is recorded as the next tool's (the caller adds it).
    fn earlier(&mut self, name: &str, tools: &[Tool]) -> Option<usize> {
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
    fn new(file: FileId, text: &'t str, is_json: bool) -> LoadState<'t> {
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
    fn reset(&mut self) {
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
/// [`parse_tables`], added later in file order).
trait Entries {
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

impl Entries for Vec<RawEntry> {
    fn entry(&mut self, t: RawTool) {
        self.push(RawEntry::Tool(t));
    }
    fn prompt(&mut self, p: RawPrompt) {
        self.push(RawEntry::Prompt(p));
    }
    // One table holds one entry: the limit is the state's, applied as the
    // entries are added.
    fn full(&self) -> bool {
        false
    }
    fn count_one(&mut self) {}
}

/// The top level: `tool` (or `tools`), `prompt` (or `prompts`), and nothing else.
struct RegistrySeed<'s, E>(&'s mut E);

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

/// Span of the quoted name, searching forward from `cursor` (tools appear in
/// order). `is_json` says how a string with escapes is decoded.
fn locate(file: FileId, text: &str, name: &str, cursor: &mut usize, is_json: bool) -> Span {
    // As written without escapes: a literal string, or a basic string (a name
    // holding a newline is written `"a\nb"` in TOML and JSON alike).
    // Each needle is made only when the one before is not found (the first
    // almost always is).
    let needles: [&dyn Fn() -> String; 3] =
        [&|| format!("\"{name}\""), &|| format!("'{name}'"), &|| {
            serde_json::to_string(name).unwrap_or_default()
        }];
    for make in needles {
        let needle = make();
        let Some(rest) = text.get(*cursor..) else {
            break;
        };
        // Only as the value of a `name` key: the same quoted string inside
        // a description (`'like "b"'`) is not where tool `b` is named.
        let found = rest
            .match_indices(&needle)
            .map(|(i, _)| *cursor + i)
            .find(|&start| follows_name_key(text.as_bytes(), start));
        if let Some(start) = found {
            *cursor = start + needle.len();
            return Span::new(file, start..start + needle.len());
        }
    }
    // Written with other escapes (`"g\u0435t"`): the next `name` key whose
    // string decodes to the name. Without this the span would be the
    // cursor, the end of the previous tool's name.
    if let Some(r) = locate_escaped(text, name, *cursor, is_json) {
        *cursor = r.end;
        return Span::new(file, r);
    }
    Span::new(file, *cursor..*cursor)
}

/// Whether the string value starting at `value` is a `name` key's:
/// `name = `, `"name": ` or `'name' = ` before it, blanks allowed around the
/// `=` or `:`, and the key not the tail of a longer one (`display_name`).
fn follows_name_key(bytes: &[u8], value: usize) -> bool {
    let skip_blank_back = |mut at: usize| {
        while at > 0 && matches!(bytes[at - 1], b' ' | b'\t') {
            at -= 1;
        }
        at
    };
    let at = skip_blank_back(value);
    if at == 0 || !matches!(bytes[at - 1], b'=' | b':') {
        return false;
    }
    let mut end = skip_blank_back(at - 1);
    let quote = end
        .checked_sub(1)
        .map(|q| bytes[q])
        .filter(|q| *q == b'"' || *q == b'\'');
    if quote.is_some() {
        end -= 1;
    }
    let Some(key) = end.checked_sub("name".len()) else {
        return false;
    };
    if &bytes[key..end] != b"name" {
        return false;
    }
    let before = key.checked_sub(1).map(|b| bytes[b]);
    match quote {
        Some(q) => before == Some(q),
        None => !before
            .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.'),
    }
}

/// The byte range of the first string value of a `name` key at or after
/// `from` (`name = "..."` in TOML, `"name": "..."` in JSON) that decodes to
/// `name`.
fn locate_escaped(
    text: &str,
    name: &str,
    from: usize,
    is_json: bool,
) -> Option<std::ops::Range<usize>> {
    let bytes = text.as_bytes();
    let rest = text.get(from..)?;
    for (i, _) in rest.match_indices("name") {
        let key = from + i;
        let before = key.checked_sub(1).map(|b| bytes[b]);
        if before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') {
            continue;
        }
        let mut at = key + "name".len();
        if before == Some(b'"') {
            if bytes.get(at) != Some(&b'"') {
                continue;
            }
            at += 1;
        }
        let skip_blank = |mut at: usize| {
            while matches!(bytes.get(at), Some(b' ' | b'\t')) {
                at += 1;
            }
            at
        };
        at = skip_blank(at);
        if !matches!(bytes.get(at), Some(b'=' | b':')) {
            continue;
        }
        let start = skip_blank(at + 1);
        let Some(end) = string_end(bytes, start) else {
            continue;
        };
        let literal = &text[start..end];
        let decoded = if is_json {
            serde_json::from_str::<String>(literal).ok()
        } else {
            toml::from_str::<std::collections::BTreeMap<String, String>>(&format!("v = {literal}"))
                .ok()
                .and_then(|mut m| m.remove("v"))
        };
        if decoded.as_deref() == Some(name) {
            return Some(start..end);
        }
    }
    None
}

/// The end (past the closing quote) of the one-line string literal starting
/// at `start`: `'...'` without escapes, or `"..."` with backslash escapes.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let quote = *bytes.get(start)?;
    if quote != b'"' && quote != b'\'' {
        return None;
    }
    let mut i = start + 1;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\n' => return None,
            b'\\' if quote == b'"' => i += 2,
            _ if b == quote => return Some(i + 1),
            _ => i += 1,
        }
    }
    None
}

pub use toolgate_runtime::names::remote_name_problem;

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

/// The MCP `tools/list` result (bare, or inside a JSON-RPC response); a
/// live server's answer carries its `prompts/list` too (`prompts`).
#[derive(Deserialize)]
struct ToolsList {
    tools: Vec<McpTool>,
    #[serde(default)]
    prompts: Vec<McpPrompt>,
}

#[derive(Deserialize)]
struct McpTool {
    name: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default, rename = "inputSchema", deserialize_with = "compact_json")]
    input_schema: Option<JsonText>,
    #[serde(default, rename = "outputSchema", deserialize_with = "compact_json")]
    output_schema: Option<JsonText>,
    #[serde(default, deserialize_with = "compact_json")]
    annotations: Option<JsonText>,
}

pub use toolgate_runtime::names::remote_tool_name;

/// The pinned digest of a remote tool's definition as the registry holds it
/// ([`toolgate_runtime::mcp::definition_digest`] of its title, description,
/// schemas and annotations): what a gateway compares a server's listing with.
pub fn definition_digest(tool: &Tool) -> String {
    let json = |t: &Option<JsonText>| {
        t.as_ref()
            .and_then(|j| serde_json::from_str::<serde_json::Value>(j.get()).ok())
    };
    let mut def = serde_json::Map::new();
    let mut put = |k: &str, v: Option<serde_json::Value>| {
        if let Some(v) = v {
            def.insert(k.to_string(), v);
        }
    };
    put("title", tool.title.clone().map(serde_json::Value::String));
    put(
        "description",
        tool.description.clone().map(serde_json::Value::String),
    );
    put("inputSchema", json(&tool.input_schema));
    put("outputSchema", json(&tool.output_schema));
    put("annotations", json(&tool.annotations));
    toolgate_runtime::mcp::definition_digest(&serde_json::Value::Object(def))
}

/// The tool names of an MCP `tools/list` answer (bare, or inside a JSON-RPC
/// response), as listed; the error keeps only schema words.
pub fn tools_list_names(text: &str) -> Result<Vec<String>, String> {
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| format!("not JSON (line {}, column {})", e.line(), e.column()))?;
    if value.get("error").is_some() {
        return Err("a JSON-RPC error response, not a tools/list result".into());
    }
    let list = value.get("result").cloned().unwrap_or(value);
    let list: ToolsList = serde_json::from_value(list)
        .map_err(|_| "not an MCP tools/list result (`tools`, each with a `name`)".to_string())?;
    Ok(list.tools.into_iter().map(|t| t.name).collect())
}

/// Turn an MCP `tools/list` answer from `server` into registry entries. A
/// remote name that breaks the naming rule is a problem, never a silent drop.
pub fn import_mcp(file: FileId, text: &str, server: &str) -> (Registry, Vec<Problem>) {
    let value: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            let at = offset_of(text, e.line(), e.column());
            return (
                Registry::default(),
                vec![Problem::RegistryInvalid {
                    span: Span::new(file, at..at),
                    message: e.to_string(),
                }],
            );
        }
    };
    if let Some(err) = value.get("error") {
        return (
            Registry::default(),
            vec![Problem::RegistryInvalid {
                span: Span::new(file, 0..text.len().min(200)),
                message: format!(
                    "this is a JSON-RPC error response, not a tools/list result: {err}"
                ),
            }],
        );
    }
    // Accept the JSON-RPC envelope `{"jsonrpc":"2.0","id":1,"result":{"tools":[...]}}` too.
    let list = value.get("result").cloned().unwrap_or(value);
    let list: ToolsList = match serde_json::from_value(list) {
        Ok(l) => l,
        Err(e) => {
            return (
                Registry::default(),
                vec![Problem::RegistryInvalid {
                    span: Span::new(file, 0..0),
                    message: format!("not an MCP tools/list result: {e}"),
                }],
            )
        }
    };
    let mut problems = Vec::new();
    if let Some(reason) = remote_name_problem(server) {
        problems.push(Problem::RemoteNameInvalid {
            name: server.to_string(),
            span: Span::new(file, 0..0),
            reason: format!("the server name is invalid: {reason}"),
        });
        return (Registry::default(), problems);
    }
    let mut tools: Vec<Tool> = Vec::with_capacity(list.tools.len());
    let mut seen = FirstSeen::default();
    seen.reserve(list.tools.len());
    let mut cursor = 0;
    for t in list.tools {
        let span = locate(file, text, &t.name, &mut cursor, true);
        let name = remote_tool_name(server, &t.name);
        if let Some(reason) = remote_name_problem(&t.name).or_else(|| remote_name_problem(&name)) {
            problems.push(Problem::RemoteNameInvalid { name, span, reason });
            continue;
        }
        if let Some(i) = seen.earlier(&name, &tools) {
            // The first entry stays, so the registry returned still holds
            // each name once; the command refuses to write it (TG4006).
            problems.push(Problem::ServerListsTwice {
                name: t.name,
                span,
                first: tools[i].span,
            });
            continue;
        }
        tools.push(Tool {
            name,
            span,
            group: format!("mcp_{server}"),
            origin: Origin::Remote {
                server: server.to_string(),
            },
            admin_only: true,
            enabled: false,
            class: None,
            description: t.description,
            input_schema: t.input_schema,
            output_schema: t.output_schema,
            title: t.title,
            annotations: t.annotations,
        });
    }
    let mut prompts: Vec<Prompt> = Vec::with_capacity(list.prompts.len());
    let mut prompt_cursor = 0;
    for p in list.prompts {
        let span = locate(file, text, &p.name, &mut prompt_cursor, true);
        let prompt = Prompt {
            name: remote_tool_name(server, &p.name),
            span,
            server: server.to_string(),
            title: p.title,
            description: p.description,
            arguments: p.arguments,
        };
        if let Some(problem) = remote_name_problem(&p.name)
            .map(|reason| Problem::RemoteNameInvalid {
                name: prompt.name.clone(),
                span,
                reason: format!("prompt: {reason}"),
            })
            .or_else(|| prompts::check(&prompt))
        {
            problems.push(problem);
            continue;
        }
        if let Some(first) = prompts.iter().find(|q| q.name == prompt.name) {
            problems.push(Problem::ServerListsTwice {
                name: p.name,
                span,
                first: first.span,
            });
            continue;
        }
        prompts.push(prompt);
    }
    (Registry { tools, prompts }, problems)
}

/// Render registry entries as TOML in the registry schema: one `[[tool]]`
/// table each, its JSON values as one-line inline values in their own key
/// order, with null and the other values TOML cannot hold escaped
/// ([`crate::registry::toml_json`]). Reading it back gives the same tools.
pub fn to_toml(registry: &Registry) -> String {
    let mut out = String::new();
    for t in &registry.tools {
        let mut raw = raw_tool(t);
        let json = [
            ("input_schema", raw.input_schema.take()),
            ("output_schema", raw.output_schema.take()),
            ("annotations", raw.annotations.take()),
        ];
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str("[[tool]]\n");
        // Strings, booleans and names only: the toml writer cannot fail on them.
        out.push_str(&toml::to_string(&raw).unwrap_or_default());
        for (key, value) in json {
            let Some(value) = value else { continue };
            let v: serde_json::Value =
                serde_json::from_str(value.get()).unwrap_or(serde_json::Value::Null);
            out.push_str(key);
            out.push_str(" = ");
            out.push_str(&toml_json::inline(&v));
            out.push('\n');
        }
    }
    for p in &registry.prompts {
        let mut raw = RawPrompt::of(p);
        let arguments = raw.arguments.take();
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str("[[prompt]]\n");
        out.push_str(&toml::to_string(&raw).unwrap_or_default());
        if let Some(a) = arguments {
            let v: serde_json::Value =
                serde_json::from_str(a.get()).unwrap_or(serde_json::Value::Null);
            out.push_str("arguments = ");
            out.push_str(&toml_json::inline(&v));
            out.push('\n');
        }
    }
    out
}

/// What a tool's descriptor costs in a prompt: its name, description and
/// input schema as compact JSON (the registry's text). One definition for
/// the table (`lower`) and the sync report.
pub fn descriptor_bytes(name: &str, description: Option<&str>, schema: Option<&JsonText>) -> usize {
    name.len() + description.map(str::len).unwrap_or(0) + schema.map(|s| s.get().len()).unwrap_or(0)
}

/// Render registry entries as JSON in the registry schema.
pub fn to_json(registry: &Registry) -> String {
    let raw = RawRegistry {
        tool: registry.tools.iter().map(raw_tool).collect(),
        prompt: registry.prompts.iter().map(RawPrompt::of).collect(),
    };
    serde_json::to_string_pretty(&raw).unwrap_or_default()
}

fn raw_tool(t: &Tool) -> RawTool {
    let server = match &t.origin {
        Origin::Remote { server } => Some(server.clone()),
        Origin::Builtin => None,
    };
    RawTool {
        name: t.name.clone(),
        group: t.group.clone(),
        origin: Some(if server.is_some() {
            RawOrigin::Remote
        } else {
            RawOrigin::Builtin
        }),
        server,
        admin_only: Some(t.admin_only),
        enabled: Some(t.enabled),
        class: t.class.clone(),
        title: t.title.clone(),
        description: t.description.clone(),
        input_schema: t.input_schema.clone(),
        output_schema: t.output_schema.clone(),
        annotations: t.annotations.clone(),
    }
}

#[cfg(test)]
mod table_by_table {
    use super::*;

    /// The same registry (or the same error) as reading the document whole.
    fn same_as_whole(text: &str) {
        let f = FileId(0);
        let split = parse(f, text, false);
        let mut state = LoadState::new(f, text, false);
        let whole = toml_whole(text, &mut state);
        match (split, whole) {
            (Ok((r, p)), Ok(())) => {
                assert_eq!(r.tools, state.tools, "{text}");
                assert_eq!(r.prompts, state.prompts, "{text}");
                assert_eq!(p, state.problems, "{text}");
            }
            (Err(Problem::RegistryInvalid { span, message }), Err((range, m))) => {
                assert_eq!(
                    (span.start as usize, span.end as usize, message),
                    (range.start, range.end, m),
                    "{text}"
                );
            }
            (a, b) => panic!("{text}: split {:?} whole {:?}", a.is_ok(), b.is_ok()),
        }
    }

    #[test]
    fn reading_table_by_table_equals_reading_whole() {
        for text in [
            "[[tool]]\nname = \"a\"\ngroup = \"g\"\n[[tool]]\nname = \"b\"\ngroup = \"g\"\n",
            "# comment\n\n[[tool]]\nname = \"a\"\ngroup = \"g\"\n[tool.input_schema]\ntype = \"object\"\n[[tool]]\nname = \"a\"\ngroup = \"g\"\n",
            // A multi-line string holding a `[[tool]]` line: read whole.
            "[[tool]]\nname = \"a\"\ngroup = \"g\"\ndescription = \"\"\"\n[[tool]]\n\"\"\"\n",
            // Something before the first table: read whole.
            "x = 1\n[[tool]]\nname = \"a\"\ngroup = \"g\"\n",
            // Errors keep the whole document's span and message.
            "[[tool]]\nname = \"a\"\ngroup = \"g\"\n[[tool]]\nname = \"b\"\n",
            "[[tool]]\nname = \"a\"\ngroup = \"g\"\n[[tool]]\nname = = \"b\"\n",
            "[[tool]]\nname = \"a\"\ngroup = \"g\"\nname = \"b\"\n",
            // `tool` and `tools` in one file: the document's duplicate key,
            // whichever tables a parse would group.
            "[[tool]]\nname = \"a\"\ngroup = \"g\"\n[[tools]]\nname = \"b\"\ngroup = \"g\"\n",
            // Prompts between and after tools, and a prompt named as a tool.
            "[[tool]]\nname = \"mcp_s_a\"\ngroup = \"mcp_s\"\nserver = \"s\"\n[[prompt]]\nname = \"mcp_s_a\"\nserver = \"s\"\n[[tool]]\nname = \"b\"\ngroup = \"g\"\n[[prompt]]\nname = \"mcp_s_p\"\nserver = \"s\"\narguments = [{ name = \"x\", required = true }]\n",
            "[[prompt]]\nname = \"mcp_s_p\"\nserver = \"s\"\n[[prompts]]\nname = \"mcp_s_q\"\nserver = \"s\"\n",
            "[[prompt]]\nname = \"mcp_s_p\"\nserver = \"s\"\nbogus = 1\n",
            "",
        ] {
            same_as_whole(text);
        }
    }

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

    /// A live server's prompts, imported as its tools are.
    #[test]
    fn import_mcp_takes_the_prompts_of_a_live_answer() {
        let text = r#"{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"prompts":[{"name":"greet","description":"Say hello.","arguments":[{"name":"who"}]},{"name":"bad name"},{"name":"greet"}]}"#;
        let (reg, problems) = import_mcp(FileId(0), text, "s");
        assert_eq!(
            reg.prompts
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>(),
            ["mcp_s_greet"]
        );
        assert_eq!(
            problems.iter().map(|p| p.code()).collect::<Vec<_>>(),
            ["TG4001", "TG4006"]
        );
        // A captured tools/list answer has none.
        let (reg, problems) = import_mcp(FileId(0), r#"{"tools":[]}"#, "s");
        assert!(reg.prompts.is_empty() && problems.is_empty());
    }

    /// `[[tools]]` after a document's worth of `[[tool]]` tables: each
    /// group would parse, the document does not.
    #[test]
    fn both_headers_are_the_whole_documents_error() {
        let mut text = String::new();
        for i in 0..=TABLES_PER_DOCUMENT {
            text.push_str(&format!("[[tool]]\nname = \"t{i}\"\ngroup = \"g\"\n"));
        }
        text.push_str("[[tools]]\nname = \"u\"\ngroup = \"g\"\n");
        assert!(parse(FileId(0), &text, false).is_err());
        same_as_whole(&text);
    }

    /// More tables than a run per thread: parsed on threads, ahead of the
    /// adding, with the same tools, problems and spans as one pass.
    #[test]
    fn a_registry_read_on_threads_equals_reading_whole() {
        let n = 4 * PARSE_RUN + 2 * MIN_TABLES_PER_THREAD;
        let mut text = String::with_capacity(n * 48);
        for i in 0..n {
            match i {
                // A duplicate of tool 5 in the fourth run (TG4003 with both spans).
                60_000 => text.push_str("[[tool]]\nname = \"t5\"\ngroup = \"g\"\n"),
                // A remote tool without its server's prefix (TG4001).
                66_000 => {
                    text.push_str("[[tool]]\nname = \"wrong\"\ngroup = \"mcp_s\"\nserver = \"s\"\n")
                }
                _ => text.push_str(&format!("[[tool]]\nname = \"t{i}\"\ngroup = \"g\"\n")),
            }
        }
        let (reg, problems) = load(FileId(0), &text, false);
        assert_eq!(reg.tools.len(), n - 2);
        assert_eq!(
            problems.iter().map(|p| p.code()).collect::<Vec<_>>(),
            ["TG4003", "TG4001"]
        );
        same_as_whole(&text);
        // A table that does not parse, in the last run: the error of
        // the whole document.
        text.push_str("[[tool]]\nname = = \"x\"\n");
        same_as_whole(&text);
    }
}

#[cfg(test)]
mod spans {
    use super::*;

    fn spans(text: &str, is_json: bool) -> Vec<(String, String)> {
        let (r, p) = load(FileId(0), text, is_json);
        assert!(p.is_empty(), "{p:?}");
        r.tools
            .iter()
            .map(|t| (t.name.clone(), text[t.span.range()].to_string()))
            .collect()
    }

    #[test]
    fn a_name_written_with_escapes_is_located_at_its_own_key() {
        let toml = "[[tool]]\nname = \"get_page_content\"\ngroup = \"g\"\n\
                    [[tool]]\ngroup = \"g\"\nname = \"g\\u0435t_page_content\"\n\
                    [[tool]]\nname = 'plain'\ngroup = \"g\"\n";
        assert_eq!(
            spans(toml, false),
            [
                ("get_page_content".into(), "\"get_page_content\"".into()),
                (
                    "g\u{435}t_page_content".into(),
                    "\"g\\u0435t_page_content\"".into()
                ),
                ("plain".into(), "'plain'".into()),
            ]
        );
        // TOML's \U form, and a key named `name` inside a schema before it.
        let toml = "[[tool]]\ngroup = \"g\"\ninput_schema = { properties = { name = { type = \"string\" } } }\n\
                    name = \"x\\U0000200By\"\n";
        assert_eq!(
            spans(toml, false),
            [("x\u{200b}y".into(), "\"x\\U0000200By\"".into())]
        );
        let json = "{\"tool\": [{\"name\": \"a\", \"group\": \"g\"}, {\"group\": \"g\", \"name\" : \"\\u0061b\"}]}";
        assert_eq!(
            spans(json, true),
            [
                ("a".into(), "\"a\"".into()),
                ("ab".into(), "\"\\u0061b\"".into())
            ]
        );
    }

    #[test]
    fn a_name_quoted_in_a_description_is_not_taken_for_the_tool() {
        // Tool `a` quotes `b` before `b` is declared, and `c` quotes itself
        // before its own `name` key; neither quote is where the tool is named.
        let toml = "[[tool]]\nname = \"a\"\ngroup = \"g\"\ndescription = 'then call \"b\"'\n\
                    [[tool]]\nname = \"b\"\ngroup = \"g\"\n\
                    [[tool]]\ndescription = 'the \"c\" tool'\ngroup = \"g\"\n\"name\" = \"c\"\n";
        let (r, p) = load(FileId(0), toml, false);
        assert!(p.is_empty(), "{p:?}");
        let got: Vec<std::ops::Range<usize>> = r.tools.iter().map(|t| t.span.range()).collect();
        let at = |key: &str| toml.find(key).map(|k| k + key.len() - 3..k + key.len());
        assert_eq!(
            got,
            [
                at("name = \"a\"").unwrap(),
                at("name = \"b\"").unwrap(),
                at("\"name\" = \"c\"").unwrap(),
            ]
        );
        assert_eq!(&toml[got[1].clone()], "\"b\"");
    }

    #[test]
    fn an_escaped_name_in_a_tools_list_answer_is_located() {
        let answer = r#"{"tools": [{"name": "a"}, {"description": "x", "name": "\u0062"}]}"#;
        let (r, p) = import_mcp(FileId(0), answer, "s");
        assert!(p.is_empty(), "{p:?}");
        let got: Vec<&str> = r.tools.iter().map(|t| &answer[t.span.range()]).collect();
        assert_eq!(got, ["\"a\"", "\"\\u0062\""]);
    }
}
