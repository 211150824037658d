//! Reading a turn's frames back into the messages they carry, to check that no chunk was
//! lost, doubled or reordered within a message.

use serde_json::Value;

/// One message as its chunks built it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// `assistant`, `computer`, `server`, …
    pub role: String,
    /// `message`, `code`, `console`, `confirmation`, `error`, …
    pub kind: String,
    /// Its text: message or code text, console output (active lines left out).
    pub content: String,
    /// Opened by a `start` flag and closed by an `end` flag (a whole message).
    pub whole: bool,
}

fn text(value: &Value, key: &str) -> String {
    value[key].as_str().unwrap_or_default().to_owned()
}

/// The messages in `frames` (a `complete` ends nothing and is left out); a chunk outside a
/// `start`/`end` pair is a block of its own that is not whole.
pub fn blocks(frames: &[Value]) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    let mut open = false;
    for frame in frames {
        if frame["type"] == "status" {
            continue;
        }
        let (role, kind) = (text(frame, "role"), text(frame, "type"));
        if frame.get("start").is_some() {
            out.push(Block {
                role,
                kind,
                content: String::new(),
                whole: false,
            });
            open = true;
            continue;
        }
        if frame.get("end").is_some() {
            match out.last_mut() {
                Some(last) if open && last.role == role && last.kind == kind => last.whole = true,
                _ => out.push(Block {
                    role,
                    kind,
                    content: String::new(),
                    whole: false,
                }),
            }
            open = false;
            continue;
        }
        let piece = match &frame["content"] {
            Value::String(piece) if frame["format"] != "active_line" => piece.clone(),
            Value::String(_) | Value::Null | Value::Number(_) => String::new(),
            other => other.to_string(),
        };
        match out.last_mut() {
            Some(last) if open && last.role == role && last.kind == kind => {
                last.content.push_str(&piece);
            }
            _ => {
                out.push(Block {
                    role,
                    kind,
                    content: piece,
                    whole: false,
                });
                open = false;
            }
        }
    }
    out
}

/// A whole block of `role`/`kind` with `content`.
pub fn whole(role: &str, kind: &str, content: &str) -> Block {
    Block {
        role: role.to_owned(),
        kind: kind.to_owned(),
        content: content.to_owned(),
        whole: true,
    }
}

/// Whether `frames` carry a server error.
pub fn has_error(frames: &[Value]) -> bool {
    frames
        .iter()
        .any(|f| f["role"] == "server" && f["type"] == "error")
}

/// What differs between the blocks seen and those expected, shortened for a report.
pub fn difference(seen: &[Block], expected: &[Block]) -> Option<String> {
    if seen == expected {
        return None;
    }
    let show = |blocks: &[Block]| {
        blocks
            .iter()
            .map(|b| {
                let content: String = b.content.chars().take(80).collect();
                format!(
                    "{}/{}{} {:?}{}",
                    b.role,
                    b.kind,
                    if b.whole { "" } else { " (partial)" },
                    content,
                    if b.content.len() > 80 {
                        format!("… ({} bytes)", b.content.len())
                    } else {
                        String::new()
                    }
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    Some(format!(
        "saw [{}], expected [{}]",
        show(seen),
        show(expected)
    ))
}
