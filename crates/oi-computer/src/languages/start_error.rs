//! Why a language's session could not start, typed: the run turns it into the console
//! message the model reads (its `Display`), at the edge where output is made.

use crate::languages::Language;

/// Why a session for a language did not start.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StartError {
    /// The language's program is not on this machine.
    #[error(
        "`{program}` is not installed on this machine. Install {install} to run {lower} code.\n",
        lower = .language.name().to_lowercase()
    )]
    NotInstalled {
        /// The program looked for.
        program: &'static str,
        /// The language it runs.
        language: Language,
        /// What to install (`Python 3 (e.g. \`apt-get install python3\`)`).
        install: &'static str,
    },
    /// No shell to host the language's runs (Java, AppleScript).
    #[error("`bash` is not installed on this machine.\n")]
    NoShell,
    /// The language cannot run on this operating system.
    #[error("{0}")]
    Unsupported(&'static str),
    /// The language is shown to the user, never run.
    #[error("{} is shown to the user, not run in a session.\n", .0.name())]
    Shown(Language),
    /// A directory the session needs could not be made.
    #[error("Could not create {what}: {source}\n")]
    WorkDir {
        /// Which directory (`a directory for shell code`).
        what: &'static str,
        /// The error.
        source: std::io::Error,
    },
    /// The program could not be started (under the sandbox and limits in force).
    #[error("Could not start `{program}`: {source}\n")]
    Spawn {
        /// The program.
        program: String,
        /// The error.
        source: std::io::Error,
    },
    /// The started process could not be made into a session.
    #[error("Could not start the {} session: {source}\n", .language.name())]
    Session {
        /// The language.
        language: Language,
        /// The error.
        source: std::io::Error,
    },
    /// The session's process count could not be watched (`max_processes`).
    #[error("Could not watch the {} session's processes: {source}\n", .language.name())]
    Watch {
        /// The language.
        language: Language,
        /// The error.
        source: std::io::Error,
    },
}

impl StartError {
    /// A program that could not be started.
    pub(crate) fn spawn(program: &str) -> impl FnOnce(std::io::Error) -> StartError + '_ {
        move |source| StartError::Spawn {
            program: program.to_owned(),
            source,
        }
    }

    /// A directory that could not be made.
    pub(crate) fn work_dir(what: &'static str) -> impl FnOnce(std::io::Error) -> StartError {
        move |source| StartError::WorkDir { what, source }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_messages_read_as_before() {
        let missing = StartError::NotInstalled {
            program: "python3",
            language: Language::Python,
            install: "Python 3 (e.g. `apt-get install python3`)",
        };
        assert_eq!(
            missing.to_string(),
            "`python3` is not installed on this machine. Install Python 3 (e.g. `apt-get install python3`) to run python code.\n"
        );
        assert_eq!(
            StartError::Shown(Language::Html).to_string(),
            "HTML is shown to the user, not run in a session.\n"
        );
        let spawn = StartError::spawn("node")(std::io::Error::other("denied"));
        assert_eq!(spawn.to_string(), "Could not start `node`: denied\n");
        let dir = StartError::work_dir("a work directory")(std::io::Error::other("full"));
        assert_eq!(dir.to_string(), "Could not create a work directory: full\n");
    }
}
