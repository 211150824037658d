//! Building the prompt from a request: history converted (spec b.6), the execution
//! instructions appended in text mode, the `execute` tool offered in tool mode, trimmed to the
//! context window (b.7).

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
        let (system, messages) = to_prompt_messages(
            &request.messages,
            &request.templates,
            mode,
            supports_vision(&request.llm),
        );
        let mut system = system.unwrap_or_default();
        if mode == Mode::Text && !request.llm.execution_instructions.is_empty() {
            system.push('\n');
            system.push_str(&request.llm.execution_instructions);
        }
        // No languages (a `computer.ai` request): no tool to offer.
        let tools = match mode {
            Mode::Tools if !request.languages.is_empty() => vec![ToolSpec {
                name: crate::schema::EXECUTE.to_owned(),
                description: oi_core::prompts::EXECUTE_TOOL_DESCRIPTION.to_owned(),
                parameters: execute_parameters(&request.languages),
            }],
            Mode::Tools | Mode::Text => Vec::new(),
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
