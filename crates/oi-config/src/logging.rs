//! `--verbose` and `--debug`: oi's crates log what they do with `tracing` (the model requests,
//! the respond loop's decisions); a program turns the log on here, on standard error.

use tracing_subscriber::fmt::format::FmtSpan;

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
    let _ = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_writer(std::io::stderr)
        .with_span_events(FmtSpan::NONE)
        .with_target(true)
        .try_init();
}
