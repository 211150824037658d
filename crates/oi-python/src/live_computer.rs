//! The computer of a Python interpreter object: oi's `LocalComputer`, built on first use (so it
//! withholds the model key configured by then), restricted to the languages
//! `interpreter.computer.languages` lists, and the custom languages (Python objects) it
//! lists, which replace a built-in language of the same name; and the tools of the MCP
//! servers `interpreter.computer.mcp_servers` names, offered beside `execute` (oi_mcp::offer).

use std::sync::{Arc, PoisonError, RwLock};

use futures::StreamExt;
use futures::future::BoxFuture;
use oi_config::lazy::LazyComputer;
use oi_core::{Computer, LanguageSpec, Output, OutputStream, Settings};

use crate::custom_language::CustomLanguage;

/// A lazily built local computer with a language allowlist. The local computer is built as
/// `oi` builds its own (oi-config's [`LazyComputer`]): limits and sandbox as set (off by
/// default, as the original's Python API), the model's keys withheld from the code by name and
/// by value, oi's conversations directory kept out of its reach.
pub struct LiveComputer {
    inner: LazyComputer,
    /// Canonical names of the languages offered; `None` offers all of them.
    allowed: RwLock<Option<Vec<String>>>,
    /// Custom languages, offered before (and instead of) built-ins of the same name.
    custom: RwLock<Vec<CustomLanguage>>,
    /// The connected MCP servers, if any.
    mcp: RwLock<Option<Arc<oi_mcp::client::McpClients>>>,
}

impl LiveComputer {
    /// Offers every language of `inner` (oi-config's lazy computer, wired into the
    /// interpreter by `wiring.rs`), no custom language, no MCP server.
    pub fn new(inner: LazyComputer) -> LiveComputer {
        LiveComputer {
            inner,
            allowed: RwLock::new(None),
            custom: RwLock::new(Vec::new()),
            mcp: RwLock::new(None),
        }
    }

    /// Builds the local computer now, for `settings`, unless it was built already.
    pub fn prepare(&self, settings: &Settings) -> Arc<oi_computer::LocalComputer> {
        self.inner.prepare(settings)
    }

    fn local(&self) -> Arc<oi_computer::LocalComputer> {
        self.prepare(&Settings::default())
    }

    /// Whether the sessions were started (the computer was built).
    fn built(&self) -> Option<&Arc<oi_computer::LocalComputer>> {
        self.inner.built()
    }

    /// Every language oi can run, whatever the allowlist says.
    pub fn all_languages() -> Vec<LanguageSpec> {
        oi_computer::ALL_LANGUAGES
            .into_iter()
            .map(oi_computer::Language::spec)
            .collect()
    }

    /// Offers only these languages (names or aliases, any case); `None` offers all. Unknown
    /// names are returned as the error.
    pub fn restrict(&self, names: Option<Vec<String>>) -> Result<(), Vec<String>> {
        let allowed = match names {
            None => None,
            Some(names) => {
                let mut canonical = Vec::new();
                let mut unknown = Vec::new();
                for name in names {
                    match oi_computer::Language::find(&name) {
                        Some(language) => canonical.push(language.name().to_owned()),
                        None => unknown.push(name),
                    }
                }
                if !unknown.is_empty() {
                    return Err(unknown);
                }
                Some(canonical)
            }
        };
        *self.allowed.write().unwrap_or_else(PoisonError::into_inner) = allowed;
        Ok(())
    }

    /// Makes these the custom languages (replacing the previous ones, whose `terminate()`
    /// is not called: the caller ends the sessions first, as the original's docs advise).
    pub fn set_custom(&self, languages: Vec<CustomLanguage>) {
        *self.custom.write().unwrap_or_else(PoisonError::into_inner) = languages;
    }

    /// Makes these the MCP servers whose tools are offered (`None`: none); the previous ones.
    pub fn set_mcp(
        &self,
        clients: Option<Arc<oi_mcp::client::McpClients>>,
    ) -> Option<Arc<oi_mcp::client::McpClients>> {
        std::mem::replace(
            &mut *self.mcp.write().unwrap_or_else(PoisonError::into_inner),
            clients,
        )
    }

    fn mcp(&self) -> Option<Arc<oi_mcp::client::McpClients>> {
        self.mcp
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn customs(&self) -> Vec<CustomLanguage> {
        self.custom
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(CustomLanguage::share)
            .collect()
    }

    /// Whether a custom language takes the name (or an alias) of built-in `spec`.
    fn replaced(&self, spec: &LanguageSpec) -> bool {
        self.custom
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .any(|custom| {
                std::iter::once(&spec.name)
                    .chain(&spec.aliases)
                    .any(|name| custom.spec.matches(name))
            })
    }

    fn offers(&self, spec: &LanguageSpec) -> bool {
        match &*self.allowed.read().unwrap_or_else(PoisonError::into_inner) {
            None => true,
            Some(names) => names.iter().any(|n| n == &spec.name),
        }
    }
}

impl Computer for LiveComputer {
    fn languages(&self) -> Vec<LanguageSpec> {
        let custom = self.customs().into_iter().map(|c| c.spec);
        let built_in = Self::all_languages()
            .into_iter()
            .filter(|spec| self.offers(spec) && !self.replaced(spec));
        let mcp = self.mcp().map(|_| LanguageSpec {
            name: "MCP".to_owned(),
            aliases: Vec::new(),
        });
        custom.chain(built_in).chain(mcp).collect()
    }

    fn tools(&self) -> Vec<oi_core::OfferedTool> {
        self.mcp()
            .map(|clients| oi_mcp::offer::offered_tools(&clients))
            .unwrap_or_default()
    }

    fn run(
        &self,
        language: &str,
        code: &str,
        policy: &oi_core::settings::computer::ComputerSettings,
    ) -> OutputStream {
        if oi_mcp::offer::is_mcp_language(language)
            && let Some(clients) = self.mcp()
        {
            return oi_mcp::offer::run_block(clients, code);
        }
        if let Some(custom) = self
            .customs()
            .into_iter()
            .find(|custom| custom.spec.matches(language))
        {
            return custom.run(code);
        }
        let offered = self.languages();
        if oi_core::computer::find_language(&offered, language).is_none() {
            let message = format!("`{}` disabled or not supported.", language.trim());
            return futures::stream::once(async move { Output::console(message) }).boxed();
        }
        Computer::run(&*self.local(), language, code, policy)
    }

    fn session_dir(&self, language: &str) -> oi_core::computer::SessionDir {
        match self.built() {
            Some(local) => local.session_dir(language),
            None => oi_core::computer::SessionDir::NotStarted,
        }
    }

    fn stop(&self) {
        for custom in self.customs() {
            custom.call("stop");
        }
        if let Some(local) = self.built() {
            local.stop();
        }
    }

    fn terminate(&self) -> BoxFuture<'static, ()> {
        for custom in self.customs() {
            custom.call("terminate");
        }
        match self.built() {
            Some(local) => local.terminate(),
            None => Box::pin(async {}),
        }
    }
}
