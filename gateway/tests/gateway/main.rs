//! The gateway's behaviour end to end (docs/gateway.md), in this process
//! through the library (`common::start`: the configuration file read, the
//! gateway started, its table watched and served on 127.0.0.1, as
//! `toolgate gateway -c FILE` does), in front of real MCP servers over
//! stdio and streamable HTTP: the fixture servers on the official Python
//! SDK that list their own names (gateway/tests/fixtures/: `crm_server.py`,
//! the bank server `mrtr_server.py`) and the reference servers
//! mcp-server-git, -time and -fetch, from the venv `.ci/run` makes
//! (TOOLGATE_MCP_BIN; without it these tests FAIL). The clients are the
//! official Rust SDK (both protocol revisions), the official Python SDK's
//! (the fixtures' `python_*client.py`) and raw HTTP for what an attacker
//! sends. Tokens are minted here with a real Ed25519 key.
//!
//! - `common`: the harness (a gateway in this process; the crm and bank
//!   projects, their registries imported live through the libraries);
//! - `support`: what holds however the gateway runs (credentials, tokens,
//!   the configuration writer, upstream snippets, the SDK clients, raw
//!   HTTP), shared with the CLI's tests;
//! - `profiles`: who is offered and may call what (each consumer's
//!   profile, the reference servers, the Python client, stealth, several
//!   configurations on one gateway);
//! - `identity`: who the caller is (API keys, JWTs from a file or a URL, a
//!   trusted proxy's header, spoofs, consumers without a profile);
//! - `http`: the HTTP front (Host checks on every route, the body bound, a
//!   kept-alive session);
//! - `relay`: what goes between client and upstream besides tools
//!   (resources, prompts, progress, cancels, elicitation, sampling, roots,
//!   completions, log levels, subscriptions, 2026-07-28 input requests);
//! - `upstreams`: command and URL upstreams (bounded pagination, the
//!   environment and result bound, kept-alive connections);
//! - `approvals`: calls a person approves (out of band, by elicitation or
//!   an input request, voided by a new table);
//! - `direct`: plain 2026-07-28 calls served without the SDK's per-request
//!   service, answered as the SDK's path answers them.
//!
//! What is the `toolgate` command's (its standard error, SIGTERM,
//! `--check`, `registry pins` and `registry sync`, an upstream secret from
//! the process environment) is tested in cli/tests/commands/gateway.rs.
//!
//! One test binary; the tests share a process, so none sets environment
//! variables (an upstream's are in its configuration) or binds a fixed
//! port; scratch directories are named per test (`common::temp`).

mod common;
mod support;

mod approvals;
mod direct;
mod http;
mod identity;
mod profiles;
mod relay;
mod upstreams;
