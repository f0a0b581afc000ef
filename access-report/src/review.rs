//! What `--diff OLD` adds: the compiler's semantic diff of the two tables,
//! as it is (`toolgate diff --format json`). The one place this crate names
//! the review code (`diff`, and the log reader's types in `log.rs` come from
//! the runtime), so moving it to another crate is a change here only.

use serde::Serialize;
use toolgate_runtime::Table;

pub use toolgate_review::diff::{diff, Diff};

/// The diff of `old` against `new`, with both digests.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Changes {
    /// What OLD was given as (a path or a git revision).
    pub old_name: String,
    pub old_digest: String,
    pub new_digest: String,
    pub diff: Diff,
}

pub fn changes(old: &Table, new: &Table, old_name: &str) -> Changes {
    Changes {
        old_name: old_name.to_string(),
        old_digest: old.digest_hex(),
        new_digest: new.digest_hex(),
        diff: diff(old, new),
    }
}

/// `toolgate explain --format json`'s entries: the simulation's gate by gate.
pub use toolgate_review::readout::Explained;
