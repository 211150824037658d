//! What a session's child inherits of oi's environment: everything, minus oi's own secrets (in
//! every mode), minus provider credentials and the variables that point at a host daemon's
//! socket (under a sandbox), unless the user passes a variable through by name; plus the
//! variables oi sets for the session.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::os::unix::ffi::OsStrExt;

/// Variables that hold model-provider or cloud credentials, withheld from sandboxed code.
pub const PROVIDER_KEY_VARS: &[&str] = &[
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GROQ_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "MISTRAL_API_KEY",
    "OPENROUTER_API_KEY",
    "DEEPSEEK_API_KEY",
    "TOGETHER_API_KEY",
    "TOGETHERAI_API_KEY",
    "FIREWORKS_API_KEY",
    "XAI_API_KEY",
    "PERPLEXITYAI_API_KEY",
    "CEREBRAS_API_KEY",
    "HUGGINGFACE_API_KEY",
    "HF_TOKEN",
    "AZURE_API_KEY",
    "AZURE_OPENAI_API_KEY",
    "COHERE_API_KEY",
    "REPLICATE_API_TOKEN",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
];

/// Name endings treated as credentials under a sandbox, whatever the provider.
pub const PROVIDER_KEY_SUFFIXES: &[&str] = &["_API_KEY", "_API_TOKEN"];

/// Variables that point at a host daemon's socket or session (terminal multiplexers, agents,
/// buses, container engines, displays), withheld from sandboxed code: the sandbox refuses Unix
/// sockets anyway, and a program that finds none of these does not try.
pub const SOCKET_VARS: &[&str] = &[
    "TMUX",
    "TMUX_PANE",
    "TMUX_TMPDIR",
    "STY",
    "SSH_AUTH_SOCK",
    "SSH_AGENT_PID",
    "GPG_AGENT_INFO",
    "DBUS_SESSION_BUS_ADDRESS",
    "DBUS_SYSTEM_BUS_ADDRESS",
    "DOCKER_HOST",
    "CONTAINER_HOST",
    "PODMAN_HOST",
    "XDG_RUNTIME_DIR",
    "WAYLAND_DISPLAY",
    "WAYLAND_SOCKET",
    "DISPLAY",
    "XAUTHORITY",
    "PULSE_SERVER",
    "PIPEWIRE_REMOTE",
    "KITTY_LISTEN_ON",
    "NVIM",
    "NVIM_LISTEN_ADDRESS",
    "VSCODE_IPC_HOOK_CLI",
    "EMACS_SOCKET_NAME",
    "ZELLIJ",
    "ZELLIJ_SESSION_NAME",
    "CONTAINERD_ADDRESS",
    "KRB5CCNAME",
];

/// Name endings treated as socket-pointing under a sandbox, whatever the program.
pub const SOCKET_SUFFIXES: &[&str] = &["_SOCK", "_SOCKET", "_BUS_ADDRESS", "_IPC_HOOK"];

/// Whether `name` points at a host daemon's socket (withheld from sandboxed code).
pub fn is_socket_var(name: &str) -> bool {
    SOCKET_VARS.contains(&name) || SOCKET_SUFFIXES.iter().any(|s| name.ends_with(s))
}

/// Values shorter than this are not matched by value: real keys are longer, and a short value
/// (`1`, `x`) would match ordinary variables such as `SHLVL`.
pub const MIN_SECRET_VALUE_LEN: usize = 8;

/// oi's own secrets, which no child sees in any mode: variables by name (e.g.
/// `INTERPRETER_API_KEY`, the variable the model's key came from) and by value (the model's
/// key, wherever else it appears in the environment).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secrets {
    names: Vec<String>,
    values: Vec<String>,
}

impl fmt::Debug for Secrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never print the values.
        f.debug_struct("Secrets")
            .field("names", &self.names)
            .field("values", &format_args!("[{} withheld]", self.values.len()))
            .finish()
    }
}

impl Secrets {
    /// No secrets.
    pub fn new() -> Self {
        Secrets::default()
    }

    /// Also withholds the variable `name`.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        let name = name.into();
        if !name.is_empty() && !self.names.contains(&name) {
            self.names.push(name);
        }
        self
    }

    /// Also withholds every variable whose value is `value` (ignored when blank or shorter
    /// than [`MIN_SECRET_VALUE_LEN`]).
    pub fn with_value(mut self, value: impl Into<String>) -> Self {
        let value = value.into();
        if value.trim().len() >= MIN_SECRET_VALUE_LEN && !self.values.contains(&value) {
            self.values.push(value);
        }
        self
    }

    /// The names withheld.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Whether `name=value` is one of oi's secrets.
    fn covers(&self, name: &OsStr, value: &OsStr) -> bool {
        self.names.iter().any(|n| n.as_bytes() == name.as_bytes())
            || self.values.iter().any(|v| {
                let value = value.as_bytes();
                value == v.as_bytes() || value.trim_ascii() == v.trim().as_bytes()
            })
    }
}

/// The variable that holds the server's key.
pub const SERVER_KEY_VAR: &str = "INTERPRETER_API_KEY";

impl Secrets {
    /// oi's usual secrets: [`SERVER_KEY_VAR`] and `key_vars` (the variables oi reads model
    /// keys from) by name, their values (looked up with `lookup`) wherever else they appear,
    /// and the configured `model_key` (`--api_key`, a profile's `api_key`) by value.
    pub fn of_oi<'a>(
        model_key: Option<&str>,
        key_vars: impl IntoIterator<Item = &'a str>,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Secrets {
        let mut secrets = Secrets::new();
        for name in std::iter::once(SERVER_KEY_VAR).chain(key_vars) {
            secrets = secrets.with_name(name);
            if let Some(value) = lookup(name) {
                secrets = secrets.with_value(value);
            }
        }
        if let Some(key) = model_key {
            secrets = secrets.with_value(key);
        }
        secrets
    }
}

/// Whether `name` looks like a provider or cloud credential.
pub fn is_provider_key(name: &str) -> bool {
    PROVIDER_KEY_VARS.contains(&name) || PROVIDER_KEY_SUFFIXES.iter().any(|s| name.ends_with(s))
}

/// What a child may inherit.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Inherit<'a> {
    /// oi's own secrets.
    pub secrets: &'a Secrets,
    /// Names passed through whatever else says.
    pub pass: &'a [String],
    /// Whether a sandbox is on (then provider credentials and socket-pointing variables are
    /// withheld too).
    pub sandboxed: bool,
}

impl Inherit<'_> {
    /// Whether the child may see `name=value`.
    pub(crate) fn keeps(&self, name: &OsStr, value: &OsStr) -> bool {
        if self.pass.iter().any(|p| p.as_bytes() == name.as_bytes()) {
            return true;
        }
        if self.secrets.covers(name, value) {
            return false;
        }
        !(self.sandboxed
            && name
                .to_str()
                .is_none_or(|name| is_provider_key(name) || is_socket_var(name)))
    }

    /// The environment of a child: `base` filtered, then `set` (which wins).
    pub(crate) fn environment(
        &self,
        base: impl IntoIterator<Item = (OsString, OsString)>,
        set: &[(String, String)],
    ) -> Vec<(OsString, OsString)> {
        let mut env: Vec<(OsString, OsString)> = base
            .into_iter()
            .filter(|(name, value)| self.keeps(name, value))
            .filter(|(name, _)| !set.iter().any(|(k, _)| k.as_bytes() == name.as_bytes()))
            .collect();
        env.extend(
            set.iter()
                .map(|(k, v)| (OsString::from(k), OsString::from(v))),
        );
        env
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(env: &[(OsString, OsString)]) -> Vec<String> {
        env.iter()
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect()
    }

    fn base() -> Vec<(OsString, OsString)> {
        [
            ("PATH", "/usr/bin"),
            ("INTERPRETER_API_KEY", "server-secret-123"),
            ("OPENAI_API_KEY", "sk-model-key-456"),
            ("MY_COPY", "sk-model-key-456"),
            ("GROQ_API_KEY", "gsk-other-789"),
            ("ACME_API_KEY", "acme-000000"),
            ("SHLVL", "1"),
        ]
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .collect()
    }

    #[test]
    fn secrets_are_withheld_in_every_mode_and_providers_under_a_sandbox() {
        let secrets = Secrets::new()
            .with_name("INTERPRETER_API_KEY")
            .with_name("OPENAI_API_KEY")
            .with_value("sk-model-key-456")
            .with_value("1");
        let off = Inherit {
            secrets: &secrets,
            pass: &[],
            sandboxed: false,
        };
        let env = off.environment(base(), &[("OI_NONCE".into(), "n".into())]);
        assert_eq!(
            names(&env),
            ["PATH", "GROQ_API_KEY", "ACME_API_KEY", "SHLVL", "OI_NONCE"]
        );
        let sandboxed = Inherit {
            sandboxed: true,
            ..off
        };
        assert_eq!(
            names(&sandboxed.environment(base(), &[])),
            ["PATH", "SHLVL"]
        );
        let pass = ["GROQ_API_KEY".to_owned(), "OPENAI_API_KEY".to_owned()];
        let passing = Inherit {
            pass: &pass,
            ..sandboxed
        };
        assert_eq!(
            names(&passing.environment(base(), &[])),
            ["PATH", "OPENAI_API_KEY", "GROQ_API_KEY", "SHLVL"]
        );
    }

    #[test]
    fn sandboxed_code_gets_no_variable_that_points_at_a_host_socket() {
        let secrets = Secrets::new();
        let sandboxed = Inherit {
            secrets: &secrets,
            pass: &[],
            sandboxed: true,
        };
        let base: Vec<(OsString, OsString)> = [
            ("PATH", "/usr/bin"),
            ("TMUX", "/tmp/tmux-0/default,1,0"),
            ("TMUX_PANE", "%1"),
            ("STY", "1.pts-0.host"),
            ("SSH_AUTH_SOCK", "/tmp/ssh-x/agent.1"),
            ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/0/bus"),
            ("DOCKER_HOST", "unix:///run/docker.sock"),
            ("XDG_RUNTIME_DIR", "/run/user/0"),
            ("WAYLAND_DISPLAY", "wayland-0"),
            ("DISPLAY", ":0"),
            ("GPG_AGENT_INFO", "/run/user/0/gnupg/S.gpg-agent"),
            ("MY_DAEMON_SOCK", "/run/x.sock"),
            ("HOME", "/root"),
        ]
        .into_iter()
        .map(|(k, v)| (k.into(), v.into()))
        .collect();
        assert_eq!(
            names(&sandboxed.environment(base.clone(), &[])),
            ["PATH", "HOME"]
        );
        let off = Inherit {
            sandboxed: false,
            ..sandboxed
        };
        assert_eq!(off.environment(base.clone(), &[]).len(), base.len());
        let pass = ["DISPLAY".to_owned()];
        let passing = Inherit {
            pass: &pass,
            ..sandboxed
        };
        assert_eq!(
            names(&passing.environment(base, &[])),
            ["PATH", "DISPLAY", "HOME"]
        );
    }

    #[test]
    fn oi_secrets_cover_the_server_key_and_the_model_key_by_name_and_value() {
        let lookup = |name: &str| (name == "OPENAI_API_KEY").then(|| "sk-env-key-123".to_owned());
        let secrets = Secrets::of_oi(Some("sk-flag-key-456"), ["OPENAI_API_KEY"], lookup);
        assert_eq!(secrets.names(), ["INTERPRETER_API_KEY", "OPENAI_API_KEY"]);
        assert!(secrets.covers("COPY".as_ref(), "sk-env-key-123".as_ref()));
        assert!(secrets.covers("OTHER".as_ref(), "sk-flag-key-456".as_ref()));
        assert!(!secrets.covers("OTHER".as_ref(), "something-else".as_ref()));
    }

    #[test]
    fn debug_never_prints_values() {
        let secrets = Secrets::new().with_value("sk-very-secret-value");
        let shown = format!("{secrets:?}");
        assert!(!shown.contains("sk-very"), "{shown}");
        assert!(shown.contains("1 withheld"), "{shown}");
    }
}
