//! Approving code before it runs: the request a turn emits and the decision it waits for.
//!
//! When the approval rules say "ask", the respond loop emits a [`TurnEvent::Approval`] carrying
//! an [`ApprovalRequest`] and waits, parked, until the request is answered. Every front end maps
//! the same request: the terminal asks y/n/e, the blocking API calls a closure, the server
//! sends a confirmation chunk and answers on `go`/`stop`. Dropping a request unanswered
//! declines the code.
//!
//! [`TurnEvent::Approval`]: crate::TurnEvent::Approval

use tokio::sync::oneshot;

use crate::lmc::Chunk;

/// What the consumer decided about a code block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run it.
    Approve,
    /// Do not run it; "I have declined to run this code." goes to the model and the turn ends.
    Decline,
    /// Run this code instead (it replaces the stored code).
    Edit(String),
}

/// Identifies an approval request among those of one interpreter.
pub type ApprovalId = u64;

/// A code block waiting for a decision. The turn that emitted it is parked until the request
/// is answered with [`approve`](Self::approve), [`decline`](Self::decline),
/// [`edit`](Self::edit) or [`decide`](Self::decide); dropping it declines.
#[derive(Debug)]
pub struct ApprovalRequest {
    id: ApprovalId,
    language: String,
    code: String,
    answer: oneshot::Sender<Decision>,
}

/// The turn's side of a request: resolves to the decision, or to `Decline` when the request
/// was dropped unanswered.
pub(crate) struct PendingDecision(oneshot::Receiver<Decision>);

impl PendingDecision {
    /// Waits for the decision.
    pub(crate) async fn wait(self) -> Decision {
        self.0.await.unwrap_or(Decision::Decline)
    }
}

impl ApprovalRequest {
    /// A request for `code` in `language`, and the turn's side of it.
    pub(crate) fn new(
        id: ApprovalId,
        language: &str,
        code: &str,
    ) -> (ApprovalRequest, PendingDecision) {
        let (answer, receiver) = oneshot::channel();
        let request = ApprovalRequest {
            id,
            language: language.to_owned(),
            code: code.to_owned(),
            answer,
        };
        (request, PendingDecision(receiver))
    }

    /// Its id, unique within the interpreter.
    pub fn id(&self) -> ApprovalId {
        self.id
    }

    /// The language the code is in (lower-case, as it will run).
    pub fn language(&self) -> &str {
        &self.language
    }

    /// The code that would run.
    pub fn code(&self) -> &str {
        &self.code
    }

    /// The LMC confirmation chunk that shows this request on the wire (spec a.4):
    /// `{"role":"computer","type":"confirmation","format":"execution","content":{…}}`.
    pub fn confirmation(&self) -> Chunk {
        Chunk::confirmation(&self.language, &self.code)
    }

    /// Answers the request.
    pub fn decide(self, decision: Decision) {
        // The turn may have been stopped meanwhile; then nobody waits for the answer.
        let _ = self.answer.send(decision);
    }

    /// Runs the code.
    pub fn approve(self) {
        self.decide(Decision::Approve);
    }

    /// Does not run the code.
    pub fn decline(self) {
        self.decide(Decision::Decline);
    }

    /// Runs `code` instead.
    pub fn edit(self, code: impl Into<String>) {
        self.decide(Decision::Edit(code.into()));
    }
}
