//! Repairs of code that models commonly garble (spec b.5 step 2), and the classification of a
//! code block before it runs (steps 3–5).

use serde_json::Value;

/// What to do with the code block at the end of the conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodePlan {
    /// Run it.
    Run {
        /// The language: in the respond loop, its canonical name (`python`, `shell`).
        language: String,
        /// The code (possibly repaired).
        code: String,
    },
    /// A `text`/`markdown`/`plaintext` "code" block: store it as an assistant message instead.
    Note(String),
    /// No session runs this language.
    Unsupported {
        /// The language asked for.
        language: String,
        /// The code.
        code: String,
    },
    /// The block is empty.
    Empty,
}

/// Repairs `code` the way the original does and returns the (language, code) to use.
pub fn repair(language: &str, code: &str) -> (String, String) {
    let mut language = language.trim().to_lowercase();
    let mut code = code.to_owned();
    if let Some(rest) = code.strip_prefix("`\n") {
        code = rest.trim().to_owned();
    }
    if let Some(rest) = code.strip_prefix("functions.execute(") {
        let inner = rest.trim_end().trim_end_matches(')');
        if let Some((l, c)) = language_and_code(inner, false) {
            (language, code) = (l, c);
        }
    }
    if let Some(stripped) = code.trim().strip_suffix("executeexecute") {
        code = stripped.to_owned();
    }
    let squeezed: String = code.chars().filter(|c| !c.is_whitespace()).collect();
    if squeezed.starts_with("{\"language\":") {
        if let Some((l, c)) = language_and_code(&code, true) {
            (language, code) = (l, c);
        }
    } else if squeezed.starts_with("{language:") {
        let quoted = code
            .replace("language: ", "\"language\": ")
            .replace("code: ", "\"code\": ");
        if let Some((l, c)) = language_and_code(&quoted, true) {
            (language, code) = (l, c);
        }
    }
    (language.trim().to_lowercase(), code)
}

/// Parses `{"language": .., "code": ..}`; with `exact`, no other keys are allowed.
fn language_and_code(json: &str, exact: bool) -> Option<(String, String)> {
    let Value::Object(map) = serde_json::from_str::<Value>(json).ok()? else {
        return None;
    };
    if exact && map.len() != 2 {
        return None;
    }
    let language = map.get("language")?.as_str()?.to_owned();
    let code = map.get("code")?.as_str()?.to_owned();
    Some((language, code))
}

/// Classifies a repaired block. `supported` says whether a session runs the language.
pub fn plan(language: &str, code: &str, supported: impl Fn(&str) -> bool) -> CodePlan {
    if matches!(language, "text" | "markdown" | "plaintext") {
        return CodePlan::Note(format!("```\n{code}\n```"));
    }
    if !supported(language) {
        return CodePlan::Unsupported {
            language: language.to_owned(),
            code: code.to_owned(),
        };
    }
    if code.trim().is_empty() {
        return CodePlan::Empty;
    }
    CodePlan::Run {
        language: language.to_owned(),
        code: code.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_originals_hallucination_cases() {
        assert_eq!(
            repair("python", "10+12executeexecute\n"),
            ("python".into(), "10+12".into())
        );
        assert_eq!(
            repair(
                "python",
                "  {\n \"language\": \"python\",\n \"code\": \"10+12\"\n}"
            ),
            ("python".into(), "10+12".into())
        );
        assert_eq!(
            repair(
                "python",
                "functions.execute({\"language\": \"python\", \"code\": \"10+12\"})"
            ),
            ("python".into(), "10+12".into())
        );
        assert_eq!(
            repair(
                "python",
                "{language: \"python\", code: \"print('hello')\" }"
            ),
            ("python".into(), "print('hello')".into())
        );
        assert_eq!(
            repair("Python ", "`\n print(1) \n"),
            ("python".into(), "print(1)".into())
        );
    }

    #[test]
    fn plain_code_is_untouched() {
        assert_eq!(
            repair("shell", "echo {language: x}"),
            ("shell".into(), "echo {language: x}".into())
        );
    }

    #[test]
    fn plans() {
        let yes = |_: &str| true;
        assert_eq!(
            plan("markdown", "# hi", yes),
            CodePlan::Note("```\n# hi\n```".into())
        );
        assert_eq!(plan("python", " \n", yes), CodePlan::Empty);
        assert_eq!(
            plan("cobol", "x", |_| false),
            CodePlan::Unsupported {
                language: "cobol".into(),
                code: "x".into()
            }
        );
    }
}
