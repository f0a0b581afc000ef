//! Compiled tables as OCI artifacts: `toolgate push` and `toolgate pull`,
//! and the poll of `toolgate serve --oci`. Any OCI registry a company runs
//! distributes them; nothing here is a distribution channel of its own.
//! docs/distribution.md describes the artifact and the trust model.
//!
//! The artifact is an OCI image manifest with `artifactType`
//! [`ARTIFACT_TYPE`], a small JSON config ([`CONFIG_MEDIA_TYPE`]) and one
//! layer: the table file as `toolgate compile` wrote it ([`TABLE_MEDIA_TYPE`]),
//! signature block included. Its identity is the manifest digest; the table's
//! own digest is in an annotation. Pushing the same table gives the same
//! manifest (no timestamps), so the same digest.
//!
//! | module | what |
//! | --- | --- |
//! | `artifact.rs` | the format: media types, annotations, the manifest and config a push writes, the checks a pulled manifest and table pass |
//! | `client.rs` | [`Distribution`]: HTTP to a distribution endpoint (push, resolve, pull, poll) under a deadline; [`DistributionOptions`] |
//! | `lib.rs` | [`Error`], [`block_on`] |
//!
//! "Registry" in this workspace's type names is the tool registry (the
//! compiler's); the OCI side is named for the distribution API it speaks.

mod artifact;
mod client;

pub use artifact::{
    Artifact, Pulled, ANNOTATION_KEY_ID, ANNOTATION_TABLE_DIGEST, ARTIFACT_TYPE, CONFIG_MEDIA_TYPE,
    MAX_MANIFEST_BYTES, MAX_TABLE_BYTES, TABLE_MEDIA_TYPE,
};
pub use client::{
    host_of, pinned, Distribution, DistributionOptions, CONNECT_TIMEOUT, DEFAULT_DEADLINE,
    READ_TIMEOUT,
};

/// What kind of failure a registry call had: a caller reports a call that
/// ran out of time apart from one the registry answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The call did not finish within the deadline.
    Timeout,
    /// Anything else: unreachable, an error answer, a refused artifact.
    Other,
}

/// A failed registry call: its kind and a message for the operator, which
/// starts with the reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
}

impl Error {
    fn other(message: String) -> Error {
        Error {
            kind: ErrorKind::Other,
            message,
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<Error> for String {
    fn from(e: Error) -> String {
        e.message
    }
}

/// Run one registry call to completion from synchronous code (the CLI).
pub fn block_on<T>(f: impl std::future::Future<Output = T>) -> Result<T, Error> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::other(e.to_string()))?;
    Ok(rt.block_on(f))
}
