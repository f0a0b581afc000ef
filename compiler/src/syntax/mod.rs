//! Policy text: the parser (pest, `grammar/`), the
//! syntax tree, and the formatter that prints it back.

pub mod ast;
pub mod formatter;
pub mod parse;
