//! Snapshots of the exact request bodies sent in both modes.
#![expect(clippy::unwrap_used, reason = "test helpers fail loudly")]

use futures::StreamExt;
use oi_core::{Kind, LanguageModel, LlmSettings, Message, ModelRequest, Role, Settings};
use oi_llm::{Env, OpenAiCompatible, RetryPolicy};
use oi_testkit::{Reply, Script, ScriptedServer};

fn history() -> Vec<Message> {
    vec![
        Message::new(Role::System, Kind::Message, "You are a test."),
        Message::user("  Compute 2+2 and list files.  "),
        Message::assistant("Sure, computing."),
        Message::code("python", "print(2+2)"),
        Message::console_output("4\n"),
        Message::assistant("Now the files."),
        Message::code("shell", "ls empty_dir"),
        Message::console_output(""),
        Message::user("Thanks!"),
    ]
}

fn with_images() -> Vec<Message> {
    vec![
        Message::new(Role::System, Kind::Message, "You are a test."),
        Message::user("What is in this screenshot?"),
        Message::new(Role::User, Kind::Image, "AAAA").with_format("base64.png"),
        Message::code("python", "screenshot()"),
        Message::console_output(""),
        Message::new(Role::Computer, Kind::Image, "BBBB").with_format("base64.jpeg"),
    ]
}

async fn body_sent(model: &str) -> serde_json::Value {
    body_sent_with(model, history()).await
}

async fn body_sent_with(model: &str, messages: Vec<Message>) -> serde_json::Value {
    let server = ScriptedServer::start(Script::new([Reply::text("ok")]))
        .await
        .unwrap();
    let llm = LlmSettings {
        model: model.to_owned(),
        api_base: Some(server.base_url()),
        api_key: Some("sk-test".into()),
        max_tokens: Some(1000),
        ..LlmSettings::default()
    };
    let request = ModelRequest {
        messages,
        languages: vec!["python".into(), "shell".into()],
        llm,
        templates: Settings::default().templates(),
        tools: Vec::new(),
    };
    let provider = OpenAiCompatible::new()
        .with_env(Env::empty())
        .with_retry(RetryPolicy::none());
    let _: Vec<_> = provider.stream(request).collect().await;
    server.requests().remove(0).body
}

#[tokio::test]
async fn tool_mode_request_body() {
    insta::assert_json_snapshot!(body_sent("gpt-4o").await);
}

#[tokio::test]
async fn text_mode_request_body() {
    insta::assert_json_snapshot!(body_sent("openai/local").await);
}

#[tokio::test]
async fn images_go_as_data_urls_to_vision_models() {
    insta::assert_json_snapshot!(body_sent_with("gpt-4o", with_images()).await);
}

#[tokio::test]
async fn images_are_left_out_with_a_note_for_text_only_models() {
    insta::assert_json_snapshot!(body_sent_with("gpt-3.5-turbo", with_images()).await);
}

/// A PNG of noise (incompressible), `side` pixels square, as base64.
fn noisy_png(side: u32) -> String {
    use base64::Engine as _;
    let mut state: u32 = 0x9e37_79b9;
    let image = image::RgbImage::from_fn(side, side, |_, _| {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        let [r, g, b, _] = state.to_le_bytes();
        image::Rgb([r, g, b])
    });
    let mut out = Vec::new();
    image
        .write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
        .unwrap();
    base64::engine::general_purpose::STANDARD.encode(out)
}

/// The image URLs of a request body's messages.
fn image_urls(body: &serde_json::Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_array())
        .flatten()
        .filter_map(|part| part.pointer("/image_url/url").and_then(|u| u.as_str()))
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn an_image_over_five_mib_is_shrunk_unless_shrink_images_is_off() {
    let big = noisy_png(1200);
    assert!(big.len() > 5 * 1024 * 1024);
    let messages = vec![
        Message::user("What is in this picture?"),
        Message::new(Role::User, Kind::Image, big.clone()).with_format("base64.png"),
    ];
    let body = body_sent_with("gpt-4o", messages.clone()).await;
    let urls = image_urls(&body);
    assert_eq!(
        urls.len(),
        1,
        "{}",
        &body.to_string()[..body.to_string().len().min(600)]
    );
    assert!(urls[0].starts_with("data:image/png;base64,"));
    assert!(urls[0].len() <= 5 * 1024 * 1024, "{}", urls[0].len());
    assert!(
        urls[0].len() > 4 * 1024 * 1024,
        "not shrunk more than needed"
    );

    let server = ScriptedServer::start(Script::new([Reply::text("ok")]))
        .await
        .unwrap();
    let mut templates = Settings::default().templates();
    templates.shrink_images = false;
    let request = ModelRequest {
        messages,
        languages: vec!["python".into()],
        llm: LlmSettings {
            model: "gpt-4o".into(),
            api_base: Some(server.base_url()),
            api_key: Some("sk-test".into()),
            ..LlmSettings::default()
        },
        templates,
        tools: Vec::new(),
    };
    let provider = OpenAiCompatible::new()
        .with_env(Env::empty())
        .with_retry(RetryPolicy::none());
    let _: Vec<_> = provider.stream(request).collect().await;
    let body = server.requests().remove(0).body;
    assert_eq!(
        image_urls(&body),
        vec![format!("data:image/png;base64,{big}")]
    );
}
