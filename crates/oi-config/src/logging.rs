//! `--verbose` and `--debug`: oi's crates log what they do with `tracing` (the model requests,
//! the respond loop's decisions); a program turns the log on here, on standard error. With the
//! `cli` feature the log is tracing-subscriber's; without it (the Python extension) a plain
//! one on `tracing` alone (`log_plain.rs`), so the extension links no tracing-subscriber.

/// Sends oi's log to standard error: at `info` with `verbose`, `debug` with `debug`, nothing
/// otherwise. Call once, early; a second call changes nothing.
pub fn init(verbose: bool, debug: bool) {
    let level = if debug {
        tracing::Level::DEBUG
    } else if verbose {
        tracing::Level::INFO
    } else {
        return;
    };
    start(level);
}

#[cfg(feature = "cli")]
fn start(level: tracing::Level) {
    use tracing_subscriber::fmt::format::FmtSpan;
    let _ = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_writer(std::io::stderr)
        .with_span_events(FmtSpan::NONE)
        .with_target(true)
        .try_init();
}

#[cfg(not(feature = "cli"))]
fn start(level: tracing::Level) {
    crate::log_plain::start(level);
}
