//! Reading inputs and writing outputs: every byte the CLI reads from a
//! named file or prints goes through here.

use std::io::{IsTerminal, Write};
use std::path::Path;

/// Why a command stopped early.
pub enum Failure {
    /// A usage or I/O error: exit code 2.
    Usage(String),
    /// The input has errors, already rendered: exit code 1.
    Findings(String),
    /// An input the command needs has errors, already rendered: exit code 2
    /// (the query commands, whose exit code 1 means "refused").
    Input(String),
}

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Failure {
        Failure::Usage(e.to_string())
    }
}

pub fn color_stdout() -> bool {
    std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()) && std::io::stdout().is_terminal()
}

/// The exit status when standard output is closed before everything was
/// written (a reader such as `head -1` went away): 128 + SIGPIPE, as a shell
/// reports a process that SIGPIPE ended. It is never 0 or 1, so a closed pipe
/// cannot pass for "clean" or "allowed".
pub const EXIT_CLOSED_STDOUT: i32 = 141;

/// Write to standard output. When it is closed (broken pipe) or fails, stop
/// the process quietly with [`EXIT_CLOSED_STDOUT`]: no message, no panic.
/// Everything the CLI prints goes through here or [`write_err`]: control and
/// format characters (an ESC sequence in a tool name) never reach the
/// terminal raw.
pub fn write_out(text: &str) {
    let text = toolgate_runtime::names::escape_terminal(text);
    let mut out = std::io::stdout().lock();
    if out
        .write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .is_err()
    {
        std::process::exit(EXIT_CLOSED_STDOUT);
    }
}

/// Write to standard error. A closed standard error drops the message; the
/// command carries on and exits with its own status.
pub fn write_err(text: &str) {
    let text = toolgate_runtime::names::escape_terminal(text);
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

/// Most bytes read from one input file given on the command line (tables,
/// stored runs, gateway answers, decision logs, MCP answers, policy files
/// for `fmt`): the registry limit, the largest of the documented limits.
pub const MAX_INPUT_BYTES: usize = toolgate_compiler::registry::MAX_REGISTRY_BYTES;

/// Read an input file: a regular file only, capped while reading at `limit`.
pub fn read_file_capped(path: &Path, limit: usize) -> Result<Vec<u8>, Failure> {
    use toolgate_compiler::project::{read_capped_bytes, Read};
    match read_capped_bytes(path, limit).map_err(|e| Failure::Usage(e.to_string()))? {
        Read::Text(t) => Ok(t.into_bytes()),
        Read::Bytes(b) => Ok(b),
        Read::TooLarge(n) => Err(Failure::Usage(format!(
            "{}: {n} bytes, over the limit of {limit} bytes",
            path.display()
        ))),
    }
}

pub fn read_file(path: &Path) -> Result<Vec<u8>, Failure> {
    read_file_capped(path, MAX_INPUT_BYTES)
}

/// Replace `path` atomically with `bytes`: a temporary file in the same
/// directory is written, synced and renamed over it, so a failed write leaves
/// the old file intact and a concurrent reader sees the old or the new file,
/// never half of one. An existing file keeps its permissions; a symlink at
/// `path` is replaced by the file, never written through.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    let fail = |e: &dyn std::fmt::Display| Failure::Usage(format!("{}: {e}", path.display()));
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".toolgate-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| fail(&e))?;
    tmp.write_all(bytes).map_err(|e| fail(&e))?;
    let perms = match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_file() => Some(m.permissions()),
        _ => default_permissions(),
    };
    if let Some(p) = perms {
        tmp.as_file().set_permissions(p).map_err(|e| fail(&e))?;
    }
    tmp.as_file().sync_all().map_err(|e| fail(&e))?;
    tmp.persist(path).map_err(|e| fail(&e.error))?;
    // Make the rename itself durable (best effort: not every platform can
    // open a directory).
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// A new file is readable by everyone, as `std::fs::write` makes it under
/// the usual umask (a temporary file starts private).
#[cfg(unix)]
fn default_permissions() -> Option<std::fs::Permissions> {
    use std::os::unix::fs::PermissionsExt;
    Some(std::fs::Permissions::from_mode(0o644))
}

#[cfg(not(unix))]
fn default_permissions() -> Option<std::fs::Permissions> {
    None
}
