//! The outbox of a session: each outgoing chunk written once as text, what was sent, what
//! must be sent again (spec c.6, fixed).
//!
//! In acknowledge mode every outgoing chunk gets its own `id` and stays in the outbox until the
//! client sends `{"ack": id}`: chunks not acked within the timeout are sent again with the same
//! id, and a new connection first receives, in order, every chunk not yet acked. Once acked, a
//! chunk is never sent again. Without acknowledge mode, only a chunk whose send failed is kept
//! for the next connection.
//!
//! In every mode the outbox also keeps the session's log (event_log.rs): each frame it wrote,
//! and each input it was sent, numbered, so that a connection that asks (`?replay=all`,
//! `?since=N`) first gets what the session said after N, each frame with its `"seq"`.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::extract::ws::Utf8Bytes;
use oi_core::Chunk;
use tokio::time::Instant;

use crate::outgoing::{InputRef, Outgoing};
use crate::sessions::event_log::{EventLog, Span};
use crate::sessions::wire::{Body, Wire};

/// A chunk ready for the socket: its text (with its `id` in acknowledge mode), and what it
/// was written from, to write it again with what a connection asked for (wire.rs).
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// Its sequence number in acknowledge mode.
    seq: Option<u64>,
    /// The JSON text sent.
    pub text: Utf8Bytes,
    /// What it was written from (none for a frame loaded from the store as text).
    body: Option<Arc<Written>>,
    /// For a `complete`: the input it answers.
    answers: Option<InputRef>,
    /// For a `complete`: its usage, for connections that asked (`?usage=true`).
    usage: Option<oi_core::UsageReport>,
    /// Its number in the session's log.
    logged: Option<u64>,
}

/// What a frame's text was written from.
#[derive(Debug, PartialEq)]
struct Written {
    body: Body,
    id: Option<String>,
    failure: Option<oi_core::Failure>,
}

impl Written {
    fn wire(&self) -> Wire<'_> {
        let mut wire = Wire::of(&self.body).failed(self.failure.as_ref());
        wire.id = self.id.as_deref();
        wire
    }
}

/// What a connection asked to find in the `complete`s it is sent (opt-in query parameters
/// of its upgrade, so that clients written for the original get its `complete` byte for
/// byte).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Extras {
    /// `?input_numbers=true`: the connection's number in its session, so that a `complete`
    /// answering one of its inputs carries `"input": N`.
    pub numbered: Option<u64>,
    /// `?usage=true`: each `complete` carries `"usage"` (its turn's and the session's
    /// tokens and cost).
    pub usage: bool,
    /// `?replay=all` or `?since=N`: each frame carries `"seq"`, its number in the log.
    pub seq: bool,
}

/// What a connection's upgrade asked for (its query), before it has a number.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Asks {
    /// `?input_numbers=true`.
    pub input_numbers: bool,
    /// `?usage=true`.
    pub usage: bool,
    /// `?replay=all` (`Some(0)`) or `?since=N` (`Some(N)`): the log after N first.
    pub replay: Option<u64>,
}

impl Asks {
    /// What the frames sent to connection number `connection` carry.
    pub fn extras(self, connection: u64) -> Extras {
        Extras {
            numbered: self.input_numbers.then_some(connection),
            usage: self.usage,
            seq: self.replay.is_some(),
        }
    }
}

impl Frame {
    /// Its sequence number in acknowledge mode.
    pub fn seq(&self) -> Option<u64> {
        self.seq
    }

    /// The text to send on a connection: when it asked for numbered `complete`s
    /// (`extras.numbered` is its number in the session), a `complete` answering one of its
    /// inputs carries `"input": N`; when it asked for usage, a `complete` carries
    /// `"usage": {…}`.
    pub fn text_for(&self, extras: Extras) -> Utf8Bytes {
        let input = match (self.answers, extras.numbered) {
            (Some(input), Some(connection)) if input.connection == connection => Some(input.number),
            _ => None,
        };
        let usage = self.usage.as_ref().filter(|_| extras.usage);
        let seq = self.logged.filter(|_| extras.seq);
        let Some(written) = self.body.as_ref() else {
            return self.text.clone();
        };
        if input.is_none() && usage.is_none() && seq.is_none() {
            return self.text.clone();
        }
        let mut wire = written.wire();
        wire.input = input;
        wire.usage = usage;
        wire.seq = seq;
        Utf8Bytes::from(wire.text())
    }

    /// A frame written from `written`.
    fn written(
        written: Written,
        seq: Option<u64>,
        answers: Option<InputRef>,
        usage: Option<oi_core::UsageReport>,
        logged: Option<u64>,
    ) -> Self {
        Frame {
            seq,
            text: Utf8Bytes::from(written.wire().text()),
            body: Some(Arc::new(written)),
            answers,
            usage,
            logged,
        }
    }
}

/// A replay's frames with the log's text pieces joined and replaced running lines left out
/// (sessions/coalesce.rs: a long log replayed one frame per logged piece would fill a
/// client's receive queue before it reads them). A joined frame carries the number of the
/// last piece it holds, so a client that resumes after it has every piece it holds.
fn joined_for_replay(frames: Vec<Frame>) -> Vec<Frame> {
    let mut out = Vec::with_capacity(frames.len());
    let mut run: Vec<(Outgoing, u64)> = Vec::new();
    let flush = |run: &mut Vec<(Outgoing, u64)>, out: &mut Vec<Frame>| {
        let joined = crate::sessions::coalesce::coalesce_tagged(std::mem::take(run));
        out.extend(joined.into_iter().map(|(piece, logged)| {
            let written = Written {
                body: Body::Chunk(piece.chunk),
                id: None,
                failure: None,
            };
            Frame::written(written, None, None, None, Some(logged))
        }));
    };
    for frame in frames {
        match plain_logged_chunk(&frame) {
            Some((chunk, logged)) => run.push((Outgoing::plain(chunk.clone()), logged)),
            None => {
                flush(&mut run, &mut out);
                out.push(frame);
            }
        }
    }
    flush(&mut run, &mut out);
    out
}

/// A logged frame's chunk and number when the frame is nothing more (no id, failure, input
/// it answers, or usage): what a replay may join.
fn plain_logged_chunk(frame: &Frame) -> Option<(&Chunk, u64)> {
    let written = frame.body.as_ref()?;
    let Body::Chunk(chunk) = &written.body else {
        return None;
    };
    let plain = frame.seq.is_none()
        && frame.answers.is_none()
        && frame.usage.is_none()
        && written.id.is_none()
        && written.failure.is_none();
    Some((chunk, frame.logged?)).filter(|_| plain)
}

#[derive(Debug)]
struct Pending {
    seq: u64,
    frame: Frame,
    sent_at: Option<Instant>,
}

#[derive(Debug, Default)]
struct State {
    /// Acknowledge mode: sent or not, not yet acked, in order of `seq`.
    unacked: VecDeque<Pending>,
    /// Without acknowledge mode: frames whose send failed.
    unsent: VecDeque<Frame>,
    next_seq: u64,
    /// Everything said, numbered (all modes).
    log: EventLog<Frame>,
}

/// The outbox of one session.
#[derive(Debug)]
pub struct Outbox {
    acknowledge: bool,
    timeout: Duration,
    prefix: String,
    state: Mutex<State>,
}

impl Outbox {
    /// An outbox; `acknowledge` turns on ids and acks, `timeout` is how long a chunk waits
    /// for its ack. Ids start with `prefix`.
    pub fn new(acknowledge: bool, timeout: Duration, prefix: &str) -> Self {
        let nonce = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        Outbox {
            acknowledge,
            timeout,
            prefix: format!("{prefix}-{nonce:x}"),
            state: Mutex::new(State::default()),
        }
    }

    /// An outbox loaded from the session store: ids go on from `stored`'s prefix and
    /// sequence number, and its chunks not yet acknowledged wait for the next connection.
    pub fn restored(
        acknowledge: bool,
        timeout: Duration,
        stored: crate::store::StoredOutbox,
    ) -> Self {
        let mut state = State {
            next_seq: stored.next_seq,
            ..State::default()
        };
        if acknowledge {
            for (seq, text) in stored.frames {
                state.next_seq = state.next_seq.max(seq);
                let frame = Frame {
                    seq: Some(seq),
                    text: Utf8Bytes::from(text),
                    body: None,
                    answers: None,
                    usage: None,
                    logged: None,
                };
                state.unacked.push_back(Pending {
                    seq,
                    frame,
                    sent_at: None,
                });
            }
        }
        Outbox {
            acknowledge,
            timeout,
            prefix: stored.prefix,
            state: Mutex::new(state),
        }
    }

    /// What every id starts with.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The last sequence number given out.
    pub fn next_seq(&self) -> u64 {
        self.state().next_seq
    }

    /// The sequence number in `id`, if it is one of this outbox's ids.
    pub fn seq_of(&self, id: &str) -> Option<u64> {
        id.strip_prefix(self.prefix.as_str())
            .and_then(|rest| rest.strip_prefix('-'))
            .and_then(|n| n.parse::<u64>().ok())
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether acknowledge mode is on.
    pub fn acknowledge(&self) -> bool {
        self.acknowledge
    }

    /// Writes `chunk` for the socket; in acknowledge mode it gets a fresh `id` and is kept
    /// until acked.
    pub fn prepare(&self, chunk: &Chunk) -> Frame {
        self.prepare_out(&Outgoing::plain(chunk.clone()))
    }

    /// [`prepare`](Self::prepare) for a chunk that may answer an input.
    pub fn prepare_out(&self, out: &Outgoing) -> Frame {
        let (answers, usage) = (out.answers, out.usage);
        let mut written = Written {
            body: Body::Chunk(out.chunk.clone()),
            id: None,
            failure: out.failure.clone(),
        };
        let mut state = self.state();
        let logged = state.log.next_seq();
        if !self.acknowledge {
            let frame = Frame::written(written, None, answers, usage, Some(logged));
            Self::log(&mut state, &frame);
            return frame;
        }
        state.next_seq += 1;
        let seq = state.next_seq;
        written.id = Some(format!("{}-{seq}", self.prefix));
        let frame = Frame::written(written, Some(seq), answers, usage, Some(logged));
        state.unacked.push_back(Pending {
            seq,
            frame: frame.clone(),
            sent_at: None,
        });
        Self::log(&mut state, &frame);
        frame
    }

    fn log(state: &mut State, frame: &Frame) {
        // The text and what it was written from (about as large again).
        let bytes = 2 * frame.text.len() + 128;
        if let Some(seq) = frame.logged {
            state.log.push(seq, frame.clone(), bytes);
        }
    }

    /// Logs an input the session was sent (a user message, or a command as its chunk), so
    /// that a replay shows it where it came. Never sent live.
    pub fn log_input(&self, input: Body) {
        let mut state = self.state();
        let logged = state.log.next_seq();
        let written = Written {
            body: input,
            id: None,
            failure: None,
        };
        let frame = Frame::written(written, None, None, None, Some(logged));
        Self::log(&mut state, &frame);
    }

    /// Whether the log has not begun: the first connection then says whether the
    /// conversation was empty ([`begin_log`](Self::begin_log)).
    pub fn log_unbegun(&self) -> bool {
        self.state().log.unbegun()
    }

    /// Records whether the conversation was empty when the log began.
    pub fn begin_log(&self, conversation_empty: bool) {
        self.state().log.begin(conversation_empty);
    }

    /// For a connection that asked for the log after `since` (0: all of it): where the log
    /// stands, and what to send first, in order. In acknowledge mode that is also every
    /// chunk not yet acked that the log no longer holds or that is not after `since`;
    /// without it, the frames whose send failed are in the log and are not kept apart.
    pub fn replay_log(&self, since: u64) -> (Span, Vec<Frame>) {
        let mut state = self.state();
        let span = state.log.span();
        let mut frames = Vec::new();
        if self.acknowledge {
            frames.extend(
                state
                    .unacked
                    .iter()
                    .filter(|p| p.frame.logged.is_none_or(|n| n <= since || n < span.first))
                    .map(|p| p.frame.clone()),
            );
        } else {
            state.unsent.clear();
        }
        let logged = state.log.after(since).into_iter().map(|(_, frame)| frame);
        frames.extend(joined_for_replay(logged.collect()));
        (span, frames)
    }

    fn position(state: &State, seq: u64) -> Option<usize> {
        state.unacked.binary_search_by_key(&seq, |p| p.seq).ok()
    }

    /// Records that `frame` went out now (starts its ack timer).
    pub fn sent(&self, frame: &Frame) {
        let Some(seq) = frame.seq else { return };
        let now = Instant::now();
        let mut state = self.state();
        if let Some(i) = Self::position(&state, seq) {
            state.unacked[i].sent_at = Some(now);
        }
    }

    /// Records that sending `frame` failed: it goes to the next connection.
    pub fn failed(&self, frame: Frame) {
        if !self.acknowledge {
            self.state().unsent.push_back(frame);
        }
    }

    /// The client acknowledged `id`. Returns whether it was waiting.
    pub fn ack(&self, id: &str) -> bool {
        let Some(seq) = id
            .strip_prefix(self.prefix.as_str())
            .and_then(|rest| rest.strip_prefix('-'))
            .and_then(|n| n.parse::<u64>().ok())
        else {
            return false;
        };
        let mut state = self.state();
        match Self::position(&state, seq) {
            Some(i) => state.unacked.remove(i).is_some(),
            None => false,
        }
    }

    /// What a new connection must receive first, in order: every chunk not yet acked (or, without
    /// acknowledge mode, every chunk whose send failed).
    pub fn replay(&self) -> Vec<Frame> {
        let mut state = self.state();
        if self.acknowledge {
            state.unacked.iter().map(|p| p.frame.clone()).collect()
        } else {
            state.unsent.drain(..).collect()
        }
    }

    /// The chunks whose ack is overdue at `now`, in order.
    pub fn overdue(&self, now: Instant) -> Vec<Frame> {
        self.state()
            .unacked
            .iter()
            .filter(|p| p.sent_at.is_some_and(|at| at + self.timeout <= now))
            .map(|p| p.frame.clone())
            .collect()
    }

    /// When the next ack falls due, if any chunk waits for one.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.state()
            .unacked
            .iter()
            .filter_map(|p| p.sent_at)
            .min()
            .map(|at| at + self.timeout)
    }

    /// How many chunks wait for an ack.
    pub fn waiting(&self) -> usize {
        self.state().unacked.len()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    fn id(frame: &Frame) -> String {
        let value: serde_json::Value = serde_json::from_str(frame.text.as_str()).unwrap();
        value["id"].as_str().unwrap().to_owned()
    }

    #[test]
    fn ids_are_unique_and_acks_remove() {
        let outbox = Outbox::new(true, Duration::from_millis(10), "s");
        let a = outbox.prepare(&Chunk::complete());
        let b = outbox.prepare(&Chunk::complete());
        assert_ne!(id(&a), id(&b));
        assert_eq!(outbox.replay(), vec![a.clone(), b.clone()]);
        assert!(outbox.ack(&id(&a)));
        assert!(!outbox.ack(&id(&a)));
        assert!(!outbox.ack("someone-else-1"));
        assert_eq!(outbox.replay(), vec![b]);
    }

    #[tokio::test(start_paused = true)]
    async fn overdue_after_timeout() {
        let outbox = Outbox::new(true, Duration::from_millis(100), "s");
        let a = outbox.prepare(&Chunk::complete());
        assert!(outbox.next_deadline().is_none());
        outbox.sent(&a);
        assert!(outbox.overdue(Instant::now()).is_empty());
        tokio::time::advance(Duration::from_millis(150)).await;
        assert_eq!(outbox.overdue(Instant::now()), vec![a]);
    }

    #[test]
    fn without_acks_only_failures_are_kept() {
        let outbox = Outbox::new(false, Duration::from_millis(10), "s");
        let a = outbox.prepare(&Chunk::complete());
        assert_eq!(a.text.as_str(), Chunk::complete().to_json());
        outbox.failed(a.clone());
        assert_eq!(outbox.replay(), vec![a]);
        assert!(outbox.replay().is_empty());
    }

    fn seqs(frames: &[Frame]) -> Vec<u64> {
        let seq = Extras {
            seq: true,
            ..Extras::default()
        };
        frames
            .iter()
            .map(|f| {
                let value: serde_json::Value =
                    serde_json::from_str(f.text_for(seq).as_str()).unwrap();
                value["seq"].as_u64().unwrap()
            })
            .collect()
    }

    #[test]
    fn the_log_numbers_everything_and_replays_after_since() {
        let outbox = Outbox::new(false, Duration::from_millis(10), "s");
        outbox.begin_log(true);
        let a = outbox.prepare(&Chunk::complete());
        // Without `seq` asked for, the text is what it always was.
        assert_eq!(
            a.text_for(Extras::default()).as_str(),
            Chunk::complete().to_json()
        );
        outbox.log_input(Body::Message(oi_core::Message::user("hi")));
        let c = outbox.prepare(&Chunk::complete());
        outbox.failed(c);
        let (span, all) = outbox.replay_log(0);
        assert_eq!((span.first, span.last, span.whole), (1, 3, true));
        assert_eq!(seqs(&all), vec![1, 2, 3]);
        assert!(all[1].text.as_str().contains("\"role\":\"user\""));
        // The failed frame was in the log: nothing is kept apart for the next connection.
        assert!(outbox.replay().is_empty());
        let (_, rest) = outbox.replay_log(2);
        assert_eq!(seqs(&rest), vec![3]);
    }

    #[test]
    fn acknowledge_mode_replays_the_unacked_too() {
        let outbox = Outbox::new(true, Duration::from_millis(10), "s");
        let a = outbox.prepare(&Chunk::complete());
        let b = outbox.prepare(&Chunk::complete());
        let c = outbox.prepare(&Chunk::complete());
        assert!(outbox.ack(&id(&b)));
        // After 2: a (not acked) then c; b, acked, is not sent again.
        let (span, frames) = outbox.replay_log(2);
        assert!(!span.whole);
        assert_eq!(frames, vec![a.clone(), c]);
        // All: a, b (from the log), c, each once.
        let (_, frames) = outbox.replay_log(0);
        assert_eq!(seqs(&frames), vec![1, 2, 3]);
        assert_eq!(frames[0], a);
    }

    #[test]
    fn a_failed_turns_error_chunk_says_its_kind_and_status_after_its_id() {
        let outbox = Outbox::new(true, Duration::from_millis(10), "s");
        let error = oi_core::TurnError::Model(oi_core::ModelError::RateLimited {
            status: 429,
            body: "quota".into(),
        });
        let frame = outbox.prepare_out(&Outgoing::failed(&error));
        let content = serde_json::Value::from(error.to_string()).to_string();
        assert_eq!(
            frame.text.as_str(),
            format!(
                r#"{{"role":"server","type":"error","content":{content},"id":"{}","kind":"rate_limit","status":429}}"#,
                id(&frame)
            )
        );
    }
}
