//! The CLI's integration tests, one module per command: the tests of
//! `toolgate X` are in `X.rs` (`check.rs`, `check_sarif.rs` and
//! `check_suppress.rs` for `check`; `test_command.rs` for `test`,
//! `push_pull.rs` for `keygen`, `push` and `pull`, `diff_replay.rs` for
//! `diff --replay`; `report.rs` for the command, its page in
//! access-report/tests/report.rs and access-report/browser-tests). What
//! holds for every command has its own module: `terminal` (colour, quiet,
//! standard streams), `outputs` (counts, headers, writers), `inputs`,
//! `projects` (paths that mean projects), `hidden` (hidden remote names)
//! and `catalogue` (docs/diagnostics.md). `gateway.rs` holds only what the
//! `toolgate gateway` command shows (its standard error, `--check`,
//! `registry` against a running gateway); the gateway's
//! behaviour is tested in its crate (gateway/tests/gateway/), whose
//! helpers that do not depend on how it runs (`support`) are included here.
//!
//! One test binary: each file directly in cli/tests/ is a binary of its
//! own, linked separately. The modules share a process, so none may set
//! environment variables, change the current directory or bind a fixed
//! port; scratch directories are named per test (`common::temp`).

mod common;
/// The gateway tests' helpers that do not depend on how the gateway runs
/// (credentials, tokens, its configuration, the SDK clients, raw HTTP):
/// one copy, theirs.
#[path = "../../../gateway/tests/gateway/support.rs"]
mod support;

mod approve;
mod catalogue;
mod check;
mod check_sarif;
mod check_suppress;
mod classify;
mod compile;
mod completions;
mod decide;
mod diff;
mod diff_replay;
mod documented_ci;
mod drift;
mod explain;
mod fmt;
mod gateway;
mod help;
mod hidden;
mod init;
mod inputs;
mod lsp;
mod man;
mod mcp_hostile;
mod mcp_live;
mod observability;
mod offered;
mod outputs;
mod projects;
mod push_pull;
mod registry;
mod report;
mod run;
mod schema;
mod serve;
mod show;
mod simulate;
mod snapshot;
mod stats;
mod terminal;
mod test_command;
mod unavailable;
