//! Profiles: YAML (or JSON) files with Open Interpreter's keys (`llm:`, `computer:`, top-level
//! settings), in `<config dir>/profiles`, plus the packaged `default.yaml`, `fast.yaml`,
//! `local.yaml` and `vision.yaml` (spec e.4). Flags override profiles.
//!
//! A profile can turn on `auto_run`, turn off `hard_deny` or send the conversation to another
//! `api_base`, so it is only read from where the user put it: a path the user wrote (it has a
//! `/`, or starts with `.` or `~`), or a name looked up in the profiles folder, then among the
//! packaged ones — never a bare name in the current directory, which a cloned repository
//! controls. Before parsing, a file is refused when it is larger than 1 MiB or nests deeper
//! than 32 levels (the YAML parser took 35 s on a 100 000-deep one).

use std::io::Read as _;
use std::path::{Path, PathBuf};

use oi_computer::{ResourceLimits, SandboxMode, SandboxPolicy};
use oi_core::{OutputSender, SafeMode, Settings};
use serde::Deserialize;

use crate::sanitize::clean;
use crate::yaml_nesting;

/// The largest profile file read (real ones are a few hundred bytes).
pub const MAX_PROFILE_BYTES: u64 = 1 << 20;

/// The deepest nesting a profile may have (real ones use two or three levels).
pub const MAX_PROFILE_NESTING: usize = 32;

/// The packaged profiles: (file name, contents).
pub const PACKAGED: &[(&str, &str)] = &[
    ("default.yaml", include_str!("../profiles/default.yaml")),
    ("fast.yaml", include_str!("../profiles/fast.yaml")),
    ("local.yaml", include_str!("../profiles/local.yaml")),
    ("vision.yaml", include_str!("../profiles/vision.yaml")),
];

/// Why a profile could not be used.
#[derive(Debug)]
pub struct ProfileError(pub String);

impl std::fmt::Display for ProfileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ProfileError {}

/// The `llm:` section.
#[derive(Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LlmProfile {
    model: Option<String>,
    temperature: Option<f64>,
    api_base: Option<String>,
    api_key: Option<String>,
    api_version: Option<String>,
    supports_functions: Option<bool>,
    supports_vision: Option<bool>,
    context_window: Option<u64>,
    max_tokens: Option<u64>,
    max_budget: Option<f64>,
    execution_instructions: Option<String>,
}

/// The `computer:` section.
#[derive(Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ComputerProfile {
    import_computer_api: Option<bool>,
    offline: Option<bool>,
    verbose: Option<bool>,
}

/// One profile file.
#[derive(Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    version: Option<serde_norway::Value>,
    llm: Option<LlmProfile>,
    computer: Option<ComputerProfile>,
    auto_run: Option<bool>,
    custom_instructions: Option<String>,
    system_message: Option<String>,
    safe_mode: Option<SafeMode>,
    offline: Option<bool>,
    verbose: Option<bool>,
    debug: Option<bool>,
    #[serde(rename = "loop")]
    loop_mode: Option<bool>,
    loop_message: Option<String>,
    max_output: Option<usize>,
    disable_telemetry: Option<bool>,
    plain_text_display: Option<bool>,
    multi_line: Option<bool>,
    highlight_active_line: Option<bool>,
    conversation_history: Option<bool>,
    conversation_history_path: Option<PathBuf>,
    user_message_template: Option<String>,
    always_apply_user_message_template: Option<bool>,
    code_output_template: Option<String>,
    empty_code_output_template: Option<String>,
    code_output_sender: Option<OutputSender>,
    approval_policy: Option<oi_core::ApprovalPolicy>,
    allow: Option<Vec<String>>,
    deny: Option<Vec<String>>,
    hard_deny: Option<bool>,
    sandbox: Option<SandboxSpec>,
    limits: Option<ResourceLimits>,
    /// Variables the code may see although oi withholds them (`--pass_env`).
    pass_env: Option<Vec<String>>,
    /// The original's `wtf` command settings: accepted and ignored.
    wtf: Option<serde_norway::Value>,
}

/// `sandbox:` in a profile: a mode name, or the whole policy.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum SandboxSpec {
    /// `sandbox: workspace`.
    Mode(SandboxMode),
    /// `sandbox: {mode: workspace, network: false}`.
    Policy(SandboxPolicy),
}

/// Options of the terminal program and of the computer it builds, which a profile may set.
#[derive(Debug, Clone, PartialEq)]
pub struct CliOptions {
    /// Highlight the running line.
    pub highlight_active_line: bool,
    /// Accept `"""` multi-line input.
    pub multi_line: bool,
    /// What code may touch.
    pub sandbox: SandboxPolicy,
    /// Resource limits per language session.
    pub limits: ResourceLimits,
}

impl Default for CliOptions {
    fn default() -> Self {
        CliOptions {
            highlight_active_line: true,
            multi_line: true,
            sandbox: SandboxPolicy::default(),
            limits: ResourceLimits::default(),
        }
    }
}

fn set<T>(target: &mut T, value: Option<T>) {
    if let Some(value) = value {
        *target = value;
    }
}

impl Profile {
    /// Parses a profile; `origin` names the file in errors. A profile nesting deeper than
    /// [`MAX_PROFILE_NESTING`] is refused before the parser sees it.
    pub fn parse(text: &str, origin: &str) -> Result<Self, ProfileError> {
        let error = |message: String| ProfileError(clean(&format!("profile {origin}: {message}")));
        if let Err(deep) = yaml_nesting::check(text, MAX_PROFILE_NESTING) {
            return Err(error(format!(
                "line {}: nested more than {} levels deep. Profiles need two or three levels (`llm:` and its keys); check that this is the profile you meant.",
                deep.line, deep.limit
            )));
        }
        if origin.ends_with(".json") {
            return serde_json::from_str(text).map_err(|e| error(e.to_string()));
        }
        serde_norway::from_str::<Option<Profile>>(text)
            .map(Option::unwrap_or_default)
            .map_err(|e| error(e.to_string()))
    }

    /// Applies the profile to settings and terminal options.
    pub fn apply(self, settings: &mut Settings, cli: &mut CliOptions) {
        let _ = (self.version, self.wtf);
        if let Some(llm) = self.llm {
            let target = &mut settings.llm;
            set(&mut target.model, llm.model);
            set(&mut target.temperature, llm.temperature);
            target.api_base = llm.api_base.or(target.api_base.take());
            target.api_key = llm.api_key.or(target.api_key.take());
            target.api_version = llm.api_version.or(target.api_version.take());
            target.supports_functions = llm.supports_functions.or(target.supports_functions);
            target.supports_vision = llm.supports_vision.or(target.supports_vision);
            target.context_window = llm.context_window.or(target.context_window);
            target.max_tokens = llm.max_tokens.or(target.max_tokens);
            target.max_budget = llm.max_budget.or(target.max_budget);
            set(
                &mut target.execution_instructions,
                llm.execution_instructions,
            );
        }
        if let Some(computer) = self.computer {
            set(
                &mut settings.import_computer_api,
                computer.import_computer_api,
            );
            set(&mut settings.offline, computer.offline);
            set(&mut settings.verbose, computer.verbose);
        }
        set(&mut settings.auto_run, self.auto_run);
        set(&mut settings.custom_instructions, self.custom_instructions);
        set(&mut settings.system_message, self.system_message);
        set(&mut settings.safe_mode, self.safe_mode);
        set(&mut settings.offline, self.offline);
        set(&mut settings.verbose, self.verbose);
        set(&mut settings.debug, self.debug);
        set(&mut settings.loop_mode, self.loop_mode);
        set(&mut settings.loop_message, self.loop_message);
        set(&mut settings.max_output, self.max_output);
        set(&mut settings.disable_telemetry, self.disable_telemetry);
        set(&mut settings.plain_text_display, self.plain_text_display);
        set(
            &mut settings.conversation_history,
            self.conversation_history,
        );
        settings.conversation_history_path = self
            .conversation_history_path
            .or(settings.conversation_history_path.take());
        set(
            &mut settings.user_message_template,
            self.user_message_template,
        );
        set(
            &mut settings.always_apply_user_message_template,
            self.always_apply_user_message_template,
        );
        set(
            &mut settings.code_output_template,
            self.code_output_template,
        );
        set(
            &mut settings.empty_code_output_template,
            self.empty_code_output_template,
        );
        set(&mut settings.code_output_sender, self.code_output_sender);
        set(&mut settings.approval_policy, self.approval_policy);
        set(&mut settings.allow, self.allow);
        set(&mut settings.deny, self.deny);
        set(&mut settings.hard_deny, self.hard_deny);
        set(&mut cli.multi_line, self.multi_line);
        match self.sandbox {
            Some(SandboxSpec::Mode(mode)) => cli.sandbox.mode = mode,
            Some(SandboxSpec::Policy(policy)) => cli.sandbox = policy,
            None => {}
        }
        set(&mut cli.limits, self.limits);
        for name in self.pass_env.unwrap_or_default() {
            if !cli.sandbox.pass_env.contains(&name) {
                cli.sandbox.pass_env.push(name);
            }
        }
        set(&mut cli.highlight_active_line, self.highlight_active_line);
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

fn packaged(name: &str) -> Option<&'static str> {
    packaged_entry(name).map(|(_, text)| text)
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
        return Err(ProfileError(clean(&format!(
            "profile {name}: only `~/` is expanded (to your home folder); write the full path instead."
        ))));
    };
    match home {
        Some(home) => Ok(home.join(rest)),
        None => Err(ProfileError(clean(&format!(
            "profile {name}: HOME is not set, so `~` cannot be expanded; write the full path instead."
        )))),
    }
}

/// Reads a profile file: a regular file of at most [`MAX_PROFILE_BYTES`].
fn read_profile(path: &Path) -> Result<Profile, ProfileError> {
    let shown = path.display().to_string();
    let error = |message: String| ProfileError(clean(&format!("profile {shown}: {message}")));
    let metadata = std::fs::metadata(path).map_err(|e| error(e.to_string()))?;
    if !metadata.is_file() {
        return Err(error(
            "not a regular file; give the path of a YAML or JSON profile.".to_owned(),
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
/// given, or with `.yaml`, `.yml` or `.json` added when it has no extension), then among the
/// packaged profiles — never in the current directory.
pub fn load(name: &str, dir: Option<&Path>) -> Result<Profile, ProfileError> {
    if name.ends_with(".py") {
        return Err(ProfileError(clean(&format!(
            "profile {name}: Python profiles are not run by oi (it never executes profile code). Write the settings as YAML instead, e.g. `llm:\\n  model: gpt-4o`."
        ))));
    }
    if is_explicit_path(name) {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        return read_profile(&expand_home(name, home.as_deref())?);
    }
    let mut candidates = Vec::new();
    if let Some(dir) = dir {
        candidates.push(dir.join(name));
        if Path::new(name).extension().is_none() {
            for ext in ["yaml", "yml", "json"] {
                candidates.push(dir.join(format!("{name}.{ext}")));
            }
        }
    }
    if let Some(path) = candidates.iter().find(|p| p.is_file()) {
        return read_profile(path);
    }
    match packaged(name) {
        Some(text) => Profile::parse(text, &format!("{name} (packaged)")),
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
    ProfileError(clean(&message))
}

/// Writes the packaged profile `name` (default: `default.yaml`) into `dir`, replacing the user's.
pub fn reset(name: &str, dir: &Path) -> Result<PathBuf, ProfileError> {
    let (file, text) = packaged_entry(name).ok_or_else(|| {
        ProfileError(clean(&format!(
            "there is no packaged profile `{name}` to reset"
        )))
    })?;
    std::fs::create_dir_all(dir)
        .map_err(|e| ProfileError(format!("could not create {}: {e}", dir.display())))?;
    let path = dir.join(file);
    std::fs::write(&path, text)
        .map_err(|e| ProfileError(format!("could not write {}: {e}", path.display())))?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packaged_profiles_parse_and_apply() {
        for (name, text) in PACKAGED {
            let profile = Profile::parse(text, name).unwrap();
            let mut settings = Settings::default();
            profile.apply(&mut settings, &mut CliOptions::default());
        }
        let mut settings = Settings::default();
        load("fast", None)
            .unwrap()
            .apply(&mut settings, &mut CliOptions::default());
        assert_eq!(settings.llm.model, "gpt-4o-mini");
        assert!(settings.custom_instructions.contains("FAST mode"));
    }

    #[test]
    fn unknown_keys_and_bad_types_name_file_line_and_key() {
        let error = Profile::parse("llm:\n  model: gpt-4o\n  modle: x\n", "my.yaml")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("my.yaml") && error.contains("modle") && error.contains("line 3"),
            "{error}"
        );
        let error = Profile::parse("auto_run: sometimes\n", "p.yaml")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("p.yaml") && error.contains("auto_run") && error.contains("line 1"),
            "{error}"
        );
    }

    #[test]
    fn sandbox_and_limits_keys() {
        let mut cli = CliOptions::default();
        Profile::parse(
            "sandbox: workspace\nlimits:\n  max_processes: 64\n",
            "p.yaml",
        )
        .unwrap()
        .apply(&mut Settings::default(), &mut cli);
        assert_eq!(cli.sandbox.mode, SandboxMode::Workspace);
        assert_eq!(cli.limits.max_processes, Some(64));
        let mut cli = CliOptions::default();
        Profile::parse("sandbox:\n  mode: readonly\n  network: false\n", "p.yaml")
            .unwrap()
            .apply(&mut Settings::default(), &mut cli);
        assert_eq!(
            (cli.sandbox.mode, cli.sandbox.network),
            (SandboxMode::ReadOnly, false)
        );
    }

    #[test]
    fn python_profiles_are_refused_clearly() {
        let error = load("local.py", None).unwrap_err().to_string();
        assert!(error.contains("Python profiles are not run"), "{error}");
    }

    #[test]
    fn user_files_win_and_missing_ones_are_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("mine.yaml"),
            "llm:\n  model: openai/local\nauto_run: true\n",
        )
        .unwrap();
        let mut settings = Settings::default();
        load("mine", Some(dir.path()))
            .unwrap()
            .apply(&mut settings, &mut CliOptions::default());
        assert_eq!(
            (settings.llm.model.as_str(), settings.auto_run),
            ("openai/local", true)
        );
        let error = load("nope", Some(dir.path())).unwrap_err().to_string();
        assert!(error.contains("`nope` not found"), "{error}");
    }
}
