//! `--profile https://…` through the real `oi`: without a terminal it is refused before
//! anything is fetched; on a terminal an `http://` URL is refused before anything is sent.
//! (The fetch itself — HTTPS, size cap, redirects, slow drip — is tested against a real
//! HTTPS server in oi-config's tests/remote_profiles.rs; the confirmation in its unit test.)

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod pty;
mod terminal;

use std::net::TcpListener;
use std::process::Stdio;
use std::time::Duration;

use pty::Term;
use terminal::*;

/// A port that counts connections: nothing may connect to it.
fn watched_port() -> (u16, TcpListener) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    (listener.local_addr().unwrap().port(), listener)
}

fn nothing_connected(listener: &TcpListener) -> bool {
    std::thread::sleep(Duration::from_millis(100));
    listener.accept().is_err()
}

#[test]
fn without_a_terminal_a_url_profile_is_refused_before_it_is_fetched() {
    let s = setup();
    let (port, listener) = watched_port();
    let url = format!("https://127.0.0.1:{port}/profile.yaml");
    let out = s
        .command(&["--profile", &url, "hello"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("none is here, so nothing was fetched"),
        "{stderr}"
    );
    assert!(nothing_connected(&listener));
}

#[test]
fn on_a_terminal_plain_http_is_refused_before_anything_is_sent() {
    let s = setup();
    let (port, listener) = watched_port();
    let url = format!("http://127.0.0.1:{port}/profile.yaml");
    let Some(term) = Term::spawn(s.command(&["--profile", &url]), 100, ROWS) else {
        oi_testkit::skipped!("no pseudo-terminal on this machine");
        return;
    };
    term.wait_for("only https:// profiles are fetched", WAIT);
    assert_ne!(term.exit(WAIT), Some(0));
    assert!(nothing_connected(&listener));
}
