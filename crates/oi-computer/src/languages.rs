//! The table of languages: names, aliases, and which ones this crate can run.

use oi_core::computer::LanguageSpec;

/// A language of the original's list, in tool-enum order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    /// Ruby (`irb`); not implemented yet.
    Ruby,
    /// Python, a persistent session (`py`).
    Python,
    /// A persistent shell (`bash`, `sh`, `zsh`).
    Shell,
    /// A persistent `node` session (`js`, `node`).
    JavaScript,
    /// HTML shown to the user; not implemented yet.
    Html,
    /// AppleScript (macOS only); not implemented yet.
    AppleScript,
    /// R; not implemented yet.
    R,
    /// PowerShell; not implemented yet.
    PowerShell,
    /// React; not implemented yet.
    React,
    /// Java; not implemented yet.
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

    /// The message for a language this crate cannot run (yet).
    pub(crate) fn unavailable_message(self) -> String {
        let (program, install) = match self {
            Language::Ruby => ("ruby", "Ruby (e.g. `apt-get install ruby`)"),
            Language::R => ("R", "R (e.g. `apt-get install r-base`)"),
            Language::PowerShell => ("pwsh", "PowerShell (see https://aka.ms/powershell)"),
            Language::Java => ("java", "a JDK (e.g. `apt-get install default-jdk`)"),
            Language::AppleScript => ("osascript", "nothing: AppleScript runs on macOS only"),
            Language::Html | Language::React => {
                return format!(
                    "Running {} code is not available in this version of oi. Write the file to disk with Python or Shell and open it instead.\n",
                    self.name()
                );
            }
            Language::Python | Language::Shell | Language::JavaScript => {
                return format!("Running {} code is not available.\n", self.name());
            }
        };
        format!(
            "Running {} code is not available in this version of oi (it would need `{program}`; to use it later, install {install}). Use Python or Shell instead.\n",
            self.name()
        )
    }
}

/// The message for a program that is not installed.
pub(crate) fn missing_program_message(program: &str, language: Language, install: &str) -> String {
    format!(
        "`{program}` is not installed on this machine. Install {install} to run {} code.\n",
        language.name().to_lowercase()
    )
}
