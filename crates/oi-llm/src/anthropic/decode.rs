//! Messages stream events → deltas. Text and `tool_use` blocks feed the same typed pieces as
//! the OpenAI wire into [`ToolCallReader`] (first call only, arguments scanned once).

use oi_core::{ModelDelta, ModelError, Usage};
use serde_json::Value;

use crate::text::{printable, shorten};
use crate::text_mode::TextDecoder;
use crate::tool_stream::{ToolCallPiece, ToolCallReader};
use crate::transport::Decode;

/// How code comes back.
enum Inner {
    /// Tool mode.
    Tools(ToolCallReader),
    /// Text mode (fenced blocks).
    Text(TextDecoder),
}

/// Decodes one streamed Messages reply.
pub(crate) struct EventDecoder {
    inner: Inner,
    stopped: bool,
    /// Prompt tokens from `message_start`, reply tokens from the last `message_delta`
    /// (a running total); reported once, at the end.
    usage: Option<Usage>,
}

impl EventDecoder {
    /// A decoder for tool mode (`true`, with `offered` tools beside `execute`) or text mode.
    pub fn new(tools: bool, offered: Vec<oi_core::OfferedTool>) -> Self {
        let inner = if tools {
            Inner::Tools(ToolCallReader::offering(offered))
        } else {
            Inner::Text(TextDecoder::offering(offered))
        };
        EventDecoder {
            inner,
            stopped: false,
            usage: None,
        }
    }

    fn text(&mut self, text: &str) -> Vec<ModelDelta> {
        if text.is_empty() {
            return Vec::new();
        }
        match &mut self.inner {
            Inner::Tools(reader) => reader.text(text),
            Inner::Text(decoder) => decoder.push(text),
        }
    }

    fn tool_piece(&mut self, piece: ToolCallPiece<'_>) -> Vec<ModelDelta> {
        match &mut self.inner {
            Inner::Tools(reader) => reader.call(piece),
            // No tools were offered: a stray tool call is ignored.
            Inner::Text(_) => Vec::new(),
        }
    }
}

/// Bytes of a string field, 0 when absent.
fn str_len(value: &Value) -> usize {
    value.as_str().map_or(0, str::len)
}

impl Decode for EventDecoder {
    fn content_len(&self, event: &Value) -> usize {
        let block = &event["content_block"];
        let delta = &event["delta"];
        let input = match block["input"].as_object() {
            Some(object) if !object.is_empty() => block["input"].to_string().len(),
            _ => 0,
        };
        str_len(&block["text"])
            + str_len(&block["name"])
            + input
            + str_len(&delta["text"])
            + str_len(&delta["partial_json"])
    }

    fn push(&mut self, event: &Value) -> Result<Vec<ModelDelta>, ModelError> {
        let index = event["index"].as_u64().unwrap_or(0);
        Ok(match event["type"].as_str().unwrap_or("") {
            "error" => {
                let message = event["error"]["message"]
                    .as_str()
                    .map_or_else(|| event["error"].to_string(), str::to_owned);
                return Err(ModelError::Stream(format!(
                    "the server reported an error: {}",
                    printable(&shorten(&message, 300))
                )));
            }
            "content_block_start" => {
                let block = &event["content_block"];
                match block["type"].as_str() {
                    Some("text") => self.text(block["text"].as_str().unwrap_or("")),
                    Some("tool_use") => {
                        let input = &block["input"];
                        let arguments = match input.as_object() {
                            Some(object) if !object.is_empty() => input.to_string(),
                            _ => String::new(),
                        };
                        self.tool_piece(ToolCallPiece {
                            index,
                            name: block["name"].as_str(),
                            arguments: Some(&arguments),
                        })
                    }
                    _ => Vec::new(),
                }
            }
            "content_block_delta" => {
                let delta = &event["delta"];
                match delta["type"].as_str() {
                    Some("text_delta") => self.text(delta["text"].as_str().unwrap_or("")),
                    Some("input_json_delta") => self.tool_piece(ToolCallPiece {
                        index,
                        name: None,
                        arguments: delta["partial_json"].as_str(),
                    }),
                    _ => Vec::new(),
                }
            }
            "message_start" => {
                let usage = &event["message"]["usage"];
                let tokens = |field: &str| usage[field].as_u64().unwrap_or(0);
                if usage["input_tokens"].is_u64() {
                    self.usage = Some(Usage {
                        prompt_tokens: tokens("input_tokens")
                            + tokens("cache_creation_input_tokens")
                            + tokens("cache_read_input_tokens"),
                        reply_tokens: tokens("output_tokens"),
                        cost: None,
                    });
                }
                Vec::new()
            }
            "message_delta" => {
                if let (Some(usage), Some(reply_tokens)) =
                    (&mut self.usage, event["usage"]["output_tokens"].as_u64())
                {
                    usage.reply_tokens = reply_tokens;
                }
                Vec::new()
            }
            "message_stop" => {
                self.stopped = true;
                Vec::new()
            }
            _ => Vec::new(),
        })
    }

    fn is_done(&self) -> bool {
        self.stopped || matches!(&self.inner, Inner::Text(decoder) if decoder.is_done())
    }

    fn finish(&mut self) -> Vec<ModelDelta> {
        let mut deltas = match &mut self.inner {
            Inner::Tools(reader) => reader.finish(),
            Inner::Text(decoder) => decoder.finish(),
        };
        deltas.extend(self.usage.take().map(ModelDelta::Usage));
        deltas
    }
}
