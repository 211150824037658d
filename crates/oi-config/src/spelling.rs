//! Flag spellings: Open Interpreter's flags are written with underscores (`--api_base`), many
//! people write dashes (`--api-base`), and the original has multi-letter short flags (`-ab`).
//! [`normalize`] rewrites argv so the parser sees one spelling; both binaries use it.

/// The original's short flags that are longer than one letter, and the long flag each means.
const MULTI_LETTER_SHORTS: &[(&str, &str)] = &[
    ("-ab", "--api_base"),
    ("-ak", "--api_key"),
    ("-av", "--api_version"),
    ("-ci", "--custom_instructions"),
    ("-sm", "--system_message"),
    ("-cw", "--context_window"),
    ("-xo", "--max_output"),
    ("-lsf", "--llm_supports_functions"),
    ("-lsv", "--llm_supports_vision"),
    ("-nhl", "--no_highlight_active_line"),
    ("-dt", "--disable_telemetry"),
    ("-pl", "--plain"),
    ("-vi", "--vision"),
    ("-ml", "--multi_line"),
    ("-sp", "--speak_messages"),
    ("-safe", "--safe_mode"),
    ("-debug", "--debug"),
    ("-os", "--os"),
];

/// The original's short flags that are longer than one letter, each with its long flag
/// (`("-ab", "--api_base")`), for help texts.
pub fn multi_letter_shorts() -> &'static [(&'static str, &'static str)] {
    MULTI_LETTER_SHORTS
}

/// Rewrites argv so clap sees one spelling: `-ab` → `--api_base`, `--api-base` → `--api_base`,
/// `--no-llm-supports-functions` → `--no-llm_supports_functions`. Stops at a bare `--`.
pub fn normalize(args: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest_is_positional = false;
    for arg in args {
        if rest_is_positional || !arg.starts_with('-') || arg == "-" {
            out.push(arg);
            continue;
        }
        if arg == "--" {
            rest_is_positional = true;
            out.push(arg);
            continue;
        }
        if let Some((_, long)) = MULTI_LETTER_SHORTS.iter().find(|(short, _)| *short == arg) {
            out.push((*long).to_owned());
            continue;
        }
        let Some(body) = arg.strip_prefix("--") else {
            out.push(arg);
            continue;
        };
        let (name, value) = match body.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (body, None),
        };
        let name = match name
            .strip_prefix("no-")
            .or_else(|| name.strip_prefix("no_"))
        {
            Some(positive) if positive.starts_with("llm") => {
                format!("no-{}", positive.replace('-', "_"))
            }
            _ => name.replace('-', "_"),
        };
        out.push(match value {
            Some(value) => format!("--{name}={value}"),
            None => format!("--{name}"),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(args: &[&str]) -> Vec<String> {
        normalize(args.iter().map(|s| (*s).to_owned()))
    }

    #[test]
    fn spellings_are_normalised() {
        assert_eq!(
            norm(&[
                "oi",
                "-ab",
                "http://x/v1",
                "--api-key=k",
                "--no-llm-supports-functions",
                "--deny-network",
                "--",
                "-ab"
            ]),
            vec![
                "oi",
                "--api_base",
                "http://x/v1",
                "--api_key=k",
                "--no-llm_supports_functions",
                "--deny_network",
                "--",
                "-ab"
            ]
        );
    }
}
