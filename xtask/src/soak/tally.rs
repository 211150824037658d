//! What the soak counted: runs and failures per action, latencies, close handshakes, and
//! every violation of an invariant, with what was seen.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use super::link::Library;

/// Runs of one action by one kind of client on one server.
#[derive(Debug, Default)]
struct Row {
    runs: usize,
    failed: usize,
    /// From the input's `end` to the `complete` that answers it, in ms.
    latencies: Vec<f64>,
}

/// Everything counted.
#[derive(Debug, Default)]
pub struct Tally {
    rows: BTreeMap<(&'static str, &'static str, Library), Row>,
    /// Client close handshakes that were answered, in ms.
    closes: Vec<f64>,
    /// Inputs sent, and answered with their `complete`.
    inputs: usize,
    answered: usize,
    /// Inputs given up by design: interrupted by `stop` or a newer input, or left behind on a
    /// dropped connection or a deleted session.
    abandoned: usize,
    /// Inputs never answered (each a violation).
    lost: usize,
    /// Chunks received (after de-duplication in acknowledge mode) and duplicates dropped.
    chunks: usize,
    duplicates: usize,
    violations: Vec<String>,
    /// Notes of oi's computer in place of a run's output, by their first words.
    computer_notes: BTreeMap<String, usize>,
}

/// The value at fraction `p` of sorted `values`.
pub fn percentile(values: &[f64], p: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

impl Tally {
    /// One run of `action` on `server` by a client of `library`: ok or not, and its latency.
    pub fn run(
        &mut self,
        server: &'static str,
        action: &'static str,
        library: Library,
        ok: bool,
        latency: Option<Duration>,
    ) {
        let row = self.rows.entry((server, action, library)).or_default();
        row.runs += 1;
        if !ok {
            row.failed += 1;
        }
        if let Some(latency) = latency {
            row.latencies.push(latency.as_secs_f64() * 1000.0);
        }
    }

    /// A client's close handshake took `took` (answered by the server's close frame).
    pub fn close(&mut self, took: Duration) {
        self.closes.push(took.as_secs_f64() * 1000.0);
    }

    /// An input was sent.
    pub fn input(&mut self) {
        self.inputs += 1;
    }

    /// An input was answered by its `complete`.
    pub fn answered(&mut self) {
        self.answered += 1;
    }

    /// An input was given up by design.
    pub fn abandoned(&mut self, inputs: usize) {
        self.abandoned += inputs;
    }

    /// An input was never answered.
    pub fn lost(&mut self) {
        self.lost += 1;
    }

    /// Inputs neither answered, nor given up, nor reported lost (a connection failed in the
    /// middle of an action, which is reported too).
    pub fn unaccounted(&self) -> usize {
        self.inputs
            .saturating_sub(self.answered + self.abandoned + self.lost)
    }

    /// A chunk arrived (`duplicate`: its id was seen before, in acknowledge mode).
    pub fn chunk(&mut self, duplicate: bool) {
        if duplicate {
            self.duplicates += 1;
        } else {
            self.chunks += 1;
        }
    }

    /// A run's output came with a note of oi's computer (its session was killed or exited).
    pub fn computer_note(&mut self, output: &str) {
        let note = output
            .find("[oi: ")
            .map(|at| &output[at..])
            .and_then(|note| note.split(['.', ';', ']']).next())
            .unwrap_or("[oi: …")
            .to_owned();
        *self.computer_notes.entry(note).or_default() += 1;
    }

    /// An invariant did not hold.
    pub fn violation(&mut self, what: String) {
        self.violations.push(what);
    }

    /// The violations so far.
    pub fn violations(&self) -> &[String] {
        &self.violations
    }

    /// The summary: actions, then totals.
    pub fn table(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "| server | action | client | runs | ok | failed | latency p50 / p99 / max (ms) |"
        );
        let _ = writeln!(out, "|---|---|---|---|---|---|---|");
        for ((server, action, library), row) in &self.rows {
            let lat = &row.latencies;
            let max = lat.iter().copied().fold(0.0, f64::max);
            let _ = writeln!(
                out,
                "| {server} | {action} | {} | {} | {} | {} | {:.0} / {:.0} / {max:.0} |",
                library.name(),
                row.runs,
                row.runs - row.failed,
                row.failed,
                percentile(lat, 0.5),
                percentile(lat, 0.99),
            );
        }
        let closes = &self.closes;
        let _ = writeln!(
            out,
            "\ninputs sent {}: {} answered by the complete naming them, {} given up by design (interrupted by a stop or a newer input, left on a dropped connection or a deleted session), {} lost; chunks {} (+{} duplicates dropped by id); client close handshakes {} (p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms)",
            self.inputs,
            self.answered,
            self.abandoned,
            self.lost,
            self.chunks,
            self.duplicates,
            closes.len(),
            percentile(closes, 0.5),
            percentile(closes, 0.99),
            closes.iter().copied().fold(0.0, f64::max),
        );
        if !self.computer_notes.is_empty() {
            let _ = writeln!(
                out,
                "\nruns whose output was replaced or preceded by a note of oi's computer (not a server fault; every other message of those turns was exact):"
            );
            for (note, count) in &self.computer_notes {
                let _ = writeln!(out, "- {count} × `{note}…]`");
            }
        }
        out
    }
}
