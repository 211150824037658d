//! Approval policy types: whether a code block runs, is asked about, or is blocked, and the
//! [`Judge`] that decides it.
//!
//! Order of precedence a judge applies: the hard-deny list (recursive deletes of `/`, of
//! top-level system directories, of home directories or of the working directory and its
//! parents; formatting, wiping or overwriting a disk; fork bombs; decoded payloads run by a
//! shell) blocks even with `auto_run`, unless the user turned `hard_deny` off explicitly; then
//! `deny` rules; then the `never-run` policy; then `allow` rules (run without asking); then the
//! policy (`auto` runs, `always-ask` asks).
//!
//! The judge that reads code (shell and Python parsed with tree-sitter) lives in the `oi-judge`
//! crate and is injected into the [`Interpreter`](crate::Interpreter) like the model and the
//! computer; this crate holds only the types. The hard-deny list is a seat belt against
//! mistakes and obvious disguises; the sandbox (`--sandbox`) is the wall.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

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
    /// pipeline of them) whose words start with a rule's words.
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

/// Where a language's persistent session is now: the directory its next block starts in,
/// which the approval judge reads relative paths against (code of an earlier block may have
/// changed it: `cd`, `os.chdir`, `setwd`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionDir {
    /// No live session: the next block starts where a new session starts.
    NotStarted,
    /// The live session is in this directory.
    At(std::path::PathBuf),
    /// A live session whose directory cannot be read: relative paths are unknown places.
    Unknown,
}

impl Rules {
    /// The rules for judging a block of a session that is in `dir`: relative paths are read
    /// against where the session really is (an earlier block may have changed directory),
    /// and are unknown places when that cannot be read.
    pub fn in_session(mut self, dir: SessionDir) -> Rules {
        match dir {
            SessionDir::NotStarted => {}
            SessionDir::At(path) => self.cwd = Some(path),
            SessionDir::Unknown => self.cwd = None,
        }
        self
    }
}

/// Decides, before anything runs, what happens to one code block under the rules in force.
///
/// Implementations must be pure and bounded (the respond loop calls [`Judge::judge`] on a
/// blocking thread and waits for it): a block the judge cannot read within its budget gets
/// [`Verdict::Ask`], or a [`Verdict::Block`] when nobody would be asked.
pub trait Judge: Send + Sync {
    /// The verdict on `code` in `language` under `rules`.
    fn judge(&self, rules: &Rules, language: &str, code: &str) -> Verdict;
}
