//! The table of languages: names, aliases, and how each one runs.
//!
//! Its children are the languages' hosts: one module each, the host shell of one-shot
//! programs, starting the session of a language (`engine`), and HTML/React shown with a
//! screenshot.

pub(crate) mod applescript;
pub(crate) mod engine;
pub(crate) mod heredoc;
pub(crate) mod html;
pub(crate) mod java;
pub(crate) mod javascript;
pub(crate) mod own_dir;
pub(crate) mod powershell;
pub(crate) mod python;
pub(crate) mod r;
pub(crate) mod ruby;
pub(crate) mod screenshot;
pub(crate) mod shell;
pub(crate) mod shell_host;
pub(crate) mod start_error;

use oi_core::computer::LanguageSpec;

/// A language of the original's list, in tool-enum order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    /// Ruby, a persistent session (a small `ruby` driver).
    Ruby,
    /// Python, a persistent session (`py`).
    Python,
    /// A persistent shell (`bash`, `sh`, `zsh`).
    Shell,
    /// A persistent `node` session (`js`, `node`).
    JavaScript,
    /// HTML shown to the user, with a screenshot for the model.
    Html,
    /// AppleScript, one `osascript` per run (macOS only).
    AppleScript,
    /// R, a persistent session (a small `R --vanilla` driver).
    R,
    /// PowerShell, a persistent `pwsh` session.
    PowerShell,
    /// React, shown to the user like HTML after being put into a page that loads React.
    React,
    /// Java, compiled and run once per block in a temporary directory.
    Java,
}

/// Every language, in the order `languages()` lists them.
pub const ALL: [Language; 10] = [
    Language::Ruby,
    Language::Python,
    Language::Shell,
    Language::JavaScript,
    Language::Html,
    Language::AppleScript,
    Language::R,
    Language::PowerShell,
    Language::React,
    Language::Java,
];

impl Language {
    /// The canonical name, e.g. `Python`.
    pub fn name(self) -> &'static str {
        match self {
            Language::Ruby => "Ruby",
            Language::Python => "Python",
            Language::Shell => "Shell",
            Language::JavaScript => "JavaScript",
            Language::Html => "HTML",
            Language::AppleScript => "AppleScript",
            Language::R => "R",
            Language::PowerShell => "PowerShell",
            Language::React => "React",
            Language::Java => "Java",
        }
    }

    /// Other names that select the same session.
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            Language::Python => &["py"],
            Language::Shell => &["bash", "sh", "zsh"],
            Language::JavaScript => &["js", "node"],
            _ => &[],
        }
    }

    /// The spec the `Computer` trait reports.
    pub fn spec(self) -> LanguageSpec {
        LanguageSpec {
            name: self.name().to_owned(),
            aliases: self.aliases().iter().map(|a| (*a).to_owned()).collect(),
        }
    }

    /// The language `name` (or an alias, any case, surrounding spaces ignored) selects.
    pub fn find(name: &str) -> Option<Language> {
        let name = name.trim();
        ALL.into_iter().find(|lang| {
            lang.name().eq_ignore_ascii_case(name)
                || lang.aliases().iter().any(|a| a.eq_ignore_ascii_case(name))
        })
    }

    /// The index of this language in [`ALL`].
    pub(crate) fn index(self) -> usize {
        ALL.iter().position(|l| *l == self).unwrap_or(0)
    }

    /// Whether the language is shown rather than run (HTML, React).
    pub fn is_shown(self) -> bool {
        matches!(self, Language::Html | Language::React)
    }

    /// Whether a session keeps state between blocks (variables, working directory).
    pub fn keeps_state(self) -> bool {
        matches!(
            self,
            Language::Python
                | Language::Shell
                | Language::JavaScript
                | Language::Ruby
                | Language::R
                | Language::PowerShell
        )
    }
}
