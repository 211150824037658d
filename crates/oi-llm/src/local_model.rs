//! The embedded local model (`model: local`): which settings select it, where its GGUF file
//! lives, and the errors a user sees when it cannot run. Compiled in every build; the engine
//! itself is in `local` (cargo feature `local`).
//!
//! - `local` runs the default model, Qwen2.5-Coder-0.5B-Instruct Q4_K_M, from
//!   `$OI_MODEL_PATH`, else `<data dir>/open-interpreter/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf`
//!   (`~/.local/share/…` on Linux, `~/Library/Application Support/…` on macOS), which
//!   `cargo xtask fetch-model` downloads and verifies.
//! - `local/PATH` runs any chat GGUF at `PATH` (e.g. `local//models/my.gguf` or `local/~/m.gguf`).
//!
//! The evaluated system prompt is kept between processes in `$OI_CACHE_DIR/prompt-state/`,
//! else `<cache dir>/open-interpreter/prompt-state/` (`~/.cache/…` on Linux,
//! `~/Library/Caches/…` on macOS); see [`prompt_cache_dir`].
//!
//! With `api_base` set, `local` is not embedded: the request goes to that OpenAI-compatible
//! server, as Open Interpreter does.
//!
//! The system message for small local models is written once, in the packaged `local`
//! profile (`crates/oi-config/profiles/local.yaml`), which `oi --local` reads.

use std::path::{Path, PathBuf};

use oi_core::{LlmSettings, ModelError};

use crate::env::Env;

// Compiled in every build (the benchmark and tools use it); the file sits with the engine.
#[path = "local/threads.rs"]
mod threads;

pub use threads::physical_cores;

/// The model name that selects the embedded default model.
pub const LOCAL_MODEL: &str = "local";

/// The default model's file name.
pub const DEFAULT_MODEL_FILE: &str = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf";

/// The sha256 of the default model file.
pub const DEFAULT_MODEL_SHA256: &str =
    "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32";

/// The environment variable overriding where the default model file is.
pub const MODEL_PATH_VAR: &str = "OI_MODEL_PATH";

pub use crate::env::CACHE_DIR_VAR;

/// The context window used for the embedded model when the settings give none (tokens).
pub const DEFAULT_LOCAL_CONTEXT: u64 = 8192;

/// The reply length used for the embedded model when the settings give none (tokens).
pub const DEFAULT_LOCAL_MAX_TOKENS: u64 = 1024;

/// Whether `llm` selects the embedded model: `local` or `local/PATH`, with no `api_base`.
pub fn is_embedded(llm: &LlmSettings) -> bool {
    let has_base = llm
        .api_base
        .as_deref()
        .is_some_and(|b| !b.trim().is_empty());
    !has_base && (llm.model == LOCAL_MODEL || llm.model.starts_with("local/"))
}

/// Where the default model is: `$OI_MODEL_PATH`, else the data directory (module docs).
pub fn default_model_path(env: &Env) -> Option<PathBuf> {
    if let Some(path) = env.get(MODEL_PATH_VAR) {
        return Some(expand_home(path));
    }
    dirs::data_dir().map(|dir| {
        dir.join("open-interpreter")
            .join("models")
            .join(DEFAULT_MODEL_FILE)
    })
}

/// Where the embedded model keeps evaluated system prompts: `$OI_CACHE_DIR/prompt-state`,
/// else `<cache dir>/open-interpreter/prompt-state`; `None` without a cache directory.
pub fn prompt_cache_dir(env: &Env) -> Option<PathBuf> {
    let root = match env.get(CACHE_DIR_VAR) {
        Some(dir) => expand_home(dir),
        None => dirs::cache_dir()?.join("open-interpreter"),
    };
    Some(root.join("prompt-state"))
}

/// The GGUF file `llm` asks for (see [`is_embedded`]).
pub fn model_path(llm: &LlmSettings, env: &Env) -> Result<PathBuf, ModelError> {
    match llm.model.strip_prefix("local/") {
        Some(path) if !path.trim().is_empty() => Ok(expand_home(path.trim())),
        _ => default_model_path(env).ok_or_else(|| {
            ModelError::Config(format!(
                "Cannot find a data directory for the local model: set {MODEL_PATH_VAR} to the model file."
            ))
        }),
    }
}

/// Checks that the model file exists; the error names the command that fetches it.
pub fn check_model_file(path: &Path) -> Result<(), ModelError> {
    if path.is_file() {
        return Ok(());
    }
    Err(ModelError::Config(format!(
        "The local model file {} does not exist: run `cargo xtask fetch-model` to download it (about 480 MB), or set {MODEL_PATH_VAR} to a GGUF chat model.",
        path.display()
    )))
}

/// The error of a build without the `local` feature.
pub fn not_built_error() -> ModelError {
    ModelError::Config(
        "This oi was built without the embedded local model: rebuild with `cargo install --path crates/oi-cli --features local` (needs cmake and libclang), or pass --api_base to use an OpenAI-compatible local server."
            .to_owned(),
    )
}

fn expand_home(path: &str) -> PathBuf {
    match path.strip_prefix("~/") {
        Some(rest) => dirs::home_dir().map_or_else(|| PathBuf::from(path), |home| home.join(rest)),
        None => PathBuf::from(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn llm(model: &str) -> LlmSettings {
        LlmSettings {
            model: model.to_owned(),
            ..LlmSettings::default()
        }
    }

    #[test]
    fn selects_embedded_only_without_base() {
        assert!(is_embedded(&llm("local")));
        assert!(is_embedded(&llm("local//m/x.gguf")));
        assert!(!is_embedded(&llm("openai/local")));
        assert!(!is_embedded(&llm("localhost")));
        let served = LlmSettings {
            api_base: Some("http://localhost:8080/v1".into()),
            ..llm("local")
        };
        assert!(!is_embedded(&served));
    }

    #[test]
    fn paths() {
        let env = Env::empty().with(MODEL_PATH_VAR, "/m/q.gguf");
        assert_eq!(
            model_path(&llm("local"), &env).unwrap(),
            PathBuf::from("/m/q.gguf")
        );
        assert_eq!(
            model_path(&llm("local//x/y.gguf"), &env).unwrap(),
            PathBuf::from("/x/y.gguf")
        );
        let default = default_model_path(&Env::empty()).unwrap();
        assert!(
            default.ends_with("open-interpreter/models/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf")
        );
        let cache = Env::empty().with(CACHE_DIR_VAR, "/c");
        assert_eq!(
            prompt_cache_dir(&cache).unwrap(),
            PathBuf::from("/c/prompt-state")
        );
        assert!(
            prompt_cache_dir(&Env::empty())
                .unwrap()
                .ends_with("open-interpreter/prompt-state")
        );
    }

    #[test]
    fn missing_file_names_the_fetch_command() {
        let error = check_model_file(Path::new("/nonexistent/x.gguf")).unwrap_err();
        assert!(error.to_string().contains("cargo xtask fetch-model"));
    }
}
