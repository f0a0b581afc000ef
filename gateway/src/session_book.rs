//! What the direct path knows of each live session (revision 2025-11-25
//! and before) of one endpoint: the revision it agreed on, what its client
//! declared it can answer, and its requests in flight on the direct path,
//! so that the client's `notifications/cancelled` reaches them
//! (docs/gateway.md, "The direct path"). The SDK keeps the same inside its
//! session worker, out of reach of a request it does not serve.
//!
//! Bounded by what clients hold open: one entry per live session, made at
//! its `notifications/initialized` and dropped with the session's handler;
//! one per request in flight on the direct path, dropped with its request.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use rmcp::model::{ClientCapabilities, ProtocolVersion, RequestId};
use tokio_util::sync::CancellationToken;

/// One endpoint's live sessions, by session id.
#[derive(Default)]
pub struct Book {
    sessions: Mutex<HashMap<Arc<str>, Arc<Known>>>,
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

#[cfg(test)]
#[path = "session_book_tests.rs"]
mod tests;
