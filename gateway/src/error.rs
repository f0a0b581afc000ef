//! The gateway's one error type and its one wire mapping: what failed,
//! with the operator's message, and how a request that failed so is
//! answered over HTTP ([`Error::status`]) and JSON-RPC ([`Error::jsonrpc`]).

use axum::http::StatusCode;
use rmcp::model::{ErrorCode, ErrorData};

/// Why the gateway could not start, or a request could not be served.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The service core failed: the table, the decision log, the watch, a
    /// Host or Origin rule.
    #[error(transparent)]
    Core(#[from] toolgate_service::Error),
    /// The credentials file of `[identity] auth`.
    #[error(transparent)]
    Credentials(#[from] toolgate_auth::CredentialsError),
    /// The configuration file, or a configuration it names.
    #[error("{0}")]
    Config(String),
    /// The caller is not one the policy admits (an unknown consumer, or
    /// none where the policy refuses consumers without a profile).
    #[error("{0}")]
    NotAdmitted(String),
    /// The registry does not pair with the table (pinned definitions).
    #[error("{0}")]
    Pins(String),
    /// An upstream could not be started, connected or listed.
    #[error("{0}")]
    Upstream(String),
    /// The address could not be bound or served.
    #[error("{0}")]
    Io(String),
}

impl Error {
    /// A stable code for the kind, for logs and `/ready`.
    pub fn code(&self) -> &'static str {
        match self {
            Error::Core(e) => e.code(),
            Error::Credentials(e) => e.code(),
            Error::Config(_) => "config",
            Error::NotAdmitted(_) => "notAdmitted",
            Error::Pins(_) => "pins",
            Error::Upstream(_) => "upstream",
            Error::Io(_) => "io",
        }
    }

    /// The HTTP status of a request that failed so.
    pub fn status(&self) -> StatusCode {
        match self {
            Error::NotAdmitted(_) => StatusCode::FORBIDDEN,
            Error::Upstream(_) => StatusCode::BAD_GATEWAY,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The JSON-RPC error of a request that failed so.
    pub fn jsonrpc(&self) -> ErrorData {
        let code = match self {
            Error::NotAdmitted(_) => ErrorCode::INVALID_REQUEST,
            _ => ErrorCode::INTERNAL_ERROR,
        };
        ErrorData::new(code, self.to_string(), None)
    }
}

/// The message, for the command-line edge that prints it.
impl From<Error> for String {
    fn from(e: Error) -> String {
        e.to_string()
    }
}
