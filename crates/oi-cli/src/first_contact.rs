//! First contact: `oi` with an OpenAI model and no key anywhere says, before the first
//! prompt, which ways there are to go on — paste a key (kept for the session; written to the
//! default profile only if the user agrees, readable by the user alone), set
//! `OPENAI_API_KEY`, `--local`, or `--api_base` to a local server — instead of waiting for the
//! first message to fail (the original asked too, spec e.8).

use std::io::{BufRead, Write};
use std::path::Path;

use oi_core::Settings;

/// What the user is told when no key is found.
const WAYS: &str = "No OpenAI API key is set, so **{model}** cannot answer yet. Ways to go on:

- paste an OpenAI API key below (kept for this session; saved to your default profile only if you say so),
- or leave with `CTRL-D` and set `OPENAI_API_KEY` in your shell,
- or run `oi --local` for a model on this machine, no key needed (`cargo xtask fetch-model` fetches it),
- or run `oi --api_base http://127.0.0.1:8080/v1` for a local OpenAI-compatible server (llama.cpp, LM Studio, Ollama's `/v1`).
";

/// Whether `settings` name an OpenAI model and no key is set anywhere (flags, profile,
/// environment), nor another server. Which provider a model goes to is oi-llm's rule
/// ([`oi_llm::wire_for`]: the embedded model, `claude-…` to Anthropic, the provider table's
/// prefixes); a model on the OpenAI-compatible wire goes to OpenAI when it has no prefix or
/// the prefix `openai`, and OpenAI's variables are its row of the provider table.
pub fn needs_openai_key(settings: &Settings, env: &oi_llm::Env) -> bool {
    let llm = &settings.llm;
    let given = |value: Option<&str>| value.is_some_and(|v| !v.trim().is_empty());
    if given(llm.api_key.as_deref()) || given(llm.api_base.as_deref()) {
        return false;
    }
    let Some(openai) = oi_llm::provider_table::find("openai") else {
        return false;
    };
    let to_openai = matches!(oi_llm::wire_for(llm), Ok(oi_llm::Wire::OpenAiCompatible))
        && oi_llm::provider_table::prefix_of(&llm.model).is_none_or(|p| p == openai.prefix);
    to_openai
        && !openai
            .key_vars
            .iter()
            .chain(openai.base_vars)
            .any(|name| given(env.get(name)))
}

/// The text that says the ways to go on, as Markdown.
pub fn ways(model: &str) -> String {
    WAYS.replace("{model}", &crate::sanitize::clean(model))
}

/// Reads a line from standard input without echoing it (a terminal), or as it is.
fn read_hidden() -> std::io::Result<String> {
    let stdin = std::io::stdin();
    let saved = rustix::termios::tcgetattr(&stdin).ok();
    if let Some(saved) = &saved {
        let mut quiet = saved.clone();
        quiet.local_modes.remove(rustix::termios::LocalModes::ECHO);
        let _ = rustix::termios::tcsetattr(&stdin, rustix::termios::OptionalActions::Now, &quiet);
    }
    let mut line = String::new();
    let read = stdin.lock().read_line(&mut line);
    if let Some(saved) = &saved {
        let _ = rustix::termios::tcsetattr(&stdin, rustix::termios::OptionalActions::Now, saved);
    }
    read.map(|_| line.trim().to_owned())
}

/// Asks for a key on the terminal; sets it in `settings` and, when the user agrees, saves it
/// in `profile` (the default profile's file). Returns what to tell the user.
pub fn ask_for_key(settings: &mut Settings, profile: Option<&Path>) -> std::io::Result<String> {
    let mut out = std::io::stdout();
    write!(
        out,
        "OpenAI API key (not shown as you type; Enter to skip): "
    )?;
    out.flush()?;
    let mut key = read_hidden()?;
    writeln!(out)?;
    let mut tries = 1;
    while !key.is_empty() && !looks_like_key(&key) {
        if tries == 3 {
            return Ok(String::from(
                "No key set: what was typed does not look like an OpenAI API key.",
            ));
        }
        tries += 1;
        write!(
            out,
            "That does not look like an OpenAI API key (they start with sk- and have no spaces). Paste the key, or Enter to skip: "
        )?;
        out.flush()?;
        key = read_hidden()?;
        writeln!(out)?;
    }
    if key.is_empty() {
        return Ok(String::from(
            "No key given: the first message will fail until one is set.",
        ));
    }
    settings.llm.api_key = Some(key.clone());
    let Some(profile) = profile else {
        return Ok(String::from("Key set for this session."));
    };
    let question = format!(
        "Save the key in {} so oi finds it next time (only you can read the file)? (y/n)",
        profile.display()
    );
    write!(out, "{} ", crate::doc::wrapped(&question, ""))?;
    out.flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    if !matches!(answer.trim().to_lowercase().as_str(), "y" | "yes") {
        return Ok(String::from("Key set for this session only."));
    }
    match save_key(profile, &key) {
        Ok(()) => Ok(format!("Key saved in {}.", profile.display())),
        Err(e) => Ok(format!(
            "Key set for this session; saving it in {} failed: {e}",
            profile.display()
        )),
    }
}

/// Whether `key` has the shape of an OpenAI API key (`sk-…`, no spaces): a line typed by
/// mistake (`hello`) is not taken as a key, nor offered to be saved.
pub fn looks_like_key(key: &str) -> bool {
    key.starts_with("sk-")
        && key.len() >= 12
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
}

/// Writes `api_key` into the profile's `llm:` section (creating the file from the packaged
/// default when missing) and makes the file readable by its owner only.
pub fn save_key(profile: &Path, key: &str) -> std::io::Result<()> {
    if !profile.exists() {
        if let Some(dir) = profile.parent() {
            oi_config::profiles::reset("default.yaml", dir).map_err(std::io::Error::other)?;
        }
    }
    let text = std::fs::read_to_string(profile).unwrap_or_default();
    let quoted = format!("\"{}\"", key.replace('\\', "\\\\").replace('"', "\\\""));
    let entry = format!("  api_key: {quoted}");
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let section = lines.iter().position(|l| l.trim_end() == "llm:");
    match section {
        Some(at) => {
            let end = lines[at + 1..]
                .iter()
                .position(|l| !l.is_empty() && !l.starts_with(' ') && !l.starts_with('#'))
                .map_or(lines.len(), |n| at + 1 + n);
            let existing = lines[at + 1..end]
                .iter()
                .position(|l| l.trim_start().starts_with("api_key:"));
            match existing {
                Some(n) => lines[at + 1 + n] = entry,
                None => lines.insert(at + 1, entry),
            }
        }
        None => {
            lines.push("llm:".to_owned());
            lines.push(entry);
        }
    }
    let mut text = lines.join("\n");
    text.push('\n');
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(profile)?;
    std::fs::set_permissions(profile, std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    file.write_all(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_typed_word_is_not_a_key() {
        assert!(looks_like_key("sk-test-secret-123"));
        assert!(looks_like_key("sk-proj-AbC_12-xyz"));
        assert!(!looks_like_key("hello"));
        assert!(!looks_like_key("sk-"));
        assert!(!looks_like_key("sk-abc def ghi jkl"));
    }

    #[test]
    fn only_an_openai_model_without_key_or_server_needs_one() {
        let env = oi_llm::Env::empty();
        let mut settings = Settings::default();
        assert!(needs_openai_key(&settings, &env));
        assert!(!needs_openai_key(
            &settings,
            &env.clone().with("OPENAI_API_KEY", "sk")
        ));
        for variable in ["OPENAI_BASE_URL", "OPENAI_API_BASE"] {
            assert!(!needs_openai_key(
                &settings,
                &env.clone().with(variable, "http://127.0.0.1:8080/v1")
            ));
        }
        settings.llm.model = "openai/gpt-4o".into();
        assert!(needs_openai_key(&settings, &env));
        for model in [
            "anthropic/claude-3-5-sonnet-20240620",
            "claude-3-5-sonnet",
            "groq/llama-3.1-70b-versatile",
            "nowhere/model",
            "local",
        ] {
            settings.llm.model = model.into();
            assert!(!needs_openai_key(&settings, &env), "{model}");
        }
        settings.llm.model = "gpt-4o".into();
        settings.llm.api_base = Some("http://127.0.0.1:8080/v1".into());
        assert!(!needs_openai_key(&settings, &env));
    }

    #[test]
    fn the_key_goes_into_the_llm_section_readable_by_the_owner_only() {
        let dir = tempfile::tempdir().unwrap();
        let profile = dir.path().join("default.yaml");
        save_key(&profile, "sk-\"quoted\"").unwrap();
        let text = std::fs::read_to_string(&profile).unwrap();
        assert!(
            text.contains("llm:\n  api_key: \"sk-\\\"quoted\\\"\"\n  model:"),
            "{text}"
        );
        let parsed = oi_config::Profile::parse(&text, "default.yaml").unwrap();
        assert!(parsed.notes.is_empty(), "{:?}", parsed.notes);
        let mode =
            std::os::unix::fs::PermissionsExt::mode(&profile.metadata().unwrap().permissions());
        assert_eq!(mode & 0o777, 0o600);
        save_key(&profile, "sk-new").unwrap();
        let text = std::fs::read_to_string(&profile).unwrap();
        assert_eq!(
            text.matches("api_key:").count() - text.matches("# api_key").count(),
            1,
            "{text}"
        );
    }
}
