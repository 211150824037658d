//! Providers by the names users type (`groq/…`, `gemini/…`, …) through the router, against the
//! scripted server standing in for each provider's API: the path, the headers and the body each
//! one gets, and the key read from the provider's own variable.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use futures::StreamExt;
use oi_core::{
    Kind, LanguageModel, LlmSettings, Message, ModelError, ModelRequest, Role, Settings,
};
use oi_llm::provider_table::{PROVIDERS, TableWire};
use oi_llm::{Env, provider_for};
use oi_testkit::{Reply, Script, ScriptedServer};
use serde_json::{Value, json};

fn request(model: &str) -> ModelRequest {
    ModelRequest {
        messages: vec![
            Message::new(Role::System, Kind::Message, "You are a test."),
            Message::user("What is 2+2?"),
        ],
        languages: vec!["python".into(), "shell".into()],
        llm: LlmSettings {
            model: model.to_owned(),
            ..LlmSettings::default()
        },
        templates: Settings::default().templates(),
        tools: Vec::new(),
    }
}

/// The path of a provider's default base URL (`https://api.groq.com/openai/v1` → `/openai/v1`).
fn base_path(base: &str) -> &str {
    let after_scheme = base.split_once("://").map_or(base, |(_, rest)| rest);
    after_scheme.find('/').map_or("", |i| &after_scheme[i..])
}

/// Model names users type, one per provider.
fn example_model(prefix: &str) -> String {
    let name = match prefix {
        "openai" => "gpt-4o",
        "gemini" => "gemini-1.5-flash",
        "groq" => "llama-3.1-70b-versatile",
        "mistral" => "mistral-large-latest",
        "codestral" => "codestral-latest",
        "openrouter" => "anthropic/claude-3.5-sonnet",
        "deepseek" => "deepseek-chat",
        "together_ai" => "meta-llama/Llama-3.3-70B-Instruct-Turbo",
        "fireworks_ai" => "llama-v3p1-70b-instruct",
        "xai" => "grok-3",
        "perplexity" => "sonar-pro",
        "cerebras" => "llama-3.3-70b",
        "huggingface" => "together/deepseek-ai/DeepSeek-R1",
        "cohere" => "command-r-plus",
        "lm_studio" => "qwen2.5-7b-instruct",
        "hosted_vllm" => "meta-llama/Llama-3.1-8B-Instruct",
        "ollama" | "ollama_chat" => "llama3.1:8b",
        _ => "some-model",
    };
    format!("{prefix}/{name}")
}

async fn one_reply(
    model: &dyn LanguageModel,
    request: ModelRequest,
) -> Vec<Result<oi_core::ModelDelta, ModelError>> {
    tokio::time::timeout(Duration::from_secs(20), model.stream(request).collect())
        .await
        .expect("the reply ended")
}

#[tokio::test]
async fn each_provider_gets_its_path_its_key_and_its_model_name() {
    let mut seen = serde_json::Map::new();
    for provider in PROVIDERS {
        if provider.wire != TableWire::OpenAiCompatible {
            continue;
        }
        let server = ScriptedServer::start(Script::new([Reply::text("4")]))
            .await
            .unwrap();
        let root = format!("http://{}", server.addr());
        let mut env = Env::empty().with("OPENAI_API_KEY", "sk-openai-must-not-leak");
        let key_var = provider.key_vars.first().copied();
        if let Some(key_var) = key_var {
            env = env.with(key_var, &format!("key-from-{key_var}"));
        }
        let base_var = provider.base_vars.first().copied().unwrap();
        let base = match provider.prefix {
            "ollama" | "ollama_chat" | "azure" => root.clone(),
            _ => format!(
                "{root}{}",
                base_path(provider.base_url.unwrap_or("http://x/v1"))
            ),
        };
        env = env.with(base_var, &base);
        let model_name = example_model(provider.prefix);
        let model = provider_for(&request(&model_name).llm, env).unwrap();
        let replies = one_reply(model.as_ref(), request(&model_name)).await;
        assert!(
            replies.iter().all(Result::is_ok),
            "{}: {replies:?}",
            provider.prefix
        );
        let sent = server.requests().pop().expect("one request");
        let auth: Vec<(String, String)> = sent
            .headers
            .iter()
            .filter(|(name, _)| name == "authorization" || name == "api-key")
            .cloned()
            .collect();
        let body = &sent.body;
        seen.insert(
            model_name,
            json!({
                "path": sent.path,
                "query": sent.query,
                "auth": auth,
                "model": body["model"],
                "tools": body.get("tools").is_some(),
                "messages": body["messages"].as_array().map_or(0, Vec::len),
                "stream": body["stream"],
            }),
        );
        if let Some(key_var) = key_var {
            let expected = format!("key-from-{key_var}");
            assert!(
                auth.iter().any(|(_, value)| value.ends_with(&expected)),
                "{}: {auth:?}",
                provider.prefix
            );
        }
        assert!(
            !sent
                .headers
                .iter()
                .any(|(_, v)| v.contains("sk-openai-must-not-leak")),
            "{}: OpenAI's key went to another provider",
            provider.prefix
        );
    }
    insta::assert_json_snapshot!(Value::Object(seen));
}

#[tokio::test]
async fn a_provider_body_is_the_openai_body_with_its_model_name() {
    let server = ScriptedServer::start(Script::new([Reply::text("4")]))
        .await
        .unwrap();
    let env = Env::empty().with("GROQ_API_KEY", "gsk_test").with(
        "GROQ_API_BASE",
        &format!("http://{}/openai/v1", server.addr()),
    );
    let model = provider_for(&request("groq/llama-3.1-70b-versatile").llm, env).unwrap();
    let _ = one_reply(model.as_ref(), request("groq/llama-3.1-70b-versatile")).await;
    let sent = server.requests().pop().unwrap();
    assert_eq!(sent.path, "/openai/v1/chat/completions");
    insta::assert_json_snapshot!(sent.body);
}

#[test]
fn default_addresses_and_key_variables() {
    let mut table = String::new();
    for provider in PROVIDERS {
        let wire = match provider.wire {
            TableWire::OpenAiCompatible => "openai-compatible",
            TableWire::Anthropic => "anthropic",
            TableWire::Unsupported(_) => "unsupported",
        };
        table.push_str(&format!(
            "{:<12} {:<18} {:<56} {}\n",
            provider.prefix,
            wire,
            provider.base_url.unwrap_or("(--api_base)"),
            provider.key_vars.join(" ")
        ));
    }
    insta::assert_snapshot!(table);
}

#[tokio::test]
async fn a_missing_key_names_the_variable_and_nothing_is_sent() {
    for (model, variable) in [
        ("groq/llama3-8b-8192", "GROQ_API_KEY"),
        ("gemini/gemini-1.5-flash", "GEMINI_API_KEY"),
        ("openrouter/openai/gpt-4o", "OPENROUTER_API_KEY"),
        ("xai/grok-3", "XAI_API_KEY"),
    ] {
        let provider = provider_for(&request(model).llm, Env::empty()).unwrap();
        let replies = one_reply(provider.as_ref(), request(model)).await;
        match replies.as_slice() {
            [Err(ModelError::Config(text))] => {
                assert!(text.contains(variable), "{model}: {text}");
                assert!(!text.contains('\n'), "{text}");
            }
            other => panic!("{model}: {other:?}"),
        }
    }
}

#[test]
fn unknown_and_unsupported_prefixes_are_one_line_errors() {
    let error = provider_for(&request("cohere2/command").llm, Env::empty())
        .err()
        .unwrap()
        .to_string();
    assert!(!error.contains('\n'), "{error}");
    for prefix in [
        "groq",
        "gemini",
        "mistral",
        "openrouter",
        "deepseek",
        "together_ai",
    ] {
        assert!(error.contains(prefix), "{error}");
    }
    let bedrock = provider_for(
        &request("bedrock/anthropic.claude-3-5-sonnet").llm,
        Env::empty(),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(
        bedrock.contains("not supported") && bedrock.contains("--api_base"),
        "{bedrock}"
    );
}

#[tokio::test]
async fn an_ollama_model_that_is_not_pulled_is_said_as_a_pull() {
    let body = r#"{"error":{"message":"model \"llama9\" not found, try pulling it first","type":"api_error"}}"#;
    let server = ScriptedServer::start(Script::new([Reply::status(404, body)]))
        .await
        .unwrap();
    let env = Env::empty().with("OLLAMA_HOST", &format!("http://{}", server.addr()));
    let model = provider_for(&request("ollama/llama9").llm, env).unwrap();
    let replies = one_reply(model.as_ref(), request("ollama/llama9")).await;
    match replies.as_slice() {
        [Err(ModelError::Config(text))] => {
            assert!(text.contains("ollama pull llama9"), "{text}");
        }
        other => panic!("{other:?}"),
    }
}
