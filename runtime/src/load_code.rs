//! The stable code a host reports for a load error: the conformance corpus'
//! `error` field and the Python binding's `LoadError.code` use these names.
//! (The enum lives with the table codec; its host-facing code lives here.)

use crate::LoadError;

impl LoadError {
    /// The error's code, in camelCase, as hosts and the conformance corpus name it.
    pub fn code(&self) -> &'static str {
        match self {
            LoadError::NotATable => "notATable",
            LoadError::Version { .. } => "version",
            LoadError::Truncated { .. } => "truncated",
            LoadError::TrailingBytes { .. } => "trailingBytes",
            LoadError::Checksum { .. } => "checksum",
            // An edited payload whose CRC was fixed up: hosts see the same
            // code as a CRC mismatch.
            LoadError::Digest => "checksum",
            LoadError::Corrupt(_) => "corrupt",
            LoadError::Unsigned => "unsigned",
            LoadError::UntrustedKey { .. } => "untrustedKey",
            LoadError::BadSignature { .. } => "badSignature",
        }
    }
}
