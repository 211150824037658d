//! The `execute` tool: judge the code, run it in its session, stream it into MCP content, stop
//! it when the call is cancelled, and tell the caller how a long run is going.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use oi_core::computer::{Computer, find_language};
use oi_core::policy::{ApprovalPolicy, Judge, Verdict};
use rmcp::model::{CallToolResult, ContentBlock, ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RoleServer};
use tokio_util::sync::CancellationToken;

use crate::output::Collected;
use crate::sessions::Sessions;

/// How often a long run reports progress (when the caller asked for progress).
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

/// Where progress goes: the caller and the token it gave.
pub(crate) struct Progress {
    /// The caller.
    pub(crate) peer: Peer<RoleServer>,
    /// The token its request carried.
    pub(crate) token: ProgressToken,
}

/// One `execute` call.
pub(crate) struct Execute<'a> {
    /// The language asked for.
    pub(crate) language: &'a str,
    /// The code.
    pub(crate) code: &'a str,
    /// The session's name.
    pub(crate) session: &'a str,
}

/// An error result with one text block.
pub(crate) fn refusal(text: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// Runs `call` in its session of `sessions` under the judge; stops the code when `cancel`
/// fires.
pub(crate) async fn execute(
    sessions: &Sessions,
    judge: &Arc<dyn Judge>,
    call: Execute<'_>,
    cancel: CancellationToken,
    progress: Option<Progress>,
) -> CallToolResult {
    let settings = sessions.settings();
    let computer = match sessions.get_or_open(call.session) {
        Ok(computer) => computer,
        Err(problem) => return refusal(problem),
    };
    let languages = computer.languages();
    let Some(language) = find_language(&languages, call.language) else {
        let names: Vec<_> = languages.iter().map(|l| l.name.to_lowercase()).collect();
        return refusal(format!(
            "Unknown language {:?}; oi runs: {}.",
            call.language,
            names.join(", ")
        ));
    };
    let mut rules = settings
        .rules()
        .in_session(computer.session_dir(&language.name));
    if rules.policy == ApprovalPolicy::NeverRun {
        return refusal("oi's settings say never to run code (approval_policy: never-run).");
    }
    // The calling agent approves each call (that is what MCP clients ask their users); oi
    // keeps its hard-deny list and the user's deny rules.
    rules.policy = ApprovalPolicy::Auto;
    let verdict = {
        let judge = Arc::clone(judge);
        let (name, code) = (language.name.clone(), call.code.to_owned());
        tokio::task::spawn_blocking(move || judge.judge(&rules, &name, &code)).await
    };
    match verdict {
        Ok(Verdict::Run | Verdict::Ask) => {}
        Ok(Verdict::Block(reason)) => return refusal(reason),
        Err(_) => return refusal("oi blocked this code: it could not be judged."),
    }
    // Held while the code runs: a reset meanwhile does not free the slot of this interpreter.
    let _slot = match sessions.hold_slot(call.session, &language.name, &computer) {
        Ok(slot) => slot,
        Err(refused) => return refusal(refused),
    };
    let mut stream = Computer::run(&*computer, &language.name, call.code, &settings.computer);
    let mut collected = Collected::default();
    let started = Instant::now();
    let mut ticks = tokio::time::interval(PROGRESS_EVERY);
    ticks.tick().await;
    loop {
        tokio::select! {
            () = cancel.cancelled() => {
                // Dropping the stream interrupts the code; the session and its state stay.
                drop(stream);
                collected.push(oi_core::computer::Output::console("\n[stopped: the call was cancelled]\n"));
                return CallToolResult::error(collected.into_blocks());
            }
            item = stream.next() => match item {
                Some(output) => collected.push(output),
                None => break,
            },
            _ = ticks.tick(), if progress.is_some() => {
                if let Some(progress) = &progress {
                    let seconds = started.elapsed().as_secs_f64().floor();
                    let message = format!("running for {seconds}s, {} bytes of output", collected.text_len());
                    let param = ProgressNotificationParam::new(progress.token.clone(), seconds)
                        .with_message(message);
                    // A caller that went away is met by the cancellation above.
                    let _ = progress.peer.notify_progress(param).await;
                }
            }
        }
    }
    let failed = collected.looks_failed();
    let blocks = collected.into_blocks();
    if failed {
        CallToolResult::error(blocks)
    } else {
        CallToolResult::success(blocks)
    }
}
