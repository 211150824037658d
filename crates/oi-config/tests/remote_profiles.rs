//! `--profile https://…` against a hostile server: a real HTTPS server on 127.0.0.1 (a test
//! certificate, trusted through the fetch's one extra-root door) serving a good profile, a
//! Python one (read, never run), a huge body, redirects to `file://` and to `http://`, and a
//! slow drip; an `http://` URL is refused before anything is sent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use oi_config::profiles::remote::{FETCH_TIMEOUT, Trust, fetch};
use oi_core::Settings;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

const CERT: &[u8] = include_bytes!("fixtures/test-cert.pem");
const KEY: &[u8] = include_bytes!("fixtures/test-key.pem");

const GOOD: &str = "llm:\n  model: gpt-4o-mini\nauto_run: true\n";
const PYTHON: &str = "import os\nos.system('touch /tmp/oi-remote-profile-ran')\ninterpreter.llm.model = \"gpt-4o\"\n";

/// Serves HTTPS on 127.0.0.1 until the test ends; returns its port.
async fn serve() -> u16 {
    let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![CertificateDer::from_pem_slice(CERT).unwrap()],
            PrivateKeyDer::from_pem_slice(KEY).unwrap(),
        )
        .unwrap();
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let mut request = vec![0u8; 4096];
                let n = tls.read(&mut request).await.unwrap_or(0);
                let head = String::from_utf8_lossy(&request[..n]).into_owned();
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
                answer(&mut tls, &path, port).await;
            });
        }
    });
    port
}

async fn answer<S: AsyncWriteExt + Unpin>(out: &mut S, path: &str, port: u16) {
    let ok = |body: &str| {
        format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    };
    let redirect = |to: &str| {
        format!(
            "HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
    };
    let reply = match path {
        "/good.yaml" => ok(GOOD),
        "/profile.py" => ok(PYTHON),
        "/to-file" => redirect("file:///etc/passwd"),
        "/to-http" => redirect(&format!("http://127.0.0.1:{port}/good.yaml")),
        "/to-good" => redirect(&format!("https://localhost:{port}/good.yaml")),
        "/huge" => {
            // No Content-Length: the body just goes on.
            let _ = out
                .write_all(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n")
                .await;
            let block = vec![b'#'; 64 * 1024];
            for _ in 0..64 {
                if out.write_all(&block).await.is_err() {
                    return;
                }
            }
            return;
        }
        "/drip" => {
            let _ = out
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
                .await;
            for _ in 0..100_000 {
                if out.write_all(b"#").await.is_err() || out.flush().await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            return;
        }
        _ => "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_owned(),
    };
    let _ = out.write_all(reply.as_bytes()).await;
    let _ = out.shutdown().await;
}

fn trust() -> Trust {
    Trust::with_extra_root(CERT).unwrap()
}

#[tokio::test]
async fn a_good_profile_is_fetched_and_read_like_a_local_one() {
    let port = serve().await;
    let url = format!("https://localhost:{port}/good.yaml");
    let (profile, text) = fetch(&url, &trust()).await.unwrap();
    assert_eq!(text, GOOD, "the text is given back to be shown");
    let settings = Settings::default().patched(&profile.patch);
    assert_eq!(settings.llm.model, "gpt-4o-mini");
    assert!(settings.auto_run);
    // One redirect to HTTPS is followed.
    let (profile, _) = fetch(&format!("https://localhost:{port}/to-good"), &trust())
        .await
        .unwrap();
    assert_eq!(
        Settings::default().patched(&profile.patch).llm.model,
        "gpt-4o-mini"
    );
}

#[tokio::test]
async fn a_python_profile_is_read_never_run() {
    let marker = std::path::Path::new("/tmp/oi-remote-profile-ran");
    let _ = std::fs::remove_file(marker);
    let port = serve().await;
    let (profile, _) = fetch(&format!("https://localhost:{port}/profile.py"), &trust())
        .await
        .unwrap();
    assert_eq!(
        Settings::default().patched(&profile.patch).llm.model,
        "gpt-4o"
    );
    assert!(
        profile.notes.iter().any(|n| n.text.contains("skipped")),
        "{:?}",
        profile.notes
    );
    assert!(!marker.exists(), "the profile's code ran");
}

#[tokio::test]
async fn hostile_answers_are_refused() {
    let port = serve().await;
    let refused = |path: &'static str| {
        let url = format!("https://localhost:{port}{path}");
        async move { fetch(&url, &trust()).await.unwrap_err().0 }
    };
    let huge = refused("/huge").await;
    assert!(huge.contains("more than 1048576 bytes"), "{huge}");
    let file = refused("/to-file").await;
    assert!(
        file.contains("redirects to file:///etc/passwd, which oi does not follow"),
        "{file}"
    );
    let http = refused("/to-http").await;
    assert!(http.contains("redirect to a http: address"), "{http}");
    let missing = refused("/nothing").await;
    assert!(missing.contains("HTTP 404"), "{missing}");
    // Without the test's root, the certificate is not trusted.
    let untrusted = fetch(
        &format!("https://localhost:{port}/good.yaml"),
        &Trust::default(),
    )
    .await
    .unwrap_err()
    .0;
    assert!(untrusted.contains("could not be fetched"), "{untrusted}");
}

#[tokio::test]
async fn a_slow_drip_is_cut_off() {
    let port = serve().await;
    let started = Instant::now();
    let error = fetch(&format!("https://localhost:{port}/drip"), &trust())
        .await
        .unwrap_err()
        .0;
    assert!(error.contains("longer than"), "{error}");
    assert!(started.elapsed() < FETCH_TIMEOUT + Duration::from_secs(5));
}

#[tokio::test]
async fn plain_http_is_refused_before_anything_is_sent() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let connections = Arc::new(AtomicUsize::new(0));
    let seen = connections.clone();
    tokio::spawn(async move {
        while listener.accept().await.is_ok() {
            seen.fetch_add(1, Ordering::SeqCst);
        }
    });
    let error = fetch(&format!("http://127.0.0.1:{port}/good.yaml"), &trust())
        .await
        .unwrap_err()
        .0;
    assert!(
        error.contains("only https:// profiles are fetched"),
        "{error}"
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(connections.load(Ordering::SeqCst), 0);
}
