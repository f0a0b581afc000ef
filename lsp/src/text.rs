//! Byte offsets of the compiler's spans <-> LSP positions (line, UTF-16 code
//! unit), the protocol's default position encoding, by the compiler's own
//! line table (`SourceFile::position_utf16`, `offset_utf16`).

use std::borrow::Cow;

use lsp_types::{Position, Range};
use toolgate_compiler::source::SourceFile;

/// The line table of one text: a file of the project, or a document.
pub struct LineIndex<'a>(Cow<'a, SourceFile>);

impl<'a> LineIndex<'a> {
    /// A document's text (its line table is built here).
    pub fn new(text: &str) -> LineIndex<'a> {
        LineIndex(Cow::Owned(SourceFile::new("", text)))
    }

    /// A file of the project (its line table is already built).
    pub fn of(file: &'a SourceFile) -> LineIndex<'a> {
        LineIndex(Cow::Borrowed(file))
    }

    pub fn position(&self, offset: usize) -> Position {
        let (line, character) = self.0.position_utf16(offset);
        Position::new(line, character)
    }

    pub fn range(&self, range: std::ops::Range<usize>) -> Range {
        Range::new(self.position(range.start), self.position(range.end))
    }

    pub fn offset(&self, p: Position) -> usize {
        self.0.offset_utf16(p.line, p.character)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns_round_trip() {
        let t = "ab\n\u{e9}x\u{1F600}y\n";
        let li = LineIndex::new(t);
        assert_eq!(li.position(0), Position::new(0, 0));
        assert_eq!(li.position(3), Position::new(1, 0));
        // é is one UTF-16 unit, the emoji two.
        let y = t.find('y').unwrap_or(0);
        assert_eq!(li.position(y), Position::new(1, 4));
        assert_eq!(li.offset(Position::new(1, 4)), y);
        assert_eq!(li.offset(Position::new(1, 99)), t.len() - 1);
        assert_eq!(li.offset(Position::new(9, 0)), t.len());
    }
}
