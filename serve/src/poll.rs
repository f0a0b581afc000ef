//! `toolgate serve --oci REF`: poll the registry and hot-swap new verified
//! tables. Each poll asks for the manifest digest the reference names now
//! (a HEAD request; the digest is the artifact's identity, the registry's
//! ETag); only a digest not seen before is pulled. A pulled table goes
//! through the same install as a file reload: verified against the trusted
//! keys, swapped atomically, never swapped when refused. A failure (the
//! registry away, a refused table) keeps the current table, is reported by
//! `/ready`, and doubles the wait up to [`MAX_BACKOFF`].

use std::sync::mpsc;
use std::sync::Arc;
use std::time::Duration;

use toolgate_oci::{Pulled, Registry, RegistryOptions};

use crate::Shared;

/// The longest wait between polls after failures.
pub const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// Pull once, from synchronous code inside or outside an async runtime (a
/// thread of its own runs the request).
pub fn pull_blocking(reference: &str, options: &RegistryOptions) -> Result<Pulled, String> {
    std::thread::scope(|s| {
        s.spawn(|| toolgate_oci::block_on(Registry::new(options).pull(reference))?)
            .join()
            .map_err(|_| "the registry client panicked".to_string())?
    })
}

/// What the poller remembers between polls.
#[derive(Default)]
struct Seen {
    /// The manifest digest of the table in place (after an install).
    served: Option<String>,
    /// The last digest refused, and why: not pulled again until the tag moves.
    refused: Option<(String, String)>,
}

/// One poll: resolve, and pull and install when the digest is new.
async fn poll_once(
    shared: &Shared,
    registry: &Registry,
    reference: &str,
    seen: &mut Seen,
) -> Result<(), String> {
    let digest = registry.resolve(reference).await?;
    if seen.served.as_deref() == Some(digest.as_str()) {
        // Unchanged: a past outage is over.
        shared.settled();
        return Ok(());
    }
    if let Some((refused, error)) = &seen.refused {
        if *refused == digest {
            // Still the refused version: keep saying so, without pulling it again.
            if shared.reload_status().error.as_deref() != Some(error.as_str()) {
                shared.failed(error.clone());
            }
            return Ok(());
        }
    }
    let by_digest = toolgate_oci::pinned(reference, &digest)?;
    let pulled = registry.pull(&by_digest).await?;
    match shared.install_bytes(&pulled.bytes) {
        Ok(_) => {
            seen.served = Some(digest);
            seen.refused = None;
            Ok(())
        }
        Err(e) => {
            // install_bytes recorded the failure; remember it by digest.
            seen.refused = Some((digest, e));
            Ok(())
        }
    }
}

/// A running poller; dropping it stops the polls.
pub struct Poller {
    _stop: mpsc::Sender<()>,
}

/// Poll `reference` every `interval` (doubling after failures, up to
/// [`MAX_BACKOFF`]) and install what it names.
pub fn spawn(
    shared: Arc<Shared>,
    reference: String,
    options: RegistryOptions,
    interval: Duration,
) -> Result<Poller, String> {
    let (stop, stopped) = mpsc::channel::<()>();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    std::thread::Builder::new()
        .name("toolgate-oci-poll".into())
        .spawn(move || {
            let registry = Registry::new(&options);
            let mut seen = Seen::default();
            let mut wait = interval;
            loop {
                match stopped.recv_timeout(wait) {
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    _ => return,
                }
                match rt.block_on(poll_once(&shared, &registry, &reference, &mut seen)) {
                    Ok(()) => wait = interval,
                    Err(e) => {
                        shared.failed(e);
                        wait = (wait * 2).min(MAX_BACKOFF.max(interval));
                    }
                }
            }
        })
        .map_err(|e| e.to_string())?;
    Ok(Poller { _stop: stop })
}
