//! One patch type for every layer of settings: profiles, the environment, flags and network
//! clients all produce a [`SettingsPatch`], and [`Settings::apply`] lays it over what was
//! there. A field left out (`None`) changes nothing; for the optional settings (`api_base`,
//! …) a `null` sets them back to "none".

use std::path::PathBuf;

use serde::{Deserialize, Deserializer, Serialize};

use super::computer::{ResourceLimits, SandboxMode, SandboxPolicy};
use super::{LlmSettings, OutputSender, SafeMode, Settings};
use crate::policy::ApprovalPolicy;

/// `Some(None)` for an explicit `null`, `Some(Some(v))` for a value; a missing key stays
/// `None` through `#[serde(default)]`.
fn nullable<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

/// Changes to the model settings.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LlmPatch {
    /// The model name.
    pub model: Option<String>,
    /// Sampling temperature.
    pub temperature: Option<f64>,
    /// Whether the model takes the `execute` tool (`null`: decide from the model).
    #[serde(deserialize_with = "nullable", skip_serializing_if = "Option::is_none")]
    pub supports_functions: Option<Option<bool>>,
    /// Whether the model takes images (`null`: decide from the model).
    #[serde(deserialize_with = "nullable", skip_serializing_if = "Option::is_none")]
    pub supports_vision: Option<Option<bool>>,
    /// Appended to the system message in text mode.
    pub execution_instructions: Option<String>,
    /// Context window in tokens.
    #[serde(deserialize_with = "nullable", skip_serializing_if = "Option::is_none")]
    pub context_window: Option<Option<u64>>,
    /// Maximum tokens in a reply.
    #[serde(deserialize_with = "nullable", skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<Option<u64>>,
    /// Base URL of the provider's API.
    #[serde(deserialize_with = "nullable", skip_serializing_if = "Option::is_none")]
    pub api_base: Option<Option<String>>,
    /// The provider's API key.
    #[serde(deserialize_with = "nullable", skip_serializing_if = "Option::is_none")]
    pub api_key: Option<Option<String>>,
    /// Azure-style API version.
    #[serde(deserialize_with = "nullable", skip_serializing_if = "Option::is_none")]
    pub api_version: Option<Option<String>>,
    /// Spending cap in USD.
    #[serde(deserialize_with = "nullable", skip_serializing_if = "Option::is_none")]
    pub max_budget: Option<Option<f64>>,
}

/// `sandbox:` as a profile writes it: a mode name, or the whole policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SandboxSpec {
    /// `sandbox: workspace`.
    Mode(SandboxMode),
    /// `sandbox: {mode: workspace, network: false}`.
    Policy(SandboxPatch),
}

/// Changes to the sandbox policy.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxPatch {
    /// What code may write.
    pub mode: Option<SandboxMode>,
    /// Whether code may use the network.
    pub network: Option<bool>,
    /// Run unsandboxed (saying so) where the kernel cannot enforce the policy.
    pub allow_unsandboxed_fallback: Option<bool>,
    /// The directory `workspace` mode lets code write in.
    pub workspace: Option<PathBuf>,
    /// Variables the code may see although oi withholds them (added to those already passed).
    pub pass_env: Option<Vec<String>>,
    /// Let workspace code write `.git/config` and `.git/hooks`.
    pub git_writable: Option<bool>,
}

/// Changes to the resource limits, one limit at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LimitsPatch {
    /// The most processes a session may have at once.
    pub max_processes: Option<u32>,
    /// The most memory each process of a session may use, in bytes.
    pub max_memory_bytes: Option<u64>,
    /// The most CPU seconds a session process may use.
    pub max_cpu_seconds: Option<u64>,
}

impl LimitsPatch {
    fn apply(&self, limits: &mut ResourceLimits) {
        if self.max_processes.is_some() {
            limits.max_processes = self.max_processes;
        }
        if self.max_memory_bytes.is_some() {
            limits.max_memory_bytes = self.max_memory_bytes;
        }
        if self.max_cpu_seconds.is_some() {
            limits.max_cpu_seconds = self.max_cpu_seconds;
        }
    }
}

/// Changes to the computer's settings (the `computer:` section of a profile).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct ComputerPatch {
    /// Offer the `computer` Python API (the original's key; kept at the top level too).
    pub import_computer_api: Option<bool>,
    /// What code may write and reach.
    pub sandbox: Option<SandboxSpec>,
    /// Limits for each language session.
    pub limits: Option<LimitsPatch>,
    /// Variables the code may see although oi withholds them.
    pub pass_env: Option<Vec<String>>,
    /// The original's `computer.offline`, `computer.verbose`: same as the top-level keys.
    pub offline: Option<bool>,
    /// See `offline`.
    pub verbose: Option<bool>,
}

/// Changes to [`Settings`]; every field is optional. Profiles, flags, the environment and
/// network clients each produce one.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SettingsPatch {
    /// Run code without asking.
    pub auto_run: Option<bool>,
    /// Characters of console output kept in the stored conversation.
    pub max_output: Option<usize>,
    /// Loop mode.
    #[serde(rename = "loop")]
    pub loop_mode: Option<bool>,
    /// The hidden loop message.
    pub loop_message: Option<String>,
    /// Phrases that end loop mode.
    pub loop_breakers: Option<Vec<String>>,
    /// The system message.
    pub system_message: Option<String>,
    /// Appended to the system message.
    pub custom_instructions: Option<String>,
    /// Applied to the last user message.
    pub user_message_template: Option<String>,
    /// Apply the user template to every user message.
    pub always_apply_user_message_template: Option<bool>,
    /// Text-mode wrapper for code output.
    pub code_output_template: Option<String>,
    /// Text-mode message for code that printed nothing.
    pub empty_code_output_template: Option<String>,
    /// Who "says" code output in text mode.
    pub code_output_sender: Option<OutputSender>,
    /// No network but the model provider.
    pub offline: Option<bool>,
    /// Log the requests and the loop's decisions.
    pub verbose: Option<bool>,
    /// Log even more.
    pub debug: Option<bool>,
    /// Safe mode.
    pub safe_mode: Option<SafeMode>,
    /// Shrink large images before sending them.
    pub shrink_images: Option<bool>,
    /// Save the conversation after each turn.
    pub conversation_history: Option<bool>,
    /// Where conversations are saved.
    #[serde(deserialize_with = "nullable", skip_serializing_if = "Option::is_none")]
    pub conversation_history_path: Option<Option<PathBuf>>,
    /// The file name of this conversation: runtime state, not a setting
    /// ([`RuntimeState::apply`](crate::runtime::RuntimeState::apply) takes it; [`Settings::apply`]
    /// does not).
    #[serde(deserialize_with = "nullable", skip_serializing_if = "Option::is_none")]
    pub conversation_filename: Option<Option<String>>,
    /// Offer the `computer` Python API.
    pub import_computer_api: Option<bool>,
    /// Plain-text display in the CLI.
    pub plain_text_display: Option<bool>,
    /// Highlight the running line in the CLI.
    pub highlight_active_line: Option<bool>,
    /// Accept `"""` multi-line input in the CLI.
    pub multi_line: Option<bool>,
    /// Disable telemetry (oi never sends any).
    pub disable_telemetry: Option<bool>,
    /// How code blocks are approved.
    pub approval_policy: Option<ApprovalPolicy>,
    /// Allow rules (replace the list).
    pub allow: Option<Vec<String>>,
    /// Deny rules (replace the list).
    pub deny: Option<Vec<String>>,
    /// The hard-deny list on or off.
    pub hard_deny: Option<bool>,
    /// Model settings.
    pub llm: Option<LlmPatch>,
    /// The computer's settings.
    pub computer: Option<ComputerPatch>,
    /// The sandbox (also accepted at the top level, as `oi`'s profiles write it).
    pub sandbox: Option<SandboxSpec>,
    /// Resource limits (also accepted at the top level).
    pub limits: Option<LimitsPatch>,
    /// Variables passed through to the code (also accepted at the top level).
    pub pass_env: Option<Vec<String>>,
    /// Allow rules added to those already set (what `--allow` flags do).
    #[serde(skip)]
    pub more_allow: Vec<String>,
    /// Deny rules added to those already set (what `--deny` flags do).
    #[serde(skip)]
    pub more_deny: Vec<String>,
}

fn set<T: Clone>(target: &mut T, value: &Option<T>) {
    if let Some(value) = value {
        *target = value.clone();
    }
}

impl LlmPatch {
    fn apply(&self, llm: &mut LlmSettings) {
        set(&mut llm.model, &self.model);
        set(&mut llm.temperature, &self.temperature);
        set(&mut llm.supports_functions, &self.supports_functions);
        set(&mut llm.supports_vision, &self.supports_vision);
        set(
            &mut llm.execution_instructions,
            &self.execution_instructions,
        );
        set(&mut llm.context_window, &self.context_window);
        set(&mut llm.max_tokens, &self.max_tokens);
        set(&mut llm.api_base, &self.api_base);
        set(&mut llm.api_key, &self.api_key);
        set(&mut llm.api_version, &self.api_version);
        set(&mut llm.max_budget, &self.max_budget);
    }
}

impl SandboxSpec {
    fn apply(&self, policy: &mut SandboxPolicy) {
        match self {
            SandboxSpec::Mode(mode) => policy.mode = *mode,
            SandboxSpec::Policy(patch) => {
                set(&mut policy.mode, &patch.mode);
                set(&mut policy.network, &patch.network);
                set(
                    &mut policy.allow_unsandboxed_fallback,
                    &patch.allow_unsandboxed_fallback,
                );
                // Canonical once, when set: sessions open it later without following links.
                if let Some(workspace) = &patch.workspace {
                    policy.workspace = crate::settings::computer::normalized(workspace);
                }
                set(&mut policy.git_writable, &patch.git_writable);
                add_names(&mut policy.pass_env, patch.pass_env.as_deref());
            }
        }
    }
}

fn add_names(list: &mut Vec<String>, names: Option<&[String]>) {
    for name in names.unwrap_or_default() {
        if !list.contains(name) {
            list.push(name.clone());
        }
    }
}

impl Settings {
    /// Lays `patch` over these settings: every field it sets replaces the current value
    /// (lists of allow/deny rules are replaced; `pass_env` names are added).
    pub fn apply(&mut self, patch: &SettingsPatch) {
        set(&mut self.auto_run, &patch.auto_run);
        set(&mut self.max_output, &patch.max_output);
        set(&mut self.loop_mode, &patch.loop_mode);
        set(&mut self.loop_message, &patch.loop_message);
        set(&mut self.loop_breakers, &patch.loop_breakers);
        set(&mut self.system_message, &patch.system_message);
        set(&mut self.custom_instructions, &patch.custom_instructions);
        set(
            &mut self.user_message_template,
            &patch.user_message_template,
        );
        set(
            &mut self.always_apply_user_message_template,
            &patch.always_apply_user_message_template,
        );
        set(&mut self.code_output_template, &patch.code_output_template);
        set(
            &mut self.empty_code_output_template,
            &patch.empty_code_output_template,
        );
        set(&mut self.code_output_sender, &patch.code_output_sender);
        set(&mut self.offline, &patch.offline);
        set(&mut self.verbose, &patch.verbose);
        set(&mut self.debug, &patch.debug);
        set(&mut self.safe_mode, &patch.safe_mode);
        set(&mut self.shrink_images, &patch.shrink_images);
        set(&mut self.conversation_history, &patch.conversation_history);
        set(
            &mut self.conversation_history_path,
            &patch.conversation_history_path,
        );
        set(&mut self.import_computer_api, &patch.import_computer_api);
        set(&mut self.plain_text_display, &patch.plain_text_display);
        set(
            &mut self.highlight_active_line,
            &patch.highlight_active_line,
        );
        set(&mut self.multi_line, &patch.multi_line);
        set(&mut self.disable_telemetry, &patch.disable_telemetry);
        set(&mut self.approval_policy, &patch.approval_policy);
        set(&mut self.allow, &patch.allow);
        set(&mut self.deny, &patch.deny);
        set(&mut self.hard_deny, &patch.hard_deny);
        if let Some(llm) = &patch.llm {
            llm.apply(&mut self.llm);
        }
        let computer = &mut self.computer;
        if let Some(patch) = &patch.computer {
            set(&mut self.import_computer_api, &patch.import_computer_api);
            set(&mut self.offline, &patch.offline);
            set(&mut self.verbose, &patch.verbose);
            if let Some(sandbox) = &patch.sandbox {
                sandbox.apply(&mut computer.sandbox);
            }
            if let Some(limits) = &patch.limits {
                limits.apply(&mut computer.limits);
            }
            add_names(&mut computer.sandbox.pass_env, patch.pass_env.as_deref());
        }
        if let Some(sandbox) = &patch.sandbox {
            sandbox.apply(&mut computer.sandbox);
        }
        if let Some(limits) = &patch.limits {
            limits.apply(&mut computer.limits);
        }
        add_names(&mut computer.sandbox.pass_env, patch.pass_env.as_deref());
        add_names(&mut self.allow, Some(&patch.more_allow));
        add_names(&mut self.deny, Some(&patch.more_deny));
    }

    /// These settings with `patch` laid over them.
    pub fn patched(&self, patch: &SettingsPatch) -> Settings {
        let mut settings = self.clone();
        settings.apply(patch);
        settings
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn a_patch_sets_what_it_names_and_nothing_else() {
        let patch: SettingsPatch = serde_json::from_str(
            r#"{"auto_run": true, "llm": {"model": "gpt-4o-mini", "api_base": null},
                "sandbox": "workspace", "limits": {"max_processes": 8}, "pass_env": ["HF_TOKEN"],
                "computer": {"import_computer_api": true}}"#,
        )
        .unwrap();
        let mut settings = Settings::default();
        settings.llm.api_base = Some("http://old/v1".into());
        settings.apply(&patch);
        let mut expected = Settings {
            auto_run: true,
            import_computer_api: true,
            ..Settings::default()
        };
        expected.llm.model = "gpt-4o-mini".into();
        expected.llm.api_base = None;
        expected.computer.sandbox.mode = SandboxMode::Workspace;
        expected.computer.limits.max_processes = Some(8);
        expected.computer.sandbox.pass_env = vec!["HF_TOKEN".into()];
        assert_eq!(settings, expected);
        assert_eq!(
            Settings::default().patched(&SettingsPatch::default()),
            Settings::default()
        );
    }

    #[test]
    fn every_setting_has_a_patch_field() {
        let settings = serde_json::to_value(Settings::default()).unwrap();
        let patch: SettingsPatch = serde_json::from_value(settings.clone()).unwrap();
        assert_eq!(Settings::default().patched(&patch), Settings::default());
        // A patch carrying every setting reproduces them exactly.
        let mut changed = Settings {
            auto_run: true,
            multi_line: false,
            ..Settings::default()
        };
        changed.llm.context_window = Some(1234);
        changed.computer.limits.max_cpu_seconds = Some(9);
        let patch: SettingsPatch =
            serde_json::from_value(serde_json::to_value(&changed).unwrap()).unwrap();
        assert_eq!(Settings::default().patched(&patch), changed);
        // No setting is missing from the patch type: each one comes back out of it.
        let back = serde_json::to_value(&patch).unwrap();
        for (key, value) in settings.as_object().unwrap() {
            assert!(
                !back[key].is_null() || value.is_null(),
                "SettingsPatch has no `{key}`"
            );
        }
        for key in serde_json::to_value(LlmSettings::default())
            .unwrap()
            .as_object()
            .unwrap()
            .keys()
        {
            let llm = &back["llm"];
            let optional = matches!(
                key.as_str(),
                "supports_functions"
                    | "supports_vision"
                    | "context_window"
                    | "max_tokens"
                    | "api_base"
                    | "api_key"
                    | "api_version"
                    | "max_budget"
            );
            assert!(!llm[key].is_null() || optional, "LlmPatch has no `{key}`");
        }
    }
}
