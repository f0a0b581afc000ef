//! Source files and spans. Every diagnostic points into a [`SourceMap`].

use std::ops::Range;

/// Index of a file in the [`SourceMap`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub u32);

/// A byte range in one source file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
}

impl Span {
    pub fn new(file: FileId, range: Range<usize>) -> Span {
        Span {
            file,
            start: range.start as u32,
            end: range.end as u32,
        }
    }

    pub fn range(&self) -> Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// One loaded file: a policy, a registry or the manifest.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// Path as the user should see it (relative to where they ran the command when possible).
    pub name: String,
    /// The name a compiled table records for this file (a configuration's
    /// or a profile's `file`, hence refusals' `file` and `remediation`):
    /// relative to the project directory for a project's files, so that a
    /// table's bytes do not depend on the working directory. `name` for
    /// files that are not a project's (texts given in memory).
    pub table_name: String,
    pub text: String,
    /// Whether diagnostics may quote this file (excerpts, tokens). False for a
    /// file that is not a policy inside the project and failed to parse as
    /// what it should be: its text may be anything (docs/diagnostics.md,
    /// "What diagnostics quote").
    pub quote: bool,
    /// Found the first time a position is asked for: only a file a
    /// diagnostic points into needs them, and a million-tool registry has
    /// 3.6 million lines (30 MB of offsets, and a pass over the text, that
    /// a clean `toolgate compile` never reads).
    line_starts: std::sync::OnceLock<Vec<usize>>,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        let name = name.into();
        SourceFile {
            table_name: name.clone(),
            name,
            text: text.into(),
            quote: true,
            line_starts: std::sync::OnceLock::new(),
        }
    }

    /// The byte offset at which each line starts (a line ends at `\n`).
    pub(crate) fn line_starts(&self) -> &[usize] {
        self.line_starts.get_or_init(|| {
            std::iter::once(0)
                .chain(self.text.match_indices('\n').map(|(i, _)| i + 1))
                .collect()
        })
    }

    /// The 0-based line of a byte offset (clamped to the text), and the
    /// text of that line up to the offset.
    fn line_prefix(&self, offset: usize) -> (usize, Option<&str>) {
        let offset = offset.min(self.text.len());
        let starts = self.line_starts();
        let line = match starts.binary_search(&offset) {
            Ok(l) => l,
            Err(l) => l - 1,
        };
        (line, self.text.get(starts[line]..offset))
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let (line, prefix) = self.line_prefix(offset);
        let col = prefix
            .map(|s| s.chars().count())
            .unwrap_or(offset.min(self.text.len()) - self.line_starts()[line]);
        (line + 1, col + 1)
    }

    /// 0-based line and column in UTF-16 code units of a byte offset: the
    /// Language Server Protocol's default position encoding.
    pub fn position_utf16(&self, offset: usize) -> (u32, u32) {
        let (line, prefix) = self.line_prefix(offset);
        let col = prefix.map(|s| s.encode_utf16().count()).unwrap_or(0);
        (line as u32, col as u32)
    }

    /// The byte offset of a 0-based line and UTF-16 column; a column past
    /// the line's end is the line's end, a line past the text the text's end.
    pub fn offset_utf16(&self, line: u32, col: u32) -> usize {
        let Some(&start) = self.line_starts().get(line as usize) else {
            return self.text.len();
        };
        let end = self
            .line_starts()
            .get(line as usize + 1)
            .map(|e| e - 1)
            .unwrap_or(self.text.len());
        let mut units = 0u32;
        for (i, c) in self.text[start..end].char_indices() {
            if units >= col {
                return start + i;
            }
            units += c.len_utf16() as u32;
        }
        end
    }
}

/// All files of one compilation, addressed by [`FileId`].
#[derive(Debug, Clone, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        self.files.push(SourceFile::new(name, text));
        FileId(self.files.len() as u32 - 1)
    }

    /// Set the name a compiled table records for a file ([`SourceFile::table_name`]).
    pub fn set_table_name(&mut self, id: FileId, table_name: String) {
        if let Some(f) = self.files.get_mut(id.0 as usize) {
            f.table_name = table_name;
        }
    }

    /// Mark a file as one that diagnostics must not quote.
    pub fn forbid_quoting(&mut self, id: FileId) {
        if let Some(f) = self.files.get_mut(id.0 as usize) {
            f.quote = false;
        }
    }

    pub fn get(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    pub fn files(&self) -> impl Iterator<Item = (FileId, &SourceFile)> {
        self.files
            .iter()
            .enumerate()
            .map(|(i, f)| (FileId(i as u32), f))
    }

    /// The text under a span; empty in a file that must not be quoted.
    pub fn text(&self, span: Span) -> &str {
        let f = self.get(span.file);
        if !f.quote {
            return "";
        }
        f.text.get(span.range()).unwrap_or("")
    }
}
