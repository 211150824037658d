//! What the scripted server answers to one request.

use std::time::Duration;

/// One scripted tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    /// The function name (`execute`, or a legacy hallucination like `python`).
    pub name: String,
    /// The raw JSON arguments, as the model would stream them.
    pub arguments: String,
    /// Explicit pieces for streaming the arguments (their concatenation is `arguments`).
    pub pieces: Option<Vec<String>>,
}

impl ToolCall {
    /// A call of `execute` with `{"language": language, "code": code}` (in that order).
    pub fn execute(language: &str, code: &str) -> Self {
        // `language` first, as models write it (so code can stream once the language is known).
        let quote = |s: &str| serde_json::Value::String(s.to_owned()).to_string();
        let arguments = format!(
            "{{\"language\": {}, \"code\": {}}}",
            quote(language),
            quote(code)
        );
        ToolCall {
            name: "execute".to_owned(),
            arguments,
            pieces: None,
        }
    }

    /// A call of `name` with these raw arguments (which need not be JSON).
    pub fn raw(name: &str, arguments: &str) -> Self {
        ToolCall {
            name: name.to_owned(),
            arguments: arguments.to_owned(),
            pieces: None,
        }
    }
}

/// How streamed text and tool arguments are cut into SSE chunks.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Cut {
    /// Each string goes out in one chunk.
    #[default]
    Whole,
    /// Pieces of at most this many characters (0 is treated as 1).
    Chars(usize),
}

/// How a streamed reply ends.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Ending {
    /// The finish chunk, then `data: [DONE]` (a normal reply).
    #[default]
    Complete,
    /// The finish chunk, then the body ends without `data: [DONE]`.
    NoDone,
    /// Only the first `n` data events are sent, then the body ends cleanly (no finish chunk,
    /// no `[DONE]`).
    CutAfter(usize),
    /// After the first `n` data events the connection is dropped (an incomplete chunked body).
    DropAfter(usize),
    /// After the first `n` data events the server sleeps for the duration, then goes on.
    StallAfter(usize, Duration),
    /// The reply never ends: after its content, the last piece of text (or of tool-call
    /// arguments) is sent again and again, as fast as the client reads, with no finish
    /// chunk and no `[DONE]` (a hostile or broken server streaming forever).
    Endless,
}

/// The body of a reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Body {
    /// An assistant reply: text, then tool calls.
    Assistant {
        /// Text content, possibly in explicit pieces.
        text: Option<String>,
        /// Explicit pieces of the text.
        text_pieces: Option<Vec<String>>,
        /// Tool calls, streamed after the text.
        tool_calls: Vec<ToolCall>,
    },
    /// An HTTP error.
    Status {
        /// The status code.
        code: u16,
        /// The body.
        body: String,
        /// `Retry-After` in seconds.
        retry_after: Option<u64>,
    },
}

/// One scripted answer. Build it with the constructors, then adjust it with the `with_*` /
/// cut / ending methods.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub(crate) body: Body,
    pub(crate) cut: Cut,
    pub(crate) ending: Ending,
    pub(crate) malformed_after: Option<usize>,
    pub(crate) pings: bool,
    pub(crate) usage: Option<(u64, u64)>,
}

impl Reply {
    fn assistant(text: Option<String>, tool_calls: Vec<ToolCall>) -> Self {
        Reply {
            body: Body::Assistant {
                text,
                text_pieces: None,
                tool_calls,
            },
            cut: Cut::Whole,
            ending: Ending::Complete,
            malformed_after: None,
            pings: false,
            usage: None,
        }
    }

    /// Assistant text content.
    pub fn text(text: impl Into<String>) -> Self {
        Reply::assistant(Some(text.into()), Vec::new())
    }

    /// Assistant text streamed in exactly these pieces.
    pub fn text_pieces<S: AsRef<str>>(pieces: impl IntoIterator<Item = S>) -> Self {
        let pieces: Vec<String> = pieces.into_iter().map(|p| p.as_ref().to_owned()).collect();
        let mut reply = Reply::assistant(Some(pieces.concat()), Vec::new());
        if let Body::Assistant { text_pieces, .. } = &mut reply.body {
            *text_pieces = Some(pieces);
        }
        reply
    }

    /// One call of the `execute` tool.
    pub fn tool_call(language: &str, code: &str) -> Self {
        Reply::assistant(None, vec![ToolCall::execute(language, code)])
    }

    /// One call of `name` whose raw arguments are streamed in exactly these pieces.
    pub fn tool_call_pieces<S: AsRef<str>>(
        name: &str,
        pieces: impl IntoIterator<Item = S>,
    ) -> Self {
        let pieces: Vec<String> = pieces.into_iter().map(|p| p.as_ref().to_owned()).collect();
        let call = ToolCall {
            name: name.to_owned(),
            arguments: pieces.concat(),
            pieces: Some(pieces),
        };
        Reply::assistant(None, vec![call])
    }

    /// Several tool calls (with indices 0, 1, …), optionally after some text.
    pub fn tool_calls(text: Option<&str>, calls: Vec<ToolCall>) -> Self {
        Reply::assistant(text.map(str::to_owned), calls)
    }

    /// An HTTP error with this status code and body (JSON bodies are sent as JSON).
    pub fn status(code: u16, body: impl Into<String>) -> Self {
        Reply {
            body: Body::Status {
                code,
                body: body.into(),
                retry_after: None,
            },
            cut: Cut::Whole,
            ending: Ending::Complete,
            malformed_after: None,
            pings: false,
            usage: None,
        }
    }

    /// Adds text before the tool calls (no effect on status replies).
    pub fn with_text_before(mut self, before: impl Into<String>) -> Self {
        if let Body::Assistant {
            text, text_pieces, ..
        } = &mut self.body
        {
            *text = Some(before.into());
            *text_pieces = None;
        }
        self
    }

    /// Adds another `execute` call (no effect on status replies).
    pub fn and_tool_call(mut self, language: &str, code: &str) -> Self {
        if let Body::Assistant { tool_calls, .. } = &mut self.body {
            tool_calls.push(ToolCall::execute(language, code));
        }
        self
    }

    /// Sets `Retry-After: secs` on a status reply.
    pub fn with_retry_after(mut self, secs: u64) -> Self {
        if let Body::Status { retry_after, .. } = &mut self.body {
            *retry_after = Some(secs);
        }
        self
    }

    /// Streams text and arguments in pieces of at most `chars` characters (explicit pieces win).
    pub fn chunked(mut self, chars: usize) -> Self {
        self.cut = Cut::Chars(chars);
        self
    }

    /// Sets how the stream ends.
    pub fn ending(mut self, ending: Ending) -> Self {
        self.ending = ending;
        self
    }

    /// Inserts the line `data: {"choices": [` (not JSON) after the first `n` data events.
    pub fn malformed_after(mut self, n: usize) -> Self {
        self.malformed_after = Some(n);
        self
    }

    /// Reports this usage (prompt tokens, reply tokens): in Anthropic's `message_start` and
    /// `message_delta`, and on the OpenAI wire in a last chunk when the request asks for it
    /// (`stream_options.include_usage`). Without it Anthropic's events say 0 and 0 and the
    /// OpenAI wire sends no usage, as servers that ignore `stream_options` do.
    pub fn with_usage(mut self, prompt_tokens: u64, reply_tokens: u64) -> Self {
        self.usage = Some((prompt_tokens, reply_tokens));
        self
    }

    /// Sends a `: ping` keep-alive comment before every event.
    pub fn with_pings(mut self) -> Self {
        self.pings = true;
        self
    }
}
