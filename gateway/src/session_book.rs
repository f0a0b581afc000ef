//! What the direct path knows of each live session (revision 2025-11-25
//! and before) of one endpoint: the revision it agreed on, what its client
//! declared it can answer, and its requests in flight on the direct path,
//! so that the client's `notifications/cancelled` reaches them
//! (docs/gateway.md, "The direct path"). The SDK keeps the same inside its
//! session worker, out of reach of a request it does not serve.
//!
//! Requests on the direct path never reach the SDK's session worker, whose
//! idle timer would then end a busy session: so the book keeps the time
//! instead ([`Book::touch`], [`Book::sweep`]), and the SDK's own timer is
//! off.
//!
//! Bounded by what clients hold open: one entry per live session, made at
//! its `notifications/initialized` and dropped with the session's handler;
//! one time per session the SDK holds; one per request in flight on the
//! direct path, dropped with its request.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use rmcp::model::{ClientCapabilities, ProtocolVersion, RequestId};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::SessionManager;
use tokio_util::sync::CancellationToken;

/// One endpoint's live sessions, by session id.
#[derive(Default)]
pub struct Book {
    sessions: Mutex<HashMap<Arc<str>, Arc<Known>>>,
    /// When each session the SDK holds was last asked or told anything
    /// (first seen by a sweep, then touched).
    seen: Mutex<HashMap<Arc<str>, Instant>>,
}

/// One session, as its client opened it.
pub struct Known {
    pub version: ProtocolVersion,
    pub capabilities: ClientCapabilities,
    /// Each request's token, under a serial of its own (an id the client
    /// cancelled may come again while the first is still winding down).
    in_flight: Mutex<Flights>,
}

/// The next serial, and each request's serial and token.
type Flights = (u64, HashMap<RequestId, (u64, CancellationToken)>);

/// A session's place in its book, given up with the last clone of its
/// handler (the SDK drops the handler when the session ends).
pub struct Registration {
    book: Weak<Book>,
    id: Arc<str>,
    known: Weak<Known>,
}

/// What touches one session in its book, for what is sent to it outside
/// any request (its stream's notifications).
#[derive(Clone)]
pub struct Toucher {
    book: Weak<Book>,
    id: Arc<str>,
}

impl Toucher {
    pub fn of(book: &Arc<Book>, id: &str) -> Toucher {
        Toucher {
            book: Arc::downgrade(book),
            id: id.into(),
        }
    }

    pub fn touch(&self) {
        if let Some(book) = self.book.upgrade() {
            book.touch(&self.id);
        }
    }
}

/// A request in flight on the direct path: cancelled by the client's
/// `notifications/cancelled` for its id; forgotten when dropped.
pub struct InFlight {
    known: Arc<Known>,
    id: RequestId,
    serial: u64,
    pub token: CancellationToken,
}

impl Book {
    /// Session `id` opened at `version` by a client declaring
    /// `capabilities`.
    pub fn register(
        self: &Arc<Self>,
        id: &str,
        version: ProtocolVersion,
        capabilities: ClientCapabilities,
    ) -> Registration {
        let id: Arc<str> = id.into();
        let known = Arc::new(Known {
            version,
            capabilities,
            in_flight: Mutex::new((0, HashMap::new())),
        });
        if let Ok(mut s) = self.sessions.lock() {
            s.insert(id.clone(), known.clone());
        }
        Registration {
            book: Arc::downgrade(self),
            id,
            known: Arc::downgrade(&known),
        }
    }

    pub fn get(&self, id: &str) -> Option<Arc<Known>> {
        self.sessions.lock().ok()?.get(id).cloned()
    }

    /// Session `id` was asked or told something now. Only a session a sweep
    /// found in the SDK is timed: an id a client makes up adds nothing.
    pub fn touch(&self, id: &str) {
        if let Ok(mut seen) = self.seen.lock() {
            if let Some(t) = seen.get_mut(id) {
                *t = Instant::now();
            }
        }
    }

    /// End every session of `sessions` that nothing reached for `idle`
    /// (one first seen now is timed from now); forget the ended ones.
    pub async fn sweep(&self, sessions: &LocalSessionManager, idle: Duration) {
        let held: HashSet<Arc<str>> = sessions.sessions.read().await.keys().cloned().collect();
        let now = Instant::now();
        let stale: Vec<Arc<str>> = {
            let Ok(mut seen) = self.seen.lock() else {
                return;
            };
            seen.retain(|id, _| held.contains(id));
            held.iter()
                .filter(|id| now.duration_since(*seen.entry((*id).clone()).or_insert(now)) >= idle)
                .cloned()
                .collect()
        };
        for id in stale {
            // Unless a request touched it since.
            let still = self.seen.lock().is_ok_and(|mut seen| {
                let idle_now = seen.get(&id).is_some_and(|t| t.elapsed() >= idle);
                if idle_now {
                    seen.remove(&id);
                }
                idle_now
            });
            if still {
                let _ = sessions.close_session(&id).await;
            }
        }
    }

    #[cfg(test)]
    fn timed(&self) -> usize {
        self.seen.lock().map(|s| s.len()).unwrap_or(0)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.sessions.lock().map(|s| s.len()).unwrap_or(0)
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let Some(book) = self.book.upgrade() else {
            return;
        };
        let Ok(mut s) = book.sessions.lock() else {
            return;
        };
        // Only its own entry (never a later one under the same id).
        let own = s
            .get(&self.id)
            .is_some_and(|k| std::ptr::eq(Arc::as_ptr(k), self.known.as_ptr()));
        if own {
            s.remove(&self.id);
        }
    }
}

impl Known {
    /// Request `id` begins on the direct path; `None` while another of the
    /// same id is in flight there (the SDK serves the second as it would).
    pub fn begin(self: &Arc<Self>, id: &RequestId) -> Option<InFlight> {
        let mut guard = self.in_flight.lock().ok()?;
        let (next, m) = &mut *guard;
        if m.contains_key(id) {
            return None;
        }
        let (serial, token) = (*next, CancellationToken::new());
        *next += 1;
        m.insert(id.clone(), (serial, token.clone()));
        Some(InFlight {
            known: self.clone(),
            id: id.clone(),
            serial,
            token,
        })
    }

    #[cfg(test)]
    fn in_flight(&self) -> usize {
        self.in_flight.lock().map(|m| m.1.len()).unwrap_or(0)
    }

    /// The client cancelled request `id`: so is its work on the direct
    /// path, if it is there.
    pub fn cancel(&self, id: &RequestId) {
        let token = self.in_flight.lock().ok().and_then(|mut m| m.1.remove(id));
        if let Some((_, t)) = token {
            t.cancel();
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if let Ok(mut m) = self.known.in_flight.lock() {
            if m.1.get(&self.id).is_some_and(|(s, _)| *s == self.serial) {
                m.1.remove(&self.id);
            }
        }
    }
}

/// How often `book` sweeps `sessions` for those idle for `idle`: a tenth
/// of it, from 100 ms to 30 s, for as long as the endpoint lives.
pub fn sweeping(book: Arc<Book>, sessions: Weak<LocalSessionManager>, idle: Duration) {
    let every = (idle / 10).clamp(Duration::from_millis(100), Duration::from_secs(30));
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            let Some(sessions) = sessions.upgrade() else {
                return;
            };
            book.sweep(&sessions, idle).await;
        }
    });
}

#[cfg(test)]
#[path = "session_book_tests.rs"]
mod tests;
