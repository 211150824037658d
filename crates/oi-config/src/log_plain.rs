//! The log without tracing-subscriber (a build without the `cli` feature: the Python
//! extension): each event one line on standard error, `LEVEL target: message field=value …`.

use std::fmt::Write as _;
use std::io::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Level, Metadata, Subscriber};

/// Installs the plain log at `level` for the process, unless a log is installed already.
pub(crate) fn start(level: Level) {
    let _ = tracing::subscriber::set_global_default(Plain {
        level,
        spans: AtomicU64::new(0),
    });
}

/// Events at `level` or more severe, written as they come; spans only numbered.
struct Plain {
    level: Level,
    spans: AtomicU64,
}

impl Subscriber for Plain {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        *metadata.level() <= self.level
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(LevelFilter::from_level(self.level))
    }

    fn new_span(&self, _span: &Attributes<'_>) -> Id {
        Id::from_u64(self.spans.fetch_add(1, Ordering::Relaxed).saturating_add(1))
    }

    fn record(&self, _span: &Id, _values: &Record<'_>) {}

    fn record_follows_from(&self, _span: &Id, _follows: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let metadata = event.metadata();
        let mut line = Line::default();
        event.record(&mut line);
        let text = format!(
            "{:>5} {}: {}{}\n",
            metadata.level(),
            metadata.target(),
            line.message,
            line.fields
        );
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
    }

    fn enter(&self, _span: &Id) {}

    fn exit(&self, _span: &Id) {}
}

/// An event's message and its other fields, ` name=value` each.
#[derive(Default)]
struct Line {
    message: String,
    fields: String,
}

impl Visit for Line {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            let _ = write!(self.fields, " {}={value:?}", field.name());
        }
    }
}
