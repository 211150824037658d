//! HTML and React: shown to the user, with a screenshot for the model when Chromium exists.

mod common;

use oi_computer::LocalComputer;
use oi_core::computer::Output;
use oi_core::lmc::{Kind, Recipient};

fn chromium() -> bool {
    [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ]
    .iter()
    .any(|p| {
        std::env::var_os("PATH")
            .map(|path| std::env::split_paths(&path).any(|d| d.join(p).is_file()))
            .unwrap_or(false)
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn html_yields_the_three_chunks() {
    let c = LocalComputer::new();
    let out = c.run_collect("html", "<h1>hi</h1>").await;
    assert_eq!(out.len(), 3, "{out:?}");
    assert_eq!(
        out[0],
        Output::console("HTML being displayed on the user's machine...").to(Recipient::Assistant)
    );
    assert_eq!(
        out[1],
        Output::code("html", "<h1>hi</h1>").to(Recipient::User)
    );
    assert_eq!(out[2].recipient, Some(Recipient::Assistant));
    if chromium() {
        assert_eq!(out[2].kind, Kind::Image, "{:?}", out[2]);
        assert_eq!(out[2].format.as_deref(), Some("base64.png"));
        assert!(out[2].content.as_text().unwrap().starts_with("iVBORw0KGgo"));
    } else {
        oi_testkit::skipped!("screenshot part skipped: no headless Chromium installed");
        let note = out[2].content.as_text().unwrap();
        assert!(
            note.contains("no screenshot") && note.contains("Chromium"),
            "{note}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn react_is_wrapped_in_the_template_and_notes_the_cdn() {
    let c = LocalComputer::new();
    let code = "function App() { return <h1>hi</h1>; }\nReactDOM.render(<App />, document.getElementById('root'));";
    let out = c.run_collect("REACT", code).await;
    assert_eq!(out.len(), 3, "{out:?}");
    let notice = out[0].content.as_text().unwrap();
    assert!(notice.starts_with("React is being displayed on the user's machine..."));
    assert!(
        notice.contains("CDN") && notice.contains("network"),
        "{notice}"
    );
    let page = out[1].content.as_text().unwrap();
    assert_eq!(out[1].recipient, Some(Recipient::User));
    assert!(page.contains("react@17") && page.contains("babel") && page.contains(code));
    let out = c.run_collect("react", "import React from 'react';").await;
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].recipient, Some(Recipient::Assistant));
    assert!(
        out[0]
            .content
            .as_text()
            .unwrap()
            .starts_with("Error: React format not supported.")
    );
}
