//! What soak clients do, each check included: every input answered by its own `complete`
//! (or explicitly errored), every message of a client's own turn whole and exactly as the
//! model and the code produced it.

use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::check::{Block, blocks, difference, has_error, whole};
use super::client::{ANSWER_TIMEOUT, Client, Lost};
use super::model;

/// How one run went.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Every check held.
    pub ok: bool,
    /// From the input's `end` to its answer.
    pub latency: Option<Duration>,
    /// The connection is gone or unusable: connect again.
    pub reconnect: bool,
}

impl Outcome {
    fn ok(latency: Duration) -> Self {
        Outcome {
            ok: true,
            latency: Some(latency),
            reconnect: false,
        }
    }

    fn failed() -> Self {
        Outcome {
            ok: false,
            latency: None,
            reconnect: false,
        }
    }

    fn broken() -> Self {
        Outcome {
            ok: false,
            latency: None,
            reconnect: true,
        }
    }
}

/// An action of the soak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// A text reply of ~20 chunks.
    Text,
    /// Python computes a product; its output and the answer are checked.
    Compute,
    /// A 30 s sleep stopped at a random point, then a message.
    Stop,
    /// 300 000 characters of output.
    Flood,
    /// The socket dropped (or closed) mid-turn, a new connection at once, a message.
    Drop,
    /// The session deleted while its code runs, then a new session of the same id.
    Delete,
    /// The model answers with an HTTP error or breaks off mid-reply.
    Fault,
    /// Code waits for approval; `go` runs it.
    Approve,
    /// Code waits for approval; `stop` declines it.
    Decline,
    /// Two messages sent back to back, answered in order (queue mode).
    Pipeline,
    /// A message queued behind a running turn, the socket dropped, a message on a new one.
    QueueDrop,
    /// Closed with a close handshake while code runs silently, reconnected, a message.
    CloseSilent,
    /// Closed with a close handshake while the model streams, reconnected, a message.
    CloseStreaming,
}

/// The actions on the `-y` server (interrupt mode), with their weights.
pub const AUTO: [(Action, u64); 9] = [
    (Action::Text, 5),
    (Action::Compute, 3),
    (Action::Stop, 2),
    (Action::Flood, 1),
    (Action::Drop, 3),
    (Action::Delete, 1),
    (Action::Fault, 1),
    (Action::CloseSilent, 2),
    (Action::CloseStreaming, 2),
];

/// The actions on the approving server (queue mode).
pub const APPROVE: [(Action, u64); 4] = [
    (Action::Approve, 3),
    (Action::Decline, 1),
    (Action::Pipeline, 2),
    (Action::QueueDrop, 2),
];

impl Action {
    /// Its name in the summary.
    pub fn name(self) -> &'static str {
        match self {
            Action::Text => "text",
            Action::Compute => "compute (python)",
            Action::Stop => "stop mid-turn, then a message",
            Action::Flood => "300 000-char output",
            Action::Drop => "drop mid-turn, reconnect, message",
            Action::Delete => "delete session mid-turn",
            Action::Fault => "model fault",
            Action::Approve => "approval, go",
            Action::Decline => "approval, stop",
            Action::Pipeline => "two messages back to back",
            Action::QueueDrop => "queued message, drop, message",
            Action::CloseSilent => "close while code runs silently, reconnect, message",
            Action::CloseStreaming => "close while the model streams, reconnect, message",
        }
    }

    /// Runs it once.
    pub async fn run(self, client: &mut Client) -> Outcome {
        let outcome = match self {
            Action::Text => text(client).await,
            Action::Compute => compute(client).await,
            Action::Stop => stop(client).await,
            Action::Flood => flood(client).await,
            Action::Drop => drop_and_return(client).await,
            Action::Delete => delete(client).await,
            Action::Fault => fault(client).await,
            Action::Approve => approve(client, true).await,
            Action::Decline => approve(client, false).await,
            Action::Pipeline => pipeline(client).await,
            Action::QueueDrop => queue_drop(client).await,
            Action::CloseSilent => close_and_return(client, "nap").await,
            Action::CloseStreaming => close_and_return(client, "slowtext").await,
        };
        outcome.unwrap_or_else(|error| {
            client.violation(self.name(), format!("the connection failed: {error:#}"));
            Outcome::broken()
        })
    }
}

/// The whole messages among `frames`. oi's context note (said once per conversation, at the
/// start of the reply's text, when trimming first leaves old messages out: a long soak
/// session outgrows the window) is taken off the message it starts, so the reply itself is
/// compared.
fn whole_blocks(frames: &[Value]) -> Vec<Block> {
    blocks(frames)
        .into_iter()
        .filter(|b| b.whole)
        .map(without_context_note)
        .collect()
}

/// `block` without a leading context note (`oi_llm::context_note`).
fn without_context_note(mut block: Block) -> Block {
    let noted =
        block.kind == "message" && block.content.starts_with(oi_llm::context_note::NOTE_PREFIX);
    if let Some(end) = block.content.find("\n\n").filter(|_| noted) {
        block.content = block.content[end + 2..].to_owned();
    }
    block
}

/// Checks `frames` (a client's own turn) against the messages expected. Console output that
/// carries a note of oi's computer (`[oi: the previous Python session … was killed …]`)
/// instead of, or before, what the code printed is counted apart: the code's session was
/// replaced under it, which is no fault of the server; every other message must still be
/// exact.
fn expect(client: &Client, action: &str, frames: &[Value], expected: &[Block]) -> bool {
    let seen = whole_blocks(frames);
    let Some(diff) = difference(&seen, expected) else {
        return true;
    };
    let noted = |s: &Block, e: &Block| {
        s.kind == "console" && e.kind == "console" && s.content.contains("[oi: ")
    };
    let only_notes = seen.len() == expected.len()
        && seen
            .iter()
            .zip(expected)
            .all(|(s, e)| s == e || noted(s, e));
    if only_notes {
        for (s, e) in seen.iter().zip(expected) {
            if s != e {
                client.tally_mut().computer_note(&s.content);
            }
        }
        return true;
    }
    client.violation(action, diff);
    false
}

/// Waits for the answer to input `number`; a lost one is a violation.
async fn answer(client: &mut Client, action: &str, number: u64) -> Result<Vec<Value>, Outcome> {
    match client.until_answer(number, ANSWER_TIMEOUT).await {
        Ok(frames) => Ok(frames),
        Err(lost) => {
            client.lost(action, number, &lost);
            Err(Outcome::broken())
        }
    }
}

/// Reads until a frame for which `stop` holds (or `count` frames); false when the
/// connection ended first.
async fn read_until(
    client: &mut Client,
    count: usize,
    stop: impl Fn(&Value) -> bool,
) -> Result<bool, Lost> {
    for _ in 0..count {
        let frame = client.frame(ANSWER_TIMEOUT).await?;
        if stop(&frame) {
            return Ok(true);
        }
    }
    Ok(false)
}

fn is_output(frame: &Value) -> bool {
    frame["format"] == "output"
}

/// Console output that is a note of oi's computer (`[oi: the Python session exited…]`).
fn is_computer_note(frame: &Value) -> bool {
    is_output(frame)
        && frame["content"]
            .as_str()
            .is_some_and(|c| c.contains("[oi: "))
}

async fn text(client: &mut Client) -> anyhow::Result<Outcome> {
    let nonce = client.nonce();
    client.ping().await;
    let number = client
        .say("message", &model::message("text", &nonce, ""))
        .await?;
    let started = Instant::now();
    let frames = match answer(client, "text", number).await {
        Ok(frames) => frames,
        Err(outcome) => return Ok(outcome),
    };
    let took = started.elapsed();
    let expected = [whole("assistant", "message", &model::text_answer(&nonce))];
    Ok(if expect(client, "text", &frames, &expected) {
        Outcome::ok(took)
    } else {
        Outcome::failed()
    })
}

async fn compute(client: &mut Client) -> anyhow::Result<Outcome> {
    let nonce = client.nonce();
    let (a, b) = (client.rng.below(1_000_000), client.rng.below(1_000_000));
    let number = client
        .say(
            "message",
            &model::message("compute", &nonce, &format!("{a} {b}")),
        )
        .await?;
    let started = Instant::now();
    let frames = match answer(client, "compute", number).await {
        Ok(frames) => frames,
        Err(outcome) => return Ok(outcome),
    };
    let took = started.elapsed();
    let expected = [
        whole("assistant", "code", &model::compute_code(a, b)),
        whole("computer", "console", &format!("{}\n", a * b)),
        whole("assistant", "message", &model::compute_answer(&nonce, a, b)),
    ];
    Ok(if expect(client, "compute", &frames, &expected) {
        Outcome::ok(took)
    } else {
        Outcome::failed()
    })
}

async fn flood(client: &mut Client) -> anyhow::Result<Outcome> {
    let nonce = client.nonce();
    let number = client
        .say("message", &model::message("flood", &nonce, ""))
        .await?;
    let started = Instant::now();
    let frames = match answer(client, "flood", number).await {
        Ok(frames) => frames,
        Err(outcome) => return Ok(outcome),
    };
    let took = started.elapsed();
    let expected = [
        whole("assistant", "code", &model::flood_code()),
        whole("computer", "console", &model::flood_output()),
        whole("assistant", "message", &model::after_code("flood", &nonce)),
    ];
    Ok(if expect(client, "flood", &frames, &expected) {
        Outcome::ok(took)
    } else {
        Outcome::failed()
    })
}

/// A stop must be answered at once, whatever the turn is doing.
const STOP_LIMIT: Duration = Duration::from_secs(3);

async fn stop(client: &mut Client) -> anyhow::Result<Outcome> {
    let nonce = client.nonce();
    let number = client
        .say("message", &model::message("sleep", &nonce, ""))
        .await?;
    // Stop at a random point: at once, after a few chunks, once the code runs.
    let point = client.rng.below(4);
    // Whether the code's output was a note of oi's computer instead of the sleep (the Python
    // session was replaced under it): then the turn may end on its own before the stop.
    let noted = std::sync::atomic::AtomicBool::new(false);
    let reached = match point {
        0 => Ok(true),
        1 => read_until(client, 1, |_| true).await,
        2 => {
            read_until(client, 200, |f| {
                f["type"] == "code" && f.get("end").is_some()
            })
            .await
        }
        _ => {
            read_until(client, 200, |f| {
                noted.store(is_computer_note(f), std::sync::atomic::Ordering::Relaxed);
                is_output(f)
            })
            .await
        }
    };
    if let Err(lost) = reached {
        client.lost("stop", number, &lost);
        return Ok(Outcome::broken());
    }
    let stop = client.say("command", "stop").await?;
    client.abandon(1);
    let started = Instant::now();
    let frames = match answer(client, "stop", stop).await {
        Ok(frames) => frames,
        Err(outcome) => return Ok(outcome),
    };
    let took = started.elapsed();
    let mut ok = true;
    if took > STOP_LIMIT {
        client.violation("stop", format!("the stop was answered after {took:?}"));
        ok = false;
    }
    let completed = frames
        .iter()
        .any(|f| f["content"] == "complete" && f["input"].as_u64() == Some(number));
    let ended_early =
        noted.load(std::sync::atomic::Ordering::Relaxed) || frames.iter().any(is_computer_note);
    if completed && ended_early {
        // The code did not run its sleep: its turn ended before the stop came (the order
        // protocol §3.7 allows); no fault of the server.
        let note = frames.iter().find(|f| is_computer_note(f));
        let text = note
            .and_then(|f| f["content"].as_str())
            .unwrap_or("[oi: …]");
        client.tally_mut().computer_note(text);
    } else if completed {
        client.violation("stop", "the stopped turn sent its complete after all");
        ok = false;
    }
    let after = text(client).await?;
    Ok(Outcome {
        ok: ok && after.ok,
        latency: Some(took),
        reconnect: after.reconnect,
    })
}

async fn drop_and_return(client: &mut Client) -> anyhow::Result<Outcome> {
    let nonce = client.nonce();
    let number = client
        .say("message", &model::message("ticks", &nonce, ""))
        .await?;
    let frames = 1 + client.rng.below(12) as usize;
    if let Err(lost) = read_until(client, frames, is_output).await {
        client.lost("drop", number, &lost);
        return Ok(Outcome::broken());
    }
    // Vanish (a killed client, a lost network), or close as the library does; then come
    // back at once.
    client.abandon(1);
    if client.ack || client.rng.below(2) == 0 {
        client.link.abort().await?;
    } else {
        client.close().await?;
    }
    client.connect().await?;
    returning(client, "drop").await
}

/// A close handshake while the turn is busy (`kind` `nap`: its code runs silently;
/// `slowtext`: the model streams), as Python's `websockets` closes: answered at once (the
/// client counts a handshake over a second as a violation); then a new connection to the
/// session at once, and a message that must be answered.
async fn close_and_return(client: &mut Client, kind: &str) -> anyhow::Result<Outcome> {
    let nonce = client.nonce();
    let number = client
        .say("message", &model::message(kind, &nonce, ""))
        .await?;
    let reached = if kind == "nap" {
        // The code block is whole: it runs now, printing nothing for two seconds.
        read_until(client, 200, |f| {
            f["type"] == "code" && f.get("end").is_some()
        })
        .await
    } else {
        read_until(client, 2, |_| false).await.map(|_| true)
    };
    match reached {
        Ok(true) => {}
        Ok(false) => {
            client.violation(kind, "the turn ended before the code ran");
            return Ok(Outcome::broken());
        }
        Err(lost) => {
            client.lost(kind, number, &lost);
            return Ok(Outcome::broken());
        }
    }
    if kind == "nap" {
        let pause = 50 + client.rng.below(400);
        tokio::time::sleep(Duration::from_millis(pause)).await;
    }
    client.abandon(1);
    client.close().await?;
    client.connect().await?;
    returning(client, "close, reconnect").await
}

/// After a reconnect: a message must be answered, after whatever the session left over.
async fn returning(client: &mut Client, action: &str) -> anyhow::Result<Outcome> {
    let nonce = client.nonce();
    let number = client
        .say("message", &model::message("text", &nonce, ""))
        .await?;
    let started = Instant::now();
    let frames = match answer(client, action, number).await {
        Ok(frames) => frames,
        Err(outcome) => return Ok(outcome),
    };
    let took = started.elapsed();
    let all = whole_blocks(&frames);
    let expected = whole("assistant", "message", &model::text_answer(&nonce));
    if all.last() != Some(&expected) {
        client.violation(
            action,
            format!(
                "the answer is not the last whole message before its complete: {}",
                difference(&all, std::slice::from_ref(&expected)).unwrap_or_default()
            ),
        );
        return Ok(Outcome::failed());
    }
    Ok(Outcome::ok(took))
}

async fn delete(client: &mut Client) -> anyhow::Result<Outcome> {
    let nonce = client.nonce();
    let number = client
        .say("message", &model::message("sleep", &nonce, ""))
        .await?;
    if let Err(lost) = read_until(client, 200, is_output).await {
        client.lost("delete", number, &lost);
        return Ok(Outcome::broken());
    }
    client.abandon(1);
    let status = http_delete(
        &client.target.addr,
        &format!("/sessions/{}", client.session),
    )
    .await?;
    if status != 200 {
        client.violation("delete", format!("DELETE answered {status}"));
    }
    // The session's connection is closed with 4001 (after what was on its way).
    let deadline = Instant::now() + Duration::from_secs(5);
    let code = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match client.frame(left).await {
            Ok(_) => continue,
            Err(Lost::Closed(code)) => break code,
            Err(Lost::Timeout) => break None,
        }
    };
    let mut ok = status == 200;
    if code != Some(4001) {
        client.violation(
            "delete",
            format!("the socket was not closed with 4001 (got {code:?})"),
        );
        ok = false;
    }
    client.link.forget().await;
    client.connect().await?;
    let after = returning(client, "delete").await?;
    Ok(Outcome {
        ok: ok && after.ok,
        latency: after.latency,
        reconnect: after.reconnect,
    })
}

async fn fault(client: &mut Client) -> anyhow::Result<Outcome> {
    let nonce = client.nonce();
    let kind = if client.rng.below(2) == 0 {
        "fault400"
    } else {
        "faultdrop"
    };
    let number = client
        .say("message", &model::message(kind, &nonce, ""))
        .await?;
    let started = Instant::now();
    let frames = match answer(client, "fault", number).await {
        Ok(frames) => frames,
        Err(outcome) => return Ok(outcome),
    };
    if !has_error(&frames) {
        client.violation(
            "fault",
            format!("a {kind} turn ended without an error chunk: {frames:?}"),
        );
        return Ok(Outcome::failed());
    }
    Ok(Outcome::ok(started.elapsed()))
}

async fn approve(client: &mut Client, go: bool) -> anyhow::Result<Outcome> {
    let action = if go { "approve" } else { "decline" };
    let nonce = client.nonce();
    let number = client
        .say("message", &model::message("approve", &nonce, ""))
        .await?;
    let started = Instant::now();
    let asked = match answer(client, action, number).await {
        Ok(frames) => frames,
        Err(outcome) => return Ok(outcome),
    };
    let took = started.elapsed();
    let mut ok = expect(
        client,
        action,
        &asked,
        &[whole("assistant", "code", &model::approve_code(&nonce))],
    );
    if !asked.iter().any(|f| f["type"] == "confirmation") {
        client.violation(action, "no confirmation chunk before the complete");
        ok = false;
    }
    let command = if go { "go" } else { "stop" };
    let decided = client.say("command", command).await?;
    let frames = match answer(client, action, decided).await {
        Ok(frames) => frames,
        Err(outcome) => return Ok(outcome),
    };
    let expected = if go {
        vec![
            whole("computer", "console", &format!("approved-{nonce}\n")),
            whole(
                "assistant",
                "message",
                &model::after_code("approve", &nonce),
            ),
        ]
    } else {
        Vec::new()
    };
    ok &= expect(client, action, &frames, &expected);
    Ok(if ok {
        Outcome::ok(took)
    } else {
        Outcome::failed()
    })
}

async fn pipeline(client: &mut Client) -> anyhow::Result<Outcome> {
    let (first, second) = (client.nonce(), client.nonce());
    let one = client
        .say("message", &model::message("text", &first, ""))
        .await?;
    let two = client
        .say("message", &model::message("text", &second, ""))
        .await?;
    let started = Instant::now();
    let mut ok = true;
    for (number, nonce) in [(one, first), (two, second)] {
        let frames = match answer(client, "pipeline", number).await {
            Ok(frames) => frames,
            Err(outcome) => return Ok(outcome),
        };
        let expected = [whole("assistant", "message", &model::text_answer(&nonce))];
        ok &= expect(client, "pipeline", &frames, &expected);
    }
    Ok(if ok {
        Outcome::ok(started.elapsed())
    } else {
        Outcome::failed()
    })
}

async fn queue_drop(client: &mut Client) -> anyhow::Result<Outcome> {
    let (slow, queued) = (client.nonce(), client.nonce());
    // A reply that streams for a second (no code: this server asks before running any).
    let number = client
        .say("message", &model::message("slowtext", &slow, ""))
        .await?;
    client
        .say("message", &model::message("text", &queued, ""))
        .await?;
    if let Err(lost) = read_until(client, 3, |_| false).await {
        client.lost("queue drop", number, &lost);
        return Ok(Outcome::broken());
    }
    client.abandon(2);
    if client.ack || client.rng.below(2) == 0 {
        client.link.abort().await?;
    } else {
        client.close().await?;
    }
    client.connect().await?;
    returning(client, "queue drop").await
}

/// `DELETE path` on `addr`; the status code.
async fn http_delete(addr: &str, path: &str) -> anyhow::Result<u16> {
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    let request = format!("DELETE {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await?;
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut answer)).await??;
    let text = String::from_utf8_lossy(&answer);
    Ok(text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0))
}
