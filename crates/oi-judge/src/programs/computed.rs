//! Code that is wholly computed at run time and handed to a shell or interpreter
//! (`eval "$(cat f)"`, `bash -c "$X"`, `python3 -c "$(…)"`, a command substitution run as
//! the program, `$(cat f)`): what runs is not in the block, whatever produced it, so oi cannot
//! tell what it does. The shell code that environment tools print for the current shell
//! (`eval "$(ssh-agent -s)"`, `eval "$(conda shell.bash hook)"`) is ordinary and read as
//! unknown words, as before.

use crate::context::Context;
use crate::word::{Field, Seg};

/// Tools whose output is shell code that sets up the current shell's environment.
const ENVIRONMENT_TOOLS: &[&str] = &[
    "ssh-agent",
    "gpg-agent",
    "keychain",
    "conda",
    "mamba",
    "micromamba",
    "pyenv",
    "rbenv",
    "nodenv",
    "goenv",
    "jenv",
    "direnv",
    "brew",
    "dircolors",
    "opam",
    "luarocks",
    "starship",
    "zoxide",
    "fnm",
    "mise",
    "rtx",
    "thefuck",
    "register-python-argcomplete",
];

/// Programs that print where a named program is (`$(which rm)` is judged by its arguments).
const LOCATORS: &[&str] = &[
    "which", "command", "type", "whereis", "readlink", "realpath",
];

/// Records "cannot tell" when `code` (given to `how`) has no known text but blanks and is not
/// an environment tool's output.
pub(super) fn code(w: &mut dyn Context, code: &Field) {
    let known_text = code.segs.iter().any(|seg| match seg {
        Seg::Lit(text) => !text.trim().is_empty(),
        Seg::Unknown { .. } => false,
    });
    if known_text || code.segs.is_empty() {
        return;
    }
    let from_environment_tool = code.segs.iter().all(|seg| match seg {
        Seg::Lit(_) => true,
        Seg::Unknown { raw, .. } => substituted_program(raw)
            .is_some_and(|program| ENVIRONMENT_TOOLS.contains(&program.as_str())),
    });
    if !from_environment_tool {
        w.unsure(
            "runs code computed at run time (eval, sh -c, python -c of a value oi cannot know)",
        );
    }
}

/// Records "cannot tell" when the program itself is the output of a command
/// (`$(cat f) args`), other than a lookup of a named program (`$(which rm)`).
pub(super) fn program(w: &mut dyn Context, program: &Field) {
    let Some(Seg::Unknown { raw, .. }) = program.segs.first() else {
        return;
    };
    match substituted_program(raw) {
        Some(name) if LOCATORS.contains(&name.as_str()) => {}
        Some(_) => w.unsure("runs a program whose name is the output of a command"),
        None => {}
    }
}

/// The program a command substitution (`$(NAME …)`, `` `NAME …` ``) runs, by its base name.
fn substituted_program(raw: &str) -> Option<String> {
    let inner = raw
        .strip_prefix("$(")
        .or_else(|| raw.strip_prefix('`'))?
        .trim_start_matches(['"', '\'', ' ']);
    let first = inner.split_whitespace().next()?;
    let first = first.trim_end_matches([')', '`', '"', '\'']);
    Some(first.rsplit('/').next().unwrap_or(first).to_owned())
}

#[cfg(test)]
mod tests {
    use super::substituted_program;

    #[test]
    fn the_program_of_a_substitution() {
        assert_eq!(
            [
                substituted_program("$(cat f)"),
                substituted_program("`/opt/homebrew/bin/brew shellenv`"),
                substituted_program("$(ssh-agent -s)"),
                substituted_program("$X"),
            ],
            [
                Some("cat".to_owned()),
                Some("brew".to_owned()),
                Some("ssh-agent".to_owned()),
                None
            ]
        );
    }
}
