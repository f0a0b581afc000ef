//! The walk through a peer's pages of one MCP list (`tools/list`,
//! `prompts/list`, ...), under the bounds every toolgate client of MCP
//! keeps ([`PageWalk`]): the gateway's upstream lists, `registry
//! import-mcp` and the Python package's proxy all walk with it.

use std::collections::HashMap;

/// Why the walk through a peer's pages of one list stopped ([`PageWalk`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageStop {
    /// Page `max` (the last one allowed) still had a `nextCursor`.
    TooManyPages { max: usize },
    /// Page `again` sent the cursor page `first` had sent (1-based); the
    /// cursor is cut to 40 characters.
    RepeatedCursor {
        cursor: String,
        first: usize,
        again: usize,
    },
    /// More than `max` items in all.
    TooManyItems { max: usize },
}

/// In words, as "the upstream ..." or "the server ..." continues it.
impl std::fmt::Display for PageStop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PageStop::TooManyPages { max } => {
                write!(f, "listed more than {max} pages (page {max} has a `nextCursor`)")
            }
            PageStop::RepeatedCursor {
                cursor,
                first,
                again,
            } => write!(
                f,
                "repeated the cursor {cursor:?} (page {again} has the `nextCursor` page {first} had): its pagination goes round in a loop"
            ),
            PageStop::TooManyItems { max } => write!(f, "listed more than {max} items"),
        }
    }
}

impl std::error::Error for PageStop {}

/// The walk through a peer's pages of one list (`tools/list`, ...), under
/// the bounds every toolgate client of MCP keeps: a peer chooses its
/// `nextCursor`, and one that never ends, or sends a cursor again, would
/// otherwise be asked forever while the list grows. At most `max_pages`
/// pages and `max_items` items; a cursor sent twice stops the walk. The
/// gateway's upstream lists, `registry import-mcp` and the Python package's
/// proxy all walk with this.
#[derive(Debug, Clone)]
pub struct PageWalk {
    max_pages: usize,
    max_items: usize,
    pages: usize,
    items: usize,
    /// Each cursor sent, with the page that sent it (1-based).
    cursors: HashMap<String, usize>,
}

impl PageWalk {
    /// A walk of at most `max_pages` pages (at least 1) and `max_items`
    /// items.
    pub fn new(max_pages: usize, max_items: usize) -> PageWalk {
        PageWalk {
            max_pages: max_pages.max(1),
            max_items,
            pages: 0,
            items: 0,
            cursors: HashMap::new(),
        }
    }

    /// The pages read so far.
    pub fn pages(&self) -> usize {
        self.pages
    }

    /// The items read so far.
    pub fn items(&self) -> usize {
        self.items
    }

    /// Page `self.pages() + 1` came with `items` items and `next`: the
    /// cursor to ask the next page with, `None` when the list is whole, or
    /// why the walk stops.
    pub fn next(&mut self, items: usize, next: Option<String>) -> Result<Option<String>, PageStop> {
        self.pages += 1;
        self.items = self.items.saturating_add(items);
        if self.items > self.max_items {
            return Err(PageStop::TooManyItems {
                max: self.max_items,
            });
        }
        let Some(next) = next else {
            return Ok(None);
        };
        if let Some(&first) = self.cursors.get(&next) {
            return Err(PageStop::RepeatedCursor {
                cursor: cut(&next),
                first,
                again: self.pages,
            });
        }
        if self.pages >= self.max_pages {
            return Err(PageStop::TooManyPages {
                max: self.max_pages,
            });
        }
        self.cursors.insert(next.clone(), self.pages);
        Ok(Some(next))
    }
}

/// A cursor as an error shows it: at most 40 characters.
fn cut(cursor: &str) -> String {
    match cursor.char_indices().nth(40) {
        Some((i, _)) => format!("{}…", &cursor[..i]),
        None => cursor.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn some(s: &str) -> Option<String> {
        Some(s.to_string())
    }

    #[test]
    fn a_list_ends_when_a_page_has_no_cursor() {
        let mut w = PageWalk::new(3, 10);
        assert_eq!(w.next(4, some("a")), Ok(some("a")));
        assert_eq!(w.next(4, some("b")), Ok(some("b")));
        assert_eq!(w.next(2, None), Ok(None));
        assert_eq!((w.pages(), w.items()), (3, 10));
    }

    #[test]
    fn the_last_page_allowed_may_not_go_on() {
        let mut w = PageWalk::new(2, 100);
        assert_eq!(w.next(1, some("a")), Ok(some("a")));
        assert_eq!(w.next(1, some("b")), Err(PageStop::TooManyPages { max: 2 }));
        assert_eq!(
            PageStop::TooManyPages { max: 2 }.to_string(),
            "listed more than 2 pages (page 2 has a `nextCursor`)"
        );
        // At least one page is read.
        assert_eq!(PageWalk::new(0, 1).next(1, None), Ok(None));
    }

    #[test]
    fn a_cursor_sent_twice_stops_the_walk_naming_both_pages() {
        let mut w = PageWalk::new(100, 100);
        w.next(1, some("a")).unwrap();
        w.next(1, some("b")).unwrap();
        let stop = w.next(1, some("a")).unwrap_err();
        assert_eq!(
            stop,
            PageStop::RepeatedCursor {
                cursor: "a".into(),
                first: 1,
                again: 3
            }
        );
        assert_eq!(
            stop.to_string(),
            "repeated the cursor \"a\" (page 3 has the `nextCursor` page 1 had): its pagination goes round in a loop"
        );
        let long = "x".repeat(50);
        let mut w = PageWalk::new(100, 100);
        w.next(0, Some(long.clone())).unwrap();
        let Err(PageStop::RepeatedCursor { cursor, .. }) = w.next(0, Some(long)) else {
            panic!("a repeated cursor");
        };
        assert_eq!(cursor, format!("{}…", "x".repeat(40)));
    }

    #[test]
    fn more_items_than_the_bound_stop_the_walk() {
        let mut w = PageWalk::new(100, 5);
        w.next(5, some("a")).unwrap();
        assert_eq!(w.next(1, None), Err(PageStop::TooManyItems { max: 5 }));
    }
}
