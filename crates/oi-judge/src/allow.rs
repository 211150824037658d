//! Allow rules: which shell blocks run without asking.
//!
//! A block is allowed only when it parses (tree-sitter-bash, no errors) into exactly one simple
//! command, or one pipeline of simple commands, each of whose words match an allow rule as
//! words (`git status` matches `git status -s`, not `git statusx`; `ls` does not match `lsblk`
//! or `/bin/ls`). Every word must be literal: plain, quoted or escaped text, with no
//! substitution (`$(…)`, backticks, `<(…)`), no expansion (`$X`, `${X}`, `$((…))`), no
//! assignment (`FOO=1 ls`) and, in the words a rule compares, no glob or brace. The only
//! redirections allowed are to `/dev/null` and between descriptors (`2>&1`). No `;`, `&&`,
//! `||`, `&`, subshell, group, function, loop, here-document or second command line. In a
//! pipeline, no command may be a shell or interpreter (`ls | sh` asks even with `--allow sh`).
//! Comments are ignored. Everything else asks.

use tree_sitter::{Node, Parser};

/// Programs that run code they read (not allowed inside a pipeline, whatever the rules).
const RUNNERS: &[&str] = &[
    "sh",
    "bash",
    "zsh",
    "dash",
    "ksh",
    "mksh",
    "ash",
    "fish",
    "rbash",
    "csh",
    "tcsh",
    "eval",
    "exec",
    "source",
    ".",
    "xargs",
    "env",
    "sudo",
    "doas",
    "su",
    "nohup",
    "timeout",
    "nice",
    "time",
    "command",
    "builtin",
    "busybox",
    "python",
    "python2",
    "python3",
    "perl",
    "ruby",
    "node",
    "nodejs",
    "deno",
    "bun",
    "php",
    "lua",
    "Rscript",
    "R",
    "tclsh",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "pwsh",
    "powershell",
    "osascript",
    "parallel",
    "watch",
    "script",
    "ssh",
];

/// Whether `code` (a shell block) is allowed to run without asking by one of `rules`.
pub(crate) fn allowed(code: &str, rules: &[String]) -> bool {
    let rules: Vec<Vec<&str>> = rules
        .iter()
        .map(|r| r.split_whitespace().collect::<Vec<&str>>())
        .filter(|words| !words.is_empty())
        .collect();
    if rules.is_empty() {
        return false;
    }
    let mut parser = Parser::new();
    if parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .is_err()
    {
        return false;
    }
    let Some(tree) = parser.parse(code, None) else {
        return false;
    };
    let root = tree.root_node();
    if root.has_error() {
        return false;
    }
    let mut cursor = root.walk();
    let statements: Vec<Node> = root
        .named_children(&mut cursor)
        .filter(|n| n.kind() != "comment")
        .collect();
    let [statement] = statements.as_slice() else {
        return false;
    };
    if statement
        .next_sibling()
        .is_some_and(|s| !s.is_named() && s.kind() != "\n")
    {
        return false;
    }
    let Some(commands) = simple_commands(*statement, code) else {
        return false;
    };
    let mut programs = Vec::new();
    for command in &commands {
        let Some(words) = literal_words(*command, code) else {
            return false;
        };
        let Some(rule) = rules.iter().find(|rule| matches_rule(rule, &words)) else {
            return false;
        };
        if rule.iter().enumerate().any(|(n, _)| words[n].expands) {
            return false;
        }
        programs.push(words[0].text.clone());
    }
    commands.len() == 1 || !programs.iter().any(|p| RUNNERS.contains(&p.as_str()))
}

/// The simple commands of a statement that is one command or one pipeline of commands, with
/// only harmless redirections; `None` for anything else.
fn simple_commands<'t>(statement: Node<'t>, code: &str) -> Option<Vec<Node<'t>>> {
    match statement.kind() {
        "command" => Some(vec![statement]),
        "pipeline" => {
            let mut cursor = statement.walk();
            let mut commands = Vec::new();
            for child in statement.named_children(&mut cursor) {
                match child.kind() {
                    "command" => commands.push(child),
                    "redirected_statement" => commands.extend(simple_commands(child, code)?),
                    _ => return None,
                }
            }
            Some(commands)
        }
        "redirected_statement" => {
            let body = statement.child_by_field_name("body")?;
            let mut cursor = statement.walk();
            for child in statement.named_children(&mut cursor) {
                if child.id() != body.id() && !harmless_redirect(child, code) {
                    return None;
                }
            }
            simple_commands(body, code)
        }
        _ => None,
    }
}

/// `>/dev/null`, `2>/dev/null`, `&>/dev/null`, `</dev/null`, `2>&1`, `>&2`.
fn harmless_redirect(node: Node, code: &str) -> bool {
    if node.kind() != "file_redirect" {
        return false;
    }
    let Some(destination) = node.child_by_field_name("destination") else {
        return false;
    };
    let operator = (0..node.child_count())
        .filter_map(|i| node.child(i))
        .find(|c| !c.is_named())
        .and_then(|c| code.get(c.byte_range()))
        .unwrap_or("");
    let target = code.get(destination.byte_range()).unwrap_or("");
    match operator {
        ">&" | "<&" => destination.kind() == "number" || target == "-",
        ">" | ">>" | "&>" | "&>>" | "<" | ">|" => {
            destination.kind() == "word" && target == "/dev/null"
        }
        _ => false,
    }
}

/// One word of an allowed command: its text after quote removal, and whether the shell could
/// still change it (globs, braces, `~`).
struct LiteralWord {
    text: String,
    expands: bool,
}

/// The words of a simple command when every one is literal.
fn literal_words(command: Node, code: &str) -> Option<Vec<LiteralWord>> {
    let mut words = Vec::new();
    let mut cursor = command.walk();
    for child in command.named_children(&mut cursor) {
        match child.kind() {
            "command_name" => words.insert(0, literal(child, code)?),
            "file_redirect" if harmless_redirect(child, code) => {}
            _ => words.push(literal(child, code)?),
        }
    }
    (!words.is_empty()).then_some(words)
}

/// A word made only of literal text.
fn literal(node: Node, code: &str) -> Option<LiteralWord> {
    let text = code.get(node.byte_range())?;
    match node.kind() {
        "command_name" | "concatenation" => {
            let mut cursor = node.walk();
            let mut out = LiteralWord {
                text: String::new(),
                expands: false,
            };
            let mut at = node.start_byte();
            for child in node.children(&mut cursor) {
                if child.start_byte() != at || !child.is_named() {
                    return None;
                }
                let part = literal(child, code)?;
                out.text.push_str(&part.text);
                out.expands |= part.expands;
                at = child.end_byte();
            }
            (at == node.end_byte()).then_some(out)
        }
        "word" | "number" => {
            let mut out = String::new();
            let mut expands = text.starts_with('~');
            let mut chars = text.chars();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => out.extend(chars.next()),
                    '*' | '?' | '[' | '{' | '}' => {
                        expands = true;
                        out.push(c);
                    }
                    '$' | '`' => return None,
                    _ => out.push(c),
                }
            }
            Some(LiteralWord { text: out, expands })
        }
        "raw_string" => Some(LiteralWord {
            text: text.get(1..text.len().saturating_sub(1))?.to_owned(),
            expands: false,
        }),
        "string" => {
            let mut cursor = node.walk();
            if node
                .named_children(&mut cursor)
                .any(|c| c.kind() != "string_content")
            {
                return None;
            }
            let inner = text.get(1..text.len().saturating_sub(1))?;
            if inner.contains(['$', '`']) {
                return None;
            }
            Some(LiteralWord {
                text: inner.replace("\\\"", "\"").replace("\\\\", "\\"),
                expands: false,
            })
        }
        _ => None,
    }
}

/// Whether the command's words start with the rule's words.
fn matches_rule(rule: &[&str], words: &[LiteralWord]) -> bool {
    rule.len() <= words.len() && rule.iter().zip(words).all(|(r, w)| *r == w.text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_single_literal_commands_that_match_as_words() {
        let rules = vec!["ls".to_owned(), "git status".to_owned(), "grep".to_owned()];
        for code in [
            "ls",
            "ls -la",
            "ls -la\n",
            "# list\nls -la # all",
            "'ls' \"-la\"",
            "ls >/dev/null 2>&1",
            "git status --short",
            "ls | grep x",
            "ls *.txt",
        ] {
            assert!(allowed(code, &rules), "{code:?} should be allowed");
        }
        for code in [
            "ls >/dev/null; echo X",
            "ls $(cmd)",
            "ls `cmd`",
            "lsblk",
            "/bin/ls",
            "ls && rm x",
            "ls || rm x",
            "ls &",
            "ls\nls",
            "(ls)",
            "{ ls; }",
            "ls > out.txt",
            "ls 2>err",
            "ls $HOME",
            "ls \"$HOME\"",
            "FOO=1 ls",
            "ls <(rm x)",
            "l* -la",
            "git statusx",
            "git push",
            "ls | sh",
            "ls | grep x | bash",
            "f() { ls; }",
            "ls \"unterminated",
            "ls <<EOF\nx\nEOF",
            "",
        ] {
            assert!(!allowed(code, &rules), "{code:?} should ask");
        }
        assert!(!allowed("ls | sh", &["ls".into(), "sh".into()]));
        assert!(allowed("sh -c 'x'", &["sh".into()]), "the user's own rule");
    }
}
