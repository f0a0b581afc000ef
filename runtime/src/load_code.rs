//! The stable code a host reports for a load error: the conformance corpus'
//! `error` field, Python's `LoadError.code` and PHP's exceptions use these
//! names. (The enum lives with the table codec; its host numbers and names
//! live in [`crate::host::codes`].)

use crate::LoadError;

impl LoadError {
    /// The error's code, in camelCase, as hosts and the conformance corpus name it.
    pub fn code(&self) -> &'static str {
        // Every load error's status has a load code (`Status::load_code`).
        self.status().load_code().unwrap_or("corrupt")
    }
}
