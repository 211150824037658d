//! Reading a command's options: where they end, the value of one, and joining arguments.

use crate::word::{Field, Seg};

/// Whether `field` is an option (`-x`, `--long`).
pub(super) fn is_option(field: &Field) -> bool {
    match field.segs.first() {
        Some(Seg::Lit(text)) => text.starts_with('-') && text.len() > 1,
        _ => false,
    }
}

/// The index of the first argument after the options (and `--`); options in `with_value`
/// take the next argument unless written `--opt=value`.
pub(super) fn after_options(args: &[Field], with_value: &[&str]) -> usize {
    let mut at = 0;
    while let Some(arg) = args.get(at) {
        let Some(text) = arg.known() else { break };
        if text == "--" {
            return at + 1;
        }
        if !text.starts_with('-') || text == "-" {
            break;
        }
        at += 1;
        if with_value.contains(&text.as_str()) {
            at += 1;
        }
    }
    at.min(args.len())
}

/// The argument of the first option in `names` (`-c SCRIPT`, `--command=SCRIPT`, `-lc SCRIPT`).
pub(super) fn option_value(args: &[Field], names: &[&str]) -> Option<Field> {
    for (at, arg) in args.iter().enumerate() {
        let Some(text) = arg.known() else { continue };
        for name in names {
            if text == *name {
                return args.get(at + 1).cloned();
            }
            if let Some(value) = text.strip_prefix(&format!("{name}=")) {
                return Some(Field::lit(value));
            }
        }
    }
    None
}

/// Joins fields with spaces, as `eval` does.
pub(super) fn join_fields(args: &[Field]) -> Field {
    let mut joined = Field::default();
    for (n, arg) in args.iter().enumerate() {
        if n > 0 {
            joined.segs.push(Seg::Lit(" ".into()));
        }
        joined.segs.extend(arg.segs.iter().cloned());
    }
    joined
}

/// The field without a literal prefix (`of=/dev/sda` → `/dev/sda`).
pub(super) fn strip_field_prefix(field: &Field, prefix: &str) -> Option<Field> {
    let mut segs = field.segs.clone();
    match segs.first_mut() {
        Some(Seg::Lit(text)) if text.starts_with(prefix) => {
            *text = text[prefix.len()..].to_owned();
            Some(Field { segs })
        }
        _ => None,
    }
}
