//! What one client session (2025-11-25) asked for beyond single requests:
//! its log level and the resources it subscribed to, and the task that
//! relays to it what it may see of the upstreams' notifications
//! (docs/gateway.md, "Notifications").
//!
//! An upstream is one connection shared by every session, so what it says
//! outside an answer is the server's, not one caller's: a log message goes
//! to every session that sees the server (at or above the level the session
//! set), a resource update to the sessions that subscribed to that URI and
//! see its server. A session of a caller who may not see the server gets
//! nothing, as if the server did not exist.

#![allow(deprecated)] // Logging and resources/subscribe are the SDK's legacy half.

use std::collections::HashSet;
use std::sync::{Arc, Mutex, Weak};

use rmcp::model::{ErrorCode, ErrorData, LoggingLevel};
use rmcp::{Peer, RoleServer};

use crate::identity::Identity;
use crate::session_book::Toucher;
use crate::upstream::Event;
use crate::{Changed, Gateway};

/// How many resources one session may be subscribed to at once.
pub const MAX_SUBSCRIPTIONS: usize = 1024;

/// One session's own state. Dropped when its session and relay task end;
/// its subscriptions are then released (the upstream told to stop when no
/// other session holds the URI).
pub struct Session {
    gw: Weak<Gateway>,
    level: Mutex<Option<LoggingLevel>>,
    subscribed: Mutex<HashSet<String>>,
}

/// A level's rank: a message is relayed when its rank is at least the
/// session's level's.
fn rank(l: LoggingLevel) -> u8 {
    match l {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

impl Session {
    pub fn new(gw: &Arc<Gateway>) -> Session {
        Session {
            gw: Arc::downgrade(gw),
            level: Mutex::new(None),
            subscribed: Mutex::new(HashSet::new()),
        }
    }

    pub fn set_level(&self, level: LoggingLevel) {
        if let Ok(mut l) = self.level.lock() {
            *l = Some(level);
        }
    }

    /// Whether a message at `level` reaches this session: every message
    /// until it sets a level (the upstream chose to send it), then those at
    /// or above it.
    pub fn wants(&self, level: LoggingLevel) -> bool {
        match self.level.lock().ok().and_then(|l| *l) {
            None => true,
            Some(min) => rank(level) >= rank(min),
        }
    }

    pub fn is_subscribed(&self, uri: &str) -> bool {
        self.subscribed.lock().is_ok_and(|s| s.contains(uri))
    }

    /// Subscribe this session to `uri`: whether the upstream must be told
    /// (no session held it before).
    pub fn subscribe(&self, gw: &Gateway, uri: &str) -> Result<bool, ErrorData> {
        let mut mine = self.subscribed.lock().map_err(|_| poisoned())?;
        if mine.contains(uri) {
            return Ok(false);
        }
        if mine.len() >= MAX_SUBSCRIPTIONS {
            return Err(ErrorData::new(
                ErrorCode::INVALID_PARAMS,
                format!(
                    "this session holds {MAX_SUBSCRIPTIONS} subscriptions, the most it may: unsubscribe from one first"
                ),
                None,
            ));
        }
        mine.insert(uri.to_string());
        let mut all = gw.subscribers.lock().map_err(|_| poisoned())?;
        let n = all.entry(uri.to_string()).or_default();
        *n += 1;
        Ok(*n == 1)
    }

    /// Unsubscribe this session from `uri`: whether the upstream must be
    /// told (no session holds it any more).
    pub fn unsubscribe(&self, gw: &Gateway, uri: &str) -> bool {
        let held = self.subscribed.lock().is_ok_and(|mut s| s.remove(uri));
        held && release(gw, uri)
    }
}

/// One session fewer holds `uri`: whether it was the last.
fn release(gw: &Gateway, uri: &str) -> bool {
    let Ok(mut all) = gw.subscribers.lock() else {
        return false;
    };
    match all.get_mut(uri) {
        Some(n) if *n > 1 => {
            *n -= 1;
            false
        }
        Some(_) => {
            all.remove(uri);
            true
        }
        None => false,
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let Some(gw) = self.gw.upgrade() else { return };
        let uris: Vec<String> = self
            .subscribed
            .lock()
            .map(|mut s| s.drain().collect())
            .unwrap_or_default();
        let last: Vec<String> = uris.into_iter().filter(|u| release(&gw, u)).collect();
        if last.is_empty() {
            return;
        }
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        rt.spawn(async move {
            for uri in last {
                unsubscribe_upstream(&gw, &uri).await;
            }
        });
    }
}

fn poisoned() -> ErrorData {
    ErrorData::new(
        ErrorCode::INTERNAL_ERROR,
        "a session lock was poisoned",
        None,
    )
}

/// Relay to `peer` (the session opened by `id` under `configuration`) the
/// list changes and what it may see of the upstreams' notifications, until
/// the session is gone (the first notification it cannot take).
pub fn relay(
    gw: &Arc<Gateway>,
    session: Arc<Session>,
    peer: Peer<RoleServer>,
    configuration: Arc<str>,
    id: Identity,
    toucher: Option<Toucher>,
) {
    let weak = Arc::downgrade(gw);
    let mut changes = gw.changes.subscribe();
    let mut events = gw.events.subscribe();
    tokio::spawn(async move {
        use tokio::sync::broadcast::error::RecvError;
        loop {
            let sent = tokio::select! {
                r = changes.recv() => match r {
                    Ok(c) => notify_changed(&peer, c).await,
                    Err(RecvError::Lagged(_)) => notify_changed(&peer, Changed::ALL).await,
                    Err(RecvError::Closed) => return,
                },
                r = events.recv() => match r {
                    Ok(e) => {
                        let Some(gw) = weak.upgrade() else { return };
                        relay_event(&gw, &session, &peer, &configuration, &id, e).await
                    }
                    // Lost for a session too slow to take them (counted).
                    Err(RecvError::Lagged(n)) => {
                        if let Some(gw) = weak.upgrade() {
                            gw.metrics.events_dropped(n);
                        }
                        true
                    }
                    Err(RecvError::Closed) => return,
                },
            };
            if !sent {
                return;
            }
            if let Some(t) = &toucher {
                t.touch();
            }
        }
    });
}

/// Tell `peer` which lists changed: whether it could be told.
async fn notify_changed(peer: &Peer<RoleServer>, c: Changed) -> bool {
    (!c.tools || peer.notify_tool_list_changed().await.is_ok())
        && (!c.resources || peer.notify_resource_list_changed().await.is_ok())
        && (!c.prompts || peer.notify_prompt_list_changed().await.is_ok())
}

async fn relay_event(
    gw: &Gateway,
    session: &Session,
    peer: &Peer<RoleServer>,
    configuration: &str,
    id: &Identity,
    e: Event,
) -> bool {
    let (server, wanted) = match &e {
        Event::Log(s, p) => (s, session.wants(p.level)),
        Event::Updated(s, p) => (s, session.is_subscribed(&p.uri)),
    };
    if !wanted || !gw.sees_server(configuration, id, server) {
        return true;
    }
    match e {
        Event::Log(_, p) => peer.notify_logging_message(p).await.is_ok(),
        Event::Updated(_, p) => peer.notify_resource_updated(p).await.is_ok(),
    }
}

/// Tell the upstream answering `uri` that no session wants its updates.
pub(crate) async fn unsubscribe_upstream(gw: &Gateway, uri: &str) {
    let server = gw.offerings.load().server_of_uri(uri).map(str::to_string);
    let Some(c) = server.and_then(|s| gw.upstreams.get(&s).map(|c| c.load_full())) else {
        return;
    };
    #[allow(deprecated)]
    let stop = c
        .service
        .peer()
        .unsubscribe(rmcp::model::UnsubscribeRequestParams::new(uri));
    let _ = crate::upstream::relay(&c, &gw.config.limits, stop).await;
}
