//! Policy review over compiled tables: what a reviewer of a policy change
//! reads. Everything here asks the tables through the runtime, so a review
//! answer is the answer a host would get.
//!
//! - [`diff`]: the exact semantic diff of two tables (`toolgate diff`).
//! - [`replay`]: a decision log replayed against a proposed table
//!   (`toolgate diff --replay`).
//! - [`snapshot`]: the effective-access snapshot (`toolgate snapshot`).
//! - [`policy_tests`]: policy tests and table coverage (`toolgate test`).
//! - [`readout`]: the JSON of `explain` and `show` (typed, so their schemas
//!   are derived from what is printed).

pub mod diff;
pub mod policy_tests;
pub mod readout;
pub mod replay;
pub mod snapshot;
