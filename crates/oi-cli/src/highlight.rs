//! Light terminal styling: Markdown for the model's messages and syntax colours for code,
//! applied one complete line at a time so text can stream.

const RESET: &str = "\x1b[0m";
const BOLD: &str = "\x1b[1m";
const ITALIC: &str = "\x1b[3m";
const KEYWORD: &str = "\x1b[35m";
const STRING: &str = "\x1b[32m";
const NUMBER: &str = "\x1b[33m";
const COMMENT: &str = "\x1b[2;37m";
const INLINE_CODE: &str = "\x1b[36m";
const CODE: &str = "\x1b[36m";

/// Keywords of the languages the model writes most.
fn keywords(language: &str) -> &'static [&'static str] {
    match language {
        "python" | "py" => &[
            "def", "class", "return", "if", "elif", "else", "for", "while", "in", "import", "from",
            "as", "with", "try", "except", "finally", "raise", "pass", "break", "continue",
            "lambda", "yield", "and", "or", "not", "is", "None", "True", "False", "global",
            "async", "await",
        ],
        "shell" | "bash" | "sh" | "zsh" => &[
            "if", "then", "else", "elif", "fi", "for", "while", "do", "done", "case", "esac", "in",
            "function", "export", "local", "return", "echo", "cd",
        ],
        "javascript" | "js" | "node" | "react" => &[
            "function",
            "const",
            "let",
            "var",
            "return",
            "if",
            "else",
            "for",
            "while",
            "class",
            "new",
            "import",
            "export",
            "from",
            "async",
            "await",
            "try",
            "catch",
            "throw",
            "null",
            "undefined",
            "true",
            "false",
        ],
        "ruby" => &[
            "def", "end", "class", "module", "if", "elsif", "else", "unless", "do", "while",
            "return", "nil", "true", "false",
        ],
        "r" => &[
            "function", "if", "else", "for", "while", "return", "TRUE", "FALSE", "NULL", "library",
        ],
        "java" => &[
            "public", "private", "static", "void", "class", "return", "new", "if", "else", "for",
            "while", "int", "String",
        ],
        _ => &[],
    }
}

fn comment_start(language: &str) -> &'static str {
    match language {
        "javascript" | "js" | "node" | "react" | "java" => "//",
        _ => "#",
    }
}

/// Colours one line of code.
pub fn code_line(language: &str, line: &str) -> String {
    let words = keywords(language);
    if words.is_empty() {
        return format!("{CODE}{line}{RESET}");
    }
    let comment = comment_start(language);
    let mut out = String::new();
    let chars: Vec<char> = line.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let rest: String = chars[i..].iter().collect();
        if rest.starts_with(comment)
            && !(comment == "#" && language == "shell" && i > 0 && chars[i - 1] == '$')
        {
            out.push_str(&format!("{COMMENT}{rest}{RESET}"));
            break;
        }
        if c == '"' || c == '\'' {
            let mut j = i + 1;
            while j < chars.len() && chars[j] != c {
                j += if chars[j] == '\\' { 2 } else { 1 };
            }
            let end = (j + 1).min(chars.len());
            let text: String = chars[i..end].iter().collect();
            out.push_str(&format!("{STRING}{text}{RESET}"));
            i = end;
            continue;
        }
        if c.is_alphabetic() || c == '_' {
            let mut j = i;
            while j < chars.len() && (chars[j].is_alphanumeric() || chars[j] == '_') {
                j += 1;
            }
            let word: String = chars[i..j].iter().collect();
            if words.contains(&word.as_str()) {
                out.push_str(&format!("{KEYWORD}{word}{RESET}"));
            } else {
                out.push_str(&word);
            }
            i = j;
            continue;
        }
        if c.is_ascii_digit() {
            let mut j = i;
            while j < chars.len()
                && (chars[j].is_ascii_digit() || chars[j] == '.' || chars[j] == '_')
            {
                j += 1;
            }
            let number: String = chars[i..j].iter().collect();
            out.push_str(&format!("{NUMBER}{number}{RESET}"));
            i = j;
            continue;
        }
        out.push(c);
        i += 1;
    }
    out
}

/// Styles inline Markdown: `code`, **bold**, *italic*.
fn inline(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while !rest.is_empty() {
        let next = ["`", "**", "*"]
            .iter()
            .filter_map(|m| rest.find(m).map(|at| (at, *m)))
            .min_by_key(|(at, m)| (*at, usize::MAX - m.len()));
        let Some((at, marker)) = next else {
            out.push_str(rest);
            break;
        };
        let after = &rest[at + marker.len()..];
        let Some(close) = after.find(marker).filter(|c| *c > 0) else {
            out.push_str(&rest[..at + marker.len()]);
            rest = after;
            continue;
        };
        out.push_str(&rest[..at]);
        let style = match marker {
            "`" => INLINE_CODE,
            "**" => BOLD,
            _ => ITALIC,
        };
        out.push_str(&format!("{style}{}{RESET}", &after[..close]));
        rest = &after[close + marker.len()..];
    }
    out
}

/// Styles one complete line of a Markdown message (headings, lists, quotes, inline marks).
pub fn markdown_line(line: &str) -> String {
    let trimmed = line.trim_start();
    if let Some(title) = trimmed.strip_prefix('#') {
        return format!("{BOLD}{}{RESET}", title.trim_start_matches('#').trim());
    }
    if trimmed == "---" || trimmed == "***" {
        return format!("{COMMENT}{}{RESET}", "─".repeat(40));
    }
    if let Some(item) = trimmed
        .strip_prefix("- ")
        .or_else(|| trimmed.strip_prefix("* "))
    {
        let indent = &line[..line.len() - trimmed.len()];
        return format!("{indent}• {}", inline(item));
    }
    if let Some(quote) = trimmed.strip_prefix("> ") {
        return format!("{COMMENT}│{RESET} {}", inline(quote));
    }
    inline(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(text: &str) -> String {
        let mut out = String::new();
        let mut in_escape = false;
        for c in text.chars() {
            match (in_escape, c) {
                (false, '\x1b') => in_escape = true,
                (true, 'm') => in_escape = false,
                (true, _) => {}
                (false, c) => out.push(c),
            }
        }
        out
    }

    #[test]
    fn styling_never_changes_the_text() {
        for line in [
            "def f(x): return x + 1  # add",
            "echo \"$HOME\" 'a#b'",
            "x = 'it\\'s' 42",
        ] {
            assert_eq!(plain(&code_line("python", line)), line);
            assert_eq!(plain(&code_line("shell", line)), line);
        }
        assert_eq!(
            plain(&markdown_line("Use `ls` and **care** or *not*")),
            "Use ls and care or not"
        );
        assert_eq!(plain(&markdown_line("## Plan")), "Plan");
        assert_eq!(plain(&markdown_line("  - step one")), "  • step one");
        assert_eq!(plain(&markdown_line("2 * 3 = 6")), "2 * 3 = 6");
    }

    #[test]
    fn keywords_strings_and_comments_are_coloured() {
        let line = code_line("python", "import os  # x");
        assert!(
            line.contains(&format!("{KEYWORD}import{RESET}"))
                && line.contains(&format!("{COMMENT}# x{RESET}"))
        );
    }
}
