//! The markdown table of a bench-tasks run: per task, runs solved, median wall time and median
//! model requests, for oi and (with `--reference`) the original beside it.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use super::tasks::Task;
use crate::measure::median;

/// One run of one task.
pub(super) struct Outcome {
    /// Solved, or why not.
    pub solved: Result<(), String>,
    /// Wall time, seconds.
    pub wall: f64,
    /// Model requests.
    pub requests: usize,
}

/// One task's runs.
pub(super) struct Row<'a> {
    /// The task.
    pub task: &'a Task,
    /// oi's runs.
    pub oi: Vec<Outcome>,
    /// The original's runs (none without `--reference`).
    pub original: Vec<Outcome>,
}

/// What was run, for the table's heading.
pub(super) struct Header<'a> {
    pub label: &'a str,
    pub oi: &'a Path,
    pub runs: usize,
    pub limit: Duration,
    pub model: &'a Path,
    /// The original's command line, with `--reference`.
    pub original: Option<String>,
    pub load_before: &'a str,
    /// The one-minute load average before each run.
    pub loads: &'a [f64],
}

/// Solved runs, wall times and requests of some runs.
#[derive(Default)]
struct Totals {
    solved: usize,
    runs: usize,
    tasks_solved: usize,
    walls: Vec<f64>,
    requests: Vec<f64>,
}

impl Totals {
    /// Adds `outcomes` and returns their cells: solved, median wall, median requests.
    fn add(&mut self, outcomes: &[Outcome]) -> String {
        if outcomes.is_empty() {
            return "– | – | –".to_owned();
        }
        let ok = outcomes.iter().filter(|o| o.solved.is_ok()).count();
        self.solved += ok;
        self.runs += outcomes.len();
        self.tasks_solved += usize::from(ok > 0);
        let wall: Vec<f64> = outcomes.iter().map(|o| o.wall).collect();
        let reqs: Vec<f64> = outcomes.iter().map(|o| o.requests as f64).collect();
        self.walls.extend(&wall);
        self.requests.extend(&reqs);
        format!(
            "{ok}/{} | {:.1} | {:.0}",
            outcomes.len(),
            median(&wall).unwrap_or(0.0),
            median(&reqs).unwrap_or(0.0)
        )
    }

    fn summary(&self) -> String {
        if self.runs == 0 {
            return "– | – | –".to_owned();
        }
        format!(
            "**{}/{}** ({} tasks) | {:.1} (sum {:.0}) | {:.0} (sum {:.0})",
            self.solved,
            self.runs,
            self.tasks_solved,
            median(&self.walls).unwrap_or(0.0),
            self.walls.iter().sum::<f64>(),
            median(&self.requests).unwrap_or(0.0),
            self.requests.iter().sum::<f64>()
        )
    }
}

/// The table, with a heading that says what ran and under which load.
pub(super) fn report(h: &Header<'_>, rows: &[Row<'_>]) -> String {
    let mut out = String::new();
    let model = h
        .model
        .file_name()
        .map(|m| m.to_string_lossy().into_owned())
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "Everyday tasks: `{}` (label {}), `--local -y`, model {model}, {} run(s) per task, limit {} s per run; load average {} before, {} after; one-minute load before each run {}.",
        h.oi.display(),
        h.label,
        h.runs,
        h.limit.as_secs(),
        h.load_before,
        crate::bench_local::load_average(),
        load_range(h.loads),
    );
    if let Some(original) = &h.original {
        let _ = writeln!(
            out,
            "The original: Open Interpreter 0.4.3, `{original}`, against llama.cpp's server (xllamacpp) on the same GGUF; runs taken in turn with oi's."
        );
    }
    let _ = writeln!(out);
    let reference = h.original.is_some();
    if reference {
        let _ = writeln!(
            out,
            "| task | kind | oi solved | oi wall s (median) | oi requests (median) | original solved | original wall s (median) | original requests (median) |"
        );
        let _ = writeln!(out, "|---|---|---|---|---|---|---|---|");
    } else {
        let _ = writeln!(
            out,
            "| task | kind | solved | wall s (median) | requests (median) |"
        );
        let _ = writeln!(out, "|---|---|---|---|---|");
    }
    let mut oi = Totals::default();
    let mut original = Totals::default();
    for row in rows {
        let mut line = format!(
            "| {} | {} | {}",
            row.task.name,
            row.task.kind,
            oi.add(&row.oi)
        );
        if reference {
            line.push_str(" | ");
            line.push_str(&original.add(&row.original));
        }
        let _ = writeln!(out, "{line} |");
    }
    let mut line = format!("| **all** | | {}", oi.summary());
    if reference {
        line.push_str(" | ");
        line.push_str(&original.summary());
    }
    let _ = writeln!(out, "{line} |");
    out
}

/// `min–max` of the samples.
fn load_range(loads: &[f64]) -> String {
    let min = loads.iter().copied().fold(f64::INFINITY, f64::min);
    let max = loads.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if loads.is_empty() {
        "–".to_owned()
    } else {
        format!("{min:.1}–{max:.1}")
    }
}
