//! The thread that owns the model's context: it loads the model, then serves one reply at a
//! time until the provider is dropped.

use std::path::PathBuf;
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex, PoisonError};

use oi_core::ModelError;

use super::LocalConfig;
use super::cache_key::{model_fingerprint, program_identity};
use super::job::Job;
use super::model::LocalModel;
use super::prefix_cache::PrefixCache;
use super::session::Session;
use super::state_store::StateStore;
use super::stats::GenerationStats;
use crate::local_model::physical_cores;

/// Where the worker gets its model.
pub enum Source {
    /// Already loaded.
    Loaded(Arc<LocalModel>),
    /// Loaded from this file on the first request.
    Path(PathBuf),
}

/// Statistics shared between the worker and the provider.
pub type SharedStats = Arc<Mutex<Option<GenerationStats>>>;

/// The worker thread's body: serves jobs until the provider is dropped.
pub fn run_worker(source: Source, config: &LocalConfig, jobs: &Receiver<Job>, stats: &SharedStats) {
    let Ok(first) = jobs.recv() else {
        return;
    };
    let model = match source {
        Source::Loaded(model) => Ok(model),
        Source::Path(path) => LocalModel::load(&path),
    };
    let model = match model {
        Ok(model) => model,
        Err(error) => return fail_all(first, jobs, &error),
    };
    let n_ctx = config.n_ctx.min(model.trained_context().max(512));
    let threads = config.threads.unwrap_or_else(physical_cores);
    let files = prefix_cache(&model, config);
    let mut session = match Session::new(&model, n_ctx, threads, files) {
        Ok(session) => session,
        Err(error) => return fail_all(first, jobs, &error),
    };
    for (sequence, job) in (1..).zip(std::iter::once(first).chain(jobs.iter())) {
        match session.generate(&job) {
            Ok(mut run) => {
                run.sequence = sequence;
                run.load_time = model.load_time();
                run.log();
                *stats.lock().unwrap_or_else(PoisonError::into_inner) = Some(run);
            }
            Err(error) => {
                let _ = job.out.blocking_send(Err(error));
            }
        }
    }
}

/// The prompt-state files of `model`, when the configuration asks for them and the
/// directory and model file can be used.
fn prefix_cache(model: &LocalModel, config: &LocalConfig) -> Option<PrefixCache> {
    let dir = config.prompt_cache.as_ref()?;
    let store = StateStore::open(dir)?;
    let fingerprint = model
        .fingerprint
        .get_or_init(|| model_fingerprint(model.path()))
        .clone();
    let Some(fingerprint) = fingerprint else {
        tracing::warn!(path = %model.path().display(), "prompt cache off: cannot read the model file");
        return None;
    };
    Some(PrefixCache::new(store, fingerprint, program_identity()))
}

/// Answers every job with `error` until the provider is dropped.
fn fail_all(first: Job, jobs: &Receiver<Job>, error: &ModelError) {
    for job in std::iter::once(first).chain(jobs.iter()) {
        let _ = job.out.blocking_send(Err(error.clone()));
    }
}
