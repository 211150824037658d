//! Merging a run's outputs into what it printed as a whole: [`merge_outputs`].

use oi_core::computer::Output;
use oi_core::lmc::Content;

/// Drops `active_line` outputs and concatenates consecutive text outputs of equal kind,
/// format and recipient.
pub fn merge_outputs(outputs: Vec<Output>) -> Vec<Output> {
    let mut merged: Vec<Output> = Vec::new();
    for output in outputs {
        if output.format.as_deref() == Some("active_line") {
            continue;
        }
        if let Some(last) = merged.last_mut() {
            if last.kind == output.kind
                && last.format == output.format
                && last.recipient == output.recipient
            {
                if let (Content::Text(a), Content::Text(b)) = (&mut last.content, &output.content) {
                    a.push_str(b);
                    continue;
                }
            }
        }
        merged.push(output);
    }
    merged
}
