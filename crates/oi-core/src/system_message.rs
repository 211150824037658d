//! The system message (spec b.1): the base message, the custom instructions, the computer
//! API's message when it is imported, and `{{ code }}` blocks rendered with the output of
//! running them in Python.

use std::sync::Arc;

use futures::StreamExt;

use crate::computer::Computer;
use crate::lmc::{Content, Kind};
use crate::prompts;
use crate::settings::Settings;
use crate::settings::computer::ComputerSettings;

/// Composes the system message (spec b.1): base, custom instructions, then renders `{{ }}`.
pub(crate) async fn system_message(settings: &Settings, computer: &Arc<dyn Computer>) -> String {
    let mut text = settings.system_message.clone();
    if !settings.custom_instructions.is_empty() {
        text.push_str("\n\n");
        text.push_str(&settings.custom_instructions);
    }
    if settings.import_computer_api && !text.contains(prompts::COMPUTER_API_SYSTEM_MESSAGE) {
        text.push_str("\n\n");
        text.push_str(prompts::COMPUTER_API_SYSTEM_MESSAGE);
    }
    if text.contains("{{") {
        render_templates(&text, computer, &settings.computer).await
    } else {
        text
    }
}

/// Replaces each `{{ code }}` block with the console output of running it in Python.
async fn render_templates(
    text: &str,
    computer: &Arc<dyn Computer>,
    policy: &ComputerSettings,
) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        let Some(close) = rest[open..].find("}}") else {
            break;
        };
        out.push_str(&rest[..open]);
        // `{{ expr }}` is written with spaces: the code is stripped (and dedented) first.
        let code = template_code(&rest[open + 2..open + close]);
        let mut outputs = Vec::new();
        let mut stream = computer.run("python", &code, policy);
        while let Some(output) = stream.next().await {
            if output.kind == Kind::Console && output.format.as_deref() == Some("output") {
                if let Content::Text(t) = output.content {
                    if !t.contains("IGNORE_ALL_ABOVE_THIS_LINE") {
                        outputs.push(t);
                    }
                }
            }
        }
        // The output as printed, without the newline that ends it (a notebook shows an
        // expression's value without one).
        out.push_str(outputs.concat().trim_end_matches('\n'));
        rest = &rest[open + close + 2..];
    }
    out.push_str(rest);
    out.trim().to_owned()
}

/// The code of one `{{ … }}` block: without the spaces around it, and with the indentation
/// its lines share removed, so `{{ expr }}` and indented multi-line blocks run.
fn template_code(inner: &str) -> String {
    let inner = inner.trim_matches(|c: char| c == '\n' || c == '\r');
    let indent = inner
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| line.len() - line.trim_start().len())
        .min()
        .unwrap_or(0);
    let lines: Vec<&str> = inner
        .lines()
        .map(|line| line.get(indent..).unwrap_or(line.trim_start()))
        .collect();
    lines.join("\n").trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::template_code;

    #[test]
    fn template_blocks_lose_their_spaces_and_shared_indentation() {
        assert_eq!(template_code(" 6*7 "), "6*7");
        assert_eq!(template_code("6*7"), "6*7");
        assert_eq!(
            template_code("\n    import os\n    print(os.sep)\n"),
            "import os\nprint(os.sep)"
        );
        assert_eq!(
            template_code("\n  for i in range(2):\n      print(i)\n"),
            "for i in range(2):\n    print(i)"
        );
    }
}
