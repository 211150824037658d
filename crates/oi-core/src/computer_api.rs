//! The computer API's calls that need oi itself (spec d.1): `computer.ai.*` asks the
//! configured model, `computer.skills.save` writes into the skills folder. The code's Python
//! session reaches them through one door its computer serves (see oi-computer's `api_door`);
//! the Python library calls them directly. Everything else of the API (files, terminal, skill
//! listing) runs inside the session itself.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock, Weak};

use futures::StreamExt;
use futures::future::BoxFuture;
use serde::Deserialize;

use crate::interpreter::Interpreter;
use crate::lmc::{Kind, Message, Role};
use crate::model::{ModelDelta, ModelRequest};
use crate::state::Shared;

/// How much one code block may ask of the door.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiBounds {
    /// Calls one code block may make.
    pub calls_per_block: u32,
    /// The longest request, in bytes of its JSON.
    pub max_request: usize,
    /// The longest answer, in characters (longer ones are cut, with a note).
    pub max_answer: usize,
    /// Model requests one `computer.ai` call may make (`query` and `summarize` map chunks).
    pub model_requests_per_call: usize,
}

/// The bounds oi applies.
pub const BOUNDS: ApiBounds = ApiBounds {
    calls_per_block: 16,
    max_request: 256 * 1024,
    max_answer: 64 * 1024,
    model_requests_per_call: 8,
};

/// One call: an operation (`ai.chat`, `ai.query`, `ai.summarize`, `skills.save`,
/// `skills.read`) and its text arguments.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct ApiRequest {
    /// The operation.
    pub op: String,
    /// The text (`ai.*`), the query (`ai.query`), the skill's name and code (`skills.save`).
    #[serde(default)]
    pub text: String,
    /// The query of `ai.query`; the skill's name of `skills.save`.
    #[serde(default)]
    pub query: String,
    /// The skill's code (`skills.save`).
    #[serde(default)]
    pub code: String,
}

/// What serves the computer API's calls that need oi; an answer is text, an error a sentence.
pub trait ComputerApi: Send + Sync {
    /// Serves one call.
    fn call(&self, request: ApiRequest) -> BoxFuture<'static, Result<String, String>>;
}

/// A computer API bound to an interpreter after both were built (the computer is built
/// first): until [`ApiLink::bind`], and after the interpreter is gone, every call is refused.
#[derive(Clone, Default)]
pub struct ApiLink {
    target: Arc<OnceLock<Weak<Shared>>>,
}

impl std::fmt::Debug for ApiLink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiLink").finish_non_exhaustive()
    }
}

impl ApiLink {
    /// A link bound to nothing yet.
    pub fn new() -> ApiLink {
        ApiLink::default()
    }

    /// Binds the link to `interpreter` (once; later binds are ignored).
    pub fn bind(&self, interpreter: &Interpreter) {
        let _ = self.target.set(Arc::downgrade(interpreter.shared()));
    }
}

impl Interpreter {
    /// Serves one computer API call (`computer.ai.*`, `computer.skills.save`) for this
    /// interpreter, as the code's session asks through its door: the Python library calls it
    /// directly.
    pub async fn computer_api(&self, request: ApiRequest) -> Result<String, String> {
        serve(self.shared(), request).await
    }
}

impl ComputerApi for ApiLink {
    fn call(&self, request: ApiRequest) -> BoxFuture<'static, Result<String, String>> {
        let shared = self.target.get().and_then(Weak::upgrade);
        Box::pin(async move {
            match shared {
                Some(shared) if !shared.settings().import_computer_api => {
                    Err("the computer API is off (computer.import_computer_api)".to_owned())
                }
                Some(shared) => serve(&shared, request).await,
                None => Err("the computer API is not connected to an interpreter".to_owned()),
            }
        })
    }
}

/// The original's prompts for `computer.ai.summarize` (map, then reduce).
const SUMMARIZE_QUERY: &str = "You are a highly skilled AI trained in language comprehension and summarization. I would like you to read the following text and summarize it into a concise abstract paragraph. Aim to retain the most important points, providing a coherent and readable summary that could help a person understand the main points of the discussion without needing to read the entire text. Please avoid unnecessary details or tangential points.";
const SUMMARIZE_REDUCE: &str = "You are tasked with taking multiple summarized texts and merging them into one unified and concise summary. Maintain the core essence of the content and provide a clear and comprehensive summary that encapsulates all the main points from the individual summaries.";

/// The characters of one chunk `query` and `summarize` send (the original's 2000 tokens).
const CHUNK_CHARS: usize = 8000;

/// Serves `request` for the interpreter of `shared`.
pub(crate) async fn serve(shared: &Arc<Shared>, request: ApiRequest) -> Result<String, String> {
    let answer = match request.op.as_str() {
        "ai.chat" => ask(shared, "You are a helpful AI assistant.", &request.text).await?,
        "ai.query" => query(shared, &request.text, &request.query, &request.query).await?,
        "ai.summarize" => query(shared, &request.text, SUMMARIZE_QUERY, SUMMARIZE_REDUCE).await?,
        "skills.save" | "skills.read" if sandboxed(shared) => {
            return Err(SKILLS_UNDER_SANDBOX.to_owned());
        }
        "skills.save" => save_skill(&request.query, &request.code)?,
        "skills.read" => read_skills()?,
        other => return Err(format!("unknown computer API call `{other}`")),
    };
    Ok(bounded(answer))
}

/// Why skills are refused to sandboxed code (stop-32 review B1: a skill saved from a sandboxed
/// session ran later, unsandboxed, in every project that imported skills).
pub const SKILLS_UNDER_SANDBOX: &str = "computer.skills is not available under a sandbox: skills live in oi's config folder, which sandboxed code may neither read nor write, and a saved skill would run later in sessions that may not be sandboxed. Run with --sandbox off to list, import or save skills.";

/// Whether the interpreter's code runs under a file-system sandbox.
fn sandboxed(shared: &Shared) -> bool {
    shared.settings().computer.sandbox.mode != crate::settings::SandboxMode::Off
}

/// `text` cut to [`ApiBounds::max_answer`] characters.
fn bounded(text: String) -> String {
    if text.chars().count() <= BOUNDS.max_answer {
        return text;
    }
    let kept: String = text.chars().take(BOUNDS.max_answer).collect();
    format!(
        "{kept}\n[oi: the answer was cut at {} characters]",
        BOUNDS.max_answer
    )
}

/// Map-reduce of the original's `computer.ai.query`: `query` over each chunk of `text`, then
/// `reduce` over the answers when there were several.
async fn query(
    shared: &Arc<Shared>,
    text: &str,
    query: &str,
    reduce: &str,
) -> Result<String, String> {
    let chars: Vec<char> = text.chars().collect();
    let chunks: Vec<String> = chars
        .chunks(CHUNK_CHARS)
        .map(|c| c.iter().collect())
        .collect();
    if chunks.len() + 1 > BOUNDS.model_requests_per_call {
        return Err(format!(
            "the text is too long for one computer.ai call here ({} characters; at most {})",
            chars.len(),
            CHUNK_CHARS * (BOUNDS.model_requests_per_call - 1)
        ));
    }
    let mut answers = Vec::new();
    for chunk in &chunks {
        answers.push(ask(shared, query, chunk).await?);
    }
    if chunks.is_empty() {
        answers.push(ask(shared, query, "").await?);
    }
    if answers.len() == 1 {
        return Ok(answers.remove(0));
    }
    ask(shared, reduce, &answers.join("\n\n")).await
}

/// One model request with `system` and `user`, on the interpreter's model settings: the
/// budget checked first and the spend counted; the reply's text (code the model writes comes
/// back as a fenced block).
pub(crate) async fn ask(shared: &Arc<Shared>, system: &str, user: &str) -> Result<String, String> {
    let mut settings = shared.settings().clone();
    // A question, not a turn: no code to run, so no instructions for writing it.
    settings.llm.execution_instructions.clear();
    if let Some(budget) = settings.llm.max_budget {
        let spent = shared.spent();
        if spent >= budget {
            return Err(format!(
                "max budget exceeded: this session has spent about ${spent:.4} of its ${budget:.4} budget (max_budget)"
            ));
        }
    }
    let request = ModelRequest {
        messages: vec![
            Message::new(Role::System, Kind::Message, system.to_owned()),
            Message::user(user.to_owned()),
        ],
        languages: Vec::new(),
        tools: Vec::new(),
        llm: settings.llm.clone(),
        templates: settings.templates(),
    };
    let mut stream = shared.model.stream(request);
    let mut text = String::new();
    let mut fence_open = false;
    while let Some(delta) = stream.next().await {
        match delta.map_err(|e| e.to_string())? {
            ModelDelta::Message(piece) => {
                if fence_open {
                    text.push_str("\n```\n");
                    fence_open = false;
                }
                text.push_str(&piece);
            }
            ModelDelta::Code { language, code } => {
                if !fence_open {
                    text.push_str(&format!("\n```{language}\n"));
                    fence_open = true;
                }
                text.push_str(&code);
            }
            ModelDelta::Usage(usage) => shared.spend(&usage),
        }
        if text.len() > 4 * BOUNDS.max_answer {
            break;
        }
    }
    if fence_open {
        text.push_str("\n```");
    }
    Ok(text)
}

/// The folder skills are kept in (the original's `<config dir>/skills`).
pub fn skills_dir() -> Option<PathBuf> {
    crate::settings::config_dir().map(|dir| dir.join("skills"))
}

/// Every saved skill as a JSON object of name to code (text), for a session that cannot read
/// the skills folder itself (the sandbox hides oi's config directory, where the profiles keep
/// keys): only `<skills>/<name>.py` files with a valid name, at most [`ApiBounds::max_answer`]
/// characters in all.
fn read_skills() -> Result<String, String> {
    let Some(dir) = skills_dir() else {
        return Ok("{}".to_owned());
    };
    let mut skills = serde_json::Map::new();
    let mut total = 0;
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok("{}".to_owned());
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for path in paths {
        let Some(name) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".py"))
            .filter(|n| valid_skill_name(n))
        else {
            continue;
        };
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if !meta.is_file() {
            continue;
        }
        let Ok(code) = std::fs::read_to_string(&path) else {
            continue;
        };
        total += code.len();
        if total > BOUNDS.max_answer {
            return Err(format!(
                "the saved skills are too large to pass to the session (more than {} characters in {})",
                BOUNDS.max_answer,
                dir.display()
            ));
        }
        skills.insert(name.to_owned(), serde_json::Value::String(code));
    }
    Ok(serde_json::Value::Object(skills).to_string())
}

/// Whether `name` may name a skill: a Python identifier of ASCII letters, digits and `_`.
pub fn valid_skill_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= 64
}

/// Writes `code` as the skill `name` (`<skills>/<name>.py`, replacing one of that name).
fn save_skill(name: &str, code: &str) -> Result<String, String> {
    let dir = skills_dir().ok_or("no skills folder: the config directory is unknown")?;
    save_skill_in(&dir, name, code)
}

/// Writes `code` as the skill `name` in `dir` (created when missing). The name must be a
/// plain identifier, so the file is always `dir/<name>.py`; an existing link there is
/// replaced, never followed.
pub fn save_skill_in(dir: &std::path::Path, name: &str, code: &str) -> Result<String, String> {
    if !valid_skill_name(name) {
        return Err(format!(
            "a skill's name is a Python identifier (letters, digits, _; at most 64): {name:?}"
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let path = dir.join(format!("{name}.py"));
    let temporary = dir.join(format!(".{name}.py.oi-new"));
    let _ = std::fs::remove_file(&temporary);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temporary)
        .map_err(|e| format!("cannot write the skill: {e}"))?;
    std::io::Write::write_all(&mut file, code.as_bytes())
        .map_err(|e| format!("cannot write the skill: {e}"))?;
    drop(file);
    std::fs::rename(&temporary, &path).map_err(|e| format!("cannot save the skill: {e}"))?;
    Ok(path.display().to_string())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn a_skill_name_is_a_plain_identifier() {
        for good in ["greet", "_x", "a1_b2"] {
            assert!(valid_skill_name(good), "{good}");
        }
        for bad in ["", "1a", "../x", "a/b", "a.b", "a b", "é", &"x".repeat(65)] {
            assert!(!valid_skill_name(bad), "{bad}");
        }
    }

    #[test]
    fn a_skill_is_written_into_the_folder_only_and_replaces_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("victim.py");
        std::fs::write(&target, "kept").unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join("s.py")).unwrap();
        let saved = save_skill_in(dir.path(), "s", "def s(): pass\n").unwrap();
        assert_eq!(saved, dir.path().join("s.py").display().to_string());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "kept");
        assert!(
            !std::fs::symlink_metadata(dir.path().join("s.py"))
                .unwrap()
                .is_symlink()
        );
        assert!(save_skill_in(dir.path(), "../up", "x").is_err());
        assert!(!dir.path().join("../up.py").exists());
    }

    #[test]
    fn long_answers_are_cut_with_a_note() {
        let long = "a".repeat(BOUNDS.max_answer + 10);
        let cut = bounded(long);
        assert!(cut.starts_with(&"a".repeat(BOUNDS.max_answer)));
        assert!(cut.ends_with(&format!("cut at {} characters]", BOUNDS.max_answer)));
        assert_eq!(bounded("short".to_owned()), "short");
    }
}
