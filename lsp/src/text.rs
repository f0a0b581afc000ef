//! Byte offsets of the compiler's spans <-> LSP positions (line, UTF-16 code
//! unit), the protocol's default position encoding.

use lsp_types::{Position, Range};

/// Where each line starts, for one text.
pub struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    pub fn new(text: &'a str) -> LineIndex<'a> {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineIndex { text, starts }
    }

    pub fn position(&self, offset: usize) -> Position {
        let offset = offset.min(self.text.len());
        let line = match self.starts.binary_search(&offset) {
            Ok(l) => l,
            Err(l) => l - 1,
        };
        let start = self.starts[line];
        let character = self
            .text
            .get(start..offset)
            .map(|s| s.encode_utf16().count())
            .unwrap_or(0);
        Position::new(line as u32, character as u32)
    }

    pub fn range(&self, range: std::ops::Range<usize>) -> Range {
        Range::new(self.position(range.start), self.position(range.end))
    }

    /// The byte offset of a position; a position past a line's end is the
    /// line's end, a line past the text is the text's end.
    pub fn offset(&self, p: Position) -> usize {
        let Some(&start) = self.starts.get(p.line as usize) else {
            return self.text.len();
        };
        let end = self
            .starts
            .get(p.line as usize + 1)
            .map(|e| e - 1)
            .unwrap_or(self.text.len());
        let mut units = 0u32;
        for (i, c) in self.text[start..end].char_indices() {
            if units >= p.character {
                return start + i;
            }
            units += c.len_utf16() as u32;
        }
        end
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
