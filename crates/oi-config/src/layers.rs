//! Settings from every layer, in order: Open Interpreter's defaults ← a profile ← the
//! environment ← flags. (A server adds one more at run time: patches from its clients, which
//! may only tighten what matters for safety — see oi-server's `settings_patch`.)

use oi_core::settings::SettingsPatch;
use oi_core::{RuntimeState, Settings};

#[cfg(feature = "cli")]
use crate::environment::{env_notes, env_patch};
#[cfg(feature = "cli")]
use crate::flags::SettingsArgs;
use crate::profiles::Profile;
#[cfg(feature = "cli")]
use crate::profiles::{self, ProfileError};

/// The layers that make a program's settings.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Layers {
    /// The profile read, if any.
    pub profile: Option<Profile>,
    /// What the environment sets.
    pub environment: SettingsPatch,
    /// What the flags set.
    pub flags: SettingsPatch,
    /// What flags and variables oi accepts but does not do, said (`--speak_messages`,
    /// `INTERPRETER_TERMINAL_INPUT_PATIENCE`, …).
    pub flag_notes: Vec<String>,
}

impl Layers {
    /// The layers of a program started with `args` (the `cli` feature): the profile they
    /// select (looked up as [`profiles::load`] does), this process's environment, and the
    /// flags.
    #[cfg(feature = "cli")]
    pub fn from_args(args: &SettingsArgs) -> Result<Layers, ProfileError> {
        Self::from_args_with(args, None)
    }

    /// [`from_args`](Self::from_args) with `fetched` as the profile when given (a profile
    /// from a URL, fetched and accepted by the user: see [`profiles::remote`]).
    #[cfg(feature = "cli")]
    pub fn from_args_with(
        args: &SettingsArgs,
        fetched: Option<Profile>,
    ) -> Result<Layers, ProfileError> {
        let profile = match fetched {
            Some(profile) => profile,
            None => profiles::load(args.profile_name(), profiles::profiles_dir().as_deref())?,
        };
        Ok(Layers {
            profile: Some(profile),
            environment: env_patch(|k| std::env::var(k).ok()),
            flags: args.patch(),
            flag_notes: args
                .notes()
                .into_iter()
                .chain(env_notes(|k| std::env::var(k).ok()))
                .collect(),
        })
    }

    /// The settings: defaults, then each layer over the one before.
    pub fn settings(&self) -> Settings {
        let mut settings = Settings::default();
        if let Some(profile) = &self.profile {
            settings.apply(&profile.patch);
        }
        settings.apply(&self.environment);
        settings.apply(&self.flags);
        settings
    }

    /// The profile's `mcp_servers:` map as written, if any.
    pub fn mcp_servers(&self) -> Option<&serde_json::Value> {
        self.profile.as_ref()?.mcp_servers.as_ref()
    }

    /// The runtime state the layers start a conversation with: the conversation file a
    /// profile or flag names (`conversation_filename`), which is not a setting. The CLI
    /// takes it; a server does not (each of its sessions chooses a file of its own).
    pub fn runtime(&self) -> RuntimeState {
        let mut runtime = RuntimeState::default();
        if let Some(profile) = &self.profile {
            runtime.apply(&profile.patch);
        }
        runtime.apply(&self.environment);
        runtime.apply(&self.flags);
        runtime
    }

    /// What the profile skipped and what the flags cannot do, as lines to print.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = self
            .profile
            .as_ref()
            .map(Profile::note_lines)
            .unwrap_or_default();
        notes.extend(self.flag_notes.iter().cloned());
        notes
    }
}

#[cfg(all(test, feature = "cli"))]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        settings: SettingsArgs,
    }

    fn args(list: &[&str]) -> SettingsArgs {
        let argv = crate::spelling::normalize(list.iter().map(|s| (*s).to_owned()));
        Cli::parse_from(argv).settings
    }

    #[test]
    fn flags_win_over_the_environment_over_the_profile_over_the_defaults() {
        let profile = Profile::parse(
            "llm:\n  model: openai/local\n  temperature: 0.5\nauto_run: false\nallow: [ls]\nlimits:\n  max_processes: 10\n  max_memory_bytes: 1000000\n",
            "p.yaml",
        )
        .unwrap();
        let layers = Layers {
            profile: Some(profile),
            environment: env_patch(|k| (k == "DISABLE_TELEMETRY").then(|| "true".to_owned())),
            flags: args(&[
                "oi",
                "-y",
                "-m",
                "gpt-4o",
                "--allow",
                "git status",
                "--max-processes",
                "20",
            ])
            .patch(),
            ..Layers::default()
        };
        let settings = layers.settings();
        assert_eq!(settings.llm.model, "gpt-4o", "the flag wins");
        assert_eq!(
            settings.llm.temperature, 0.5,
            "the profile holds where no flag is given"
        );
        assert!(settings.auto_run && settings.disable_telemetry);
        assert_eq!(
            settings.allow,
            ["ls", "git status"],
            "--allow adds to the profile's rules"
        );
        assert_eq!(settings.computer.limits.max_processes, Some(20));
        assert_eq!(settings.computer.limits.max_memory_bytes, Some(1_000_000));
    }

    #[test]
    fn the_originals_model_flags_pick_packaged_profiles_and_flags_still_win() {
        for (flag, model) in [
            ("--llama3", "ollama/llama3"),
            ("--codestral", "ollama/codestral"),
            ("--assistant", "gpt-4o"),
        ] {
            let args = args(&["oi", flag]);
            let profile = profiles::load(args.profile_name(), None).unwrap();
            assert!(profile.notes.is_empty(), "{flag}: {:?}", profile.notes);
            let layers = Layers {
                profile: Some(profile),
                flags: args.patch(),
                ..Layers::default()
            };
            let settings = layers.settings();
            assert_eq!(settings.llm.model, model, "{flag}");
            assert!(
                !settings.auto_run,
                "{flag} does not run code without asking"
            );
        }
        let args = args(&["oi", "--llama3", "-m", "ollama/llama3.1"]);
        let layers = Layers {
            profile: Some(profiles::load(args.profile_name(), None).unwrap()),
            flags: args.patch(),
            ..Layers::default()
        };
        assert_eq!(layers.settings().llm.model, "ollama/llama3.1");
        assert_eq!(layers.settings().llm.supports_functions, Some(false));
    }

    #[test]
    fn speak_messages_is_accepted_and_explained() {
        let spoken = args(&["oi", "-sp"]);
        assert!(spoken.speak_messages);
        assert_eq!(
            spoken.patch(),
            args(&["oi"]).patch(),
            "it changes no setting"
        );
        let notes = spoken.notes();
        assert_eq!(notes.len(), 1);
        assert!(
            notes[0].contains("does not read messages aloud"),
            "{notes:?}"
        );
        assert!(args(&["oi", "--speak_messages"]).speak_messages);
    }

    #[test]
    fn absent_flags_change_nothing() {
        let settings = Layers {
            flags: args(&["oi"]).patch(),
            ..Layers::default()
        }
        .settings();
        assert_eq!(settings, Settings::default());
    }

    #[test]
    fn a_profiles_conversation_file_is_runtime_state_not_a_setting() {
        let profile = Profile::parse(
            "conversation_filename: kept.json
",
            "p.yaml",
        )
        .unwrap();
        assert!(
            profile.note_lines().is_empty(),
            "{:?}",
            profile.note_lines()
        );
        let layers = Layers {
            profile: Some(profile),
            ..Layers::default()
        };
        assert_eq!(layers.settings(), Settings::default());
        assert_eq!(
            layers.runtime().conversation_filename.as_deref(),
            Some("kept.json")
        );
        assert_eq!(Layers::default().runtime(), RuntimeState::default());
    }
}
