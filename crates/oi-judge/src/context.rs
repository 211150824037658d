//! What judging one command needs from the reader it was found by (the shell walker): the
//! protected places, where a path points from the script's working directory, a way to block,
//! and a way to read the code the command hands on. `programs` judges commands through it, so
//! it does not depend on the shell reader.

use crate::output::Output;
use crate::places::{Pattern, Places};
use crate::word::Field;

/// The reader a command was found by.
pub(crate) trait Context {
    /// Records a hard-deny reason.
    fn block(&mut self, reason: String);

    /// The path patterns `field` may name, relative to every directory the script may be in.
    fn targets(&self, field: &Field) -> Vec<Pattern>;

    /// As [`Context::targets`], for text with [`crate::places::UNKNOWN`] markers.
    fn targets_text(&self, text: &str) -> Vec<Pattern>;

    /// The working directory, when only one is possible.
    fn cwd(&self) -> Option<String>;

    /// `cd`/`pushd`/`popd`: the script may now be in the new directory, or (if `cd` failed)
    /// still in the old one.
    fn change_directory(&mut self, target: Option<&Field>);

    /// Reads `script` as a nested shell script (`sh -c`, `eval`), with `positional` as `$0`,
    /// `$1`, ….
    fn nested_shell(&mut self, script: &Field, positional: &[Field]) -> Output;

    /// Reads `code` as nested Python (`python -c`).
    fn nested_python(&mut self, code: &Field);

    /// Reads `code` as nested code of another language (`perl -e`, `node -e`).
    fn nested_foreign(&mut self, code: &Field);

    /// The protected places.
    fn places(&self) -> &Places;

    /// Judges a command this command runs (`xargs rm`, `find -exec`, `timeout 5 rm`).
    fn inspect(&mut self, argv: &[Field], stdin: &Output) -> Output;

    /// Judges a command this command runs in the directory `dir` (`env -C DIR`,
    /// `sudo -D DIR`); the script itself stays where it is.
    fn inspect_in(&mut self, dir: &Field, argv: &[Field], stdin: &Output) -> Output;

    /// Records a link the command makes at `at`, leading to `to` (as written, relative to the
    /// link's directory; `None`: unknown).
    fn link(&mut self, at: &Field, to: Option<&Field>);

    /// Records that oi cannot tell what the command does (`what` it does that oi cannot
    /// follow).
    fn unsure(&mut self, what: &'static str);

    /// A program oi does not know, run with `args` and fed `stdin`: every argument and the
    /// text fed to it are read as code, and every suffix of `args` as a command (`chrt -o 0
    /// rm -rf ~` runs `rm -rf ~`), speculatively (only danger found counts), unless a suffix
    /// reading is already under way.
    fn unknown_program(&mut self, args: &[Field], stdin: &Output);

    /// Runs the script file `file` as `language`: judged on what the block wrote to it, or
    /// on what it holds on disk; "cannot tell" when neither can be known.
    fn run_script(&mut self, file: &Field, language: Script);

    /// What the file `file` holds when the command runs, when oi can know it (what the block
    /// wrote to it, or a small regular file on disk the block did not write).
    fn file_text(&self, file: &Field) -> Option<String>;

    /// Records that the command writes `file`, with `content` when oi can see it.
    fn wrote(&mut self, file: &Field, content: Option<String>);
}

/// The language a script file is run as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Script {
    /// A shell script (`bash F`, `source F`, `BASH_ENV=F`).
    Shell,
    /// Python (`python3 F`).
    Python,
    /// By its first line (`./F`): `#!` naming Python, else shell.
    Shebang,
    /// Another language (`perl F`, `ruby F`): its string literals.
    Other,
}
