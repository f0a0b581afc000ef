//! `toolgate lsp`: a language server for policy files. It reuses the
//! compiler for everything it says: the project is loaded by
//! `Project::load_with` over the editor's unsaved texts, checked by
//! `Project::check`, and every diagnostic, quick fix, outline and name index
//! comes from the compiler's findings and syntax trees; hover answers come
//! from the compiled table through the runtime.
//!
//! | module | what |
//! | --- | --- |
//! | `server` | the JSON-RPC loop and request dispatch |
//! | `workspace` | open documents, projects, the last good model |
//! | `convert` | compiler diagnostics -> LSP diagnostics |
//! | `actions` | quick fixes |
//! | `expected` | what the grammar expects at a cursor (works on text that does not parse) |
//! | `complete`, `hover`, `navigate` | completion, hover, definition / references / rename |
//! | `index` | definitions and references, document outline |
//! | `text` | byte offsets <-> LSP positions |
//! | `transport` | `Content-Length` frames read under a cap, bad frames answered |

pub mod actions;
pub mod complete;
pub mod convert;
pub mod expected;
pub mod hover;
pub mod index;
pub mod navigate;
pub mod server;
pub mod text;
pub mod transport;
pub mod workspace;

pub use server::{run_stdio, serve};
pub use workspace::Workspace;
