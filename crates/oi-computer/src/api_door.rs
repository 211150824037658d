//! The door of the code's Python session to oi, for the computer API's calls that need oi
//! (`computer.ai.*`, `computer.skills.save`): no new descriptor, socket or path. The driver
//! writes a request as an event on its output pipe (`{"ev": "api", "data": …}`, framed like
//! every event) and reads the answer as one JSON line on its private command pipe; the run
//! that is reading the session answers it, so the door is open only while a run is, only
//! while that run was started with the API on (`import_computer_api`), and never more than
//! [`oi_core::computer_api::BOUNDS`] allow per block. Text only: the request's fields are
//! strings, the answer a string or an error sentence. What answers is injected where the
//! computer is built ([`crate::LocalComputer::with_api`]); without it every call is refused.

use std::sync::Arc;
use std::time::Duration;

use oi_core::computer_api::{ApiRequest, BOUNDS, ComputerApi};

/// The driver's computer API source, sent with a run's command while the API is on.
pub(crate) const SOURCE: &str = include_str!("languages/python_computer_api.py");

/// The longest one call may take (a model that does not answer).
const CALL_TIMEOUT: Duration = Duration::from_secs(300);

/// What answers the door (shared by the computer's runs).
#[derive(Clone)]
pub(crate) struct Door(pub Arc<dyn ComputerApi>);

impl std::fmt::Debug for Door {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Door")
    }
}

/// One run's use of the door: whether it is open and how many calls were made.
#[derive(Debug, Default)]
pub(crate) struct RunDoor {
    /// What answers, when the run was started with the API on.
    pub door: Option<Door>,
    /// The calls made so far in this run.
    pub calls: u32,
}

impl RunDoor {
    /// The door of a run: open when `on` and a door was injected.
    pub(crate) fn new(door: Option<&Door>, on: bool) -> RunDoor {
        RunDoor {
            door: door.filter(|_| on).cloned(),
            calls: 0,
        }
    }

    /// Answers the request `data` (its JSON as the driver sent it): the line to write to the
    /// session's commands, `{"api": true, "ok": …}` or `{"api": true, "error": …}`.
    pub(crate) async fn answer(&mut self, data: &str) -> Vec<u8> {
        let answer = self.serve(data).await;
        let value = match answer {
            Ok(text) => serde_json::json!({ "api": true, "ok": text }),
            Err(error) => serde_json::json!({ "api": true, "error": error }),
        };
        let mut line = value.to_string().into_bytes();
        line.push(b'\n');
        line
    }

    async fn serve(&mut self, data: &str) -> Result<String, String> {
        let Some(door) = &self.door else {
            return Err(
                "the computer API is not available in this session (import_computer_api is off)"
                    .to_owned(),
            );
        };
        self.calls += 1;
        if self.calls > BOUNDS.calls_per_block {
            return Err(format!(
                "too many computer API calls in one code block (at most {})",
                BOUNDS.calls_per_block
            ));
        }
        if data.len() > BOUNDS.max_request {
            return Err(format!(
                "the computer API request is too long ({} bytes; at most {})",
                data.len(),
                BOUNDS.max_request
            ));
        }
        let request: ApiRequest = serde_json::from_str(data)
            .map_err(|e| format!("the computer API request could not be read: {e}"))?;
        match tokio::time::timeout(CALL_TIMEOUT, door.0.call(request)).await {
            Ok(answer) => answer,
            Err(_) => Err(format!(
                "the computer API call took longer than {} s",
                CALL_TIMEOUT.as_secs()
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use futures::future::BoxFuture;

    use super::*;

    /// Answers with the operation and text it was given (the wire, not the model, is tested).
    struct Echo;

    impl ComputerApi for Echo {
        fn call(&self, request: ApiRequest) -> BoxFuture<'static, Result<String, String>> {
            Box::pin(async move { Ok(format!("{}: {}", request.op, request.text)) })
        }
    }

    fn line(bytes: Vec<u8>) -> String {
        String::from_utf8(bytes).unwrap()
    }

    #[tokio::test]
    async fn the_answer_lines_the_driver_reads() {
        let door = Door(Arc::new(Echo));
        let mut shut = RunDoor::new(Some(&door), false);
        let mut open = RunDoor::new(Some(&door), true);
        let mut lines = vec![
            line(shut.answer(r#"{"op":"ai.chat","text":"hi"}"#).await),
            line(open.answer(r#"{"op":"ai.chat","text":"hi"}"#).await),
            line(open.answer("not json").await),
            line(
                open.answer(&format!(
                    r#"{{"op":"ai.chat","text":"{}"}}"#,
                    "x".repeat(BOUNDS.max_request)
                ))
                .await,
            ),
        ];
        for _ in lines.len()..=BOUNDS.calls_per_block as usize {
            open.answer(r#"{"op":"ai.chat","text":"again"}"#).await;
        }
        lines.push(line(
            open.answer(r#"{"op":"ai.chat","text":"one too many"}"#)
                .await,
        ));
        insta::assert_snapshot!(lines.join(""));
    }
}
