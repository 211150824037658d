//! `echo` and `printf` of known words: their output, so `$(echo rm)` and `printf … | sh` can
//! be read.

use crate::escapes::unescape_c;
use crate::output::Output;
use crate::word::Field;

/// `echo [-neE] ARGS…`: its output when every argument is known.
pub(super) fn echo(args: &[Field]) -> Output {
    let mut escapes = false;
    let mut newline = true;
    let mut at = 0;
    while let Some(text) = args.get(at).and_then(Field::known) {
        let flags = text
            .strip_prefix('-')
            .filter(|f| !f.is_empty() && f.chars().all(|c| "neE".contains(c)));
        let Some(flags) = flags else { break };
        newline &= !flags.contains('n');
        if flags.contains('e') {
            escapes = true;
        }
        if flags.contains('E') {
            escapes = false;
        }
        at += 1;
    }
    let rest = &args[at..];
    if rest.iter().any(Field::decoded) {
        return Output::Decoded;
    }
    let Some(words) = rest
        .iter()
        .map(Field::known)
        .collect::<Option<Vec<String>>>()
    else {
        return Output::Unknown;
    };
    let text = words.join(" ");
    let text = if escapes { unescape_c(&text) } else { text };
    Output::Literal(if newline { format!("{text}\n") } else { text })
}

/// `printf FORMAT ARGS…` with `%s`, `%b`, `%d`, `%%` and escapes: its output when known.
pub(super) fn printf(args: &[Field]) -> Output {
    if args.iter().any(Field::decoded) {
        return Output::Decoded;
    }
    let Some(texts) = args
        .iter()
        .map(Field::known)
        .collect::<Option<Vec<String>>>()
    else {
        return Output::Unknown;
    };
    let Some((format, values)) = texts.split_first() else {
        return Output::Unknown;
    };
    if format == "-v" {
        return Output::Unknown;
    }
    let mut values = values.iter();
    let mut out = String::new();
    loop {
        let mut chars = unescape_c(format)
            .chars()
            .collect::<Vec<char>>()
            .into_iter()
            .peekable();
        let mut used = false;
        while let Some(c) = chars.next() {
            if c != '%' {
                out.push(c);
                continue;
            }
            match chars.next() {
                Some('%') => out.push('%'),
                Some('s' | 'd' | 'i' | 'u') => {
                    used = true;
                    out.push_str(values.next().map_or("", String::as_str));
                }
                Some('b') => {
                    used = true;
                    out.push_str(&unescape_c(values.next().map_or("", String::as_str)));
                }
                _ => return Output::Unknown,
            }
        }
        if !used || values.len() == 0 {
            break;
        }
    }
    Output::Literal(out)
}
