//! What the tests of the real embedded model share: the model (loaded once per test binary,
//! or skipped with the reason printed when its file is absent), requests, replies, figures.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use futures::StreamExt;
use oi_core::{Kind, LanguageModel, Message, ModelDelta, ModelRequest, Role, Settings};
use oi_llm::Env;
use oi_llm::local::{GenerationStats, LocalModel, LocalProvider};
use oi_llm::local_model::default_model_path;

/// The model, loaded once for the whole test binary (as a program loads it once).
static MODEL: OnceLock<Option<Arc<LocalModel>>> = OnceLock::new();

/// The shared model, or `None` (with the reason printed) when its file is absent.
pub fn model() -> Option<Arc<LocalModel>> {
    MODEL
        .get_or_init(|| {
            let path = default_model_path(&Env::from_process()).expect("a data directory");
            if !path.is_file() {
                eprintln!(
                    "SKIPPED: the local model {} is absent; run `cargo xtask fetch-model` (or set OI_MODEL_PATH)",
                    path.display()
                );
                return None;
            }
            let model = LocalModel::load(&path).unwrap();
            eprintln!("model load: {:.2} s", model.load_time().as_secs_f64());
            Some(model)
        })
        .clone()
}

/// oi's system message for small local models, as `oi --local` sends it: the packaged `local`
/// profile's `system_message` (the one copy of it).
pub fn system_message() -> String {
    let profile: serde_norway::Value =
        serde_norway::from_str(include_str!("../../../oi-config/profiles/local.yaml")).unwrap();
    profile["system_message"]
        .as_str()
        .expect("the local profile has a system_message")
        .to_owned()
}

/// The question the tests ask.
pub const QUESTION: &str = "Use Python to compute 239023*79043, then tell me the result.";
/// Its answer.
pub const ANSWER: &str = "18893094989";

/// A request of `messages` (after oi's local system message) at temperature 0.
pub fn request(messages: Vec<Message>, max_tokens: u64) -> ModelRequest {
    let settings = Settings::default();
    let mut llm = settings.llm.clone();
    llm.model = "local".to_owned();
    llm.temperature = 0.0;
    llm.max_tokens = Some(max_tokens);
    let mut all = vec![Message::new(Role::System, Kind::Message, system_message())];
    all.extend(messages);
    ModelRequest {
        messages: all,
        languages: vec!["python".to_owned()],
        llm,
        templates: settings.templates(),
        tools: Vec::new(),
    }
}

/// The first request of the "compute" turn.
pub fn first_request() -> ModelRequest {
    request(vec![Message::user(QUESTION)], 60)
}

/// The reply, delta by delta, read to the end (at most 5 minutes).
pub async fn reply(provider: &LocalProvider, request: ModelRequest) -> Vec<ModelDelta> {
    let stream = provider.stream(request);
    let deltas = tokio::time::timeout(Duration::from_secs(300), stream.collect::<Vec<_>>())
        .await
        .expect("the reply came within 5 minutes");
    deltas.into_iter().map(|d| d.expect("no error")).collect()
}

/// The code of a reply, joined.
pub fn code_of(deltas: &[ModelDelta]) -> String {
    deltas
        .iter()
        .filter_map(|d| match d {
            ModelDelta::Code { code, .. } => Some(code.as_str()),
            _ => None,
        })
        .collect()
}

/// The figures of the provider's `sequence`-th reply (waits up to 60 s for the worker to
/// finish it: a reply read to its closing fence ends before the worker notices).
pub fn stats(provider: &LocalProvider, sequence: u64) -> GenerationStats {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(stats) = provider.last_stats().filter(|s| s.sequence >= sequence) {
            assert_eq!(stats.sequence, sequence, "a reply's figures were skipped");
            return stats;
        }
        assert!(Instant::now() < deadline, "reply {sequence} did not finish");
        std::thread::sleep(Duration::from_millis(10));
    }
}
