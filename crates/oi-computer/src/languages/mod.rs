//! The table of languages: how each one runs (their names and aliases are oi-core's table,
//! `oi_core::languages`, which [`Language::names`] maps each one to).
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
use oi_core::languages::{self as names, LanguageNames};

/// A language of the original's list, in tool-enum order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    /// Ruby, a persistent session (a small `ruby` driver).
    Ruby,
    /// Python, a persistent session.
    Python,
    /// A persistent shell.
    Shell,
    /// A persistent `node` session.
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
    /// The language's names and how its code is read: oi-core's table of names
    /// ([`oi_core::languages`]), where every name and alias is stated once.
    pub fn names(self) -> &'static LanguageNames {
        match self {
            Language::Ruby => &names::RUBY,
            Language::Python => &names::PYTHON,
            Language::Shell => &names::SHELL,
            Language::JavaScript => &names::JAVASCRIPT,
            Language::Html => &names::HTML,
            Language::AppleScript => &names::APPLESCRIPT,
            Language::R => &names::R,
            Language::PowerShell => &names::POWERSHELL,
            Language::React => &names::REACT,
            Language::Java => &names::JAVA,
        }
    }

    /// The canonical name, e.g. `Python`.
    pub fn name(self) -> &'static str {
        self.names().name
    }

    /// Other names that select the same session.
    pub fn aliases(self) -> &'static [&'static str] {
        self.names().aliases
    }

    /// The spec the `Computer` trait reports.
    pub fn spec(self) -> LanguageSpec {
        LanguageSpec::from(self.names())
    }

    /// The language `name` (or an alias, any case, surrounding spaces ignored) selects.
    pub fn find(name: &str) -> Option<Language> {
        ALL.into_iter().find(|lang| lang.names().matches(name))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_executors_table_follows_the_table_of_names_in_order() {
        let names: Vec<LanguageNames> = ALL.iter().map(|l| *l.names()).collect();
        assert_eq!(names, oi_core::languages::LANGUAGES.to_vec());
    }
}
