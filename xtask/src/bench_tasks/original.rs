//! `--reference`: the original Open Interpreter 0.4.3 (PyPI, in a venv of its own under
//! `target/bench-tasks/original-venv`) given the same tasks, driving the same GGUF through
//! llama.cpp's own server (the `xllamacpp` wheel, started once and kept warm, with oi's context
//! window and threads). The original runs as a user runs it against a local OpenAI-compatible
//! server: its default profile and system message, the message on stdin (`--stdin`), code run
//! without asking (`-y`), plain output, the context window and reply limit oi's embedded model
//! uses (`-cw 8192 -x 1024`), and offline (no update check, no telemetry).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, bail};
use oi_llm::local_model::{DEFAULT_LOCAL_CONTEXT, DEFAULT_LOCAL_MAX_TOKENS, physical_cores};

use crate::bench_local::runs::{Timed, run_timed_input};
use crate::bench_local::server::Server;

/// What the venv holds: the original and llama.cpp's server.
const PACKAGES: [&str; 2] = ["open-interpreter==0.4.3", "xllamacpp==2026.10.11549"];

/// The original with its model server.
pub(super) struct Original {
    interpreter: PathBuf,
    server: Server,
    home: PathBuf,
    prompt_file: PathBuf,
}

/// The venv's Python with both packages installed (installing them once).
fn venv_python(work: &Path) -> anyhow::Result<PathBuf> {
    let venv = work.join("original-venv");
    let python = venv.join("bin").join("python");
    let importable = |python: &Path| {
        Command::new(python)
            .args(["-c", "import interpreter, xllamacpp"])
            .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if importable(&python) {
        return Ok(python);
    }
    println!(
        "installing {} into {} (about 2 min)…",
        PACKAGES.join(" and "),
        venv.display()
    );
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .is_ok_and(|s| s.success());
    let installed = made
        && Command::new(venv.join("bin").join("pip"))
            .args(["install", "-q"])
            .args(PACKAGES)
            .status()
            .is_ok_and(|s| s.success());
    if installed && importable(&python) {
        Ok(python)
    } else {
        bail!(
            "--reference needs python3 with venv and PyPI to install {}",
            PACKAGES.join(" and ")
        )
    }
}

impl Original {
    /// Installs the original (once) and starts llama.cpp's server on `model`.
    pub(super) fn start(work: &Path, model: &Path) -> anyhow::Result<Original> {
        let python = venv_python(work)?;
        let interpreter = python.with_file_name("interpreter");
        let n_ctx = u32::try_from(DEFAULT_LOCAL_CONTEXT).unwrap_or(8192);
        let server = Server::start(&python, work, model, n_ctx, physical_cores(), false)
            .context("starting llama.cpp's server for the original")?;
        println!(
            "the original: Open Interpreter 0.4.3 against llama.cpp's server at {} (started in {:.1} s)",
            server.url, server.start_s
        );
        // Its own HOME: the default profile, no user settings.
        let home = work.join("home-original");
        std::fs::create_dir_all(&home)?;
        Ok(Original {
            interpreter,
            server,
            home,
            prompt_file: work.join("original-message.txt"),
        })
    }

    /// The command line, as a user types it (the message comes on stdin).
    pub(super) fn describe(&self) -> String {
        format!(
            "echo MESSAGE | interpreter {}",
            self.args("http://127.0.0.1:PORT/v1").join(" ")
        )
    }

    fn args(&self, url: &str) -> Vec<String> {
        let n_ctx = DEFAULT_LOCAL_CONTEXT.to_string();
        let max_tokens = DEFAULT_LOCAL_MAX_TOKENS.to_string();
        [
            "--stdin",
            "-y",
            "--plain",
            "--offline",
            "--disable_telemetry",
            "--model",
            "openai/local",
            "--api_base",
            url,
            "--api_key",
            "dummy",
            "--context_window",
            &n_ctx,
            "--max_tokens",
            &max_tokens,
        ]
        .map(str::to_owned)
        .to_vec()
    }

    /// Runs `prompt` in `folder`: what it printed (or why it failed) and the model requests
    /// the server answered meanwhile.
    pub(super) fn run(
        &mut self,
        folder: &Path,
        prompt: &str,
        limit: Duration,
    ) -> (anyhow::Result<Timed>, usize) {
        let _ = self.server.new_calls();
        if let Err(error) = std::fs::write(&self.prompt_file, format!("{prompt}\n")) {
            return (Err(error.into()), 0);
        }
        let mut command = Command::new(&self.interpreter);
        command
            .env("HOME", &self.home)
            // No fetch of LiteLLM's price list at every start (the machine may be offline).
            .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            .env_remove("OPENAI_API_KEY")
            .current_dir(folder)
            .args(self.args(&self.server.url.clone()));
        let timed = run_timed_input(&mut command, limit, Some(&self.prompt_file));
        (timed, self.server.new_calls().len())
    }
}
