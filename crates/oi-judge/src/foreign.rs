//! Languages oi does not parse (JavaScript, Ruby, R, PowerShell, …): the shell commands they
//! are most likely to run sit in string literals (`execSync("rm -rf ~")`, `system('…')`), so
//! each literal is read as a shell script. Best effort: a command assembled from pieces at run
//! time is not seen.

use crate::effects_in_code;
use crate::env::Env;
use crate::scan::Scan;

/// Reads the string literals of `source` as shell scripts.
pub(crate) fn read(scan: &mut Scan, source: &str) {
    if source.to_lowercase().contains("format c:") {
        scan.block("it formats a disk (`format c:`)".to_owned());
    }
    let literals = string_literals(source);
    effects_in_code::judge(scan, source, &literals);
    for literal in literals {
        if literal.contains(char::is_whitespace) || literal.contains("(){") {
            let env = Env::new(scan.places);
            scan.shell(&literal, env);
        }
    }
}

/// The contents of `'…'`, `"…"` and `` `…` `` literals, with backslash escapes resolved.
fn string_literals(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = source.chars();
    while let Some(c) = chars.next() {
        if !matches!(c, '\'' | '"' | '`') {
            continue;
        }
        let mut literal = String::new();
        let mut closed = false;
        while let Some(next) = chars.next() {
            match next {
                '\\' => {
                    if let Some(escaped) = chars.next() {
                        literal.push(escaped);
                    }
                }
                _ if next == c => {
                    closed = true;
                    break;
                }
                _ => literal.push(next),
            }
        }
        if closed {
            out.push(literal);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_found() {
        assert_eq!(
            string_literals(r#"execSync("rm -rf ~"); x = 'it\'s'; `a`"#),
            ["rm -rf ~", "it's", "a"]
        );
    }
}
