//! A live MCP server's `tools/list` (and `prompts/list`, [`List`]), gathered page by page under fixed
//! bounds. A server chooses its `nextCursor`; one that never ends, or that
//! sends the same cursor again, would otherwise be asked forever while the
//! answer grows without limit. The bounds (docs/registry.md):
//!
//! - at most [`MAX_PAGES`] pages;
//! - a cursor the server already sent ends the listing with an error;
//! - at most [`MAX_TOOLS`] tools (the registry's own limit);
//! - at most [`MAX_BYTES`] of tool JSON and cursors together.
//!
//! The result is a `tools/list` answer's JSON text, read by
//! [`crate::registry::import_mcp`] like a captured file.

use toolgate_runtime::page_walk::{PageStop, PageWalk};

/// The most pages one listing may take.
pub const MAX_PAGES: usize = 100;
/// The most tools one listing may hold: a registry holds no more.
pub const MAX_TOOLS: usize = crate::registry::MAX_TOOLS;
/// The most bytes of tool JSON (compact) and cursors one listing may hold.
pub const MAX_BYTES: usize = 64 * 1024 * 1024;

/// Which listing the pages are of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum List {
    Tools,
    Prompts,
}

impl List {
    fn method(self) -> &'static str {
        match self {
            List::Tools => "tools/list",
            List::Prompts => "prompts/list",
        }
    }
    fn items(self) -> &'static str {
        match self {
            List::Tools => "tools",
            List::Prompts => "prompts",
        }
    }
}

/// Why a listing was stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PageError {
    /// Page [`MAX_PAGES`] still had a `nextCursor`.
    TooManyPages,
    /// The server sent a cursor it had sent before.
    RepeatedCursor {
        /// The cursor, cut to 40 characters.
        cursor: String,
        /// The page that first sent it and the page that sent it again (1-based).
        first: usize,
        again: usize,
    },
    /// More than [`MAX_TOOLS`] tools.
    TooManyTools,
    /// More than [`MAX_BYTES`] of tools and cursors.
    TooManyBytes,
}

impl PageError {
    /// What stopped a listing of `list`, in words.
    pub fn describe(&self, list: List) -> String {
        let (method, items) = (list.method(), list.items());
        match self {
            PageError::TooManyPages => format!(
                "`{method}` goes on past {MAX_PAGES} pages (page {MAX_PAGES} has a `nextCursor`): \
                 the bound is {MAX_PAGES} pages"
            ),
            PageError::RepeatedCursor {
                cursor,
                first,
                again,
            } => format!(
                "`{method}` page {again} has the `nextCursor` {cursor:?} that page {first} had: \
                 the server's pagination goes round in a loop"
            ),
            PageError::TooManyTools => format!(
                "`{method}` lists more than {MAX_TOOLS} {items}: the bound is {MAX_TOOLS} {items}"
            ),
            PageError::TooManyBytes => format!(
                "`{method}` comes to more than {} MiB of {items} and cursors: the bound is {} MiB",
                MAX_BYTES >> 20,
                MAX_BYTES >> 20
            ),
        }
    }
}

impl std::fmt::Display for PageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe(List::Tools))
    }
}

/// The pages read so far.
#[derive(Debug)]
pub struct Pages {
    /// The one walk's bounds: pages, tools, no cursor twice.
    walk: PageWalk,
    tools: usize,
    bytes: usize,
    out: String,
}

impl Default for Pages {
    fn default() -> Pages {
        Pages::new()
    }
}

impl Pages {
    pub fn new() -> Pages {
        Pages {
            walk: PageWalk::new(MAX_PAGES, MAX_TOOLS),
            tools: 0,
            bytes: 0,
            out: String::from("{\"tools\": [\n"),
        }
    }

    /// Pages read so far.
    pub fn pages(&self) -> usize {
        self.walk.pages()
    }

    /// Add one page: each tool as its JSON text, and the page's
    /// `nextCursor`. Returns the cursor to ask for next (`None`: the listing
    /// is complete), or why the listing must stop.
    pub fn add<I, S>(&mut self, tools: I, next: Option<String>) -> Result<Option<String>, PageError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let before = self.tools;
        for t in tools {
            let t = t.as_ref();
            self.tools += 1;
            if self.tools > MAX_TOOLS {
                return Err(PageError::TooManyTools);
            }
            self.bytes += t.len();
            if self.bytes > MAX_BYTES {
                return Err(PageError::TooManyBytes);
            }
            if self.tools > 1 {
                self.out.push_str(",\n");
            }
            self.out.push_str("  ");
            self.out.push_str(t);
        }
        self.bytes += next.as_ref().map_or(0, String::len);
        if self.bytes > MAX_BYTES {
            return Err(PageError::TooManyBytes);
        }
        self.walk
            .next(self.tools - before, next)
            .map_err(|stop| match stop {
                PageStop::TooManyPages { .. } => PageError::TooManyPages,
                PageStop::TooManyItems { .. } => PageError::TooManyTools,
                PageStop::RepeatedCursor {
                    cursor,
                    first,
                    again,
                } => PageError::RepeatedCursor {
                    cursor,
                    first,
                    again,
                },
            })
    }

    /// The listing as the JSON text of one `tools/list` result, one tool a line.
    pub fn finish(mut self) -> String {
        if self.tools > 0 {
            self.out.push('\n');
        }
        self.out.push_str("]}\n");
        self.out
    }

    /// The listing of tools, and of `prompts` (gathered by a [`Pages`] of
    /// their own), as the JSON text [`crate::registry::import_mcp`] reads:
    /// `{"tools": [...], "prompts": [...]}`.
    pub fn finish_with_prompts(self, prompts: Pages) -> String {
        let mut out = self.finish();
        out.truncate(out.len() - "}\n".len());
        out.push_str(",\n\"prompts\": [\n");
        let items = prompts.finish();
        out.push_str(&items["{\"tools\": [\n".len()..]);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_join_into_one_answer() {
        let mut p = Pages::new();
        assert_eq!(
            p.add([r#"{"name":"a"}"#], Some("c1".into())),
            Ok(Some("c1".into()))
        );
        assert_eq!(
            p.add([r#"{"name":"b"}"#, r#"{"name":"c"}"#], None),
            Ok(None)
        );
        assert_eq!(
            p.finish(),
            "{\"tools\": [\n  {\"name\":\"a\"},\n  {\"name\":\"b\"},\n  {\"name\":\"c\"}\n]}\n"
        );
        assert_eq!(Pages::new().finish(), "{\"tools\": [\n]}\n");
        let (mut t, mut p) = (Pages::new(), Pages::new());
        t.add([r#"{"name":"a"}"#], None).unwrap();
        p.add([r#"{"name":"p"}"#, r#"{"name":"q"}"#], None).unwrap();
        assert_eq!(
            t.finish_with_prompts(p),
            "{\"tools\": [\n  {\"name\":\"a\"}\n],\n\"prompts\": [\n  {\"name\":\"p\"},\n  {\"name\":\"q\"}\n]}\n"
        );
        assert_eq!(
            Pages::new().finish_with_prompts(Pages::new()),
            "{\"tools\": [\n],\n\"prompts\": [\n]}\n"
        );
    }

    #[test]
    fn a_cursor_sent_twice_stops_the_listing() {
        let mut p = Pages::new();
        assert_eq!(
            p.add(Vec::<String>::new(), Some("x".into())),
            Ok(Some("x".into()))
        );
        assert_eq!(
            p.add(Vec::<String>::new(), Some("y".into())),
            Ok(Some("y".into()))
        );
        assert_eq!(
            p.add(Vec::<String>::new(), Some("x".into())),
            Err(PageError::RepeatedCursor {
                cursor: "x".into(),
                first: 1,
                again: 3
            })
        );
    }

    #[test]
    fn page_tool_and_byte_bounds() {
        let mut p = Pages::new();
        for i in 1..MAX_PAGES {
            assert_eq!(p.add(["{}"], Some(i.to_string())), Ok(Some(i.to_string())));
        }
        // The last page allowed may end the listing ...
        let mut q = Pages::new();
        for i in 1..MAX_PAGES {
            q.add(["{}"], Some(i.to_string())).unwrap();
        }
        assert_eq!(q.add(["{}"], None), Ok(None));
        // ... but not ask for another.
        assert_eq!(
            p.add(["{}"], Some("last".into())),
            Err(PageError::TooManyPages)
        );
        assert_eq!(p.pages(), MAX_PAGES);
        let mut p = Pages::new();
        let big = "x".repeat(MAX_BYTES / 2);
        assert_eq!(p.add([&big], Some("c".into())), Ok(Some("c".into())));
        assert_eq!(p.add([&big], None), Err(PageError::TooManyBytes));
        let mut p = Pages::new();
        assert_eq!(
            p.add(std::iter::repeat_n("{}", MAX_TOOLS + 1), None),
            Err(PageError::TooManyTools)
        );
        assert_eq!(
            PageError::TooManyPages.to_string(),
            "`tools/list` goes on past 100 pages (page 100 has a `nextCursor`): the bound is 100 pages"
        );
        assert_eq!(
            PageError::TooManyTools.describe(List::Prompts),
            format!("`prompts/list` lists more than {MAX_TOOLS} prompts: the bound is {MAX_TOOLS} prompts")
        );
    }
}
