//! toolgate runtime: load a compiled decision table and decide, per tool,
//! whether an agent is offered it and whether a call may run, with a typed
//! reason. No dependency on the compiler.
//!
//! ```no_run
//! use toolgate_runtime::{Table, Role};
//! let bytes = std::fs::read("policy.tgt").unwrap();
//! let table = Table::load(&bytes).expect("a valid table");
//! let ctx = table.context("editor-chat").unwrap().role(Role::User);
//! let d = ctx.decide("delete_record");
//! assert!(!d.allowed);
//! print!("{}", ctx.unavailable_prompt());
//! ```
//!
//! # Where the API is
//!
//! One concern per file; the two types hosts use are spread over them:
//!
//! | type | file | what |
//! | --- | --- | --- |
//! | [`Table`] | `table.rs` | load, names, configurations, consumers, exclusions, bit sets, the words two tables differ in |
//! | | `signature.rs` | `Table::load_verified` (feature `signature`) |
//! | | `policy_json.rs` | [`Table::policy_json`] |
//! | | `classify.rs` | [`Table::gateway_rules`], [`Table::classify`], [`Table::classify_raw`]: a gateway's answer to a call |
//! | | `drift.rs` | [`Table::profile_drift`]: a consumer's profile against what its gateway lists |
//! | | `context.rs` | [`Table::context`]: a [`Context`] for a configuration |
//! | [`Context`] | `context.rs` | the builder (role, consumer, run, mode), [`Role`], [`Mode`], the context's gate data |
//! | | `decide.rs` | `decide`, `check_call`, `explain`, `shown`, the gate masks |
//! | | `lists.rs` | offered, unavailable, the prompt section, tool sets |
//! | | `live.rs` | tools registered at run time |
//! | | `refusal.rs` | typed refusals |
//!
//! The gates themselves are the table in `reason.rs`; hosts in other
//! languages go through `host/` ([`HostContext`], the codes).

pub mod approval;
pub mod bits;
pub mod classify;
pub mod context;
pub mod decide;
pub mod drift;
pub mod format;
pub mod host;
pub mod json;
pub mod lists;
pub mod live;
pub mod log;
pub mod mcp;
pub mod names;
pub mod page_walk;
pub mod pattern;
pub mod phf;
mod policy_json;
pub mod reason;
pub mod refusal;
pub mod reload;
pub mod run;
pub mod servers;
#[cfg(feature = "signature")]
pub mod signature;
pub mod spec;
pub mod table;

pub use classify::{classify, classify_raw, Answer, Classified, Envelope, RawAnswer};
pub use context::{Context, ContextError, Mode, Role, UNPROFILED_CONSUMER};
pub use decide::{Decision, GateOutcome, Trace};
pub use format::LoadError;
pub use host::HostContext;
pub use lists::{render_prompt, Excluded, ToolSet, Unavailable};
pub use live::{LiveTool, LiveToolError, LiveToolSpec};
pub use reason::{Fact, GateMasks, Reason, GATE_ORDER};
pub use refusal::{Action, Refusal, RefusalClass, RefusalKind};
pub use reload::TableHandle;
pub use run::{AllowList, Exclusions, RunState, RunStateError};
#[cfg(feature = "signature")]
pub use signature::{KeyError, TrustedKeys};
pub use spec::TableSpec;
pub use table::Table;
