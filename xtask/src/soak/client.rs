//! One soak client: its connection to its own session, the inputs it numbers, and the checks
//! every frame it reads goes through (the `complete`s in order, each chunk once in
//! acknowledge mode, pings answered).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::link::{Event, Library, Link};
use super::tally::Tally;

/// How long a client waits for the answer to an input before it counts as lost.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(90);

/// A server the clients talk to.
#[derive(Debug, Clone)]
pub struct Target {
    /// Its name in the summary (`auto`, `approve`).
    pub name: &'static str,
    /// `127.0.0.1:PORT`.
    pub addr: String,
}

/// Why no answer came.
#[derive(Debug, Clone, PartialEq)]
pub enum Lost {
    /// Nothing within the time limit.
    Timeout,
    /// The connection ended (with the server's close code, if it sent one).
    Closed(Option<u16>),
}

/// A small random-number generator (xorshift64*), seeded per client.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (never zero).
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }

    /// The next number below `bound` (`bound` > 0).
    pub fn below(&mut self, bound: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % bound.max(1)
    }

    /// Picks an index by `weights`.
    pub fn pick(&mut self, weights: &[u64]) -> usize {
        let total: u64 = weights.iter().sum();
        let mut roll = self.below(total);
        for (i, weight) in weights.iter().enumerate() {
            if roll < *weight {
                return i;
            }
            roll -= weight;
        }
        weights.len() - 1
    }
}

/// Chunks seen per session outbox (the id's prefix), in acknowledge mode.
#[derive(Debug, Default)]
struct Ledger {
    last: HashMap<String, u64>,
}

/// What an id says about its chunk.
enum Seen {
    New,
    Duplicate,
    /// New, but chunks before it never came.
    Gap(u64),
}

impl Ledger {
    fn see(&mut self, id: &str) -> Seen {
        let Some((prefix, seq)) = id.rsplit_once('-') else {
            return Seen::New;
        };
        let Ok(seq) = seq.parse::<u64>() else {
            return Seen::New;
        };
        let last = self.last.entry(prefix.to_owned()).or_insert(0);
        if seq <= *last {
            return Seen::Duplicate;
        }
        let expected = *last + 1;
        *last = seq;
        if seq == expected {
            Seen::New
        } else {
            Seen::Gap(expected)
        }
    }
}

/// One client.
pub struct Client {
    /// Its number.
    pub index: usize,
    /// Its connection.
    pub link: Link,
    /// The server it uses.
    pub target: Target,
    /// Its session id.
    pub session: String,
    /// Whether chunks carry ids to acknowledge.
    pub ack: bool,
    /// Its random choices.
    pub rng: Rng,
    /// The shared counts.
    pub tally: Arc<Mutex<Tally>>,
    /// Inputs sent on this connection.
    inputs: u64,
    /// The highest input of this connection answered so far.
    answered: u64,
    /// A ping is waiting for its pong.
    ping_sent: Option<Instant>,
    ledger: Ledger,
    nonces: u64,
}

impl Client {
    /// A client of `target` with its own session.
    pub fn new(
        index: usize,
        link: Link,
        target: Target,
        ack: bool,
        seed: u64,
        tally: Arc<Mutex<Tally>>,
    ) -> Self {
        Client {
            index,
            link,
            session: format!("soak-{index}"),
            target,
            ack,
            rng: Rng::new(seed),
            tally,
            inputs: 0,
            answered: 0,
            ping_sent: None,
            ledger: Ledger::default(),
            nonces: 0,
        }
    }

    /// Its library.
    pub fn library(&self) -> Library {
        self.link.library()
    }

    /// A fresh nonce: client number and counter.
    pub fn nonce(&mut self) -> String {
        self.nonces += 1;
        format!("c{}n{}", self.index, self.nonces)
    }

    /// Records a violation of an invariant.
    pub fn violation(&self, action: &str, what: impl std::fmt::Display) {
        let line = format!(
            "{} client {} ({}, session {}), {action}: {what}",
            self.target.name,
            self.index,
            self.library().name(),
            self.session
        );
        eprintln!("soak: VIOLATION {line}");
        self.tally_mut().violation(line);
    }

    /// The shared counts, locked.
    pub fn tally_mut(&self) -> std::sync::MutexGuard<'_, Tally> {
        self.tally
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Opens a new connection to the session (inputs are numbered from 1 again).
    pub async fn connect(&mut self) -> anyhow::Result<()> {
        // Numbered completes: after a dropped socket, the answer is told from what is left over.
        let url = format!(
            "ws://{}/sessions/{}?input_numbers=1",
            self.target.addr, self.session
        );
        self.link.connect(&url).await?;
        self.inputs = 0;
        self.answered = 0;
        self.ping_sent = None;
        Ok(())
    }

    /// Sends one user input (start, content, end); returns its number on this connection.
    pub async fn say(&mut self, kind: &str, text: &str) -> anyhow::Result<u64> {
        for frame in [
            json!({"role": "user", "type": kind, "start": true}),
            json!({"role": "user", "type": kind, "content": text}),
            json!({"role": "user", "type": kind, "end": true}),
        ] {
            self.link.send(frame.to_string()).await?;
        }
        self.inputs += 1;
        self.tally_mut().input();
        Ok(self.inputs)
    }

    /// Sends a ping whose pong must come with the next answer (Rust clients without
    /// acknowledge mode; the Python library pings every second on its own).
    pub async fn ping(&mut self) {
        if self.library() == Library::Rust && !self.ack {
            self.link.ping().await;
            self.ping_sent = Some(Instant::now());
        }
    }

    /// The next frame, acknowledged and de-duplicated in acknowledge mode, with the order of
    /// `complete`s checked.
    pub async fn frame(&mut self, within: Duration) -> Result<Value, Lost> {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let event = self.link.next(left).await.ok_or(Lost::Timeout)?;
            let text = match event {
                Event::Frame(text) => text,
                Event::Pong => {
                    self.ping_sent = None;
                    continue;
                }
                Event::Closed(code) => return Err(Lost::Closed(code)),
            };
            let Ok(frame) = serde_json::from_str::<Value>(&text) else {
                self.violation("reading", format!("a frame that is not JSON: {text:.200}"));
                continue;
            };
            if self.ack && !self.acknowledged(&frame).await {
                continue;
            }
            self.tally_mut().chunk(false);
            self.check_complete(&frame);
            return Ok(frame);
        }
    }

    /// Acknowledges `frame`; false when it is a duplicate to drop.
    async fn acknowledged(&mut self, frame: &Value) -> bool {
        let Some(id) = frame["id"].as_str().map(str::to_owned) else {
            self.violation(
                "acknowledge mode",
                format!("a chunk without an id: {frame}"),
            );
            return true;
        };
        let _ = self.link.send(json!({ "ack": id }).to_string()).await;
        match self.ledger.see(&id) {
            Seen::New => true,
            Seen::Duplicate => {
                self.tally_mut().chunk(true);
                false
            }
            Seen::Gap(missing) => {
                self.violation(
                    "acknowledge mode",
                    format!("chunk {missing} of its outbox never came (the next was {id})"),
                );
                true
            }
        }
    }

    /// A `complete` naming an input must name a later one than any before it on this
    /// connection, and one that was sent.
    fn check_complete(&mut self, frame: &Value) {
        if frame["role"] != "server" || frame["content"] != "complete" {
            return;
        }
        let Some(number) = frame["input"].as_u64() else {
            return;
        };
        if number <= self.answered || number > self.inputs {
            self.violation(
                "order",
                format!(
                    "a complete for input {number} after input {} was answered ({} sent)",
                    self.answered, self.inputs
                ),
            );
        }
        self.answered = self.answered.max(number);
    }

    /// Reads until the `complete` answering input `number`; every frame read, that
    /// `complete` last.
    pub async fn until_answer(
        &mut self,
        number: u64,
        within: Duration,
    ) -> Result<Vec<Value>, Lost> {
        let deadline = Instant::now() + within;
        let mut frames = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let frame = self.frame(left).await?;
            let done = frame["role"] == "server"
                && frame["content"] == "complete"
                && frame["input"].as_u64() == Some(number);
            frames.push(frame);
            if done {
                self.tally_mut().answered();
                if let Some(sent) = self.ping_sent.take() {
                    self.await_pong(sent).await;
                }
                return Ok(frames);
            }
        }
    }

    /// A pong must follow a ping within a second or two (the reader answers pings whatever
    /// the turn does).
    async fn await_pong(&mut self, sent: Instant) {
        self.ping_sent = Some(sent);
        let deadline = sent + Duration::from_secs(2);
        while self.ping_sent.is_some() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                self.violation("ping", "no pong within 2 s of the ping");
                self.ping_sent = None;
                return;
            }
            match self.link.next(left).await {
                Some(Event::Pong) => self.ping_sent = None,
                Some(Event::Frame(_)) => {}
                Some(Event::Closed(_)) | None => {}
            }
        }
    }

    /// Gives up `inputs` inputs by design (interrupted, or left behind).
    pub fn abandon(&self, inputs: usize) {
        self.tally_mut().abandoned(inputs);
    }

    /// Reports a lost answer.
    pub fn lost(&self, action: &str, number: u64, lost: &Lost) {
        self.tally_mut().lost();
        let what = match lost {
            Lost::Timeout => format!("input {number} was not answered within {ANSWER_TIMEOUT:?}"),
            Lost::Closed(code) => {
                format!(
                    "the connection ended (close code {code:?}) before input {number} was answered"
                )
            }
        };
        self.violation(action, what);
    }

    /// Closes as the library does; a handshake that takes over a second is a violation.
    pub async fn close(&mut self) -> anyhow::Result<()> {
        match self.link.close().await? {
            Some(took) => {
                self.tally_mut().close(took);
                if took > Duration::from_secs(1) {
                    self.violation(
                        "close",
                        format!("the server answered the close frame after {took:?}"),
                    );
                }
            }
            None => self.violation("close", "the server never answered the close frame"),
        }
        Ok(())
    }
}
