//! Profiles from a URL (`--profile https://…`), as the original takes them: fetched, then used
//! like a local YAML, JSON or Python profile — never executed (a `.py` profile is read without
//! running it, as a local one). A profile can turn on `auto_run` or send the conversation to
//! another `api_base`, so a fetched one is only used after the user has read it and agreed on
//! a terminal (oi-cli shows it; without a terminal, and in oi-server, it is refused).
//!
//! The fetch is one door, [`fetch`], built for a hostile server: HTTPS only (an `http://`
//! URL is refused before anything is sent, and so is a redirect to anything but HTTPS, at
//! most 3 of them); at most [`MAX_PROFILE_BYTES`] read, whatever `Content-Length` says; 10 s
//! for the whole of it, so a server that drips a byte a second is cut off; UTF-8 text only.

use std::time::Duration;

use super::{MAX_PROFILE_BYTES, Profile, ProfileError};

/// How long the whole fetch may take (connect, headers and body).
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// Redirects followed at most (each to HTTPS).
const MAX_REDIRECTS: usize = 3;

/// Whether a `--profile` value is a URL (`http://` or `https://`, any case).
pub fn is_url(name: &str) -> bool {
    let lower = name.trim_start().to_ascii_lowercase();
    lower.starts_with("https://") || lower.starts_with("http://")
}

/// How [`fetch`] trusts servers: the system's usual roots, plus, for tests, one more root.
#[derive(Debug, Clone, Default)]
pub struct Trust {
    extra_root: Option<reqwest::Certificate>,
}

impl Trust {
    /// The usual roots and `pem` (a certificate) as one more (tests serve HTTPS locally).
    pub fn with_extra_root(pem: &[u8]) -> Result<Trust, ProfileError> {
        let certificate = reqwest::Certificate::from_pem(pem)
            .map_err(|e| ProfileError(format!("not a PEM certificate: {e}")))?;
        Ok(Trust {
            extra_root: Some(certificate),
        })
    }
}

/// Fetches the profile at `url` and reads it (the format from the URL path's extension, as a
/// file's: `.py` Python read without running it, `.json` JSON, anything else YAML). The text
/// comes back too, to be shown before the profile is used.
pub async fn fetch(url: &str, trust: &Trust) -> Result<(Profile, String), ProfileError> {
    let shown = url.trim();
    let error = |message: String| ProfileError(format!("profile {shown}: {message}"));
    let parsed = reqwest::Url::parse(shown).map_err(|e| error(format!("not a URL: {e}")))?;
    if parsed.scheme() != "https" {
        return Err(error(
            "only https:// profiles are fetched (over plain http:// anyone on the way could \
             change the settings it gives, such as auto_run or api_base); use the https:// \
             address, or download it, read it, and give its path."
                .to_owned(),
        ));
    }
    let mut builder = reqwest::Client::builder()
        .timeout(FETCH_TIMEOUT)
        .connect_timeout(FETCH_TIMEOUT)
        .redirect(reqwest::redirect::Policy::custom(|attempt| {
            if attempt.previous().len() > MAX_REDIRECTS {
                attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
            } else if attempt.url().scheme() != "https" {
                let to = attempt.url().scheme().to_owned();
                attempt.error(format!(
                    "a redirect to a {to}: address (only https is followed)"
                ))
            } else {
                attempt.follow()
            }
        }))
        .https_only(true);
    if let Some(root) = &trust.extra_root {
        builder = builder.add_root_certificate(root.clone());
    }
    let client = builder
        .build()
        .map_err(|e| error(format!("no HTTP client: {e}")))?;
    let mut response = client
        .get(parsed.clone())
        .send()
        .await
        .map_err(|e| error(format!("could not be fetched: {}", reqwest_reason(&e))))?;
    let status = response.status();
    if status.is_redirection() {
        let to: String = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("nowhere")
            .chars()
            .filter(|c| !c.is_control())
            .take(200)
            .collect();
        return Err(error(format!(
            "the server redirects to {to}, which oi does not follow (only https:// redirects are)."
        )));
    }
    if !status.is_success() {
        return Err(error(format!(
            "the server answered HTTP {}",
            status.as_u16()
        )));
    }
    let too_big = || {
        error(format!(
            "more than {MAX_PROFILE_BYTES} bytes, more than a profile can be (real ones are a \
             few hundred); nothing of it was used."
        ))
    };
    if response
        .content_length()
        .is_some_and(|n| n > MAX_PROFILE_BYTES)
    {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    loop {
        let chunk = response
            .chunk()
            .await
            .map_err(|e| error(format!("could not be read: {}", reqwest_reason(&e))))?;
        let Some(chunk) = chunk else { break };
        if (bytes.len() + chunk.len()) as u64 > MAX_PROFILE_BYTES {
            return Err(too_big());
        }
        bytes.extend_from_slice(&chunk);
    }
    let text = String::from_utf8(bytes).map_err(|_| error("not UTF-8 text.".to_owned()))?;
    let origin = origin_for(&response.url().clone(), shown);
    let profile = Profile::parse(&text, &origin)?;
    Ok((profile, text))
}

/// The name a fetched profile is read under: the URL as given, with the final path's
/// extension deciding the format.
fn origin_for(final_url: &reqwest::Url, shown: &str) -> String {
    let path = final_url.path().to_ascii_lowercase();
    let ext = [".py", ".json", ".yaml", ".yml"]
        .into_iter()
        .find(|ext| path.ends_with(ext))
        .unwrap_or(".yaml");
    if shown.to_ascii_lowercase().ends_with(ext) {
        shown.to_owned()
    } else {
        // Profile::parse picks the format from the name's ending.
        format!("{shown}, read as {ext}")
    }
}

/// Why a request failed, with its causes (reqwest's own message says only "error sending
/// request").
fn reqwest_reason(error: &reqwest::Error) -> String {
    let mut text = if error.is_timeout() {
        format!("it took longer than {} s", FETCH_TIMEOUT.as_secs())
    } else {
        error.to_string()
    };
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_told_from_paths() {
        assert!(is_url("https://example.com/p.yaml"));
        assert!(is_url("HTTP://example.com/p.yaml"));
        assert!(!is_url("./https.yaml"));
        assert!(!is_url("profiles/p.yaml"));
    }

    #[test]
    fn the_format_follows_the_final_path() {
        let url = reqwest::Url::parse("https://h/a/p.py?x=1").unwrap_or_else(|_| unreachable!());
        assert_eq!(
            origin_for(&url, "https://h/a/p.py?x=1"),
            "https://h/a/p.py?x=1, read as .py"
        );
        let url = reqwest::Url::parse("https://h/x").unwrap_or_else(|_| unreachable!());
        assert_eq!(
            origin_for(&url, "https://h/p.py"),
            "https://h/p.py, read as .yaml"
        );
        let url = reqwest::Url::parse("https://h/p.json").unwrap_or_else(|_| unreachable!());
        assert_eq!(origin_for(&url, "https://h/p.json"), "https://h/p.json");
    }
}
