//! How MCP servers' tools reach oi's model: through `execute`, as the language `mcp`, whose
//! code is one JSON object `{"tool": "SERVER__TOOL", "arguments": {...}}`. A call is then a code
//! block like any other: the respond loop shows it to the user with its arguments, asks or runs
//! it under the same approval (`auto_run`, `deny` rules), and gives its result back to the model
//! as the block's output. Text mode needs nothing more: a fenced ```mcp block is the same call.
//! [`McpComputer`] adds the language to a computer; [`instructions`] tells the model the tools.

use std::sync::Arc;

use futures::StreamExt as _;
use futures::future::BoxFuture;
use oi_core::computer::{Computer, LanguageSpec, Output, OutputStream};
use oi_core::settings::ComputerSettings;
use serde_json::Value;

use crate::client::{McpClients, OfferedTool};

/// The language name of MCP tool calls.
pub const MCP_LANGUAGE: &str = "mcp";

/// A computer that also runs MCP tool calls (language `mcp`) on `clients`.
pub struct McpComputer {
    inner: Arc<dyn Computer>,
    clients: Arc<McpClients>,
}

impl McpComputer {
    /// `inner` plus the tools of `clients`.
    pub fn new(inner: Arc<dyn Computer>, clients: Arc<McpClients>) -> McpComputer {
        McpComputer { inner, clients }
    }
}

fn is_mcp(language: &str) -> bool {
    language.trim().eq_ignore_ascii_case(MCP_LANGUAGE)
}

impl Computer for McpComputer {
    fn languages(&self) -> Vec<LanguageSpec> {
        let mut languages = self.inner.languages();
        languages.push(LanguageSpec {
            name: "MCP".to_owned(),
            aliases: Vec::new(),
        });
        languages
    }

    fn run(&self, language: &str, code: &str, policy: &ComputerSettings) -> OutputStream {
        if !is_mcp(language) {
            return self.inner.run(language, code, policy);
        }
        let clients = Arc::clone(&self.clients);
        let code = code.to_owned();
        futures::stream::once(async move { Output::console(call(&clients, &code).await) }).boxed()
    }

    fn prepare(&self, language: &str) {
        if !is_mcp(language) {
            self.inner.prepare(language);
        }
    }

    fn stop(&self) {
        self.inner.stop();
    }

    fn terminate(&self) -> BoxFuture<'static, ()> {
        self.inner.terminate()
    }
}

/// Runs one `mcp` block; its output text.
async fn call(clients: &McpClients, code: &str) -> String {
    let parsed: Result<Value, _> = serde_json::from_str(code.trim());
    let (tool, arguments) = match parsed {
        Ok(Value::Object(mut call)) => {
            let tool = call.get("tool").and_then(Value::as_str).map(str::to_owned);
            let arguments = match call.remove("arguments") {
                Some(Value::Object(map)) => Some(map),
                None | Some(Value::Null) => Some(serde_json::Map::new()),
                Some(_) => None,
            };
            (tool, arguments)
        }
        _ => (None, None),
    };
    let (Some(tool), Some(arguments)) = (tool, arguments) else {
        return "An mcp block is one JSON object: {\"tool\": \"SERVER__TOOL\", \"arguments\": {...}}.\n"
            .to_owned();
    };
    match clients.call(&tool, arguments).await {
        Ok(outcome) if outcome.is_error => format!("Error from {tool}: {}\n", outcome.text),
        Ok(outcome) => format!("{}\n", outcome.text),
        Err(problem) => format!("{problem}\n"),
    }
}

/// `computer` with the tools of `clients` added (language `mcp`), and `settings`' custom
/// instructions telling the model about them; `computer` as it is when there are no tools.
pub fn offer(
    settings: &mut oi_core::Settings,
    computer: Arc<dyn Computer>,
    clients: &Arc<McpClients>,
) -> Arc<dyn Computer> {
    let tools = clients.tools();
    if tools.is_empty() {
        return computer;
    }
    if !settings.custom_instructions.trim().is_empty() {
        settings.custom_instructions.push_str("\n\n");
    }
    settings.custom_instructions.push_str(&instructions(&tools));
    Arc::new(McpComputer::new(computer, Arc::clone(clients)))
}

/// What the model is told about the tools (appended to the custom instructions).
pub fn instructions(tools: &[OfferedTool]) -> String {
    let mut out = String::from(
        "You can call these MCP tools with execute, language `mcp`, the code being one JSON object {\"tool\": NAME, \"arguments\": {...}} (in text mode: a ```mcp block holding that object):\n",
    );
    for tool in tools {
        out.push_str(&format!(
            "- {}: {} Arguments (JSON Schema): {}\n",
            tool.name, tool.description, tool.input_schema
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_block_that_is_not_a_call_says_the_shape() {
        let none = McpClients::default();
        for code in [
            "not json",
            "[1]",
            r#"{"arguments": {}}"#,
            r#"{"tool": "a__b", "arguments": 3}"#,
        ] {
            let said = call(&none, code).await;
            assert!(
                said.starts_with("An mcp block is one JSON object"),
                "{code}: {said}"
            );
        }
        let said = call(&none, r#"{"tool": "a__b"}"#).await;
        assert_eq!(said, "No MCP tool \"a__b\".\n");
    }

    #[test]
    fn the_instructions_name_each_tool_with_its_schema() {
        let tools = [OfferedTool {
            name: "calc__add".to_owned(),
            description: "Add.".to_owned(),
            input_schema: serde_json::json!({"type": "object"}),
        }];
        let told = instructions(&tools);
        assert!(told.contains("language `mcp`"));
        assert!(
            told.ends_with("- calc__add: Add. Arguments (JSON Schema): {\"type\":\"object\"}\n")
        );
    }
}
