//! `/upload` and `/download` (`INTERPRETER_INSECURE_ROUTES=true`) against planted links, and
//! session code racing the server, through the real `oi-server` binary: nothing is read or
//! written outside the working directory.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod process;

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::time::Duration;

use oi_testkit::{Script, ScriptedServer};
use process::{Launch, ServerProcess, get, post, raw};
use tokio::io::AsyncWriteExt;

/// A working directory and a directory outside it, side by side in one temporary folder.
struct Dirs {
    _top: tempfile::TempDir,
    work: PathBuf,
    outside: PathBuf,
}

fn dirs() -> Dirs {
    let top = tempfile::tempdir().unwrap();
    let work = top.path().join("work");
    let outside = top.path().join("outside");
    std::fs::create_dir(&work).unwrap();
    std::fs::create_dir(&outside).unwrap();
    Dirs {
        work,
        outside,
        _top: top,
    }
}

async fn start(work: &Path) -> (ScriptedServer, ServerProcess) {
    let model = ScriptedServer::start(Script::new([])).await.unwrap();
    let server = Launch::new(&model.base_url())
        .env("INTERPRETER_INSECURE_ROUTES", "true")
        .cwd(work)
        .start();
    (model, server)
}

/// `POST /upload` of `content` to `path` over a raw socket: (status, body).
async fn upload(server: &ServerProcess, path: &str, content: &str) -> (u16, String) {
    let body = format!(
        "--B\r\nContent-Disposition: form-data; name=\"path\"\r\n\r\n{path}\r\n--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n\r\n{content}\r\n--B--\r\n"
    );
    let request = format!(
        "POST /upload HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: multipart/form-data; boundary=B\r\nContent-Length: {}\r\n\r\n{body}",
        server.addr(),
        body.len()
    );
    let answer = raw(&server.addr(), &request).await;
    (answer.status, answer.body().to_owned())
}

async fn download(server: &ServerProcess, path: &str) -> (u16, String) {
    let host = format!("Host: {}", server.addr());
    let answer = raw(&server.addr(), &get(&format!("/download/{path}"), &[&host])).await;
    (answer.status, answer.body().to_owned())
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upload_to_a_dangling_symlink_does_not_write_outside() {
    let d = dirs();
    symlink(d.outside.join("created.txt"), d.work.join("link")).unwrap();
    let (_model, server) = start(&d.work).await;
    let (status, body) = upload(&server, "link", "attacker data").await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("symbolic link"), "{body}");
    assert!(
        !d.outside.join("created.txt").exists(),
        "nothing written outside"
    );
    assert!(entries(&d.outside).is_empty());
    // An ordinary upload still works.
    assert_eq!(upload(&server, "sub/ok.txt", "fine").await.0, 200);
    assert_eq!(
        std::fs::read_to_string(d.work.join("sub/ok.txt")).unwrap(),
        "fine"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upload_through_a_symlinked_parent_dir_does_not_write_outside() {
    let d = dirs();
    symlink(&d.outside, d.work.join("sub")).unwrap();
    let (_model, server) = start(&d.work).await;
    for path in ["sub/x.txt", "sub/new/x.txt", "./sub/x.txt"] {
        let (status, body) = upload(&server, path, "attacker data").await;
        assert_eq!(status, 403, "{path}: {body}");
    }
    for path in ["../outside/x.txt", "/tmp/x.txt"] {
        let (status, body) = upload(&server, path, "attacker data").await;
        assert_eq!(status, 403, "{path}: {body}");
    }
    assert!(entries(&d.outside).is_empty(), "{:?}", entries(&d.outside));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn download_through_symlinks_is_refused() {
    let d = dirs();
    std::fs::write(d.outside.join("secret.txt"), "top secret").unwrap();
    std::fs::write(d.work.join("mine.txt"), "mine").unwrap();
    symlink(d.outside.join("secret.txt"), d.work.join("secret")).unwrap();
    symlink(&d.outside, d.work.join("dir")).unwrap();
    symlink(d.work.join("mine.txt"), d.work.join("inner-link")).unwrap();
    let (_model, server) = start(&d.work).await;
    for path in ["secret", "dir/secret.txt", "inner-link"] {
        let (status, body) = download(&server, path).await;
        assert_eq!(status, 403, "{path}: {body}");
        assert!(!body.contains("top secret"));
    }
    assert_eq!(
        download(&server, "mine.txt").await,
        (200, "mine".to_owned())
    );
    assert_eq!(download(&server, "missing.txt").await.0, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upload_replaces_a_planted_hard_link_instead_of_writing_through_it() {
    let d = dirs();
    std::fs::write(d.outside.join("victim.txt"), "original").unwrap();
    std::fs::hard_link(d.outside.join("victim.txt"), d.work.join("hl")).unwrap();
    let (_model, server) = start(&d.work).await;
    assert_eq!(upload(&server, "hl", "replaced").await.0, 200);
    assert_eq!(
        std::fs::read_to_string(d.outside.join("victim.txt")).unwrap(),
        "original"
    );
    assert_eq!(
        std::fs::read_to_string(d.work.join("hl")).unwrap(),
        "replaced"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_is_not_opened_for_download() {
    let d = dirs();
    let fifo = d.work.join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        oi_testkit::skipped!("skipped: mkfifo is not available");
        return;
    }
    let (_model, server) = start(&d.work).await;
    let answer = tokio::time::timeout(Duration::from_secs(5), download(&server, "pipe")).await;
    let (status, body) = answer.expect("a FIFO does not hang the request");
    assert_eq!(status, 403, "{body}");
}

/// Code in the session (started through `/run`) swaps a directory for a symlink to the outside
/// as fast as it can while uploads go into that directory: none lands outside.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_code_swapping_a_directory_for_a_symlink_cannot_redirect_uploads() {
    let d = dirs();
    std::fs::create_dir(d.work.join("d")).unwrap();
    let (_model, server) = start(&d.work).await;
    let swapper = "end=$(( $(date +%s) + 3 )); \
        while [ $(date +%s) -lt $end ]; do \
          mv d d.real && ln -s ../outside d && rm d && mv d.real d; \
        done; echo swapped";
    let run_body = serde_json::json!({"language": "shell", "code": swapper}).to_string();
    let host = format!("Host: {}", server.addr());
    let run = {
        let addr = server.addr();
        let request = post("/run", &[&host], &run_body);
        tokio::spawn(async move { raw(&addr, &request).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (mut ok, mut refused) = (0, 0);
    for i in 0..150 {
        match upload(&server, &format!("d/f{i}.txt"), "data").await.0 {
            200 => ok += 1,
            _ => refused += 1,
        }
    }
    let run = run.await.unwrap();
    assert_eq!(run.status, 200, "{}", run.text);
    assert!(run.text.contains("swapped"), "{}", run.text);
    eprintln!("uploads during the race: {ok} written inside, {refused} refused");
    assert!(
        entries(&d.outside).is_empty(),
        "written outside: {:?}",
        entries(&d.outside)
    );
}

/// The working directory itself is renamed and replaced by a symlink to the outside after the
/// server started: uploads still go to the directory the server was started in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_working_directory_swapped_for_a_symlink_keeps_uploads_in_the_original() {
    let d = dirs();
    let (_model, server) = start(&d.work).await;
    let moved = d.work.with_file_name("work.moved");
    std::fs::rename(&d.work, &moved).unwrap();
    symlink(&d.outside, &d.work).unwrap();
    assert_eq!(upload(&server, "x.txt", "data").await.0, 200);
    assert!(moved.join("x.txt").exists());
    assert!(entries(&d.outside).is_empty());
}

/// A slow upload body does not keep the request from being confined (sanity check that the
/// raw multipart client above speaks the protocol the route expects).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upload_in_pieces_is_written_whole() {
    let d = dirs();
    let (_model, server) = start(&d.work).await;
    let content = "z".repeat(100_000);
    let body = format!(
        "--B\r\nContent-Disposition: form-data; name=\"path\"\r\n\r\nbig.txt\r\n--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n\r\n{content}\r\n--B--\r\n"
    );
    let head = format!(
        "POST /upload HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nContent-Type: multipart/form-data; boundary=B\r\nContent-Length: {}\r\n\r\n",
        server.addr(),
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(server.addr()).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    for piece in body.as_bytes().chunks(16_384) {
        stream.write_all(piece).await.unwrap();
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let answer = process::read_response(&mut stream).await;
    assert_eq!(answer.status, 200, "{}", answer.text);
    assert_eq!(
        std::fs::read_to_string(d.work.join("big.txt")).unwrap(),
        content
    );
}
