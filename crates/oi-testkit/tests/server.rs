//! The scripted server over real HTTP.
#![expect(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "test helpers fail loudly"
)]

use std::time::Duration;

use oi_testkit::{Ending, Reply, Script, ScriptedServer, ToolCall};
use serde_json::{Value, json};

async fn post(server: &ScriptedServer, body: Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{}/chat/completions", server.base_url()))
        .bearer_auth("sk-test")
        .json(&body)
        .send()
        .await
        .expect("send")
}

fn streaming(messages: Value) -> Value {
    json!({ "model": "gpt-4o", "stream": true, "messages": messages })
}

/// The `data:` payloads of an SSE body, in order.
fn data_lines(body: &str) -> Vec<String> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(str::to_owned)
        .collect()
}

fn deltas(body: &str) -> Vec<Value> {
    data_lines(body)
        .iter()
        .filter(|l| *l != "[DONE]")
        .map(|l| serde_json::from_str::<Value>(l).expect("json")["choices"][0].clone())
        .collect()
}

#[tokio::test]
async fn streams_text_in_pieces_with_role_finish_and_done() {
    let server = ScriptedServer::start(Script::new([Reply::text("Hello there").chunked(4)]))
        .await
        .unwrap();
    let response = post(
        &server,
        streaming(json!([{"role": "user", "content": "hi"}])),
    )
    .await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let body = response.text().await.unwrap();
    let lines = data_lines(&body);
    assert_eq!(lines.last().map(String::as_str), Some("[DONE]"));
    let choices = deltas(&body);
    assert_eq!(
        choices[0]["delta"],
        json!({"role": "assistant", "content": ""})
    );
    let text: Vec<&str> = choices[1..choices.len() - 1]
        .iter()
        .map(|c| c["delta"]["content"].as_str().unwrap())
        .collect();
    assert_eq!(text, vec!["Hell", "o th", "ere"]);
    assert_eq!(choices.last().unwrap()["finish_reason"], "stop");

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(requests[0].authorization.as_deref(), Some("Bearer sk-test"));
    assert_eq!(requests[0].body["messages"][0]["content"], "hi");
}

#[tokio::test]
async fn tool_call_arguments_are_split_with_id_and_name_first() {
    let reply = Reply::tool_call("python", "print(1)")
        .with_text_before("Sure.")
        .chunked(3);
    let server = ScriptedServer::start(Script::new([reply])).await.unwrap();
    let body = post(&server, streaming(json!([])))
        .await
        .text()
        .await
        .unwrap();
    let choices = deltas(&body);
    assert_eq!(choices[1]["delta"]["content"], "Sur");
    let calls: Vec<&Value> = choices
        .iter()
        .filter(|c| c["delta"].get("tool_calls").is_some())
        .collect();
    let first = &calls[0]["delta"]["tool_calls"][0];
    assert_eq!(first["id"], "call_1");
    assert_eq!(first["function"]["name"], "execute");
    let mut arguments = String::new();
    for call in &calls[1..] {
        let delta = &call["delta"]["tool_calls"][0];
        assert!(delta.get("id").is_none() && delta["function"].get("name").is_none());
        let piece = delta["function"]["arguments"].as_str().unwrap();
        assert!(piece.chars().count() <= 3);
        arguments.push_str(piece);
    }
    let parsed: Value = serde_json::from_str(&arguments).unwrap();
    assert_eq!(parsed, json!({"language": "python", "code": "print(1)"}));
    assert_eq!(choices.last().unwrap()["finish_reason"], "tool_calls");
}

#[tokio::test]
async fn explicit_pieces_and_several_calls() {
    let server = ScriptedServer::start(Script::new([
        Reply::tool_call_pieces("execute", ["{\"lang", "uage\": \"sh\", \"code\": \"ls\"}"]),
        Reply::tool_calls(
            None,
            vec![
                ToolCall::execute("python", "1"),
                ToolCall::raw("python", "2"),
            ],
        ),
    ]))
    .await
    .unwrap();
    let body = post(&server, streaming(json!([])))
        .await
        .text()
        .await
        .unwrap();
    let pieces: Vec<String> = deltas(&body)
        .iter()
        .filter_map(|c| {
            c["delta"]["tool_calls"][0]["function"]["arguments"]
                .as_str()
                .map(str::to_owned)
        })
        .collect();
    assert_eq!(
        pieces,
        vec!["", "{\"lang", "uage\": \"sh\", \"code\": \"ls\"}"]
    );
    let body = post(&server, streaming(json!([])))
        .await
        .text()
        .await
        .unwrap();
    let indices: Vec<u64> = deltas(&body)
        .iter()
        .filter_map(|c| c["delta"]["tool_calls"][0]["index"].as_u64())
        .collect();
    assert_eq!(indices, vec![0, 0, 1, 1]);
}

#[tokio::test]
async fn non_streaming_gets_one_completion() {
    let server = ScriptedServer::start(Script::new([
        Reply::tool_call("python", "x").with_text_before("Hi")
    ]))
    .await
    .unwrap();
    let response = post(&server, json!({"model": "m", "messages": []})).await;
    let value: Value = response.json().await.unwrap();
    assert_eq!(value["object"], "chat.completion");
    assert_eq!(value["choices"][0]["message"]["content"], "Hi");
    assert_eq!(
        value["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"],
        "{\"language\": \"python\", \"code\": \"x\"}"
    );
}

#[tokio::test]
async fn status_replies_and_exhausted_script() {
    let server = ScriptedServer::start(Script::new([Reply::status(
        429,
        "{\"error\":\"slow down\"}",
    )
    .with_retry_after(7)]))
    .await
    .unwrap();
    let response = post(&server, streaming(json!([]))).await;
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "7");
    assert_eq!(response.text().await.unwrap(), "{\"error\":\"slow down\"}");
    let response = post(&server, streaming(json!([]))).await;
    assert_eq!(response.status(), 500);
    let text = response.text().await.unwrap();
    assert!(text.contains("script ran out of replies"), "{text}");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn endings_pings_and_malformed_lines() {
    let server = ScriptedServer::start(Script::new([
        Reply::text("abc").ending(Ending::NoDone),
        Reply::text("abc").chunked(1).ending(Ending::CutAfter(2)),
        Reply::text("abc").with_pings().malformed_after(1),
        Reply::text("abc").chunked(1).ending(Ending::DropAfter(2)),
        Reply::text("abc").ending(Ending::StallAfter(1, Duration::from_millis(300))),
    ]))
    .await
    .unwrap();
    let body = post(&server, streaming(json!([])))
        .await
        .text()
        .await
        .unwrap();
    assert!(!body.contains("[DONE]") && body.contains("\"finish_reason\":\"stop\""));
    let body = post(&server, streaming(json!([])))
        .await
        .text()
        .await
        .unwrap();
    assert_eq!(data_lines(&body).len(), 2);
    let body = post(&server, streaming(json!([])))
        .await
        .text()
        .await
        .unwrap();
    assert!(body.starts_with(": ping\n\ndata: "));
    assert_eq!(data_lines(&body)[1], "{\"choices\": [");
    let response = post(&server, streaming(json!([]))).await;
    assert_eq!(
        response.status(),
        200,
        "headers and the first events arrive"
    );
    assert!(
        response.text().await.is_err(),
        "a dropped connection is an error"
    );
    let started = std::time::Instant::now();
    let body = post(&server, streaming(json!([])))
        .await
        .text()
        .await
        .unwrap();
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert!(body.ends_with("data: [DONE]\n\n"));
}

#[tokio::test]
async fn models_route() {
    let server = ScriptedServer::start(Script::new([])).await.unwrap();
    let value: Value = reqwest::get(format!("{}/models", server.base_url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(value["data"][0]["id"], "scripted");
}

async fn calculator_reply(server: &ScriptedServer, body: Value) -> (String, String) {
    let text = post(server, body).await.text().await.unwrap();
    let (mut content, mut arguments) = (String::new(), String::new());
    for choice in deltas(&text) {
        if let Some(c) = choice["delta"]["content"].as_str() {
            content.push_str(c);
        }
        if let Some(a) = choice["delta"]["tool_calls"][0]["function"]["arguments"].as_str() {
            arguments.push_str(a);
        }
    }
    (content, arguments)
}

#[tokio::test]
async fn calculator_behaviour() {
    let server = ScriptedServer::start(Script::calculator()).await.unwrap();
    let ask = json!([{"role": "system", "content": "sys"}, {"role": "user", "content": "What is 239023*79043?"}]);
    let (content, _) = calculator_reply(&server, streaming(ask.clone())).await;
    assert_eq!(
        content,
        "Let me compute that.\n```python\nprint(239023*79043)\n```"
    );

    let mut with_tools = streaming(ask);
    with_tools["tools"] = json!([{"type": "function", "function": {"name": "execute"}}]);
    let (content, arguments) = calculator_reply(&server, with_tools).await;
    assert_eq!(content, "");
    let arguments: Value = serde_json::from_str(&arguments).unwrap();
    assert_eq!(
        arguments,
        json!({"language": "python", "code": "print(239023*79043)"})
    );

    let tool_result = json!([{"role": "user", "content": "x"}, {"role": "tool", "tool_call_id": "t", "content": "18893195389\n"}]);
    assert_eq!(
        calculator_reply(&server, streaming(tool_result)).await.0,
        "The result is 18893195389."
    );
    let text_result = json!([{"role": "user", "content": "Code output: 42\n\nWhat does this output mean / what's next (if anything, or are we done)?"}]);
    assert_eq!(
        calculator_reply(&server, streaming(text_result)).await.0,
        "The result is 42."
    );
    let empty = json!([{"role": "tool", "tool_call_id": "t", "content": ""}]);
    assert_eq!(
        calculator_reply(&server, streaming(empty)).await.0,
        "The code printed nothing."
    );
    let hello = json!([{"role": "user", "content": "hi"}]);
    assert_eq!(
        calculator_reply(&server, streaming(hello)).await.0,
        "Hello! Ask me to compute something, like 239023*79043."
    );
}

#[tokio::test]
async fn a_responder_answers_each_request_from_its_body_without_keeping_it() {
    let script = Script::responder(|body| {
        let last = body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .and_then(|m| m["content"].as_str())
            .unwrap_or("")
            .to_owned();
        Reply::text(format!("you said {last}"))
    })
    .without_recording();
    let server = ScriptedServer::start(script).await.unwrap();
    for word in ["one", "two", "three"] {
        let response = post(
            &server,
            streaming(json!([{"role": "user", "content": word}])),
        )
        .await;
        let body = response.text().await.unwrap();
        let text: String = deltas(&body)
            .iter()
            .filter_map(|c| c["delta"]["content"].as_str().map(str::to_owned))
            .collect();
        assert_eq!(text, format!("you said {word}"));
    }
    assert_eq!(server.request_count(), 3);
    assert!(server.requests().is_empty(), "nothing kept");
}
