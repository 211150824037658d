//! The stop-32 review's file reads, through the real `oi` binary against the scripted model:
//! code (which shares its Python driver's process, so it can forge any driver event) names a
//! file as an image of format `path` — oi's own environment, a secret outside the workspace,
//! a FIFO — and an `html` block's page navigates itself to a file. Neither reaches the model:
//! oi reads no file the code names (a driver's rich event carries inline data only, and oi
//! reads image paths only where a person typed them), and the page is shown from a `data:` URL,
//! which cannot navigate to a `file:` one.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod sandbox_common;

use std::time::Duration;

use base64::Engine as _;
use oi_testkit::Reply;
use sandbox_common::{have, py, run, setup, stdout};

/// The model's requests as one string (bodies and headers).
fn sent(server: &oi_testkit::ScriptedServer) -> String {
    server
        .requests()
        .iter()
        .map(|r| format!("{:?} {}", r.headers, r.body))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn code_cannot_make_oi_read_a_file_as_an_image() {
    let s = setup();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("secret.png");
    let secret_text = "TOP-SECRET-OUTSIDE-the-workspace-31337";
    std::fs::write(&secret, secret_text).unwrap();
    let fifo = outside.path().join("fifo.png");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let code = format!(
        "import sys\n\
         d = [m for m in list(sys.modules.values()) if '_rich' in getattr(m, '__dict__', {{}})][0]\n\
         for path in ({secret}, '/proc/self/environ', {fifo}):\n    d._rich('image', 'path', path)\n\
         d._rich('code', 'file', {secret})\n\
         print('forged')\n",
        secret = py(&secret.display().to_string()),
        fifo = py(&fifo.display().to_string()),
    );
    let server = s.server(vec![Reply::tool_call("python", &code), Reply::text("done")]);
    let mut command = s.oi(&server, &["-y", "--plain", "--llm_supports_vision", "go"]);
    command.env("OI_ATTACK_MARKER", "env-marker-7f3a9");
    let started = std::time::Instant::now();
    let out = run(command);
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "a FIFO named as an image hung oi"
    );
    let text = stdout(&out);
    assert!(text.contains("forged"), "{text}");
    assert!(
        text.contains("oi dropped rich output of format `path`"),
        "{text}"
    );
    let requests = sent(&server);
    assert_eq!(server.requests().len(), 2, "{requests}");
    let encoded = base64::engine::general_purpose::STANDARD.encode(secret_text);
    for leak in [secret_text, encoded.as_str(), "env-marker-7f3a9"] {
        assert!(!requests.contains(leak), "`{leak}` reached the model");
    }
    assert!(
        !requests.contains("data:image"),
        "an image was sent: {requests}"
    );
}

/// A script that paints the page black.
const PAINT_BLACK: &str = "document.documentElement.style.background = '#000';";

#[test]
fn a_shown_page_cannot_navigate_to_a_file() {
    if !have("chromium", "a_shown_page_cannot_navigate_to_a_file") {
        assert!(
            std::env::var("OI_TEST_REQUIRE_ALL").as_deref() != Ok("1"),
            "OI_TEST_REQUIRE_ALL=1 but chromium is missing"
        );
        return;
    }
    let s = setup();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("secret.html");
    std::fs::write(&target, format!("<script>{PAINT_BLACK}</script>")).unwrap();
    let url = format!("file://{}", target.display());
    let black = format!("<script>{PAINT_BLACK}</script>");
    let navigating = format!(
        "<style>body{{margin:0}} iframe{{border:0;width:100vw;height:100vh}}</style>\
         <iframe src=\"{url}\"></iframe><meta http-equiv=\"refresh\" content=\"0;url={url}\">\
         <script>setTimeout(() => {{ location.href = '{url}'; }}, 20);</script>"
    );
    let server = s.server(vec![
        Reply::tool_call("html", &black),
        Reply::tool_call("html", &navigating),
        Reply::text("done"),
    ]);
    let out = run(s.oi(&server, &["-y", "--plain", "--llm_supports_vision", "go"]));
    let text = stdout(&out);
    let last = server
        .requests()
        .last()
        .map(|r| r.body.to_string())
        .unwrap_or_default();
    let shots: Vec<f64> = oi_testkit::png_data_urls(&last)
        .iter()
        .map(|png| oi_testkit::png_brightness(png).unwrap())
        .collect();
    assert_eq!(shots.len(), 2, "two screenshots reached the model: {text}");
    assert!(
        shots[0] < 0.1,
        "control: the black page is black ({shots:?})"
    );
    assert!(shots[1] > 0.9, "the page showed the file ({shots:?})");
}

/// Second stop-32 review, B4: a page the code made was opened in the user's own browser
/// (`xdg-open`), outside the sandbox and with the network, so `--sandbox readonly
/// --deny_network` code sent a secret out through it. Under a sandbox (or a denied network)
/// oi saves such a page and says where, but opens it in nothing; without one it still opens
/// it (the control), as the original does. A stand-in `xdg-open` records what it is asked to
/// open.
#[test]
fn a_page_made_under_a_sandbox_is_not_opened_in_the_browser() {
    let s = setup();
    let bin = tempfile::tempdir().unwrap();
    let opened = bin.path().join("opened.txt");
    let opener = bin.path().join("xdg-open");
    std::fs::write(
        &opener,
        format!("#!/bin/sh\necho \"$1\" >> {}\n", opened.display()),
    )
    .unwrap();
    std::fs::set_permissions(&opener, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let page = "<p>exfiltrate</p>";
    let run_with = |args: &[&str]| {
        // A page, and a page sent as a PNG (`xdg-open` picks the program by the content).
        let as_image = "import base64\ndisplay({'image/png': base64.b64encode(b'<html>x</html>').decode()}, raw=True)";
        let server = s.server(vec![
            Reply::tool_call("html", page),
            Reply::tool_call("python", as_image),
            Reply::text("done"),
        ]);
        let mut all = vec!["-y", "--plain"];
        all.extend_from_slice(args);
        all.push("go");
        let mut command = s.oi(&server, &all);
        command.env("PATH", &path).env("DISPLAY", ":99");
        let out = run(command);
        (
            stdout(&out),
            std::fs::read_to_string(&opened).unwrap_or_default(),
        )
    };
    for args in [&["--deny_network"][..], &["--sandbox", "workspace"][..]] {
        let (text, asked) = run_with(args);
        assert!(
            text.contains("not opened: under a sandbox"),
            "{args:?}: {text}"
        );
        assert_eq!(asked, "", "{args:?}: the page was opened");
    }
    let (text, asked) = run_with(&[]);
    assert!(
        asked.contains(".html") && asked.contains(".png"),
        "control: both opened without a sandbox ({asked}): {text}"
    );
}
