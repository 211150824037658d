//! The one way oi-llm makes its HTTP client: redirects are never followed. A model request
//! carries a key (`Authorization`, Anthropic's `x-api-key`, Azure's `api-key`) and the whole
//! conversation; reqwest strips only `Authorization` on a cross-host redirect, so in the
//! stop-32 review an endpoint's redirect re-sent the Anthropic key and the conversation to
//! another host. A redirect now ends the request with the endpoint's own 3xx answer.

/// A client that follows no redirect.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap_or_default()
}
