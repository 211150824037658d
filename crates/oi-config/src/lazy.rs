//! The same door for a program that creates its interpreter before its settings are final
//! (the Python API creates one when the package is imported; a script may then change the
//! model, its key or the sandbox before the first turn): the interpreter is wired now — judge,
//! computer API link — and its local computer is built on first use, from the settings as
//! they are then ([`LazyComputer::prepare`]), so it withholds the key configured by then.

use std::sync::{Arc, OnceLock};

use oi_computer::LocalComputer;
use oi_core::computer_api::ApiLink;
use oi_core::{Computer, Interpreter, LanguageModel, Settings};

use crate::assemble::{ComputerParts, wire};

/// oi's local computer, built on first use (see [`ComputerParts`]); its Python sessions reach
/// the computer API through the link the interpreter it was wired into is bound to.
pub struct LazyComputer {
    inner: OnceLock<Arc<LocalComputer>>,
    link: ApiLink,
}

impl std::fmt::Debug for LazyComputer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyComputer")
            .field("built", &self.inner.get().is_some())
            .finish_non_exhaustive()
    }
}

impl LazyComputer {
    /// Builds the local computer now, for `settings` (its limits, sandbox and secrets), unless
    /// it was built already; the computer either way.
    pub fn prepare(&self, settings: &Settings) -> Arc<LocalComputer> {
        self.inner
            .get_or_init(|| {
                let computer = ComputerParts::new(settings, None)
                    .computer(settings)
                    .with_api(Arc::new(self.link.clone()));
                Arc::new(computer)
            })
            .clone()
    }

    /// The local computer if it was built.
    pub fn built(&self) -> Option<&Arc<LocalComputer>> {
        self.inner.get()
    }
}

/// An interpreter with `settings` and `model`, the judge installed, whose computer is `wrap`
/// around a [`LazyComputer`] (e.g. to restrict its languages or add custom ones); the
/// computer API's link is bound to it. The wrapped computer comes back beside it.
pub fn interpreter<C: Computer + 'static>(
    settings: Settings,
    model: Arc<dyn LanguageModel>,
    wrap: impl FnOnce(LazyComputer) -> C,
) -> (Interpreter, Arc<C>) {
    let link = ApiLink::new();
    let computer = Arc::new(wrap(LazyComputer {
        inner: OnceLock::new(),
        link: link.clone(),
    }));
    let interpreter = wire(settings, model, computer.clone(), &link);
    (interpreter, computer)
}
