//! The built-in calculator behaviour (`Script::calculator`).

use serde_json::Value;

use crate::reply::Reply;

/// The greeting for anything that is neither a sum nor a code result.
pub(crate) const GREETING: &str = "Hello! Ask me to compute something, like 239023*79043.";

/// The text-mode empty-output message's start (Open Interpreter's default template).
const EMPTY_OUTPUT_START: &str =
    "The code above was executed on my machine. It produced no text output.";

/// Pieces the calculator's replies are streamed in, to look like a real model.
const PIECE_CHARS: usize = 4;

/// The reply to a chat-completions request body.
pub(crate) fn answer(body: &Value) -> Reply {
    let uses_tools = body
        .get("tools")
        .and_then(Value::as_array)
        .is_some_and(|t| !t.is_empty());
    let last = body
        .get("messages")
        .and_then(Value::as_array)
        .and_then(|messages| messages.last());
    let Some(last) = last else {
        return Reply::text(GREETING).chunked(PIECE_CHARS);
    };
    let role = last.get("role").and_then(Value::as_str).unwrap_or("");
    let content = content_text(last);
    let reply = if role == "tool" || role == "function" {
        Reply::text(result_sentence(&content))
    } else if role == "user" {
        let trimmed = content.trim_start();
        if let Some(rest) = trimmed.strip_prefix("Code output:") {
            let output = rest
                .split("\n\nWhat does this output mean")
                .next()
                .unwrap_or(rest);
            Reply::text(result_sentence(output))
        } else if trimmed.starts_with(EMPTY_OUTPUT_START) {
            Reply::text(result_sentence(""))
        } else if let Some(expression) = find_expression(&content) {
            let code = format!("print({expression})");
            if uses_tools {
                Reply::tool_call("python", &code)
            } else {
                Reply::text(format!("Let me compute that.\n```python\n{code}\n```"))
            }
        } else {
            Reply::text(GREETING)
        }
    } else {
        Reply::text(GREETING)
    };
    reply.chunked(PIECE_CHARS)
}

/// "The result is X." or, for empty output, "The code printed nothing.".
fn result_sentence(output: &str) -> String {
    let output = output.trim();
    if output.is_empty() || output == "No output" {
        "The code printed nothing.".to_owned()
    } else {
        format!("The result is {output}.")
    }
}

/// The text of a message's content: a string, or the text parts of a list.
fn content_text(message: &Value) -> String {
    match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|part| part.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The first arithmetic expression in `text`: a run of digits, operators, parentheses and
/// spaces with at least one operator between two numbers.
pub(crate) fn find_expression(text: &str) -> Option<String> {
    let is_part = |c: char| c.is_ascii_digit() || "+-*/%().^ ".contains(c);
    let mut rest = text;
    while !rest.is_empty() {
        let start = rest.find(|c: char| c.is_ascii_digit() || c == '(' || c == '-')?;
        let tail = &rest[start..];
        let end = tail
            .find(|c: char| !is_part(c) && c != '.')
            .unwrap_or(tail.len());
        let candidate = tail[..end]
            .trim()
            .trim_end_matches(['.', ' ', '+', '-', '*', '/', '%', '^']);
        let has_digit = candidate.chars().any(|c| c.is_ascii_digit());
        let has_operator = candidate.char_indices().any(|(i, c)| {
            "+-*/%^".contains(c) && candidate[..i].chars().any(|d| d.is_ascii_digit())
        });
        if has_digit && has_operator {
            return Some(candidate.replace('^', "**"));
        }
        let skip = start + end.max(1);
        rest = rest.get(skip..).unwrap_or("");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_expressions() {
        assert_eq!(
            find_expression("What is 239023*79043?").as_deref(),
            Some("239023*79043")
        );
        assert_eq!(
            find_expression("compute (2 + 3) * 4.").as_deref(),
            Some("(2 + 3) * 4")
        );
        assert_eq!(find_expression("I have 3 apples"), None);
        assert_eq!(find_expression("2^10 please").as_deref(), Some("2**10"));
        assert_eq!(find_expression("hello"), None);
    }
}
