//! How MCP servers' tools reach oi's model: [`McpComputer`] offers them beside `execute`
//! ([`Computer::tools`]), so in tool mode each is a provider function `SERVER__TOOL` with the
//! server's JSON schema, and in text mode the system text describes them. Either way a call is
//! a code block in the language `mcp` whose code is one JSON object
//! `{"tool": "SERVER__TOOL", "arguments": {...}}` (oi_core::tools): the respond loop shows it to
//! the user with its arguments, asks or runs it under the same approval (`auto_run`, `deny`
//! rules, hard-deny), and gives its result back to the model as the call's result (tool mode)
//! or the block's output (text mode). [`McpComputer`] runs those blocks.

use std::sync::Arc;

use futures::StreamExt as _;
use futures::future::BoxFuture;
use oi_core::OfferedTool;
use oi_core::computer::{Computer, LanguageSpec, Output, OutputStream};
use oi_core::settings::ComputerSettings;
use oi_core::tools::parse_call;

use crate::client::McpClients;

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
        run_block(Arc::clone(&self.clients), code)
    }

    fn prepare(&self, language: &str) {
        if !is_mcp(language) {
            self.inner.prepare(language);
        }
    }

    fn session_dir(&self, language: &str) -> oi_core::computer::SessionDir {
        if is_mcp(language) {
            return oi_core::computer::SessionDir::NotStarted;
        }
        self.inner.session_dir(language)
    }

    fn tools(&self) -> Vec<OfferedTool> {
        let mut tools = self.inner.tools();
        tools.extend(offered_tools(&self.clients));
        tools
    }

    fn stop(&self) {
        self.inner.stop();
    }

    fn terminate(&self) -> BoxFuture<'static, ()> {
        self.inner.terminate()
    }
}

/// The tools of `clients` as a computer offers them (called as blocks of the language `mcp`).
pub fn offered_tools(clients: &McpClients) -> Vec<OfferedTool> {
    clients
        .tools()
        .into_iter()
        .map(|tool| OfferedTool {
            name: tool.name,
            description: tool.description,
            parameters: tool.input_schema,
            language: MCP_LANGUAGE.to_owned(),
        })
        .collect()
}

/// Whether `language` names MCP tool calls.
pub fn is_mcp_language(language: &str) -> bool {
    is_mcp(language)
}

/// Runs one `mcp` block (`{"tool": "SERVER__TOOL", "arguments": {...}}`) on `clients`; its
/// output, as one console output.
pub fn run_block(clients: Arc<McpClients>, code: &str) -> OutputStream {
    let code = code.to_owned();
    futures::stream::once(async move { Output::console(call(&clients, &code).await) }).boxed()
}

/// Runs one `mcp` block; its output text.
async fn call(clients: &McpClients, code: &str) -> String {
    let Some((tool, arguments)) = parse_call(code) else {
        return "An mcp block is one JSON object: {\"tool\": \"SERVER__TOOL\", \"arguments\": {...}}.\n"
            .to_owned();
    };
    match clients.call(&tool, arguments).await {
        Ok(outcome) if outcome.is_error => format!("Error from {tool}: {}\n", outcome.text),
        Ok(outcome) => format!("{}\n", outcome.text),
        Err(problem) => format!("{problem}\n"),
    }
}

/// `computer` with the tools of `clients` offered beside `execute` (and run as the language
/// `mcp`); `computer` as it is when there are no tools.
pub fn offer(computer: Arc<dyn Computer>, clients: &Arc<McpClients>) -> Arc<dyn Computer> {
    if clients.tools().is_empty() {
        return computer;
    }
    Arc::new(McpComputer::new(computer, Arc::clone(clients)))
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
}
