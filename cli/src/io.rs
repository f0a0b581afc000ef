//! Reading inputs and writing outputs: every byte the CLI reads from a
//! named file or prints goes through here.

use std::io::Write;
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

/// `--color`: whether styled output is written. `auto` styles a terminal
/// unless `NO_COLOR` is set (anstream reads `NO_COLOR`, `CLICOLOR_FORCE`
/// and `TERM`); `always` and `never` override both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorWhen {
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorWhen {
    /// Set the process-wide choice that every write below follows.
    pub fn apply(self) {
        let choice = match self {
            ColorWhen::Auto => anstream::ColorChoice::Auto,
            ColorWhen::Always => anstream::ColorChoice::Always,
            ColorWhen::Never => anstream::ColorChoice::Never,
        };
        choice.write_global();
    }
}

/// Whether standard output is styled: decided once by anstream from
/// `--color`, `NO_COLOR` and whether it is a terminal; never when `-o`
/// sends the output to a file.
pub fn color_stdout() -> bool {
    if OUTPUT.get().is_some() {
        return false;
    }
    anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never
}

/// Whether standard error is styled (progress bars, warnings).
pub fn color_stderr() -> bool {
    anstream::AutoStream::choice(&std::io::stderr()) != anstream::ColorChoice::Never
}

/// `text` in `style` when standard output is styled, plain otherwise. The
/// text is escaped for the terminal first, so data never carries its own
/// escape sequences into styled output.
pub fn paint(style: anstyle::Style, text: &str) -> String {
    let text = toolgate_runtime::names::escape_terminal(text);
    if color_stdout() {
        format!("{}{text}{}", style.render(), style.render_reset())
    } else {
        text.into_owned()
    }
}

/// The styles the CLI uses, one meaning each.
pub mod style {
    use anstyle::{AnsiColor, Style};
    /// Allowed, passed, narrowed, added line of a diff.
    pub const GOOD: Style = AnsiColor::Green.on_default().bold();
    /// Refused, failed, widened, removed line of a diff.
    pub const BAD: Style = AnsiColor::Red.on_default().bold();
    /// Observed only, a warning.
    pub const WARN: Style = AnsiColor::Yellow.on_default().bold();
    /// Headings and names that lead a line.
    pub const HEAD: Style = Style::new().bold();
}

static QUIET: std::sync::OnceLock<bool> = std::sync::OnceLock::new();

/// `--quiet`: the answer and the diagnostics only; no summaries, progress
/// or notes on standard error.
pub fn set_quiet(quiet: bool) {
    let _ = QUIET.set(quiet);
}

pub fn quiet() -> bool {
    QUIET.get().copied().unwrap_or(false)
}

/// A note for people on standard error ("wrote ...", "compiled ..."):
/// dropped under `--quiet`.
pub fn note(text: &str) {
    if !quiet() {
        write_err(text);
    }
}

/// `-o FILE` for a command's report: standard output is gathered here and
/// written to the file atomically when the command ends, so a failed run
/// never leaves half a report.
static OUTPUT: std::sync::OnceLock<(std::path::PathBuf, std::sync::Mutex<Vec<u8>>)> =
    std::sync::OnceLock::new();

/// Send everything [`write_out`] writes to `path` instead (`-` is standard
/// output).
pub fn output_to(path: Option<&Path>) {
    if let Some(p) = path.filter(|p| p.as_os_str() != "-") {
        let _ = OUTPUT.set((p.to_path_buf(), std::sync::Mutex::new(Vec::new())));
    }
}

/// Write what `-o` gathered; called once when the command has finished
/// (also when it failed with findings: the report of a failing check is
/// the point of `-o`).
pub fn finish_output() -> Result<(), Failure> {
    if let Some((path, buf)) = OUTPUT.get() {
        let bytes = std::mem::take(&mut *buf.lock().unwrap_or_else(|e| e.into_inner()));
        write_atomic(path, &bytes)?;
    }
    Ok(())
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
    write_raw(&text);
}

/// Write text whose data was escaped where it was styled ([`paint`], the
/// check report): its own SGR sequences pass, and anstream strips them when
/// standard output is not styled.
pub fn write_styled(text: &str) {
    if color_stdout() {
        write_raw(text);
    } else {
        write_out(&anstream::adapter::strip_str(text).to_string());
    }
}

fn write_raw(text: &str) {
    if let Some((_, buf)) = OUTPUT.get() {
        buf.lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(text.as_bytes());
        return;
    }
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
    if path.as_os_str() == "-" {
        return read_stdin_capped(limit);
    }
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

/// `-` as an input file: standard input, under the same cap.
fn read_stdin_capped(limit: usize) -> Result<Vec<u8>, Failure> {
    use std::io::Read as _;
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(limit as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Failure::Usage(format!("standard input: {e}")))?;
    if bytes.len() > limit {
        return Err(Failure::Usage(format!(
            "standard input: over the limit of {limit} bytes"
        )));
    }
    Ok(bytes)
}
