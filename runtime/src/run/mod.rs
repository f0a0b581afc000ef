//! Runs: the state a run carries ([`state`]: the skill allow-list and the
//! exclusions, stored with the run and narrowed on resume) and how a run
//! starts from a table ([`start`]).

pub mod start;
pub mod state;

pub use start::RunError;
pub use state::*;
