//! The `toolgate` command line.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

mod commands;
mod mcp_client;

/// Tool-access policies as code: check, compile and query the policies that
/// decide which tools an LLM agent is offered and may call.
#[derive(Parser)]
#[command(name = "toolgate", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Parse and validate projects against their registries; report diagnostics.
    ///
    /// Exit code 0 when clean, 1 on errors (or warnings under --deny-warnings),
    /// 2 on a usage or I/O error.
    Check(CheckArgs),
    /// Compile a project into a decision table file.
    Compile(CompileArgs),
    /// Registry tools: import an MCP server's tools, or sync the registry with a server.
    #[command(subcommand)]
    Registry(RegistryCommand),
    /// Decide one tool for one context (exit 0 when allowed, 1 when refused).
    Decide(DecideArgs),
    /// Explain tools gate by gate: which gates passed, which refused, and why.
    Explain(ExplainArgs),
    /// List the registered tools a run will not be offered, and why.
    Unavailable(UnavailableArgs),
    /// Every registered tool for one context, as a table.
    Simulate(SimulateArgs),
    /// The offered set (discovery) for one context: offered tools, what was held back and why, descriptor cost.
    Offered(SimulateArgs),
    /// Classify a gateway's answer to a tool call: success, tool failure, or a typed refusal (JSON).
    Classify(ClassifyArgs),
    /// Readouts: a tool (group, class, the configurations excluding it) or a configuration.
    #[command(subcommand)]
    Show(ShowCommand),
    /// Start or resume a run: print its stored state (allow-list and exclusions) as JSON.
    #[command(subcommand)]
    Run(RunCommand),
    /// Count refusals in a decision log, per reason and per configuration.
    Stats(StatsArgs),
    /// Compare two versions of a project over the whole decision space; widenings first.
    ///
    /// Exit code 1 with --fail-on-widen when any decision widens.
    Diff(DiffArgs),
    /// Write (or --check) the effective-access file: every configuration, role and tool's verdict.
    Snapshot(SnapshotArgs),
    /// Run the policy tests (`*.test.toml` beside the policies); exit 1 on a failure or under the threshold.
    Test(TestArgs),
    /// Format policy files in the one canonical layout (comments kept).
    ///
    /// Without -w or --check, prints the formatted text. --check lists the files that
    /// would change and exits 1.
    Fmt(FmtArgs),
    /// Serve decisions over HTTP (OpenID AuthZEN 1.0), with hot reload, a decision log and metrics.
    ///
    /// Runs until SIGINT or SIGTERM; docs/authzen.md describes the endpoints.
    Serve(ServeArgs),
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum CheckFormat {
    Human,
    Plain,
    Json,
    Sarif,
    Github,
}

#[derive(Args)]
pub struct CheckArgs {
    /// Project directories (or their toolgate.toml). Default: the current directory.
    paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    format: CheckFormat,
    /// Fail (exit 1) on warnings too.
    #[arg(long)]
    deny_warnings: bool,
}

#[derive(Args)]
pub struct CompileArgs {
    /// Project directory (or its toolgate.toml).
    project: PathBuf,
    /// Where to write the table.
    #[arg(short, long)]
    output: PathBuf,
}

#[derive(Subcommand)]
enum RegistryCommand {
    /// Turn an MCP server's tools (a captured tools/list answer, or the live server) into registry entries.
    ImportMcp(commands::mcp::ImportArgs),
    /// Compare the registry with an MCP server's tools: new, removed and changed tools (--write, --check).
    Sync(commands::mcp::SyncArgs),
}

/// Where the table comes from, and who is asking.
#[derive(Args, Clone)]
pub struct ContextArgs {
    /// Project directory, compiled in memory (ignored with --table).
    #[arg(long, short = 'p', default_value = ".")]
    project: PathBuf,
    /// A compiled table file instead of a project.
    #[arg(long)]
    table: Option<PathBuf>,
    /// The configuration of the run.
    #[arg(long = "config", short = 'c')]
    config: String,
    /// The user is an administrator.
    #[arg(long, conflicts_with = "no_user")]
    admin: bool,
    /// There is no user (counts as not admin).
    #[arg(long)]
    no_user: bool,
    /// The MCP consumer asking (held to its access profile).
    #[arg(long)]
    consumer: Option<String>,
    /// A stored run state (JSON) to hold the decision to.
    #[arg(long)]
    run: Option<PathBuf>,
    /// The host's trust-zone enforcement setting; only `observe` observes.
    #[arg(long)]
    enforcement: Option<String>,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum OutFormat {
    Text,
    Json,
}

#[derive(Args)]
pub struct DecideArgs {
    #[command(flatten)]
    ctx: ContextArgs,
    /// The tool to decide.
    tool: String,
    #[arg(long, value_enum, default_value = "text")]
    format: OutFormat,
    /// Print the typed refusal (JSON: kind, class, retryable, action, remediation, model text) when refused.
    #[arg(long)]
    refusal: bool,
}

#[derive(Args)]
pub struct ClassifyArgs {
    /// The answer: a JSON-RPC response body, or `{"httpStatus": N, "origin": "...", "body": {...}}`.
    file: PathBuf,
    /// The gateway that answered: its declared rules apply first.
    #[arg(long)]
    origin: Option<String>,
    /// The HTTP status of the answer.
    #[arg(long)]
    http_status: Option<u16>,
    /// The tool that was called.
    #[arg(long)]
    tool: Option<String>,
    /// A project whose `gateway` rules to use (default: built-in rules only).
    #[arg(long, short = 'p')]
    project: Option<PathBuf>,
    /// A compiled table whose `gateway` rules to use.
    #[arg(long)]
    table: Option<PathBuf>,
}

#[derive(Args)]
pub struct ExplainArgs {
    #[command(flatten)]
    ctx: ContextArgs,
    /// Tool names (registered or not).
    #[arg(required = true)]
    tools: Vec<String>,
    #[arg(long, value_enum, default_value = "text")]
    format: OutFormat,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum UnavailableFormat {
    Text,
    Json,
    Prompt,
}

#[derive(Args)]
pub struct UnavailableArgs {
    #[command(flatten)]
    ctx: ContextArgs,
    #[arg(long, value_enum, default_value = "text")]
    format: UnavailableFormat,
}

#[derive(Args)]
pub struct SimulateArgs {
    #[command(flatten)]
    ctx: ContextArgs,
    #[arg(long, value_enum, default_value = "text")]
    format: OutFormat,
}

/// Table source only (readouts need no context).
#[derive(Args, Clone)]
pub struct SourceArgs {
    /// Project directory, compiled in memory (ignored with --table).
    #[arg(long, short = 'p', default_value = ".")]
    project: PathBuf,
    /// A compiled table file instead of a project.
    #[arg(long)]
    table: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "text")]
    format: OutFormat,
}

#[derive(Subcommand)]
enum ShowCommand {
    /// A tool: group, data class, state, and the configurations that exclude it.
    Tool {
        name: String,
        #[command(flatten)]
        src: SourceArgs,
    },
    /// A configuration: groups, exclusions (stale ones marked), provider, zone, ceiling.
    Config {
        name: String,
        #[command(flatten)]
        src: SourceArgs,
    },
}

#[derive(Subcommand)]
enum RunCommand {
    /// Resolve a new run's stored state from its configuration and skills.
    Start {
        #[command(flatten)]
        src: SourceArgs,
        #[arg(long = "config", short = 'c')]
        config: String,
        /// Forced or invoked skills, besides the configuration's attached ones.
        #[arg(long = "skill")]
        skills: Vec<String>,
    },
    /// Resume a stored run: intersect its allow-list with the live one, union the exclusions.
    Resume {
        #[command(flatten)]
        src: SourceArgs,
        #[arg(long = "config", short = 'c')]
        config: String,
        #[arg(long = "skill")]
        skills: Vec<String>,
        /// The stored run state (JSON).
        stored: PathBuf,
    },
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum DiffFormat {
    Text,
    Markdown,
    Json,
}

#[derive(Args)]
pub struct DiffArgs {
    /// The old project directory (with --git: the project, compared with itself at REV).
    old: PathBuf,
    /// The new project directory.
    new: Option<PathBuf>,
    /// Compare the working tree's project with the same project at this git revision.
    #[arg(long)]
    git: Option<String>,
    #[arg(long, value_enum, default_value = "text")]
    format: DiffFormat,
    /// Exit 1 when any decision widens (a tool newly offered).
    #[arg(long)]
    fail_on_widen: bool,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum TestFormat {
    Text,
    Json,
    Junit,
}

#[derive(Args)]
pub struct TestArgs {
    /// Project directories. Default: the current directory.
    paths: Vec<PathBuf>,
    #[arg(long, value_enum, default_value = "text")]
    format: TestFormat,
    /// Report which rows of the decision table (configuration x outcome) the tests exercised.
    #[arg(long)]
    coverage: bool,
    /// Fail when coverage is below this percentage (implies --coverage).
    #[arg(long)]
    threshold: Option<f64>,
}

#[derive(Args)]
pub struct FmtArgs {
    /// Policy files, or project directories (all their policy files). Default: the current directory.
    paths: Vec<PathBuf>,
    /// List the files that are not formatted; exit 1 if any.
    #[arg(long, conflicts_with = "write")]
    check: bool,
    /// Write the formatted text back to the files.
    #[arg(short, long)]
    write: bool,
}

#[derive(Args)]
pub struct SnapshotArgs {
    /// Project directory.
    #[arg(default_value = ".")]
    project: PathBuf,
    /// Fail (exit 1) when the file is missing or out of date, instead of writing it.
    #[arg(long)]
    check: bool,
    /// The file (default: PROJECT/effective-access.txt).
    #[arg(short, long)]
    output: Option<PathBuf>,
}

#[derive(Args)]
pub struct StatsArgs {
    /// A decision log (JSON lines).
    log: PathBuf,
    #[arg(long, value_enum, default_value = "text")]
    format: OutFormat,
}

#[derive(Args)]
pub struct ServeArgs {
    /// A compiled table file to serve.
    #[arg(long, conflicts_with = "project", required_unless_present = "project")]
    table: Option<PathBuf>,
    /// A project directory (or its toolgate.toml), compiled in memory.
    #[arg(long, short = 'p')]
    project: Option<PathBuf>,
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1:8181")]
    addr: std::net::SocketAddr,
    /// The base URL named by /.well-known/authzen-configuration (default: http://ADDR).
    #[arg(long)]
    public_url: Option<String>,
    /// Write a decision log (JSON lines, docs/decision-log.md) to this file (appended), or `-` for standard output.
    #[arg(long)]
    decision_log: Option<PathBuf>,
    /// Decision log records queued at most; when full, records are dropped and counted.
    #[arg(long, default_value_t = 65_536)]
    log_buffer: usize,
    /// Largest request body in bytes (413 beyond it).
    #[arg(long, default_value_t = 1 << 20)]
    max_body_bytes: usize,
    /// Most evaluations in one /access/v1/evaluations request.
    #[arg(long, default_value_t = 1000)]
    max_evaluations: usize,
    /// Requests handled at once; more wait.
    #[arg(long, default_value_t = 1024)]
    max_concurrency: usize,
    /// Do not watch the table or project for changes.
    #[arg(long)]
    no_watch: bool,
}

/// Why a command stopped early.
pub enum Failure {
    /// A usage or I/O error: exit code 2.
    Usage(String),
    /// The input has errors, already rendered: exit code 1.
    Findings(String),
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

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version go to standard output, usage errors to
            // standard error; a closed standard output ends quietly as
            // everywhere else.
            let code = e.exit_code();
            if e.print().is_err() && !e.use_stderr() {
                std::process::exit(EXIT_CLOSED_STDOUT);
            }
            std::process::exit(code);
        }
    };
    let result = match cli.command {
        Command::Check(a) => commands::check(a),
        Command::Compile(a) => commands::compile(a),
        Command::Registry(RegistryCommand::ImportMcp(a)) => commands::mcp::import_mcp(a),
        Command::Registry(RegistryCommand::Sync(a)) => commands::mcp::sync(a),
        Command::Decide(a) => commands::decide(a),
        Command::Explain(a) => commands::explain(a),
        Command::Unavailable(a) => commands::unavailable(a),
        Command::Simulate(a) => commands::simulate(a),
        Command::Offered(a) => commands::offered(a),
        Command::Classify(a) => commands::classify(a),
        Command::Show(ShowCommand::Tool { name, src }) => commands::show_tool(&name, src),
        Command::Show(ShowCommand::Config { name, src }) => commands::show_config(&name, src),
        Command::Run(RunCommand::Start {
            src,
            config,
            skills,
        }) => commands::run_start(src, &config, &skills, None),
        Command::Run(RunCommand::Resume {
            src,
            config,
            skills,
            stored,
        }) => commands::run_start(src, &config, &skills, Some(stored)),
        Command::Stats(a) => commands::stats(a),
        Command::Diff(a) => commands::diff(a),
        Command::Snapshot(a) => commands::snapshot(a),
        Command::Test(a) => commands::test(a),
        Command::Fmt(a) => commands::fmt(a),
        Command::Serve(a) => commands::serve(a),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(Failure::Usage(m)) => {
            write_err(&format!("error: {m}\n"));
            ExitCode::from(2)
        }
        Err(Failure::Findings(text)) => {
            write_err(&text);
            ExitCode::from(1)
        }
    }
}
