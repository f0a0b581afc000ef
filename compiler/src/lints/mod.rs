//! Lints that need the compiled table, run on a model that validated.

pub mod no_effect;
