//! HTML and React: not executed but shown to the user, with a screenshot for the model when
//! headless Chromium is available (spec a.5).

use std::sync::Arc;

use futures::Stream;
use oi_core::computer::Output;
use oi_core::lmc::Recipient;

use crate::languages::Language;
use crate::languages::screenshot::{self, Shooters};

/// The original's React page: React 17, ReactDOM 17 and Babel standalone from unpkg.
const REACT_TEMPLATE: &str = include_str!("react_template.html");

/// Where the React code goes in [`REACT_TEMPLATE`].
const REACT_SLOT: &str = "{insert_react_code}";

/// The outputs of showing `code` (HTML or React); the screenshot's browser gets `env`.
pub(crate) fn show(
    language: Language,
    code: String,
    shooters: Arc<Shooters>,
    env: Vec<(std::ffi::OsString, std::ffi::OsString)>,
    offline: bool,
) -> impl Stream<Item = Output> + Send + 'static {
    async_stream::stream! {
        let (page, notice) = if language == Language::React {
            if is_incompatible(&code) {
                yield Output::console(
                    "Error: React format not supported. React code is inserted into a script tag of an HTML page that loads React, ReactDOM and Babel (for JSX) from a CDN, so `require`, `import` and `export` are not supported. Write components that use the global `React` and `ReactDOM`, and render them into `document.getElementById('root')`.",
                )
                .to(Recipient::Assistant);
                return;
            }
            (
                REACT_TEMPLATE.replace(REACT_SLOT, &code),
                "React is being displayed on the user's machine... (The page loads React, ReactDOM and Babel from the unpkg.com CDN, so it renders only where there is network access.)",
            )
        } else {
            (code, "HTML being displayed on the user's machine...")
        };
        yield Output::console(notice).to(Recipient::Assistant);
        yield Output::code("html", page.clone()).to(Recipient::User);
        match screenshot::take(&page, &shooters, env, offline).await {
            Ok(png) => yield Output::image("base64.png", png).to(Recipient::Assistant),
            Err(why) => {
                yield Output::console(format!(
                    "[oi: no screenshot of the page could be made for you: {why}.]"
                ))
                .to(Recipient::Assistant);
            }
        }
    }
}

/// Whether React code uses `require`, `import` or `export` in its first five lines.
fn is_incompatible(code: &str) -> bool {
    code.split('\n').take(5).any(|line| {
        let line = line.trim_start();
        line.starts_with("require(")
            || line
                .strip_prefix("import")
                .or_else(|| line.strip_prefix("export"))
                .is_some_and(|rest| rest.starts_with(char::is_whitespace))
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn incompatible_react() {
        assert!(super::is_incompatible("import React from 'react';"));
        assert!(super::is_incompatible("\n  require('y')"));
        assert!(!super::is_incompatible("const x = require('y')"));
        assert!(super::is_incompatible("  require(\"y\")"));
        assert!(!super::is_incompatible(
            "function App() { return <h1>hi</h1>; }"
        ));
        assert!(!super::is_incompatible("const important = 1;"));
    }
}
