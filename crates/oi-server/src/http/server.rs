//! Running the server: bind, serve, reap idle sessions, shut down cleanly.

use std::future::Future;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::time::Instant;

use crate::http::routes::router;
use crate::limits::connections::{ConnectionLimits, accept_loop};
use crate::limits::fd_limit::{connection_cap, raise_nofile};
use crate::state::AppState;

/// Serves `state` on `listener` until `shutdown` resolves; then every connection is closed with
/// a close frame, every turn stopped and every session's processes killed.
///
/// The soft descriptor limit is raised to the hard limit first, and the connection cap is
/// kept below it.
pub async fn serve(
    listener: TcpListener,
    state: AppState,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let state = state.bound_to(listener.local_addr()?);
    raise_backlog(&listener);
    let nofile = raise_nofile();
    let max_connections = connection_cap(state.config.max_connections, nofile);
    if max_connections < state.config.max_connections {
        eprintln!(
            "at most {max_connections} connections (not {}): the descriptor limit is {}",
            state.config.max_connections,
            nofile.unwrap_or_default()
        );
    }
    let limits = ConnectionLimits {
        max_connections,
        header_read_timeout: state.config.header_read_timeout,
    };
    let reaper = tokio::spawn(reap(state.clone()));
    let cluster = state.sessions.cluster().cloned();
    if let Some(cluster) = &cluster {
        tokio::spawn(crate::sessions::cluster::keep_leases(
            state.sessions.clone(),
            state.shutdown.clone(),
            cluster.clone(),
        ));
    }
    let token = state.shutdown.clone();
    let draining = state.clone();
    tokio::spawn(async move {
        tokio::select! {
            () = shutdown => {
                if let Some(cluster) = &cluster {
                    let deadline = draining.config.drain_timeout;
                    crate::sessions::cluster::drain(&draining.sessions, cluster, deadline).await;
                }
                token.cancel();
            }
            () = token.cancelled() => {}
        }
    });
    let app = router(state.clone());
    accept_loop(listener, app, limits, state.shutdown.clone()).await;
    reaper.abort();
    for session in state.sessions.take_all() {
        session.shutdown().await;
    }
    Ok(())
}

/// The longest listen backlog the kernel grants (`net.core.somaxconn`), or 4096.
fn somaxconn() -> i32 {
    std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or(4096)
}

/// Raises the listen backlog from the 128 a listener is bound with to the system's maximum:
/// with 128, a burst of a thousand clients connecting at once overflows the queue, and the
/// dropped SYNs are retried only after a second or more. Listening again on a listening
/// socket only changes its backlog.
fn raise_backlog(listener: &TcpListener) {
    let _ = rustix::net::listen(listener, somaxconn());
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
