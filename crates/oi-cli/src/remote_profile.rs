//! `--profile https://…`: the profile is fetched (oi_config's one door: HTTPS only, capped,
//! timed), shown, and used only when the user says yes on a terminal. Without a terminal it
//! is refused before anything is fetched: a piped or scripted `oi` has no one to read it, and
//! `-y` (run code without asking) is no answer to "may this page change my settings".

use std::io::{BufRead, IsTerminal, Write};

use oi_config::Profile;
use oi_config::profiles::remote::{self, Trust};

use crate::sanitize::clean;

/// The most lines of a fetched profile shown before asking (the rest is counted).
const SHOWN_LINES: usize = 200;

/// When `name` is a URL: fetches, shows and asks; `Ok(None)` when it is not a URL.
pub async fn fetch_and_confirm(name: &str) -> anyhow::Result<Option<Profile>> {
    if !remote::is_url(name) {
        return Ok(None);
    }
    if !std::io::stdin().is_terminal() || !std::io::stderr().is_terminal() {
        anyhow::bail!(
            "profile {}: a profile from a URL is used only after you read it and agree, on a \
             terminal; none is here, so nothing was fetched. Download it, read it, and give \
             its path: --profile ./profile.yaml",
            clean(name.trim())
        );
    }
    let (profile, text) = remote::fetch(name, &Trust::default()).await?;
    let mut err = std::io::stderr();
    let stdin = std::io::stdin();
    if confirm(&profile, &text, &mut stdin.lock(), &mut err)? {
        Ok(Some(profile))
    } else {
        anyhow::bail!("the profile was not used; nothing changed")
    }
}

/// Shows `text` (terminal escapes removed) and what oi will take from it, then asks; yes
/// only for `y` or `yes`.
pub fn confirm(
    profile: &Profile,
    text: &str,
    input: &mut dyn BufRead,
    out: &mut dyn Write,
) -> std::io::Result<bool> {
    writeln!(out, "The profile at {}:", clean(&profile.origin))?;
    writeln!(out, "----------------------------------------")?;
    let lines: Vec<&str> = text.lines().collect();
    for line in lines.iter().take(SHOWN_LINES) {
        writeln!(out, "{}", clean(line))?;
    }
    if lines.len() > SHOWN_LINES {
        writeln!(out, "… and {} more lines", lines.len() - SHOWN_LINES)?;
    }
    writeln!(out, "----------------------------------------")?;
    for note in profile.note_lines() {
        writeln!(out, "{}", clean(&note))?;
    }
    writeln!(
        out,
        "oi never runs a profile's code. Its settings can run code without asking (auto_run), \
         send your conversation elsewhere (api_base) or loosen limits."
    )?;
    write!(out, "Use this profile? (y/N): ")?;
    out.flush()?;
    let mut answer = String::new();
    input.read_line(&mut answer)?;
    Ok(matches!(
        answer.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_yes_accepts_and_escapes_are_not_shown() {
        // (The YAML reader refuses control characters itself; the text is shown all the same.)
        let profile = Profile::parse("llm:\n  model: gpt-4o\n", "https://h/p.yaml")
            .unwrap_or_else(|e| panic!("{e}"));
        let text = "llm:\n  model: gpt-4o\n# \u{1b}]0;pwned\u{7} title\n";
        for (answer, accepted) in [
            ("y\n", true),
            ("YES\n", true),
            ("\n", false),
            ("n\n", false),
        ] {
            let mut out = Vec::new();
            let ok = confirm(&profile, text, &mut answer.as_bytes(), &mut out)
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(ok, accepted, "{answer:?}");
            let shown = String::from_utf8_lossy(&out);
            assert!(shown.contains("model: gpt-4o"), "{shown}");
            assert!(!shown.contains('\u{1b}'), "{shown:?}");
        }
    }
}
