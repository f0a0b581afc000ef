//! `toolgate diff OLD NEW --replay LOG`: the decisions recorded in a log,
//! replayed against OLD and NEW (`compiler::replay`), printed after the diff.

use std::path::Path;

use toolgate_review::diff::Diff;
use toolgate_review::replay::{self, Replay};
use toolgate_runtime::Table;

use super::review::DiffFormat;
use crate::io::{read_file, write_err, write_out, Failure};

/// Replay `log` and print it with the diff `d` in `format`.
pub fn replay_and_print(
    old: &Table,
    new: &Table,
    d: &Diff,
    log: &Path,
    format: DiffFormat,
) -> Result<Replay, Failure> {
    let bytes = read_file(log)?;
    let text = String::from_utf8(bytes)
        .map_err(|_| Failure::Usage(format!("{}: not UTF-8 text", log.display())))?;
    let r = replay::replay(old, new, &text)
        .map_err(|e| Failure::Usage(format!("{}: {e}", log.display())))?;
    if r.records > 0 && r.compared == 0 && !r.other_tables.is_empty() {
        write_err(&format!(
            "warning: {}: no record was made by OLD's table ({}); nothing was compared. Replay against the table that served the traffic (a compiled .tgt file as OLD)\n",
            log.display(),
            r.old_table
        ));
    }
    match format {
        DiffFormat::Text => write_out(&format!("{}{}", d.text(), r.text())),
        DiffFormat::Markdown => write_out(&format!("{}\n{}", d.markdown(), r.markdown())),
        DiffFormat::Json => write_out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&replay::DiffReplay {
                diff: d,
                replay: &r
            })?
        )),
    }
    Ok(r)
}
