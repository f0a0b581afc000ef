//! The access report (`toolgate report`) and the administrators' console
//! (`toolgate serve --console`): one HTML page over a compiled table.
//!
//! Every decision in it is the runtime's: the matrix is `Context::decisions`
//! for each configuration, role, consumer and enforcement mode, the refusal
//! texts are `Context::refusal`, the readouts are the table's own
//! (`configurations_excluding`, `exclusions_of`), a diff is the compiler's
//! semantic diff and the denial charts are counted by the runtime's log
//! reader. This crate only encodes those answers compactly and renders them
//! (`page/report.js`, textContent only; `page/report.css`).
//!
//! The page is self-contained: the data is a `<script type="application/json">`
//! whose `<`, `>`, `&`, U+2028 and U+2029 are escaped, and a
//! Content-Security-Policy meta (`default-src 'none'`) admits exactly the
//! inline script and style by their SHA-256.

mod data;
mod html;
mod log;
mod review;
mod simulate;

pub use data::{matrix, Matrix, MatrixOptions, REFUSAL_TEXT_LIMIT};
pub use html::{console_page, csp, report_page, script_json, Page};
pub use log::{denials, Denials, LogError};
pub use review::{changes, Changes};
pub use simulate::{simulate, SimulateError, SimulateRequest, Simulation};

/// The report's data: the matrix, and what `--diff` and `--decision-log` add.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// A name for the page title (the project or table as given).
    pub title: String,
    pub matrix: Matrix,
    pub diff: Option<Changes>,
    pub denials: Option<Denials>,
}
