//! The model provider, chosen on first use and chosen again when the provider variables of the
//! process change (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, …), as the original reads them on
//! every request: a script may set `os.environ[...]` after `import interpreter`.

use std::sync::{Arc, Mutex, PoisonError};

use oi_core::{LanguageModel, LlmSettings, ModelRequest, ModelStream};

/// A provider, built lazily from the process environment.
#[derive(Default)]
pub struct LiveModel {
    current: Mutex<Option<(oi_llm::Env, Arc<dyn LanguageModel>)>>,
}

impl LiveModel {
    /// The provider for `llm` and the environment as it is now.
    fn provider(&self, llm: &LlmSettings) -> Arc<dyn LanguageModel> {
        let env = oi_llm::Env::from_process();
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((seen, provider)) = current.as_ref() {
            if *seen == env {
                return provider.clone();
            }
        }
        // Settings that cannot work give a model whose first request says why.
        let provider = oi_llm::provider_for(llm, env.clone()).unwrap_or_else(oi_llm::unavailable);
        *current = Some((env, provider.clone()));
        provider
    }
}

impl LanguageModel for LiveModel {
    fn uses_tool_calls(&self, llm: &LlmSettings) -> bool {
        self.provider(llm).uses_tool_calls(llm)
    }

    fn stream(&self, request: ModelRequest) -> ModelStream {
        self.provider(&request.llm).stream(request)
    }
}
