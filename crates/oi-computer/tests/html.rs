//! HTML and React: shown to the user, with a screenshot for the model when Chromium exists.
#![allow(clippy::unwrap_used, clippy::expect_used)]

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

/// How many connections reach a listener on loopback (answering each with a 404 at once)
/// while `computer` shows the page `page(port)`.
async fn connections_from(computer: &LocalComputer, page: impl Fn(u16) -> String) -> usize {
    use std::io::{Read, Write};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let server = {
        let (count, done) = (Arc::clone(&count), Arc::clone(&done));
        std::thread::spawn(move || {
            while !done.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((mut stream, _)) => {
                        count.fetch_add(1, Ordering::SeqCst);
                        let _ = stream.set_nonblocking(false);
                        let _ = stream.set_read_timeout(Some(std::time::Duration::from_secs(2)));
                        let mut request = [0u8; 4096];
                        let _ = stream.read(&mut request);
                        let _ = stream.write_all(
                            b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                        );
                    }
                    Err(_) => std::thread::sleep(std::time::Duration::from_millis(10)),
                }
            }
        })
    };
    // Control: the listener answers (the test's own connection is counted, then left out).
    drop(std::net::TcpStream::connect(("127.0.0.1", port)).unwrap());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while count.load(Ordering::SeqCst) == 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(
        count.load(Ordering::SeqCst),
        1,
        "control: the listener answers"
    );
    let out = computer.run_collect("html", &page(port)).await;
    done.store(true, Ordering::SeqCst);
    server.join().unwrap();
    assert_eq!(
        out[2].kind,
        Kind::Image,
        "a screenshot was made: {:?}",
        out[2]
    );
    count.load(Ordering::SeqCst) - 1
}

/// How many connections reach a listener on loopback while `computer` shows a page that asks
/// for an image and a fetch from it.
async fn page_connections(computer: &LocalComputer) -> usize {
    connections_from(computer, |port| {
        format!(
            "<img src=\"http://127.0.0.1:{port}/exfil-img?secret=1\"><script>fetch('http://127.0.0.1:{port}/exfil-fetch', {{mode: 'no-cors'}});</script>"
        )
    })
    .await
}

/// How bright the screenshot of `page` is (0 black … 1 white).
async fn shot_brightness(computer: &LocalComputer, page: &str) -> f64 {
    let out = computer.run_collect("html", page).await;
    assert_eq!(
        out[2].kind,
        Kind::Image,
        "a screenshot was made: {:?}",
        out[2]
    );
    oi_testkit::png_brightness(out[2].content.as_text().unwrap()).unwrap()
}

/// A script that paints the page black.
const PAINT_BLACK: &str = "document.documentElement.style.background = '#000';";

/// The screenshot's browser runs outside the sandbox, so a page must not load any file oi can
/// read (the issue 21 review rendered a saved conversation into the screenshot): a script on
/// disk that paints the page black does not run from the page, while the same script inline
/// does (the control).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_shown_loads_no_file_from_disk() {
    if !chromium() {
        oi_testkit::skipped!(
            "skipped a_page_shown_loads_no_file_from_disk: no headless Chromium installed"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("on-disk.js");
    std::fs::write(&script, PAINT_BLACK).unwrap();
    let computer = LocalComputer::new();
    let inline = shot_brightness(&computer, &format!("<script>{PAINT_BLACK}</script>")).await;
    assert!(
        inline < 0.1,
        "control: an inline script paints the page black ({inline})"
    );
    let from_disk = shot_brightness(
        &computer,
        &format!("<script src=\"file://{}\"></script>", script.display()),
    )
    .await;
    assert!(
        from_disk > 0.9,
        "a script loaded from disk ran ({from_disk})"
    );
}

/// Nor can the page replace itself by a file (stop-32 review: from a `file:` URL, one line of
/// script navigated the unsandboxed browser to any file oi could read, rendered into the
/// screenshot for the model). The file is a black page; navigating there by script, by a
/// refresh or in a frame filling the window leaves the shot white.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_shown_cannot_navigate_to_a_file() {
    if !chromium() {
        oi_testkit::skipped!(
            "skipped a_page_shown_cannot_navigate_to_a_file: no headless Chromium installed"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("secret.html");
    std::fs::write(&target, format!("<script>{PAINT_BLACK}</script>")).unwrap();
    let url = format!("file://{}", target.display());
    let computer = LocalComputer::new();
    let page = format!(
        "<style>body{{margin:0}} iframe{{border:0;width:100vw;height:100vh}}</style>\
         <iframe src=\"{url}\"></iframe><meta http-equiv=\"refresh\" content=\"0;url={url}\">\
         <script>setTimeout(() => {{ location.href = '{url}'; }}, 20);</script>"
    );
    let brightness = shot_brightness(&computer, &page).await;
    assert!(brightness > 0.9, "the page showed the file ({brightness})");
}

/// The screenshot's browser runs outside the sandbox, so a policy that denies the network
/// keeps the page offline itself: with `--deny_network` a page reached a listener on
/// loopback (issue 21 review). The control shows the page does reach it when allowed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_shown_under_a_denied_network_reaches_nothing() {
    if !chromium() {
        oi_testkit::skipped!(
            "skipped a_page_shown_under_a_denied_network_reaches_nothing: no headless Chromium installed"
        );
        return;
    }
    let allowed = LocalComputer::new();
    assert!(
        page_connections(&allowed).await > 0,
        "control: with the network allowed the page reaches the listener"
    );
    let policy = oi_computer::SandboxPolicy::new(oi_computer::SandboxMode::Off).with_network(false);
    let denied = LocalComputer::new().with_sandbox(policy);
    assert_eq!(page_connections(&denied).await, 0);
}
