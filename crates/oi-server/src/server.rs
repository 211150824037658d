//! Running the server: bind, serve, reap idle sessions, shut down cleanly.

use std::future::Future;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::time::Instant;

use crate::routes::router;
use crate::state::AppState;

/// Serves `state` on `listener` until `shutdown` resolves; then every connection is closed with
/// a close frame, every turn stopped and every session's processes killed.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let reaper = tokio::spawn(reap(state.clone()));
    let token = state.shutdown.clone();
    let app = router(state.clone());
    // Chunks are small frames sent as they come: without TCP_NODELAY, Nagle's algorithm holds
    // each one back until the previous is acknowledged (up to ~40 ms with delayed ACKs).
    let listener =
        axum::serve::ListenerExt::tap_io(listener, |stream: &mut tokio::net::TcpStream| {
            let _ = stream.set_nodelay(true);
        });
    let result = axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            tokio::select! {
                () = shutdown => token.cancel(),
                () = token.cancelled() => {}
            }
        })
        .await;
    reaper.abort();
    for session in state.sessions.take_all() {
        session.shutdown().await;
    }
    result
}

/// Shuts down idle sessions, checking a few times per idle timeout.
async fn reap(state: AppState) {
    let every = (state.config.session_idle_timeout / 4).max(Duration::from_millis(50));
    loop {
        tokio::time::sleep(every).await;
        for session in state.sessions.take_idle(Instant::now()) {
            if session.interpreter().is_running().await {
                state.sessions.restore(session);
            } else {
                session.shutdown().await;
            }
        }
    }
}
