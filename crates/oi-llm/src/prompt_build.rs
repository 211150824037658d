//! Building the prompt from a request: history converted (spec b.6), the execution
//! instructions appended in text mode, the `execute` tool offered in tool mode, trimmed to the
//! context window (b.7). The computer's other tools ([`oi_core::tools`], an MCP server's) are
//! provider functions beside `execute` in tool mode and a paragraph of the system text in text
//! mode (a fenced block in the tool's language calls one).

use oi_core::ModelRequest;

use crate::capabilities::supports_vision;
use crate::convert::to_prompt_messages;
use crate::prompt::{Mode, Prompt, ToolSpec};
use crate::schema::execute_parameters;
use crate::trim::trim_prompt;

impl Prompt {
    /// The prompt for `request` in `mode`: history converted, the execution instructions
    /// appended to the system text in text mode, trimmed to the context window.
    pub fn build(request: &ModelRequest, mode: Mode) -> Prompt {
        // Only tools offered as functions are given back as calls of their own.
        let functions: Vec<oi_core::OfferedTool> = request
            .tools
            .iter()
            .filter(|t| function_name(&t.name))
            .cloned()
            .collect();
        let (system, messages) = to_prompt_messages(
            &request.messages,
            &request.templates,
            &functions,
            mode,
            supports_vision(&request.llm),
        );
        let mut system = system.unwrap_or_default();
        if mode == Mode::Text && !request.llm.execution_instructions.is_empty() {
            system.push('\n');
            system.push_str(&request.llm.execution_instructions);
        }
        if mode == Mode::Text && !request.tools.is_empty() {
            system.push_str("\n\n");
            system.push_str(&text_mode_tools(&request.tools));
        }
        let tools = match mode {
            Mode::Tools => tool_specs(request),
            Mode::Text => Vec::new(),
        };
        let mut prompt = Prompt {
            system,
            messages,
            tools,
            mode,
            left_out: 0,
        };
        trim_prompt(&mut prompt, &request.llm);
        prompt
    }
}

/// Tool mode: `execute` (its language enum without the offered tools' languages: those tools
/// are called by name), then each offered tool.
fn tool_specs(request: &ModelRequest) -> Vec<ToolSpec> {
    let languages: Vec<String> = request
        .languages
        .iter()
        .filter(|l| {
            !request
                .tools
                .iter()
                .any(|t| t.language.eq_ignore_ascii_case(l))
        })
        .cloned()
        .collect();
    // No languages (a `computer.ai` request): no `execute` to offer.
    let mut specs = Vec::new();
    if !request.languages.is_empty() {
        specs.push(ToolSpec {
            name: crate::schema::EXECUTE.to_owned(),
            description: oi_core::prompts::EXECUTE_TOOL_DESCRIPTION.to_owned(),
            parameters: execute_parameters(&languages),
        });
    }
    specs.extend(
        request
            .tools
            .iter()
            .filter(|t| function_name(&t.name))
            .map(|tool| ToolSpec {
                name: tool.name.clone(),
                description: tool.description.clone(),
                parameters: object_schema(&tool.parameters),
            }),
    );
    specs
}

/// Whether providers take `name` as a function's name (OpenAI and Anthropic: 1 to 64
/// letters, digits, `_` and `-`). A server's tool named otherwise is not offered as a
/// function (one bad name would make every request fail); text mode still lists it.
fn function_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// A tool's parameters as providers take them: an object schema (a server that gives none,
/// or something else, gets an empty object).
fn object_schema(parameters: &serde_json::Value) -> serde_json::Value {
    match parameters {
        serde_json::Value::Object(map) if map.get("type").is_none_or(|t| t == "object") => {
            let mut map = map.clone();
            map.insert("type".to_owned(), "object".into());
            serde_json::Value::Object(map)
        }
        _ => serde_json::json!({"type": "object", "properties": {}}),
    }
}

/// Text mode: the paragraph telling the model how to call the offered tools.
pub(crate) fn text_mode_tools(tools: &[oi_core::OfferedTool]) -> String {
    let mut out = String::from(
        "You can also call these tools: write a fenced code block in the tool's language (given with each tool, e.g. ```mcp) holding one JSON object {\"tool\": NAME, \"arguments\": {...}}; its result comes back as the block's output.\n",
    );
    for tool in tools {
        out.push_str(&format!(
            "- {} (language `{}`): {} Arguments (JSON Schema): {}\n",
            tool.name, tool.language, tool.description, tool.parameters
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::function_name;

    #[test]
    fn only_names_providers_take_are_offered_as_functions() {
        assert!(function_name("calc__add"));
        assert!(function_name("a-b_1"));
        assert!(!function_name("calc__add.v2"));
        assert!(!function_name("calc__ä"));
        assert!(!function_name(&"x".repeat(65)));
    }
}
