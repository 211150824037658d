//! Profiles: files of settings with Open Interpreter's keys (`llm:`, `computer:`, top-level
//! settings) — YAML or JSON, or the original's Python profiles read without running them — in
//! `<config dir>/profiles`, plus the packaged `default.yaml`, `fast.yaml`, `local.yaml`,
//! `vision.yaml`, `llama3.yaml`, `codestral.yaml` and `assistant.yaml` (spec e.4). A profile becomes a [`SettingsPatch`]; flags are laid over it.
//!
//! A profile can turn on `auto_run`, turn off `hard_deny` or send the conversation to another
//! `api_base`, so it is only read from where the user put it: a path the user wrote (it has a
//! `/`, or starts with `.` or `~`), or a name looked up in the profiles folder, then among the
//! packaged ones — never a bare name in the current directory, which a cloned repository
//! controls. Before parsing, a file is refused when it is larger than 1 MiB or nests deeper
//! than 32 levels (the YAML parser took 35 s on a 100 000-deep one). Unknown keys are noted
//! (file, line, key) and skipped: the original's profiles carry many keys oi does not need.

mod nesting;
mod python;
pub mod remote;
mod yaml;

use std::io::Read as _;
use std::path::{Path, PathBuf};

use oi_core::settings::SettingsPatch;

/// The largest profile file read (real ones are a few hundred bytes).
pub const MAX_PROFILE_BYTES: u64 = 1 << 20;

/// The deepest nesting a profile may have (real ones use two or three levels).
pub const MAX_PROFILE_NESTING: usize = 32;

/// The packaged profiles: (file name, contents).
pub const PACKAGED: &[(&str, &str)] = &[
    ("default.yaml", include_str!("../../profiles/default.yaml")),
    ("fast.yaml", include_str!("../../profiles/fast.yaml")),
    ("local.yaml", include_str!("../../profiles/local.yaml")),
    ("vision.yaml", include_str!("../../profiles/vision.yaml")),
    ("llama3.yaml", include_str!("../../profiles/llama3.yaml")),
    (
        "codestral.yaml",
        include_str!("../../profiles/codestral.yaml"),
    ),
    (
        "assistant.yaml",
        include_str!("../../profiles/assistant.yaml"),
    ),
];

/// Why a profile could not be used (the message names the file, and the line when known).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ProfileError(pub String);

/// Something in a profile that was skipped, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileNote {
    /// The line (1-based), when known.
    pub line: Option<usize>,
    /// What was skipped.
    pub text: String,
}

impl std::fmt::Display for ProfileNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.text),
            None => f.write_str(&self.text),
        }
    }
}

/// A profile read: its settings, where it came from, and what was skipped.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// The settings it sets.
    pub patch: SettingsPatch,
    /// Where it came from (a path, or `NAME (packaged)`).
    pub origin: String,
    /// What was skipped in it.
    pub notes: Vec<ProfileNote>,
    /// Its `mcp_servers:` map as written (oi-mcp reads it), if any.
    pub mcp_servers: Option<serde_json::Value>,
}

impl Profile {
    /// Reads profile `text`; `origin` names the file (its extension picks the format: `.py`
    /// Python, `.json` JSON, anything else YAML).
    pub fn parse(text: &str, origin: &str) -> Result<Profile, ProfileError> {
        let (patch, notes) = if origin.ends_with(".py") {
            python::read(text, origin)?
        } else {
            yaml::read(text, origin)?
        };
        let mcp_servers = (!origin.ends_with(".py"))
            .then(|| yaml::mcp_servers(text, origin))
            .flatten();
        Ok(Profile {
            patch,
            origin: origin.to_owned(),
            notes,
            mcp_servers,
        })
    }

    /// The notes as lines to print, each naming the profile.
    pub fn note_lines(&self) -> Vec<String> {
        self.notes
            .iter()
            .map(|note| format!("profile {}: {note}", self.origin))
            .collect()
    }
}

/// Where user profiles live.
pub fn profiles_dir() -> Option<PathBuf> {
    oi_core::settings::config_dir().map(|dir| dir.join("profiles"))
}

/// The packaged profile called `name` (with or without `.yaml`): its file name and text.
fn packaged_entry(name: &str) -> Option<(&'static str, &'static str)> {
    let stem = Path::new(name).file_stem()?.to_str()?;
    PACKAGED
        .iter()
        .find(|(file, _)| file.trim_end_matches(".yaml") == stem)
        .copied()
}

/// Whether `name` is a path the user wrote (it has a `/`, starts with `.` or `~`, or is
/// absolute) rather than the name of a profile.
pub fn is_explicit_path(name: &str) -> bool {
    name.contains('/')
        || name.starts_with('.')
        || name.starts_with('~')
        || Path::new(name).is_absolute()
}

/// An explicit profile path with `~/` expanded to `home`.
fn expand_home(name: &str, home: Option<&Path>) -> Result<PathBuf, ProfileError> {
    let Some(rest) = name.strip_prefix('~') else {
        return Ok(PathBuf::from(name));
    };
    let Some(rest) = rest.strip_prefix('/') else {
        return Err(ProfileError(format!(
            "profile {name}: only `~/` is expanded (to your home folder); write the full path instead."
        )));
    };
    match home {
        Some(home) => Ok(home.join(rest)),
        None => Err(ProfileError(format!(
            "profile {name}: HOME is not set, so `~` cannot be expanded; write the full path instead."
        ))),
    }
}

/// Reads a profile file: a regular file of at most [`MAX_PROFILE_BYTES`].
fn read_profile(path: &Path) -> Result<Profile, ProfileError> {
    let shown = path.display().to_string();
    let error = |message: String| ProfileError(format!("profile {shown}: {message}"));
    let metadata = std::fs::metadata(path).map_err(|e| error(e.to_string()))?;
    if !metadata.is_file() {
        return Err(error(
            "not a regular file; give the path of a YAML, JSON or Python profile.".to_owned(),
        ));
    }
    if metadata.len() > MAX_PROFILE_BYTES {
        return Err(error(format!(
            "{} bytes is more than a profile can be ({MAX_PROFILE_BYTES} bytes at most; real ones are a few hundred); check that this is the file you meant.",
            metadata.len()
        )));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(MAX_PROFILE_BYTES + 1).read_to_end(&mut bytes))
        .map_err(|e| error(e.to_string()))?;
    if bytes.len() as u64 > MAX_PROFILE_BYTES {
        return Err(error(format!(
            "more than {MAX_PROFILE_BYTES} bytes, more than a profile can be; check that this is the file you meant."
        )));
    }
    let text = String::from_utf8(bytes)
        .map_err(|_| error("not UTF-8 text; save the profile as UTF-8.".to_owned()))?;
    Profile::parse(&text, &shown)
}

/// Finds and reads a profile. A path the user wrote ([`is_explicit_path`]; `~/` is the home
/// folder) is read as given. Any other name is looked up in `dir`, the profiles folder (as
/// given, or with `.yaml`, `.yml`, `.json` or `.py` added when it has no extension), then among
/// the packaged profiles — never in the current directory.
pub fn load(name: &str, dir: Option<&Path>) -> Result<Profile, ProfileError> {
    if remote::is_url(name) {
        return Err(ProfileError(format!(
            "profile {name}: a profile from a URL is fetched and shown for you to accept only \
             by oi in a terminal; here, download it, read it, and give its path."
        )));
    }
    if is_explicit_path(name) {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        return read_profile(&expand_home(name, home.as_deref())?);
    }
    let mut candidates = Vec::new();
    if let Some(dir) = dir {
        candidates.push(dir.join(name));
        if Path::new(name).extension().is_none() {
            for ext in ["yaml", "yml", "json", "py"] {
                candidates.push(dir.join(format!("{name}.{ext}")));
            }
        }
    }
    if let Some(path) = candidates.iter().find(|p| p.is_file()) {
        return read_profile(path);
    }
    match packaged_entry(name) {
        Some((file, text)) => Profile::parse(text, &format!("{file} (packaged)")),
        None => Err(not_found(name, dir)),
    }
}

/// The error for a profile name found nowhere, with a hint when a file of that name is in
/// the current directory (which is not searched).
fn not_found(name: &str, dir: Option<&Path>) -> ProfileError {
    let names: Vec<&str> = PACKAGED.iter().map(|(n, _)| *n).collect();
    let place = dir.map_or_else(
        || "the profiles folder".to_owned(),
        |d| d.display().to_string(),
    );
    let mut message = format!(
        "profile `{name}` not found: nothing of that name in {place}, and no packaged profile of that name ({}).",
        names.join(", ")
    );
    if Path::new(name).exists() {
        message.push_str(&format!(
            " A file `{name}` is in the current directory, but a bare name is never read from there (a downloaded project could change oi's settings that way); to use it, give its path: --profile ./{name}"
        ));
    }
    ProfileError(message)
}

/// Writes the packaged profile `name` (default: `default.yaml`) into `dir`, replacing the user's.
pub fn reset(name: &str, dir: &Path) -> Result<PathBuf, ProfileError> {
    let (file, text) = packaged_entry(name)
        .ok_or_else(|| ProfileError(format!("there is no packaged profile `{name}` to reset")))?;
    std::fs::create_dir_all(dir)
        .map_err(|e| ProfileError(format!("could not create {}: {e}", dir.display())))?;
    let path = dir.join(file);
    std::fs::write(&path, text)
        .map_err(|e| ProfileError(format!("could not write {}: {e}", path.display())))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use oi_core::Settings;
    use oi_core::settings::SandboxMode;

    use super::*;

    #[test]
    fn packaged_profiles_parse_without_notes() {
        for (name, text) in PACKAGED {
            let profile = Profile::parse(text, name).unwrap();
            assert!(profile.notes.is_empty(), "{name}: {:?}", profile.notes);
        }
        let fast = load("fast", None).unwrap();
        let settings = Settings::default().patched(&fast.patch);
        assert_eq!(settings.llm.model, "gpt-4o-mini");
        assert!(settings.custom_instructions.contains("FAST mode"));
    }

    #[test]
    fn sandbox_limits_and_pass_env_keys() {
        let profile = Profile::parse(
            "sandbox: workspace\nlimits:\n  max_processes: 64\npass_env: [HF_TOKEN]\n",
            "p.yaml",
        )
        .unwrap();
        let settings = Settings::default().patched(&profile.patch);
        assert_eq!(settings.computer.sandbox.mode, SandboxMode::Workspace);
        assert_eq!(settings.computer.limits.max_processes, Some(64));
        assert_eq!(settings.computer.sandbox.pass_env, ["HF_TOKEN"]);
        let profile =
            Profile::parse("sandbox:\n  mode: readonly\n  network: false\n", "p.yaml").unwrap();
        let settings = Settings::default().patched(&profile.patch);
        assert_eq!(
            (
                settings.computer.sandbox.mode,
                settings.computer.sandbox.network
            ),
            (SandboxMode::ReadOnly, false)
        );
    }

    #[test]
    fn user_files_win_python_ones_load_and_missing_ones_are_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("mine.yaml"),
            "llm:\n  model: openai/local\nauto_run: true\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("groq.py"),
            "from interpreter import interpreter\n\ninterpreter.llm.model = \"groq/llama-3.1-70b-versatile\"\ninterpreter.llm.context_window = 110000\n",
        )
        .unwrap();
        let mine = Settings::default().patched(&load("mine", Some(dir.path())).unwrap().patch);
        assert_eq!(
            (mine.llm.model.as_str(), mine.auto_run),
            ("openai/local", true)
        );
        let groq = Settings::default().patched(&load("groq", Some(dir.path())).unwrap().patch);
        assert_eq!(
            (groq.llm.model.as_str(), groq.llm.context_window),
            ("groq/llama-3.1-70b-versatile", Some(110_000))
        );
        let error = load("nope", Some(dir.path())).unwrap_err().to_string();
        assert!(error.contains("`nope` not found"), "{error}");
    }
}
