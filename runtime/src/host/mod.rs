//! The host layer: what every embedding host (the C ABI and through it PHP,
//! the Python module, the service) needs besides the gate itself, written
//! once so that no binding re-implements a piece of it.
//!
//! - [`HostContext`]: a context that owns its table (no borrow), for hosts
//!   whose objects cannot carry a Rust lifetime. The one place of `unsafe`
//!   in the runtime.
//! - [`codes`]: every number and name a host exposes: roles, reasons,
//!   statuses (load, file and argument errors), refusal kinds and the
//!   packed decision byte.
//! - [`catalogue`]: those codes as one JSON document, so that each host
//!   checks its constants against the library it loaded.
//! - [`file`]: reading a table (or any input) file: a regular file only,
//!   checked before it is opened, under one size cap.
//! - [`call`]: a call checked with an approval grant, as hosts hand it in
//!   (its arguments' JSON, the time of the check).

pub mod call;
pub mod catalogue;
pub mod codes;
mod context;
pub mod file;

pub use call::{call_arguments, check_time, ArgumentsError};
pub use catalogue::catalogue;
pub use codes::Status;
pub use context::HostContext;
pub use file::{read_file, FileError, MAX_FILE_BYTES};
