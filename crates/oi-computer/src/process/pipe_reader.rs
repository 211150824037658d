//! The thread that reads a session's output pipe: it splits the driver's event frames from
//! the text, applies the output cap to each segment (a run, or the time between runs),
//! thins out active-line reports, and sends [`Item`]s to the run. It opens no file: whatever a
//! driver reports (images too) arrives inline on the pipe.

use std::fs::File;
use std::io::Read;
use std::sync::Arc;
use std::time::{Duration, Instant};

use oi_core::computer::Output;
use oi_core::lmc::Kind;
use tokio::sync::mpsc;

use crate::process::driver_events::{Event, EventParser, Piece};
use crate::process::output_cap::OutputCap;
use crate::process::session_handle::{Handle, Item};

/// Starts the thread that reads `output`, the pipe of the session whose handle is `handle`:
/// events are framed with `nonce`, each segment is capped at `output_cap` bytes, items go to
/// `tx`.
pub(crate) fn start(
    output: File,
    nonce: &str,
    output_cap: usize,
    handle: Arc<Handle>,
    tx: mpsc::UnboundedSender<Item>,
) -> std::io::Result<()> {
    let pgid = handle.pgid();
    let reader = Reader {
        parser: EventParser::new(nonce),
        handle,
        tx,
        cap: OutputCap::new(output_cap),
        lines: 0,
        last_line: None,
        last_line_at: Instant::now(),
    };
    std::thread::Builder::new()
        .name(format!("oi-session-{pgid}"))
        .spawn(move || reader.run(output))?;
    Ok(())
}

/// What the reader thread holds.
struct Reader {
    parser: EventParser,
    handle: Arc<Handle>,
    tx: mpsc::UnboundedSender<Item>,
    cap: OutputCap,
    lines: u64,
    last_line: Option<u64>,
    last_line_at: Instant,
}

impl Reader {
    fn run(mut self, mut output: File) {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            match output.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    for piece in self.parser.feed(&buf[..n]) {
                        self.piece(piece);
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        if let Some(rest) = self.parser.finish() {
            self.piece(Piece::Text(rest));
        }
        self.flush_tail();
        self.handle.mark_eof();
        let _ = self.tx.send(Item::Eof);
    }

    fn new_segment(&mut self) {
        self.cap.reset();
        self.lines = 0;
        self.last_line = None;
    }

    /// Sends the held-back tail of an over-cap segment, with its marker line.
    fn flush_tail(&mut self) {
        if let Some(tail) = self.cap.finish() {
            let _ = self.tx.send(Item::Text(tail));
        }
    }

    /// One piece of the output: text (capped) or a driver event.
    fn piece(&mut self, piece: Piece) {
        match piece {
            Piece::Text(text) => {
                if let Some(text) = self.cap.text(text) {
                    let _ = self.tx.send(Item::Text(text));
                }
            }
            Piece::Event(event) => match event.ev.as_str() {
                "start" => self.on_start(event.id),
                "done" => self.on_done(event.id),
                "line" => self.on_line(event.n),
                "rich" => self.on_rich(event),
                "api" => {
                    let _ = self.tx.send(Item::Api(event.data.unwrap_or_default()));
                }
                _ => {}
            },
        }
    }

    /// The driver started run `id`: a new segment begins.
    fn on_start(&mut self, id: u64) {
        self.new_segment();
        let _ = self.tx.send(Item::Start(id));
    }

    /// The driver finished run `id`: the held-back tail, then the end of the run.
    fn on_done(&mut self, id: u64) {
        self.flush_tail();
        self.new_segment();
        self.handle.mark_done(id);
        let _ = self.tx.send(Item::Done(id));
    }

    /// Line `n` runs now: reported when it changed, not past the cap, and in a tight loop
    /// at most ~20 times a second.
    fn on_line(&mut self, n: u64) {
        if self.last_line == Some(n) || self.cap.is_over() {
            return;
        }
        self.lines += 1;
        if self.lines > 1000 {
            // A tight loop: report at most ~20 line changes a second.
            if self.last_line_at.elapsed() < Duration::from_millis(50) {
                return;
            }
            self.last_line_at = Instant::now();
        }
        self.last_line = Some(n);
        if n > 0 {
            let _ = self.tx.send(Item::Line(n));
        }
    }

    /// Rich output (an image, HTML, …) within the cap. The code shares the driver's process
    /// and can forge any event, so only inline data of the formats in [`rich_output`] passes:
    /// an event can never name a file for oi to read (an image of format `path` made oi read
    /// its own environment for the model in the stop-32 review).
    fn on_rich(&mut self, event: Event) {
        let Some(data) = event.data else { return };
        if !self.cap.rich(data.len()) {
            return;
        }
        let format = event.format.unwrap_or_else(|| "html".to_owned());
        let Some(output) = rich_output(event.kind.as_deref(), &format, data) else {
            let shown: String = format.chars().take(40).collect();
            let note = format!(
                "\n(oi dropped rich output of format `{}`: code may show only inline images \
                 (base64 PNG, JPEG, GIF, WebP), HTML or JavaScript)\n",
                shown.escape_debug()
            );
            let _ = self.tx.send(Item::Text(note));
            return;
        };
        let _ = self.tx.send(Item::Rich(output));
    }
}

/// The output for a driver's rich event, when its kind and format are ones oi shows: images
/// as inline base64 only, code as HTML or JavaScript; `None` for anything else.
fn rich_output(kind: Option<&str>, format: &str, data: String) -> Option<Output> {
    const IMAGES: [&str; 5] = [
        "base64.png",
        "base64.jpeg",
        "base64.jpg",
        "base64.gif",
        "base64.webp",
    ];
    const CODE: [&str; 2] = ["html", "javascript"];
    match kind {
        Some("image") if IMAGES.contains(&format) => Some(Output::image(format, data)),
        Some("image") => None,
        _ if CODE.contains(&format) => Some(Output {
            kind: Kind::Code,
            ..Output::code(format, data)
        }),
        _ => None,
    }
}
