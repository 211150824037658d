//! Approval policy: whether a code block runs, is asked about, or is blocked.
//!
//! Order of precedence: the hard-deny list (recursive deletes of `/`, of top-level system
//! directories, of home directories or of the working directory and its parents; formatting,
//! wiping or overwriting a disk; fork bombs; decoded payloads run by a shell) blocks even with
//! `auto_run`, unless the user turned `hard_deny` off explicitly; then `deny` rules; then the
//! `never-run` policy; then `allow` rules (run without asking); then the policy (`auto` runs,
//! `always-ask` asks).
//!
//! Shell and Python are parsed (tree-sitter), not matched as text: see [`allow`] for what an
//! allow rule approves, `shell` and `python` for how code is read for the hard-deny list and
//! deny rules. The hard-deny list is a seat belt against mistakes and obvious disguises; the
//! sandbox (`--sandbox`) is the wall.

mod allow;
mod escapes;
mod foreign;
mod ipython;
mod places;
mod programs;
mod python;
mod scan;
mod shell;
mod word;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use places::Places;
use scan::{Reading, Scan};

/// How code blocks are approved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalPolicy {
    /// Ask before every block (the CLI's default; `auto_run: false`).
    #[default]
    AlwaysAsk,
    /// Run without asking (`auto_run: true`).
    Auto,
    /// Never run code.
    NeverRun,
}

/// What to do with one code block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Run it without asking.
    Run,
    /// Ask the consumer (emit the confirmation chunk).
    Ask,
    /// Do not run it; the reason goes to the model and the user.
    Block(String),
}

/// The rules in force for one turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rules {
    /// The policy (after `auto_run` is taken into account).
    pub policy: ApprovalPolicy,
    /// Commands that run without asking: a shell block that is one simple command (or one
    /// pipeline of them) whose words start with a rule's words (see the `allow` module).
    pub allow: Vec<String>,
    /// Text that blocks a block when it appears in the raw code or, for shell commands, in the
    /// command's words after quote removal and expansion; deny wins over allow.
    pub deny: Vec<String>,
    /// Apply the built-in hard-deny list.
    pub hard_deny: bool,
    /// The home directory and the working directory, for the hard-deny list.
    pub home: Option<PathBuf>,
    /// The working directory.
    pub cwd: Option<PathBuf>,
}

/// The languages whose blocks allow rules may approve.
const SHELL_LANGUAGES: &[&str] = &["shell", "bash", "sh", "zsh"];

impl Rules {
    /// The verdict on `code` in `language`.
    pub fn judge(&self, language: &str, code: &str) -> Verdict {
        let language = language.trim().to_lowercase();
        let reading = read(&language, code, self.home.as_deref(), self.cwd.as_deref());
        if self.hard_deny {
            if let Some(reason) = reading.danger {
                return Verdict::Block(format!(
                    "oi blocked this code: {reason}. This is on oi's hard-deny list, which holds even with auto_run; nothing was run."
                ));
            }
        }
        if let Some(rule) = self.deny.iter().find(|rule| {
            !rule.is_empty()
                && (code.contains(rule.as_str())
                    || reading.commands.iter().any(|c| c.contains(rule.as_str())))
        }) {
            return Verdict::Block(format!(
                "oi blocked this code: it matches the deny rule `{rule}`; nothing was run."
            ));
        }
        if self.policy == ApprovalPolicy::NeverRun {
            return Verdict::Block(
                "oi did not run this code: the approval policy is never-run.".to_owned(),
            );
        }
        if SHELL_LANGUAGES.contains(&language.as_str()) && allow::allowed(code, &self.allow) {
            return Verdict::Run;
        }
        match self.policy {
            ApprovalPolicy::Auto => Verdict::Run,
            _ => Verdict::Ask,
        }
    }
}

/// Reads `code` statically: shell and Python are parsed; other languages' string literals are
/// read as shell commands.
fn read(language: &str, code: &str, home: Option<&Path>, cwd: Option<&Path>) -> Reading {
    let places = Places::new(home, cwd);
    let mut scan = Scan::new(&places);
    if SHELL_LANGUAGES.contains(&language) {
        let env = shell::Env::new(&places);
        scan.shell(code, env);
    } else if matches!(language, "python" | "py") {
        scan.python(code);
        // The session also runs IPython's `!cmd` and `%magic` lines: read them too.
        ipython::read(&mut scan, code);
    } else {
        scan.foreign(code);
    }
    scan.finish()
}

/// Why `code` is on the hard-deny list, if it is.
pub fn hard_denied(
    language: &str,
    code: &str,
    home: Option<&Path>,
    cwd: Option<&Path>,
) -> Option<String> {
    read(&language.trim().to_lowercase(), code, home, cwd).danger
}

#[cfg(test)]
mod tests;
