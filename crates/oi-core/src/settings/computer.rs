//! What the computer that runs code is allowed to do: the sandbox policy (what code may write,
//! whether it may use the network, which variables it may see) and per-session resource
//! limits. Plain data, set from profiles, flags and the server's own configuration; enforced by
//! `oi-computer`.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How much of the file system the code may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxMode {
    /// No file-system sandbox: the code may write wherever the user may.
    #[default]
    Off,
    /// Writes only under the workspace directory, the temp directory and a few devices
    /// (`/dev/null`, terminals, `/dev/shm`); reads everywhere.
    Workspace,
    /// No writes at all except a few devices (`/dev/null`, terminals) and the session's own
    /// private work directory (created by oi, deleted when the session ends); reads everywhere.
    #[serde(rename = "readonly", alias = "read-only")]
    ReadOnly,
}

impl SandboxMode {
    /// The lower-case name: `off`, `workspace` or `readonly`.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::Off => "off",
            SandboxMode::Workspace => "workspace",
            SandboxMode::ReadOnly => "readonly",
        }
    }
}

impl fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not `off`, `workspace` or `readonly`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown sandbox mode `{0}` (expected off, workspace or readonly)")]
pub struct UnknownSandboxMode(pub String);

impl FromStr for SandboxMode {
    type Err = UnknownSandboxMode;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "off" | "none" => Ok(SandboxMode::Off),
            "workspace" => Ok(SandboxMode::Workspace),
            "readonly" | "read-only" => Ok(SandboxMode::ReadOnly),
            _ => Err(UnknownSandboxMode(s.to_owned())),
        }
    }
}

/// What the code may do: the file-system mode, network access, and what to do when the kernel
/// cannot enforce it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SandboxPolicy {
    /// The file-system mode.
    pub mode: SandboxMode,
    /// Whether the code may use the network (TCP/UDP/raw sockets).
    pub network: bool,
    /// When the kernel cannot enforce the policy: run unsandboxed (saying so once) instead of
    /// refusing to run.
    pub allow_unsandboxed_fallback: bool,
    /// The directory `workspace` mode lets the code write in (default: the current
    /// directory). Sessions start in it whenever a sandbox is on.
    pub workspace: PathBuf,
    /// Environment variables passed to the code although oi would withhold them (its own
    /// secrets in every mode, provider credentials under a sandbox), by exact name.
    pub pass_env: Vec<String>,
    /// In `workspace` mode, let the code write the workspace's `.git/config` and `.git/hooks`
    /// too (by default they stay read-only: a hook or `core.fsmonitor` planted there would run
    /// outside the sandbox at the user's next `git` command).
    pub git_writable: bool,
}

impl Default for SandboxPolicy {
    fn default() -> Self {
        SandboxPolicy {
            mode: SandboxMode::Off,
            network: true,
            allow_unsandboxed_fallback: false,
            workspace: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            pass_env: Vec::new(),
            git_writable: false,
        }
    }
}

impl SandboxPolicy {
    /// A policy with `mode`, network allowed, no fallback, the current directory as workspace.
    pub fn new(mode: SandboxMode) -> Self {
        SandboxPolicy {
            mode,
            ..SandboxPolicy::default()
        }
    }

    /// The same policy with network access allowed or denied.
    pub fn with_network(mut self, allowed: bool) -> Self {
        self.network = allowed;
        self
    }

    /// The same policy with another workspace directory, resolved now to its canonical form
    /// (links followed once, here): every session opens that path later without following
    /// any link, so code that swaps the workspace for a link cannot move it.
    pub fn with_workspace(mut self, dir: impl Into<PathBuf>) -> Self {
        self.workspace = normalized(&dir.into());
        self
    }

    /// The same policy, running unsandboxed (with a warning) where it cannot be enforced.
    pub fn with_unsandboxed_fallback(mut self, allowed: bool) -> Self {
        self.allow_unsandboxed_fallback = allowed;
        self
    }

    /// The same policy, passing the variable `name` through to the code.
    pub fn with_pass_env(mut self, name: impl Into<String>) -> Self {
        let name = name.into();
        if !self.pass_env.contains(&name) {
            self.pass_env.push(name);
        }
        self
    }

    /// The same policy, letting workspace code write `.git/config` and `.git/hooks`.
    pub fn with_git_writable(mut self, writable: bool) -> Self {
        self.git_writable = writable;
        self
    }

    /// Whether the policy restricts anything at all.
    pub fn restricts(&self) -> bool {
        self.mode != SandboxMode::Off || !self.network
    }

    /// Whether `other` is at least as strict as `self` (for a server that lets clients only
    /// tighten its own policy): the same or a stricter mode, no network where `self` has none,
    /// and no fallback where `self` has none.
    pub fn is_loosened_by(&self, other: &SandboxPolicy) -> bool {
        let rank = |m: SandboxMode| match m {
            SandboxMode::Off => 0,
            SandboxMode::Workspace => 1,
            SandboxMode::ReadOnly => 2,
        };
        rank(other.mode) < rank(self.mode)
            || (other.network && !self.network)
            || (other.allow_unsandboxed_fallback && !self.allow_unsandboxed_fallback)
            || (other.git_writable && !self.git_writable)
            || other
                .pass_env
                .iter()
                .any(|name| !self.pass_env.contains(name))
            || (self.mode == SandboxMode::Workspace
                && other.mode == SandboxMode::Workspace
                && !normalized(&other.workspace).starts_with(normalized(&self.workspace)))
    }
}

/// `path` as the kernel would resolve it, for comparisons: relative paths are taken from the
/// current directory, the longest prefix that exists is canonicalised (links and `..`
/// followed as the kernel follows them), and the rest is normalised lexically (`.` dropped,
/// `..` removes the previous component). `Path::starts_with` compares components as
/// written, so `/srv/w/../../etc` would otherwise count as beneath `/srv/w`.
pub fn normalized(path: &std::path::Path) -> PathBuf {
    use std::path::Component;
    let absolute = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .unwrap_or_else(|_| PathBuf::from("/"))
            .join(path)
    };
    let components: Vec<Component<'_>> = absolute.components().collect();
    // The longest existing prefix, canonicalised.
    let mut split = components.len();
    let mut base = None;
    while split > 0 {
        let prefix: PathBuf = components[..split].iter().collect();
        if let Ok(real) = prefix.canonicalize() {
            base = Some(real);
            break;
        }
        split -= 1;
    }
    let mut out = base.unwrap_or_else(|| PathBuf::from("/"));
    for component in &components[split..] {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    out
}

/// Limits for each session; `None` means unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ResourceLimits {
    /// The most processes a session may have at once (its interpreter included).
    pub max_processes: Option<u32>,
    /// The most memory (heap and private writable mappings) each process of a session may
    /// use, in bytes.
    pub max_memory_bytes: Option<u64>,
    /// The most CPU time each process of a session may use over its life, in seconds (the
    /// session's interpreter counts all its runs; a restarted session starts from zero).
    pub max_cpu_seconds: Option<u64>,
}

impl ResourceLimits {
    /// Whether any limit is set.
    pub fn any(&self) -> bool {
        self.max_processes.is_some()
            || self.max_memory_bytes.is_some()
            || self.max_cpu_seconds.is_some()
    }
}

/// The computer's settings: its sandbox and its resource limits.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ComputerSettings {
    /// What code may write and reach.
    pub sandbox: SandboxPolicy,
    /// Limits for each language session.
    pub limits: ResourceLimits,
    /// For one run only, never stored: the `computer` API is imported into a Python session
    /// (the respond loop sets it from `import_computer_api` when it runs a Python block).
    #[serde(skip)]
    pub api: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_and_serialize_lower_case() {
        for (text, mode) in [
            ("off", SandboxMode::Off),
            ("workspace", SandboxMode::Workspace),
            ("readonly", SandboxMode::ReadOnly),
        ] {
            assert_eq!(text.parse::<SandboxMode>(), Ok(mode));
            assert_eq!(
                serde_json::to_string(&mode).ok(),
                Some(format!("\"{text}\""))
            );
            assert_eq!(mode.to_string(), text);
        }
        assert_eq!(
            "Read-Only".parse::<SandboxMode>(),
            Ok(SandboxMode::ReadOnly)
        );
        assert!("jail".parse::<SandboxMode>().is_err());
        let policy: Result<SandboxPolicy, _> =
            serde_json::from_str(r#"{"mode":"readonly","network":false}"#);
        assert!(matches!(
            policy,
            Ok(SandboxPolicy {
                mode: SandboxMode::ReadOnly,
                network: false,
                allow_unsandboxed_fallback: false,
                ..
            })
        ));
    }

    #[test]
    fn loosening_is_detected() {
        let server = SandboxPolicy::new(SandboxMode::Workspace)
            .with_network(false)
            .with_workspace("/srv/w");
        assert!(server.is_loosened_by(&SandboxPolicy::new(SandboxMode::Off).with_network(false)));
        assert!(server.is_loosened_by(&server.clone().with_network(true)));
        assert!(server.is_loosened_by(&server.clone().with_workspace("/")));
        assert!(server.is_loosened_by(&server.clone().with_unsandboxed_fallback(true)));
        assert!(server.is_loosened_by(&server.clone().with_pass_env("OPENAI_API_KEY")));
        assert!(server.is_loosened_by(&server.clone().with_git_writable(true)));
        assert!(!server.is_loosened_by(&server.clone().with_workspace("/srv/w/sub")));
        // `..` and `.` do not hide a way out, nor do links.
        for out in [
            "/srv/w/../../etc",
            "/srv/w/sub/../..",
            "/srv/w/./../x",
            "/srv/w/a/b/../../../",
        ] {
            assert!(
                server.is_loosened_by(&server.clone().with_workspace(out)),
                "{out}"
            );
        }
        assert!(!server.is_loosened_by(&server.clone().with_workspace("/srv/w/a/../b/./c")));
    }

    #[test]
    fn a_link_out_of_the_workspace_is_a_loosening() {
        let Ok(top) = tempfile::tempdir() else {
            panic!("no temporary directory");
        };
        let work = top.path().join("w");
        let _ = std::fs::create_dir_all(work.join("sub"));
        let _ = std::os::unix::fs::symlink("/", work.join("out"));
        let server = SandboxPolicy::new(SandboxMode::Workspace).with_workspace(&work);
        let loosened = |p: PathBuf| server.is_loosened_by(&server.clone().with_workspace(p));
        let results = (
            loosened(work.join("out")),
            loosened(work.join("out/srv")),
            loosened(work.join("sub/../..")),
            loosened(work.join("sub")),
            loosened(work.join("sub/new/dir")),
        );
        assert_eq!(results, (true, true, true, false, false));
        assert!(
            !server.is_loosened_by(&SandboxPolicy::new(SandboxMode::ReadOnly).with_network(false))
        );
    }
    #[test]
    fn a_workspace_is_canonical_from_when_it_is_set() {
        let Ok(top) = tempfile::tempdir() else {
            panic!("no temporary directory");
        };
        let Ok(top) = top.path().canonicalize() else {
            panic!("no canonical temporary directory");
        };
        let real = top.join("real");
        let _ = std::fs::create_dir_all(&real);
        let _ = std::os::unix::fs::symlink(&real, top.join("link"));
        let set = SandboxPolicy::new(SandboxMode::Workspace).with_workspace(top.join("link"));
        assert_eq!(set.workspace, real);
        let patch: crate::settings::patch::SettingsPatch = serde_json::from_value(
            serde_json::json!({"sandbox": {"workspace": top.join("link/./")}}),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let mut settings = crate::settings::Settings::default();
        settings.apply(&patch);
        assert_eq!(
            settings.computer.sandbox.workspace, real,
            "a settings patch (flags, profiles, POST /settings) stores it canonical too"
        );
    }
}
