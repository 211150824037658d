//! The names of the languages oi runs, stated once: each language's name, the other names
//! (aliases) a model may write for it, and how oi reads its code. oi-computer's executors'
//! table is built from it (`oi-computer/src/languages/mod.rs`); the judge and the settings
//! resolve a name through it; the respond loop resolves a block's language through the
//! computer's [`crate::LanguageSpec`]s, which oi-computer takes from here.

/// How oi reads a language's code before it runs (the judge) and what its session offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LanguageKind {
    /// A shell: parsed as shell by the judge, and allow rules may approve its blocks.
    Shell,
    /// Python: parsed as Python (and IPython's `!`/`%` lines); the computer API is imported.
    Python,
    /// Any other language: its string literals are read as shell commands.
    Other,
}

/// One language's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LanguageNames {
    /// The name, e.g. `Python` (the canonical name is it lower-cased).
    pub name: &'static str,
    /// Other names that select the same language, e.g. `py`.
    pub aliases: &'static [&'static str],
    /// How its code is read.
    pub kind: LanguageKind,
}

impl LanguageNames {
    /// Whether `name` (any case, surrounding spaces ignored) names this language.
    pub fn matches(&self, name: &str) -> bool {
        names_match(self.name, self.aliases, name)
    }

    /// The canonical name as the loop, the judge and the computer use it: the name
    /// lower-cased (`python`, `shell`), as in the tool enum.
    pub fn canonical(&self) -> String {
        self.name.to_lowercase()
    }
}

/// Whether `query` (any case, surrounding spaces ignored) is `name` or one of `aliases`.
pub fn names_match<S: AsRef<str>>(name: &str, aliases: &[S], query: &str) -> bool {
    let query = query.trim();
    name.eq_ignore_ascii_case(query)
        || aliases
            .iter()
            .any(|a| a.as_ref().eq_ignore_ascii_case(query))
}

const fn language(
    name: &'static str,
    aliases: &'static [&'static str],
    kind: LanguageKind,
) -> LanguageNames {
    LanguageNames {
        name,
        aliases,
        kind,
    }
}

/// Ruby.
pub const RUBY: LanguageNames = language("Ruby", &[], LanguageKind::Other);
/// Python.
pub const PYTHON: LanguageNames = language("Python", &["py"], LanguageKind::Python);
/// The shell.
pub const SHELL: LanguageNames = language("Shell", &["bash", "sh", "zsh"], LanguageKind::Shell);
/// JavaScript (node).
pub const JAVASCRIPT: LanguageNames = language("JavaScript", &["js", "node"], LanguageKind::Other);
/// HTML.
pub const HTML: LanguageNames = language("HTML", &[], LanguageKind::Other);
/// AppleScript.
pub const APPLESCRIPT: LanguageNames = language("AppleScript", &[], LanguageKind::Other);
/// R.
pub const R: LanguageNames = language("R", &[], LanguageKind::Other);
/// PowerShell.
pub const POWERSHELL: LanguageNames = language("PowerShell", &[], LanguageKind::Other);
/// React.
pub const REACT: LanguageNames = language("React", &[], LanguageKind::Other);
/// Java.
pub const JAVA: LanguageNames = language("Java", &[], LanguageKind::Other);

/// Every language oi knows, in tool-enum order.
pub static LANGUAGES: [LanguageNames; 10] = [
    RUBY,
    PYTHON,
    SHELL,
    JAVASCRIPT,
    HTML,
    APPLESCRIPT,
    R,
    POWERSHELL,
    REACT,
    JAVA,
];

/// The language `name` (a name or an alias, any case, surrounding spaces ignored) selects.
pub fn find(name: &str) -> Option<&'static LanguageNames> {
    LANGUAGES.iter().find(|language| language.matches(name))
}

/// The canonical name ([`LanguageNames::canonical`]) of the language `name` selects.
pub fn canonical(name: &str) -> Option<String> {
    find(name).map(LanguageNames::canonical)
}

/// How the code of the language `name` selects is read ([`LanguageKind::Other`] when no
/// language is named so).
pub fn kind(name: &str) -> LanguageKind {
    find(name).map_or(LanguageKind::Other, |language| language.kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_select_their_language_in_any_case() {
        assert_eq!(canonical(" Py "), Some("python".to_owned()));
        assert_eq!(canonical("ZSH"), Some("shell".to_owned()));
        assert_eq!(canonical("node"), Some("javascript".to_owned()));
        assert_eq!(canonical("html"), Some("html".to_owned()));
        assert_eq!(canonical("python3"), None);
        assert_eq!(kind("bash"), LanguageKind::Shell);
        assert_eq!(kind("python"), LanguageKind::Python);
        assert_eq!(kind("ruby"), LanguageKind::Other);
        assert_eq!(kind("brainfuck"), LanguageKind::Other);
    }

    #[test]
    fn every_name_selects_one_language() {
        let mut seen = std::collections::BTreeSet::new();
        for language in &LANGUAGES {
            for name in std::iter::once(language.name).chain(language.aliases.iter().copied()) {
                assert!(seen.insert(name.to_lowercase()), "{name} is named twice");
            }
        }
    }
}
