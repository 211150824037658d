//! How `cargo xtask bench` reports: a row of measured values and its statistics, the
//! Markdown page written into docs/benchmarks.md, its chart, and the machine it ran on.

use std::fmt::Write as _;
use std::process::Command;

use crate::load::{self, LoadReport};
use crate::measure;

use super::Options;

/// Measured values of one benchmark: (value, peak RSS in MiB) per run.
pub(super) struct Row {
    /// What was measured.
    pub(super) what: String,
    /// The unit of the values.
    pub(super) unit: &'static str,
    /// oi's runs.
    pub(super) oi: Vec<(f64, f64)>,
    /// The original's runs (empty when it was not measured).
    pub(super) original: Vec<(f64, f64)>,
}

pub(super) fn stats(values: &[(f64, f64)]) -> Option<(f64, f64, f64, f64)> {
    let v: Vec<f64> = values.iter().map(|x| x.0).collect();
    let m: Vec<f64> = values.iter().map(|x| x.1).collect();
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some((measure::median(&v)?, min, max, measure::median(&m)?))
}

impl Row {
    pub(super) fn speed_ratio(&self) -> Option<f64> {
        let ratios: Vec<f64> = self
            .oi
            .iter()
            .zip(&self.original)
            .map(|(a, b)| b.0 / a.0.max(1e-9))
            .collect();
        measure::median(&ratios)
    }

    pub(super) fn memory_ratio(&self) -> Option<f64> {
        let (a, b) = (stats(&self.oi)?, stats(&self.original)?);
        (a.3 > 0.0 && b.3 > 0.0).then(|| b.3 / a.3)
    }

    pub(super) fn markdown(&self) -> String {
        let cell = |values: &[(f64, f64)]| match stats(values) {
            Some((median, min, max, mib)) if mib > 0.0 => {
                format!(
                    "{} ({}–{}), {mib:.1} MiB",
                    fmt(median, self.unit),
                    fmt(min, self.unit),
                    fmt(max, self.unit)
                )
            }
            Some((median, min, max, _)) => {
                format!(
                    "{} ({}–{})",
                    fmt(median, self.unit),
                    fmt(min, self.unit),
                    fmt(max, self.unit)
                )
            }
            None => "not measured".to_owned(),
        };
        let ratio = match (self.speed_ratio(), self.memory_ratio()) {
            (Some(r), _) if self.unit == "MiB" => format!("{r:.0}× less memory"),
            (Some(s), Some(m)) => format!("{s:.0}× faster, {m:.0}× less memory"),
            (Some(s), None) => format!("{s:.0}× faster"),
            _ => "–".to_owned(),
        };
        format!(
            "| {} | {} | {} | {ratio} |",
            self.what,
            cell(&self.oi),
            cell(&self.original)
        )
    }
}

pub(super) fn fmt(value: f64, unit: &str) -> String {
    if value >= 100.0 {
        format!("{value:.0} {unit}")
    } else {
        format!("{value:.2} {unit}")
    }
}

pub(super) fn render(
    rows: &[Row],
    reports: &[LoadReport],
    opts: &Options,
    compared: bool,
) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "# Benchmark results: oi beside Open Interpreter 0.4.3\n"
    );
    let _ = writeln!(
        md,
        "Machine: {} cores, {}, {}. Date: {}. oi {}; Open Interpreter 0.4.3 from PyPI (Python {}). {} run(s) per row; model: the project's scripted OpenAI-compatible server on loopback (zero model time).\n",
        std::thread::available_parallelism().map_or(1, usize::from),
        cpu_model(),
        kernel(),
        chrono_date(),
        env!("CARGO_PKG_VERSION"),
        python_version(),
        opts.runs,
    );
    if !compared {
        let _ = writeln!(
            md,
            "The original was not measured in this run (`--quick`, or pip could not reach PyPI).\n"
        );
    }
    let _ = writeln!(md, "![oi vs original](benchmarks-chart.svg)\n");
    let _ = writeln!(
        md,
        "| benchmark | oi: median (min–max), peak RSS | Open Interpreter 0.4.3 | oi vs original (median of pairwise ratios) |"
    );
    let _ = writeln!(md, "|---|---|---|---|");
    for row in rows {
        let _ = writeln!(md, "{}", row.markdown());
    }
    let _ = writeln!(
        md,
        "\n## Server under load (oi only: the original serves one conversation per process)\n"
    );
    let _ = writeln!(
        md,
        "Each client has its own session (`/sessions/{{id}}`) of one `oi-server` process and runs one turn; the scripted model streams its reply in 4-character pieces.\n"
    );
    let _ = writeln!(md, "{}", load::BURST_HEADER);
    for report in reports {
        let _ = writeln!(md, "{}", load::burst_row(report));
    }
    let _ = writeln!(
        md,
        "\nReproduce: `cargo xtask bench` (add `--runs N`; `--quick` is CI's short version)."
    );
    md
}

/// A bar chart of the speed ratios (log scale), as SVG.
pub(super) fn chart(rows: &[Row]) -> String {
    let bars: Vec<(&str, f64)> = rows
        .iter()
        .filter_map(|r| Some((r.what.as_str(), r.speed_ratio()?)))
        .collect();
    let height = 40 + bars.len() * 34;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"900\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">How many times faster oi is than Open Interpreter 0.4.3 (log scale)</text>\n"
    );
    let max_log = bars
        .iter()
        .map(|(_, r)| r.max(1.0).log10())
        .fold(1.0_f64, f64::max);
    for (i, (label, ratio)) in bars.iter().enumerate() {
        let y = 36 + i * 34;
        let width = (ratio.max(1.0).log10() / max_log * 430.0).max(2.0);
        let label: String = label.chars().take(58).collect();
        let _ = writeln!(
            svg,
            "<text x=\"10\" y=\"{}\">{}</text>",
            y + 16,
            escape(&label)
        );
        let _ = writeln!(
            svg,
            "<rect x=\"400\" y=\"{y}\" width=\"{width:.1}\" height=\"22\" fill=\"#2b7bb9\"/>"
        );
        let _ = writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"{}\">{ratio:.0}×</text>",
            406.0 + width,
            y + 16
        );
    }
    svg.push_str("</svg>\n");
    svg
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned())
}

fn kernel() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease").map_or_else(
        |_| "unknown kernel".to_owned(),
        |k| format!("Linux {}", k.trim()),
    )
}

fn python_version() -> String {
    Command::new("python3")
        .arg("--version")
        .output()
        .ok()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .trim()
                .trim_start_matches("Python ")
                .to_owned()
        })
        .unwrap_or_else(|| "?".to_owned())
}

fn chrono_date() -> String {
    Command::new("date")
        .arg("+%Y-%m-%d")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}
