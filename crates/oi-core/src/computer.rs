//! The computer trait: runs code in persistent language sessions and streams the output.
//! Implemented by `oi-computer`; core never spawns a process.

use futures::future::BoxFuture;
use futures::stream::BoxStream;

use crate::languages::{LanguageNames, names_match};
use crate::lmc::{Chunk, Content, Kind, Recipient, Role};
use crate::settings::computer::ComputerSettings;

/// A language the computer can run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LanguageSpec {
    /// The canonical name, e.g. `Python` (the tool enum uses it lower-cased).
    pub name: String,
    /// Other names that select the same session, e.g. `py`.
    pub aliases: Vec<String>,
}

impl LanguageSpec {
    /// Whether `name` (any case) names this language.
    pub fn matches(&self, name: &str) -> bool {
        names_match(&self.name, &self.aliases, name)
    }

    /// The canonical name as the loop, the judge and the computer use it: the name
    /// lower-cased (`python`, `shell`), as in the tool enum.
    pub fn canonical(&self) -> String {
        self.name.to_lowercase()
    }
}

impl From<&LanguageNames> for LanguageSpec {
    fn from(names: &LanguageNames) -> Self {
        LanguageSpec {
            name: names.name.to_owned(),
            aliases: names.aliases.iter().map(|a| (*a).to_owned()).collect(),
        }
    }
}

/// One piece of output from running code: an LMC chunk without the role (always `computer`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// `console`, `image` or `code`.
    pub kind: Kind,
    /// `output`, `active_line`, `base64.png`, `html`, …
    pub format: Option<String>,
    /// The payload.
    pub content: Content,
    /// Who should see it.
    pub recipient: Option<Recipient>,
}

impl Output {
    /// Console text.
    pub fn console(text: impl Into<String>) -> Self {
        Output {
            kind: Kind::Console,
            format: Some("output".to_owned()),
            content: Content::Text(text.into()),
            recipient: None,
        }
    }

    /// The line now running (1-based).
    pub fn active_line(line: u64) -> Self {
        Output {
            kind: Kind::Console,
            format: Some("active_line".to_owned()),
            content: Content::Line(line),
            recipient: None,
        }
    }

    /// An image, base64-encoded, with a format such as `base64.png`.
    pub fn image(format: &str, base64: impl Into<String>) -> Self {
        Output {
            kind: Kind::Image,
            format: Some(format.to_owned()),
            content: Content::Text(base64.into()),
            recipient: None,
        }
    }

    /// Rich code output such as `html` or `javascript`.
    pub fn code(format: &str, text: impl Into<String>) -> Self {
        Output {
            kind: Kind::Code,
            format: Some(format.to_owned()),
            content: Content::Text(text.into()),
            recipient: None,
        }
    }

    /// The same output addressed to one recipient.
    pub fn to(mut self, recipient: Recipient) -> Self {
        self.recipient = Some(recipient);
        self
    }

    /// The LMC chunk for this output (role `computer`).
    pub fn into_chunk(self) -> Chunk {
        Chunk {
            role: Role::Computer,
            kind: Some(self.kind),
            format: self.format,
            content: Some(self.content),
            recipient: self.recipient,
            start: false,
            end: false,
        }
    }
}

/// A stream of output; dropping it before it ends stops the running code.
pub type OutputStream = BoxStream<'static, Output>;

pub use crate::policy::SessionDir;

/// The machine that runs code.
pub trait Computer: Send + Sync {
    /// The languages this computer offers, in tool-enum order.
    fn languages(&self) -> Vec<LanguageSpec>;

    /// Runs `code` in the persistent session of `language` (a name or alias, any case) under
    /// `policy` (the sandbox and resource limits of the session's settings now: the caller
    /// passes them at every run, so a change of settings acts on the next block; a session
    /// started under another policy is restarted, with a note that its state was lost) and
    /// streams its output. Failures (missing interpreter, crash) arrive as console output.
    /// Dropping the stream before it ends stops the code.
    fn run(&self, language: &str, code: &str, policy: &ComputerSettings) -> OutputStream;

    /// Starts the session of `language` in the background if it is not running, so that a
    /// first run does not wait for its interpreter to start (the respond loop calls it as soon
    /// as the model begins a code block). Runs no code; a failure is met and reported by the
    /// next run. The default does nothing.
    fn prepare(&self, language: &str) {
        let _ = language;
    }

    /// The tools offered to the model beside `execute` (an MCP server's, for one); a call of
    /// one is a block in the tool's language ([`crate::tools`]) that this computer runs. The
    /// default offers none.
    fn tools(&self) -> Vec<crate::tools::OfferedTool> {
        Vec::new()
    }

    /// Where the session of `language` is now ([`SessionDir`]). The default knows of no
    /// session (a computer whose sessions cannot change directory).
    fn session_dir(&self, language: &str) -> SessionDir {
        let _ = language;
        SessionDir::NotStarted
    }

    /// Interrupts whatever is running, leaving sessions usable.
    fn stop(&self);

    /// Ends every session and every process they started.
    fn terminate(&self) -> BoxFuture<'static, ()>;
}

/// Finds the language that `name` selects.
pub fn find_language<'a>(languages: &'a [LanguageSpec], name: &str) -> Option<&'a LanguageSpec> {
    languages.iter().find(|spec| spec.matches(name))
}

/// The canonical name ([`LanguageSpec::canonical`]) of the language `name` (a name or an
/// alias, any case) selects; `None` when no language of `languages` is named so.
pub fn canonical_language(languages: &[LanguageSpec], name: &str) -> Option<String> {
    find_language(languages, name).map(LanguageSpec::canonical)
}
