//! The accept loop: every connection holds one of a fixed number of slots for as long as its
//! socket is open (a WebSocket keeps it after the upgrade); past the cap a connection gets a
//! short HTTP 503 and is closed. A client has a bounded time to send each request's headers,
//! so connections that never finish (or never start) a request do not stay open. Sockets get
//! TCP_NODELAY. On shutdown, accepting stops and every connection finishes its request and
//! closes, as with `axum::serve`'s graceful shutdown.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use tokio_util::sync::CancellationToken;

/// What the accept loop enforces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// The most connections open at once.
    pub max_connections: usize,
    /// How long a client has to send a request's headers (and a kept-alive connection may
    /// idle between requests).
    pub header_read_timeout: Duration,
}

/// The answer to a connection over the cap: HTTP 503 with a JSON body saying why.
fn at_capacity() -> Vec<u8> {
    let body = r#"{"error": "the server is at its connection limit (--max-connections): close idle connections or retry later"}"#;
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// How many over-the-cap connections are answered at once (the rest are closed unanswered).
const MAX_REFUSALS_IN_FLIGHT: usize = 256;

/// How long an over-the-cap connection is kept at most to deliver the 503.
const REFUSAL_LINGER: Duration = Duration::from_millis(500);

/// After the 503, how long the client may stay silent before the socket is closed.
const REFUSAL_QUIET: Duration = Duration::from_millis(50);

/// A socket that holds its connection slot until it is dropped.
struct Counted {
    stream: TcpStream,
    _slot: OwnedSemaphorePermit,
}

impl AsyncRead for Counted {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for Counted {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

/// Tells an over-the-cap client why, then closes (after reading what it sent, so that the
/// close is a clean FIN and the answer is not lost to a reset).
async fn refuse(mut stream: TcpStream, _slot: OwnedSemaphorePermit) {
    let answer = async {
        stream.write_all(&at_capacity()).await?;
        stream.shutdown().await?;
        // Closing with unread input would send a reset that can destroy the answer: read
        // what the client sent until it goes quiet.
        let mut sink = [0u8; 1024];
        while let Ok(read) = tokio::time::timeout(REFUSAL_QUIET, stream.read(&mut sink)).await {
            if read? == 0 {
                break;
            }
        }
        io::Result::Ok(())
    };
    let _ = tokio::time::timeout(REFUSAL_LINGER, answer).await;
}

/// Serves one connection until it closes; `draining` asks it to finish its request and close.
async fn serve_connection(
    stream: Counted,
    app: Router,
    limits: ConnectionLimits,
    draining: CancellationToken,
    _open: watch::Receiver<()>,
) {
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .keep_alive(true);
    let service = TowerToHyperService::new(app);
    let connection = builder
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades();
    let mut connection = std::pin::pin!(connection);
    tokio::select! {
        _ = connection.as_mut() => return,
        () = draining.cancelled() => {}
    }
    connection.as_mut().graceful_shutdown();
    let _ = connection.await;
}

/// Accepts connections on `listener` for `app` until `draining` is cancelled; then waits for
/// every connection (not upgraded WebSockets, which end on their own) to close.
pub async fn accept_loop(
    listener: TcpListener,
    app: Router,
    limits: ConnectionLimits,
    draining: CancellationToken,
) {
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let refusals = Arc::new(Semaphore::new(MAX_REFUSALS_IN_FLIGHT));
    let (open_tx, open_rx) = watch::channel(());
    loop {
        let accepted = tokio::select! {
            () = draining.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _peer)) => stream,
            Err(_) => {
                // Out of descriptors or a connection reset before it was accepted: let it pass.
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        // Chunks are small frames sent as they come: without TCP_NODELAY, Nagle's algorithm
        // holds each back until the previous one is acknowledged (up to ~40 ms).
        let _ = stream.set_nodelay(true);
        match slots.clone().try_acquire_owned() {
            Ok(slot) => {
                let stream = Counted {
                    stream,
                    _slot: slot,
                };
                tokio::spawn(serve_connection(
                    stream,
                    app.clone(),
                    limits,
                    draining.clone(),
                    open_rx.clone(),
                ));
            }
            Err(_) => {
                if let Ok(slot) = refusals.clone().try_acquire_owned() {
                    tokio::spawn(refuse(stream, slot));
                }
            }
        }
    }
    drop(listener);
    drop(open_rx);
    open_tx.closed().await;
}
