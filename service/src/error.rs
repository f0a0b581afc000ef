//! The core's one error type: what failed, each with the operator's
//! message (which names the file, reference or setting to fix).

/// Why the core could not do what it was asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The table could not be read, compiled, pulled, verified or loaded.
    #[error("{0}")]
    Table(String),
    /// The decision log could not be opened.
    #[error("{0}")]
    Log(String),
    /// The source cannot be watched or polled.
    #[error("{0}")]
    Watch(String),
    /// A `Host` or `Origin` rule is not one.
    #[error("{0}")]
    Transport(String),
    /// The TLS certificate, key or client CA could not be used.
    #[error("{0}")]
    Tls(String),
    /// OpenTelemetry export could not be set up.
    #[error("{0}")]
    Telemetry(String),
}

impl Error {
    /// A stable code for the kind, for logs and metrics.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Table(_) => "table",
            Error::Log(_) => "decisionLog",
            Error::Watch(_) => "watch",
            Error::Transport(_) => "transport",
            Error::Tls(_) => "tls",
            Error::Telemetry(_) => "telemetry",
        }
    }
}

/// The message, for the command-line edge that prints it.
impl From<Error> for String {
    fn from(e: Error) -> String {
        e.to_string()
    }
}
