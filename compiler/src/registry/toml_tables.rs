//! A TOML registry read table by table, on threads: the toml crate parses
//! a whole document into its own tree before serde sees it (about 26x the
//! file), so a registry, a run of `[[tool]]` and `[[prompt]]` tables, is cut
//! at its table headers and the pieces parsed apart ([`read_tables`]), with
//! the results and errors of reading the document whole.

use serde::de::DeserializeSeed;

use super::entries::{Entries, LoadState, ReadError, RegistrySeed};
use super::model::{RawTool, MAX_TOOLS};
use super::prompts::RawPrompt;

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
pub(super) fn read_tables(
    chunks: &[(usize, &str)],
    state: &mut LoadState<'_>,
) -> Result<(), ReadError> {
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
pub(super) fn toml_tables(text: &str) -> Option<Vec<(usize, &str)>> {
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

#[cfg(test)]
mod table_by_table {
    use super::*;
    use crate::diagnostics::Problem;
    use crate::registry::entries::LoadState;
    use crate::registry::read::toml_whole;
    use crate::registry::{load, parse};
    use crate::source::FileId;

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
