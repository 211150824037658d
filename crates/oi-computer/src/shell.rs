//! The shell session: a persistent `bash` (or `$SHELL` when it is bash, zsh or sh) reading
//! commands on stdin. Each code block is written to a file and sourced with stdin from
//! `/dev/null`; bash reports active lines through a DEBUG trap limited to that file.
//!
//! Stopping keeps a bash session: its SIGINT trap (and then its DEBUG trap, at each following
//! command) returns out of the functions and the sourced file, so the run ends and the shell,
//! with its variables and working directory, stays. Other shells exit on SIGINT and are
//! restarted with a note.

use std::io::Write;
use std::path::Path;

use crate::confine::Confine;
use crate::languages::{Language, missing_program_message};
use crate::programs::program_exists;
use crate::spawn::{Spawned, spawn};

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
) -> Result<(Spawned, Vec<u8>, tempfile::TempDir), String> {
    let shell = choose();
    if !program_exists(&shell.program) {
        return Err(missing_program_message(
            "bash",
            Language::Shell,
            "bash (e.g. `apt-get install bash`)",
        ));
    }
    let workdir = tempfile::Builder::new()
        .prefix("oi-shell-")
        .tempdir()
        .map_err(|e| format!("Could not create a directory for shell code: {e}\n"))?;
    let args: &[&str] = if shell.is_bash {
        &["--noprofile", "--norc"]
    } else {
        &[]
    };
    let spawned = spawn(
        &shell.program,
        args,
        &[("PAGER", "cat"), ("GIT_PAGER", "cat")],
        confine,
        Some(workdir.path()),
    )
    .map_err(|e| format!("Could not start `{}`: {e}\n", shell.program))?;
    let mut setup = String::from("exec 2>&1\n");
    if shell.is_bash {
        setup.push_str(&format!(
            "exec 19>&1\n__OI_FILE=\n__oi_int=\nset -T\n\
             trap '__oi_int=1; return 130 2>/dev/null' INT\n\
             trap '[ -n \"$__oi_int\" ] && [ -n \"$__OI_FILE\" ] && return 130 2>/dev/null; [ -n \"$__OI_FILE\" ] && [ \"$BASH_SUBSHELL\" = 0 ] && [ \"${{BASH_SOURCE[0]}}\" = \"$__OI_FILE\" ] && printf \"\\036OI{nonce}{{\\\"ev\\\":\\\"line\\\",\\\"n\\\":%s}}\\n\" \"$LINENO\" >&19' DEBUG\n"
        ));
    }
    Ok((spawned, setup.into_bytes(), workdir))
}

/// Writes `code` to a file in `workdir` and returns the command line that sources it as
/// run `id`.
pub(crate) fn command(
    id: u64,
    code: &str,
    workdir: &Path,
    nonce: &str,
) -> std::io::Result<Vec<u8>> {
    let path = workdir.join(format!("run-{id}.sh"));
    let mut file = std::fs::File::create(&path)?;
    file.write_all(code.as_bytes())?;
    if !code.ends_with('\n') {
        file.write_all(b"\n")?;
    }
    let quoted = quote(&path.to_string_lossy());
    // Earlier files are no longer needed (functions defined there keep working).
    if let Ok(entries) = std::fs::read_dir(workdir) {
        for entry in entries.flatten() {
            if entry.path() != path {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    let line = format!(
        "__OI_FILE={quoted}; __oi_int=; printf '\\036OI{nonce}{{\"ev\":\"start\",\"id\":{id}}}\\n'; . {quoted} </dev/null; \
         __oi_status=$?; __OI_FILE=; __oi_int=; printf '\\036OI{nonce}{{\"ev\":\"done\",\"id\":{id},\"status\":%s}}\\n' \"$__oi_status\"\n"
    );
    Ok(line.into_bytes())
}

/// Single-quotes `text` for a POSIX shell.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}
