//! The `toolgate` command line.

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

mod commands;
mod grid;
mod io;
mod mcp_client;
mod progress;
mod schemas;

use commands::{
    approve, check, classify, compile, completions, decide, diff, drift, explain, fmt, gateway,
    init, keygen, lsp, man, offered, pull, push, registry, report, run, schema, serve, show,
    simulate, snapshot, stats, test, unavailable,
};
use io::{write_err, Failure, EXIT_CLOSED_STDOUT};

/// `--version`: the release and the table format it reads and writes (a
/// host's runtime must read the same format).
fn version() -> &'static str {
    static TEXT: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        format!(
            "{} (table formats {} to {})",
            env!("CARGO_PKG_VERSION"),
            toolgate_runtime::format::OLDEST_FORMAT_VERSION,
            toolgate_runtime::format::FORMAT_VERSION
        )
    });
    TEXT.as_str()
}

/// Tool-access policies as code: check, compile and query the policies that
/// decide which tools an LLM agent is offered and may call.
#[derive(Parser)]
#[command(name = "toolgate", version = version(), about, long_about = None, propagate_version = true)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
    /// When to colour the output: auto (a terminal, unless NO_COLOR is set), always, never.
    #[arg(
        long,
        global = true,
        value_enum,
        default_value = "auto",
        value_name = "WHEN"
    )]
    color: io::ColorWhen,
    /// Print the answer and the diagnostics only: no summaries, progress or notes.
    #[arg(long, short = 'q', global = true)]
    quiet: bool,
}

#[derive(Subcommand)]
enum Command {
    /// Parse and validate projects against their registries; report diagnostics.
    ///
    /// Exit code 0 when clean, 1 on errors (or warnings under --deny-warnings),
    /// 2 on a usage or I/O error.
    Check(check::CheckArgs),
    /// Make a new project (manifest, registry, policy, policy test) that passes check and test.
    Init(init::InitArgs),
    /// Compile a project into a decision table file.
    Compile(compile::CompileArgs),
    /// Generate an Ed25519 key pair for signing tables (NAME.key secret, NAME.pub public); prints the key id.
    Keygen(keygen::KeygenArgs),
    /// Approve one call: sign the grant of an approval request (docs/approvals.md); prints the grant's JSON.
    Approve(approve::ApproveArgs),
    /// Publish a compiled table (or a project, compiled) to an OCI registry; prints REF@DIGEST.
    Push(push::PushArgs),
    /// Fetch a table from an OCI registry, verified with --trusted-key; prints its manifest digest.
    Pull(pull::PullArgs),
    /// Registry tools: import an MCP server's tools, or sync the registry with a server.
    #[command(subcommand)]
    Registry(registry::RegistryCommand),
    /// Decide one tool for one context (exit 0 when allowed, 1 when refused).
    Decide(decide::DecideArgs),
    /// Explain tools gate by gate: which gates passed, which refused, and why.
    Explain(explain::ExplainArgs),
    /// List the registered tools a run will not be offered, and why.
    Unavailable(unavailable::UnavailableArgs),
    /// Every registered tool for one context, as a table.
    Simulate(simulate::SimulateArgs),
    /// The offered set (discovery) for one context: offered tools, what was held back and why, descriptor cost.
    Offered(simulate::SimulateArgs),
    /// Classify a gateway's answer to a tool call: success, tool failure, or a typed refusal (JSON).
    Classify(classify::ClassifyArgs),
    /// Profile drift: a consumer's access profile against its gateway's tools/list answer and the decision log.
    Drift(drift::DriftArgs),
    /// Readouts: a tool (group, class, the configurations excluding it) or a configuration.
    #[command(subcommand)]
    Show(show::ShowCommand),
    /// Start or resume a run: print its stored state (allow-list and exclusions) as JSON.
    #[command(subcommand)]
    Run(run::RunCommand),
    /// Count refusals in a decision log, per reason and per configuration.
    Stats(stats::StatsArgs),
    /// Compare two versions of a project over the whole decision space; widenings first.
    ///
    /// Exit code 1 with --fail-on-widen when any decision widens.
    Diff(diff::DiffArgs),
    /// The access report: one self-contained HTML file (matrix, readouts; --diff, --decision-log).
    Report(report::ReportArgs),
    /// Write (or --check) the effective-access file: every configuration, role and tool's verdict.
    Snapshot(snapshot::SnapshotArgs),
    /// Run the policy tests (`*.test.toml` beside the policies); exit 1 on a failure or under the threshold.
    Test(test::TestArgs),
    /// Format policy files in the one canonical layout (comments kept).
    ///
    /// Without -w or --check, prints the formatted text. --check lists the files that
    /// would change and exits 1.
    Fmt(fmt::FmtArgs),
    /// Serve decisions over HTTP (OpenID AuthZEN 1.0), with hot reload, a decision log and metrics.
    ///
    /// Runs until SIGINT or SIGTERM; docs/authzen.md describes the endpoints.
    Serve(Box<serve::ServeArgs>),
    /// A governing MCP gateway in front of MCP servers (stdio or streamable HTTP).
    ///
    /// Clients list and call the servers' tools through it; every list and call is
    /// decided by the table for the identity the request proves. Runs until SIGINT
    /// or SIGTERM; docs/gateway.md describes the configuration file.
    Gateway(gateway::GatewayArgs),
    /// The language server for editors (LSP over standard input and output).
    ///
    /// Diagnostics, quick fixes, completion, hover, go to definition, references,
    /// rename, formatting and outline for policy files; docs/editors.md says how to set
    /// up VS Code, Neovim and Helix.
    Lsp(lsp::LspArgs),
    /// Print the shell completion script (bash, elvish, fish, powershell, zsh).
    Completions(completions::CompletionsArgs),
    /// Print the man page, or write every page into a directory (-o DIR).
    Man(man::ManArgs),
    /// The JSON Schema of a JSON output (`toolgate schema` lists them; --all -o DIR writes every one).
    Schema(schema::SchemaArgs),
}

/// mimalloc, not the system allocator: at a million tools the registry's
/// parser threads make tens of millions of small allocations, and glibc's
/// malloc spends a fifth of `toolgate compile` in them (BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc's option numbers (v3's `mi_option_t`; the -sys crate names
/// only some): a test checks them against their defaults.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
const MI_OPTION_ALLOW_THP: libmimalloc_sys::mi_option_t = 43;

/// The servers (`serve`, `gateway`) hand freed memory back to the system at
/// once. mimalloc keeps freed pages a second (`purge_delay`) and purges
/// them only when it is next called, so an idle server kept what its last
/// burst freed: a 10,000-tool listing left the gateway 30 MiB above what it
/// holds (BENCHMARKS.md). The compiler keeps the delay: its millions of
/// short allocations reuse those pages.
///
/// And they use no transparent huge pages: mimalloc asks for them on its
/// arenas, and a 2 MiB page stays whole while any of its bytes is in use
/// (mimalloc then purges no less than 2 MiB), which kept the idle gateway
/// at 67 to 82 MiB after a 10,000-tool listing instead of 54 to 57. A
/// server's allocations are small and few.
fn give_memory_back() {
    // SAFETY: sets an option before the server's threads start (the
    // function is not thread safe); 0 is a valid purge delay.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0) }
    no_huge_pages();
}

/// No transparent huge pages for this process. Besides the servers (above),
/// `check` and `compile`: they touch their memory once or twice, briefly,
/// and the kernel clears every page it hands out first. At a million tools
/// (BENCHMARKS.md) `toolgate compile` faulted in 700 MiB as 2 MiB pages,
/// and clearing them was a third of its samples (1.8 s of kernel time on
/// the benchmark's 2-core VM); as 4 KiB pages, 0.6 s, for 0.3 s more of
/// its own time (the TLB's gain).
fn no_huge_pages() {
    // SAFETY: sets an option before any thread of ours starts (the
    // function is not thread safe); 0 is a valid value.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_ALLOW_THP, 0) }
    // The option alone stops new requests; the process flag also covers
    // the arena mimalloc mapped and advised before `main`. The kernel
    // refuses it only when it predates it (3.15); then pages stay huge.
    #[cfg(target_os = "linux")]
    // SAFETY: PR_SET_THP_DISABLE takes one integer and touches no memory.
    unsafe {
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
    }
}

/// The commands about one context take the project with `-p` (their
/// positional arguments are tool names): a project given in a tool's place
/// (`toolgate decide demo -c C TOOL`) is named in the error's tip.
fn project_tip(e: &clap::Error) -> Option<String> {
    const CONTEXT_COMMANDS: [&str; 5] = ["decide", "explain", "unavailable", "simulate", "offered"];
    if e.kind() != clap::error::ErrorKind::UnknownArgument {
        return None;
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let command = args.iter().find(|a| !a.starts_with('-'))?;
    if !CONTEXT_COMMANDS.contains(&command.as_str())
        || args.iter().any(|a| a == "-p" || a.starts_with("--project"))
    {
        return None;
    }
    let project = args
        .iter()
        .skip_while(|a| *a != command)
        .skip(1)
        .find(|a| std::path::Path::new(a).join("toolgate.toml").is_file())?;
    Some(format!(
        "tip: `{command}` takes the project with -p: toolgate {command} -p {project} ...\n"
    ))
}

fn main() -> ExitCode {
    // clap's own help and errors follow --color too: it is read before the
    // full parse.
    let color = color_from_args(std::env::args_os());
    color.apply();
    let parsed = Cli::command()
        .color(match color {
            io::ColorWhen::Auto => clap::ColorChoice::Auto,
            io::ColorWhen::Always => clap::ColorChoice::Always,
            io::ColorWhen::Never => clap::ColorChoice::Never,
        })
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version go to standard output, usage errors to
            // standard error; a closed standard output ends quietly as
            // everywhere else.
            let code = e.exit_code();
            if e.print().is_err() && !e.use_stderr() {
                std::process::exit(EXIT_CLOSED_STDOUT);
            }
            if let Some(tip) = project_tip(&e) {
                io::write_err(&tip);
            }
            std::process::exit(code);
        }
    };
    io::set_quiet(cli.quiet);
    let result = match cli.command {
        Command::Check(a) => {
            no_huge_pages();
            check::check(a)
        }
        Command::Compile(a) => {
            no_huge_pages();
            compile::compile(a)
        }
        Command::Keygen(a) => keygen::keygen(a),
        Command::Approve(a) => approve::approve(a),
        Command::Push(a) => push::push(a),
        Command::Pull(a) => pull::pull(a),
        Command::Init(a) => init::init(a),
        Command::Registry(c) => registry::run(c),
        Command::Decide(a) => decide::decide(a),
        Command::Explain(a) => explain::explain(a),
        Command::Unavailable(a) => unavailable::unavailable(a),
        Command::Simulate(a) => simulate::simulate(a),
        Command::Offered(a) => offered::offered(a),
        Command::Classify(a) => classify::classify(a),
        Command::Drift(a) => drift::drift(a),
        Command::Show(c) => show::run(c),
        Command::Run(c) => run::run(c),
        Command::Stats(a) => stats::stats(a),
        Command::Diff(a) => diff::diff(a),
        Command::Report(a) => report::report(a),
        Command::Snapshot(a) => snapshot::snapshot(a),
        Command::Test(a) => test::test(a),
        Command::Fmt(a) => fmt::fmt(a),
        Command::Serve(a) => {
            give_memory_back();
            serve::serve(*a)
        }
        Command::Gateway(a) => {
            give_memory_back();
            gateway::gateway(a)
        }
        Command::Lsp(a) => lsp::lsp(a),
        Command::Completions(a) => completions::completions(a),
        Command::Man(a) => man::man(a),
        Command::Schema(a) => schema::schema(a),
    };
    // The report written with -o, also when the command found problems.
    let result = match (result, io::finish_output()) {
        (Err(Failure::Usage(m)), _) | (_, Err(Failure::Usage(m))) => Err(Failure::Usage(m)),
        (r, _) => r,
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
        Err(Failure::Input(text)) => {
            write_err(&text);
            ExitCode::from(2)
        }
    }
}

/// `--color WHEN` (or `--color=WHEN`) among the arguments; the last one
/// wins, as clap would have it. An invalid value is left to clap's error.
fn color_from_args(args: impl Iterator<Item = std::ffi::OsString>) -> io::ColorWhen {
    use clap::ValueEnum;
    let mut when = io::ColorWhen::Auto;
    let mut args = args.skip(1);
    while let Some(a) = args.next() {
        let value = match a.to_str() {
            Some("--") => break,
            Some("--color") => args.next(),
            Some(s) => match s.strip_prefix("--color=") {
                Some(v) => Some(v.into()),
                None => continue,
            },
            None => continue,
        };
        if let Some(w) = value
            .and_then(|v| v.to_str().map(str::to_owned))
            .and_then(|v| io::ColorWhen::from_str(&v, false).ok())
        {
            when = w;
        }
    }
    when
}

#[cfg(test)]
mod tests {
    /// Every subcommand's arguments are consistent (clap checks them only
    /// when that subcommand is parsed).
    #[test]
    fn the_argument_definitions_are_valid() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }

    /// The servers' allocator settings. The defaults are read first, so the
    /// numbers are the options' (v3: a purge delay of 1,000 ms, huge pages
    /// allowed): then the purge is at once, mimalloc asks for no huge page
    /// and the process has them off. One test, as it changes the process.
    #[test]
    #[cfg(target_os = "linux")]
    fn the_servers_purge_at_once_and_use_no_transparent_huge_pages() {
        use super::{MI_OPTION_ALLOW_THP, MI_OPTION_PURGE_DELAY};
        use libmimalloc_sys::mi_option_get;
        // SAFETY: reads options; no other test touches them.
        let defaults = unsafe {
            (
                mi_option_get(MI_OPTION_PURGE_DELAY),
                mi_option_get(MI_OPTION_ALLOW_THP),
            )
        };
        assert_eq!(defaults, (1000, 1));
        super::give_memory_back();
        // SAFETY: as above; PR_GET_THP_DISABLE reads a process flag.
        let set = unsafe {
            (
                mi_option_get(MI_OPTION_PURGE_DELAY),
                mi_option_get(MI_OPTION_ALLOW_THP),
                libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0),
            )
        };
        assert_eq!(set, (0, 0, 1));
    }
}
