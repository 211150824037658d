//! The one place an outgoing frame becomes JSON: one typed struct, serialized by serde.
//!
//! A frame is a chunk (or, in a replay, a logged user message) with what the session or the
//! connection adds after its own keys, in this order: `id` (acknowledge mode), `kind` and
//! `status` (a failed turn's error chunk), `input` (`?input_numbers=true`), `usage`
//! (`?usage=true`), `seq` (`?replay=all`, `?since=N`). Keys that do not apply are left out,
//! so a client that asked for nothing gets the original's chunk byte for byte.

use oi_core::{Chunk, Failure, Message, UsageReport};
use serde::Serialize;

/// What a frame carries.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Body {
    /// A chunk the session sends.
    Chunk(Chunk),
    /// A user message the session was sent, logged for a replay.
    Message(Message),
}

/// One frame as it is written on the socket.
#[derive(Debug, Serialize)]
pub struct Wire<'a> {
    /// The chunk or message, its keys first.
    #[serde(flatten)]
    pub body: &'a Body,
    /// Its id in acknowledge mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<&'a str>,
    /// A failed turn's kind (`rate_limit`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<&'static str>,
    /// A failed turn's upstream HTTP status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The number of the connection's input a `complete` answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<u64>,
    /// The usage a `complete` reports.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<&'a UsageReport>,
    /// Its number in the session's log.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
}

impl<'a> Wire<'a> {
    /// `body` with nothing added.
    pub fn of(body: &'a Body) -> Self {
        Wire {
            body,
            id: None,
            kind: None,
            status: None,
            input: None,
            usage: None,
            seq: None,
        }
    }

    /// The same frame with a failed turn's kind and status.
    pub fn failed(mut self, failure: Option<&Failure>) -> Self {
        if let Some(failure) = failure {
            self.kind = Some(failure.kind.as_str());
            self.status = failure.status;
        }
        self
    }

    /// The JSON text.
    pub fn text(&self) -> String {
        // Serializing these plain types cannot fail; stay total anyway.
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_owned())
    }
}

/// The reply to an auth frame: `{"auth": true|false}`.
pub fn auth_text(ok: bool) -> String {
    #[derive(Serialize)]
    struct Auth {
        auth: bool,
    }
    serde_json::to_string(&Auth { auth: ok }).unwrap_or_else(|_| "{}".to_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use oi_core::{FailureKind, Kind, Role};

    use super::*;

    #[test]
    fn keys_come_after_the_chunks_own_in_one_order() {
        let body = Body::Chunk(Chunk::server_error("quota"));
        let failure = Failure {
            kind: FailureKind::RateLimit,
            status: Some(429),
            message: "quota".into(),
        };
        let mut wire = Wire::of(&body).failed(Some(&failure));
        wire.id = Some("s-1");
        wire.seq = Some(7);
        assert_eq!(
            wire.text(),
            r#"{"role":"server","type":"error","content":"quota","id":"s-1","kind":"rate_limit","status":429,"seq":7}"#
        );
        let complete = Body::Chunk(Chunk::complete());
        assert_eq!(Wire::of(&complete).text(), Chunk::complete().to_json());
        let go = Body::Chunk(Chunk::new(Role::User, Kind::Command, None, "go"));
        assert_eq!(
            Wire::of(&go).text(),
            r#"{"role":"user","type":"command","content":"go"}"#
        );
        let hi = Body::Message(Message::user("hi"));
        assert_eq!(
            Wire::of(&hi).text(),
            serde_json::to_string(&Message::user("hi")).unwrap()
        );
        assert_eq!(auth_text(true), r#"{"auth":true}"#);
    }
}
