//! The shell session: a persistent `bash` (or `$SHELL` when it is bash, zsh or sh) reading
//! commands on stdin. Each code block reaches it on that same pipe as here-documents
//! (`heredoc.rs`) and is sourced from `/dev/fd/20` with stdin from `/dev/null`: oi writes no
//! file. A block too long for one pipe is joined by the shell itself into a file in its
//! private directory (so inside the sandbox) and sourced from there. bash reports active lines
//! through a DEBUG trap limited to the sourced block.
//!
//! Stopping keeps a bash session: its SIGINT trap (and then its DEBUG trap, at each following
//! command) returns out of the functions and the sourced file, so the run ends and the shell,
//! with its variables and working directory, stays. Other shells exit on SIGINT and are
//! restarted with a note.

use std::path::Path;

use crate::base::programs::program_exists;
use crate::languages::Language;
use crate::languages::heredoc::Heredocs;
use crate::languages::start_error::StartError;
use crate::process::spawn::{Spawned, spawn};
use crate::sandbox::confine::Confine;

/// Which shell a session runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ShellProgram {
    /// The program to run.
    pub program: String,
    /// Whether it is bash (active lines need bash's DEBUG trap).
    pub is_bash: bool,
}

/// `$SHELL` when it is bash, zsh or sh; else `bash`.
pub(crate) fn choose() -> ShellProgram {
    let from_env = std::env::var("SHELL").ok().filter(|shell| {
        let base = Path::new(shell)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("");
        matches!(base, "bash" | "zsh" | "sh") && program_exists(shell)
    });
    let program = from_env.unwrap_or_else(|| "bash".to_owned());
    let is_bash = Path::new(&program).file_name().and_then(|n| n.to_str()) == Some("bash");
    ShellProgram { program, is_bash }
}

/// Starts a shell session and returns it with the setup script to send first.
pub(crate) fn start(
    nonce: &str,
    confine: &Confine,
) -> Result<(Spawned, Vec<u8>, tempfile::TempDir), StartError> {
    let shell = choose();
    if !program_exists(&shell.program) {
        return Err(StartError::NotInstalled {
            program: "bash",
            language: Language::Shell,
            install: "bash (e.g. `apt-get install bash`)",
        });
    }
    let workdir = tempfile::Builder::new()
        .prefix("oi-shell-")
        .tempdir()
        .map_err(StartError::work_dir("a directory for shell code"))?;
    let args: &[&str] = if shell.is_bash {
        &["--noprofile", "--norc"]
    } else {
        &[]
    };
    // zsh keeps every here-document in a temp file: in the private directory, which sandboxed
    // code may write in every mode.
    let zsh_temp = workdir.path().join("zsh").to_string_lossy().into_owned();
    let spawned = spawn(
        &shell.program,
        args,
        &[
            ("PAGER", "cat"),
            ("GIT_PAGER", "cat"),
            ("TMPPREFIX", &zsh_temp),
        ],
        confine,
        Some(workdir.path()),
    )
    .map_err(StartError::spawn(&shell.program))?;
    let mut setup = format!(
        "exec 2>&1\n__OI_DIR={}\n",
        quote(&workdir.path().to_string_lossy())
    );
    if shell.is_bash {
        setup.push_str(&format!(
            "exec 19>&1\n__OI_FILE=\n__oi_int=\nset -T\n\
             trap '__oi_int=1; return 130 2>/dev/null' INT\n\
             trap '[ -n \"$__oi_int\" ] && [ -n \"$__OI_FILE\" ] && return 130 2>/dev/null; [ -n \"$__OI_FILE\" ] && [ \"$BASH_SUBSHELL\" = 0 ] && [ \"${{BASH_SOURCE[0]}}\" = \"$__OI_FILE\" ] && printf \"\\036OI{nonce}{{\\\"ev\\\":\\\"line\\\",\\\"n\\\":%s}}\\n\" \"$LINENO\" >&19' DEBUG\n"
        ));
    }
    Ok((spawned, setup.into_bytes(), workdir))
}

/// The command that runs `code` as run `id`: the command line, then the block as
/// here-documents. oi opens no file for it, and neither does the shell: a block longer than a
/// pipe is gathered by bash into a variable and sourced from a process substitution.
pub(crate) fn command(id: u64, code: &str, nonce: &str) -> Vec<u8> {
    let docs = Heredocs::new(code);
    let start = format!("__oi_int=; printf '\\036OI{nonce}{{\"ev\":\"start\",\"id\":{id}}}\\n'");
    let done = |cleanup: &str| {
        format!(
            "__oi_status=$?; {cleanup}__OI_FILE=; __oi_int=; printf '\\036OI{nonce}{{\"ev\":\"done\",\"id\":{id},\"status\":%s}}\\n' \"$__oi_status\"\n"
        )
    };
    // Other shells keep a long here-document themselves (dash in a pipe, zsh in a file in
    // the session's private directory).
    if docs.is_single() || !choose().is_bash {
        let (redirection, body) = docs.single_whole();
        let file = Heredocs::SINGLE;
        return format!(
            "__OI_FILE={file}; {start}; . {file} </dev/null{redirection}; {done}{body}",
            done = done("")
        )
        .into_bytes();
    }
    format!(
        "{start}\n{gather}exec {{__oi_fd}}< <(printf '%s' \"$__oi_code\"); __oi_code=; __OI_FILE=/dev/fd/$__oi_fd; . \"$__OI_FILE\" </dev/null; {done}",
        gather = docs.gather_into("__oi_code"),
        done = done("exec {__oi_fd}<&-; "),
    )
    .into_bytes()
}

/// Single-quotes `text` for a POSIX shell.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}
