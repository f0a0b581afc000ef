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
use std::time::{Duration, Instant};

use toolgate_oci::{Distribution, DistributionOptions, ErrorKind, Pulled};

use crate::{Core, Error};

/// The longest wait between polls after failures.
pub const MAX_BACKOFF: Duration = Duration::from_secs(300);

/// Pull once, from synchronous code inside or outside an async runtime (a
/// thread of its own runs the request). The pull is under the options' deadline.
pub fn pull_blocking(reference: &str, options: &DistributionOptions) -> Result<Pulled, Error> {
    pull_text(reference, options).map_err(Error::Table)
}

fn pull_text(reference: &str, options: &DistributionOptions) -> Result<Pulled, String> {
    std::thread::scope(|s| {
        s.spawn(|| {
            toolgate_oci::block_on(Distribution::new(options).pull(reference))?
                .map_err(String::from)
        })
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

/// One poll, under the registry's deadline: resolve, and pull and install
/// when the digest is new. Returns what the poll did, as the
/// `toolgate_registry_polls_total` label names it.
async fn poll_once(
    shared: &Core,
    registry: &Distribution,
    reference: &str,
    seen: &mut Seen,
) -> Result<&'static str, toolgate_oci::Error> {
    let refused = seen.refused.as_ref().map(|(d, _)| d.clone());
    let served = seen.served.clone();
    let (digest, pulled) = registry
        .poll(reference, |d| {
            served.as_deref() != Some(d) && refused.as_deref() != Some(d)
        })
        .await?;
    let Some(pulled) = pulled else {
        if seen.served.as_deref() == Some(digest.as_str()) {
            // Unchanged: a past outage is over.
            shared.settled();
            return Ok("unchanged");
        }
        // Still the refused version: keep saying so, without pulling it again.
        if let Some((_, error)) = &seen.refused {
            if shared.reload_status().error.as_deref() != Some(error.as_str()) {
                shared.failed(error.clone());
            }
        }
        return Ok("refused");
    };
    match shared.install_bytes(&pulled.bytes) {
        Ok(swapped) => {
            seen.served = Some(digest);
            seen.refused = None;
            Ok(if swapped { "swapped" } else { "unchanged" })
        }
        Err(e) => {
            // install_bytes recorded the failure; remember it by digest.
            seen.refused = Some((digest, e.to_string()));
            Ok("refused")
        }
    }
}

/// A running poller; dropping it stops the polls.
pub struct Poller {
    _stop: mpsc::Sender<()>,
}

/// Poll `reference` every `interval` (doubling after failures, up to
/// [`MAX_BACKOFF`]) and install what it names. Each poll is under the
/// options' deadline: a registry that stalls or trickles fails the poll
/// when it passes (reported like any failure, and counted as `timeout`).
pub fn spawn(
    shared: Arc<Core>,
    reference: String,
    options: DistributionOptions,
    interval: Duration,
) -> Result<Poller, Error> {
    let (stop, stopped) = mpsc::channel::<()>();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Watch(e.to_string()))?;
    std::thread::Builder::new()
        .name("toolgate-oci-poll".into())
        .spawn(move || {
            let registry = Distribution::new(&options);
            let mut seen = Seen::default();
            let mut wait = interval;
            loop {
                match stopped.recv_timeout(wait) {
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    _ => return,
                }
                let started = Instant::now();
                let result = rt.block_on(poll_once(&shared, &registry, &reference, &mut seen));
                shared
                    .metrics
                    .registry_poll_seconds
                    .set(started.elapsed().as_secs_f64());
                match result {
                    Ok(outcome) => {
                        shared.metrics.registry_poll(outcome);
                        wait = interval;
                    }
                    Err(e) => {
                        shared.metrics.registry_poll(match e.kind {
                            ErrorKind::Timeout => "timeout",
                            ErrorKind::Other => "failed",
                        });
                        shared.failed(e.message);
                        wait = (wait * 2).min(MAX_BACKOFF.max(interval));
                    }
                }
            }
        })
        .map_err(|e| Error::Watch(e.to_string()))?;
    Ok(Poller { _stop: stop })
}
