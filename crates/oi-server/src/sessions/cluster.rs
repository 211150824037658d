//! Many replicas over one session store (`--store`): a replica serves a session only while it
//! holds the session's lease, a key in the store with a short TTL that the replica renews
//! every TTL/3 while it lives. A client that reaches another replica meanwhile gets HTTP 409
//! with `Retry-After`; once the owner releases the lease (drain, idle reaping) or dies (the
//! lease expires), the next replica the client reaches loads the session from the store and
//! serves it. Code that was running on a dead owner is gone: the new owner says so in one
//! console message and the conversation goes on.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use oi_core::{Chunk, Message};

use crate::error::ApiError;
use crate::sessions::store_link::StoreLink;
use crate::sessions::{Restored, SessionError, Sessions, valid_id};
pub use crate::store::replica::Cluster;
use crate::store::{Acquired, StoreError, Stored};

/// What the new owner of a session says when its previous owner died mid-turn.
pub const LOST_RUN_NOTE: &str = "The server that was running this session's code stopped; \
     that code and any output it had not sent are gone. The conversation goes on here.";

/// Why a session cannot be served here now.
#[derive(Debug)]
pub enum Refusal {
    /// Another replica holds the lease.
    Held {
        /// The session.
        id: String,
        /// How long the lease lasts unless renewed.
        left: Duration,
    },
    /// This replica is draining and takes no new sessions.
    Draining,
    /// The store failed.
    Store(StoreError),
    /// No room for the session here.
    Full(SessionError),
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let (status, message, retry) = match self {
            Refusal::Held { id, left } => (
                StatusCode::CONFLICT,
                format!(
                    "session {id} is being served by another replica (its lease ends in {} ms \
                     unless renewed): connect through the load balancer, or retry after \
                     Retry-After seconds",
                    left.as_millis()
                ),
                left.as_secs() + 1,
            ),
            Refusal::Draining => (
                StatusCode::SERVICE_UNAVAILABLE,
                "this replica is shutting down and takes no connections: retry (the load \
                 balancer sends you to another replica)"
                    .to_owned(),
                1,
            ),
            Refusal::Store(e) => (
                StatusCode::SERVICE_UNAVAILABLE,
                format!("{e}: the session cannot be loaded now; retry shortly"),
                1,
            ),
            Refusal::Full(e) => (StatusCode::SERVICE_UNAVAILABLE, e.to_string(), 5),
        };
        let mut response = ApiError::new(status, message).into_response();
        if let Ok(value) = HeaderValue::from_str(&retry.to_string()) {
            response.headers_mut().insert(header::RETRY_AFTER, value);
        }
        response
    }
}

/// Makes sure session `id` is served here: it already is, or its lease is taken now and the
/// session loaded from the store.
pub async fn claim(sessions: &Sessions, cluster: &Cluster, id: &str) -> Result<(), Refusal> {
    if cluster.draining() {
        // Even a session served here: it moves to another replica once the drain ends.
        return Err(Refusal::Draining);
    }
    if let Some(session) = sessions.get(id) {
        let lost = session
            .store()
            .is_some_and(|link| link.lost().is_cancelled());
        if !lost {
            return Ok(());
        }
        // Its lease is gone (the renewal task has not ended it yet): not served here.
        if sessions.remove_exact(&session) {
            tokio::spawn(async move { session.shutdown().await });
        }
    }
    if !valid_id(id) {
        // The registry refuses it with its own error.
        return Ok(());
    }
    let token = cluster.token();
    let store = cluster.store();
    match store
        .acquire(id, &token, cluster.ttl())
        .await
        .map_err(Refusal::Store)?
    {
        Acquired::Won => {}
        Acquired::Held(_) if sessions.get(id).is_some() => return Ok(()),
        Acquired::Held(left) => {
            return Err(Refusal::Held {
                id: id.to_owned(),
                left,
            });
        }
    }
    let loaded = match store.load(id).await {
        Ok(stored) => restore(id, stored),
        Err(e) => Err(e),
    };
    let (restored, busy) = match loaded {
        Ok(loaded) => loaded,
        Err(e) => {
            let _ = store.release(id, &token).await;
            return Err(Refusal::Store(e));
        }
    };
    let link = StoreLink::new(store.clone(), id, token.clone());
    let (session, evicted) = match sessions.adopt(id, restored, link.clone()) {
        Ok(adopted) => adopted,
        Err(e) => {
            let _ = store.release(id, &token).await;
            return Err(Refusal::Full(e));
        }
    };
    if let Some(evicted) = evicted {
        tokio::spawn(async move { evicted.shutdown().await });
    }
    if busy {
        let interpreter = session.interpreter();
        interpreter.emit(Chunk::console_output(LOST_RUN_NOTE));
        interpreter.emit(Chunk::complete());
        link.changed();
    }
    Ok(())
}

/// `DELETE /sessions/{id}` with a store: ends the session if it is served here, then takes
/// its lease and deletes what the store holds. 409 while another replica serves it, 404 when
/// the store holds nothing for it.
pub async fn delete(sessions: &Sessions, cluster: &Cluster, id: &str) -> Response {
    let local = sessions.remove(id);
    let was_local = local.is_some();
    if let Some(session) = local {
        session.shutdown().await;
    }
    let token = cluster.token();
    let store = cluster.store();
    match store.acquire(id, &token, cluster.ttl()).await {
        Ok(Acquired::Won) => {}
        Ok(Acquired::Held(left)) => {
            return Refusal::Held {
                id: id.to_owned(),
                left,
            }
            .into_response();
        }
        Err(e) => return Refusal::Store(e).into_response(),
    }
    let existed = match store.load(id).await {
        Ok(stored) => was_local || stored != Stored::default(),
        Err(e) => {
            let _ = store.release(id, &token).await;
            return Refusal::Store(e).into_response();
        }
    };
    let forgotten = store.forget(id).await;
    let _ = store.release(id, &token).await;
    match forgotten {
        Err(e) => Refusal::Store(e).into_response(),
        Ok(()) if existed => axum::Json(serde_json::json!({"status": "success"})).into_response(),
        Ok(()) => ApiError::not_found(format!("no session {id}")).into_response(),
    }
}

/// The settings of a stored snapshot, without the runtime state written among them
/// (`conversation_filename`: the adopting replica's session chooses its own file).
fn stored_settings(text: &str) -> Result<oi_core::Settings, serde_json::Error> {
    let mut value: serde_json::Value = serde_json::from_str(text)?;
    if let Some(fields) = value.as_object_mut() {
        fields.remove(oi_core::runtime::CONVERSATION_FILENAME);
    }
    serde_json::from_value(value)
}

/// Reads what the store holds; the second value says whether a turn was running when its
/// owner last wrote (its messages then end with a note that the run was lost).
fn restore(id: &str, stored: Stored) -> Result<(Restored, bool), StoreError> {
    let corrupt = |what: &'static str, e: serde_json::Error| StoreError::Corrupt {
        id: id.to_owned(),
        what,
        reason: e.to_string(),
    };
    let (mut messages, settings, busy) = match stored.snapshot {
        None => (Vec::new(), None, false),
        Some(snapshot) => {
            let messages: Vec<Message> =
                serde_json::from_str(&snapshot.messages).map_err(|e| corrupt("messages", e))?;
            let settings = if snapshot.settings.is_empty() {
                None
            } else {
                Some(stored_settings(&snapshot.settings).map_err(|e| corrupt("settings", e))?)
            };
            (messages, settings, snapshot.busy)
        }
    };
    if busy {
        messages.push(Message::console_output(LOST_RUN_NOTE));
    }
    Ok((
        Restored {
            messages,
            settings,
            outbox: stored.outbox,
        },
        busy,
    ))
}

/// Renews this replica's leases every TTL/3 until shutdown. A session whose lease is lost
/// (another replica holds it, or the store was unreachable for a whole TTL) is closed here.
pub async fn keep_leases(
    sessions: Arc<Sessions>,
    shutdown: tokio_util::sync::CancellationToken,
    cluster: Arc<Cluster>,
) {
    let every = (cluster.ttl() / 3).max(Duration::from_millis(10));
    loop {
        tokio::select! {
            () = tokio::time::sleep(every) => {}
            () = shutdown.cancelled() => return,
        }
        let owned: Vec<_> = sessions
            .all()
            .into_iter()
            .filter_map(|s| s.store().cloned().map(|link| (s, link)))
            .collect();
        let renewals = owned.iter().map(|(_, link)| async {
            let renewed = link
                .store()
                .renew(link.id(), link.token(), cluster.ttl())
                .await;
            match renewed {
                Ok(true) => {
                    link.renewed();
                    true
                }
                Ok(false) => false,
                Err(_) => link.last_renewed().elapsed() < cluster.ttl(),
            }
        });
        let kept = futures::future::join_all(renewals).await;
        for ((session, link), kept) in owned.into_iter().zip(kept) {
            if kept && !link.lost().is_cancelled() {
                continue;
            }
            link.lost().cancel();
            if sessions.remove_exact(&session) {
                eprintln!(
                    "lost the lease of session {}: another replica serves it now",
                    session.id()
                );
                tokio::spawn(async move { session.shutdown().await });
            }
        }
    }
}

/// Drains this replica: no new sessions from now on; waits up to `deadline` for the running
/// turns to finish. The caller then closes the connections and shuts the sessions down
/// (which writes them to the store and releases their leases).
pub async fn drain(sessions: &Sessions, cluster: &Cluster, deadline: Duration) {
    cluster.start_draining();
    let until = Instant::now() + deadline;
    while Instant::now() < until && sessions.all().iter().any(|s| s.interpreter().running()) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::stored_settings;

    #[test]
    fn stored_settings_with_the_file_name_among_them_still_read() {
        let mut stored = serde_json::to_value(oi_core::Settings::default()).unwrap();
        stored["conversation_filename"] = "theirs.json".into();
        stored["custom_instructions"] = "kept".into();
        let settings = stored_settings(&stored.to_string()).unwrap();
        assert_eq!(settings.custom_instructions, "kept");
        assert!(stored_settings("{\"nope\": 1}").is_err());
    }
}
