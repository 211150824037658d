//! What a conversation is doing, kept beside its settings rather than in them: the file it is
//! saved to and what its model requests have cost. Settings are what a user, a profile or a
//! client configures (and what a store may carry to another replica); this is what the
//! interpreter finds out while it runs, so no settings patch overwrites it and no copy of
//! the settings carries it to another conversation.

use serde_json::Value;

use crate::settings::{Settings, SettingsPatch};

/// The key under which [`RuntimeState::conversation_filename`] is shown beside the settings
/// (`GET /settings`, Python's `interpreter.conversation_filename`), as the original shows it.
pub const CONVERSATION_FILENAME: &str = "conversation_filename";

/// One conversation's runtime state (owned by its [`Interpreter`](crate::Interpreter)).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RuntimeState {
    /// The file name of this conversation in the conversations folder: chosen by the first
    /// save, or set by whoever resumes a saved conversation; cleared by a reset.
    pub conversation_filename: Option<String>,
    /// What this conversation's model requests have cost so far, in USD (kept across a
    /// reset); `max_budget` is checked against it before every request.
    pub spent: f64,
    /// What every model request of this conversation used (kept across a reset).
    pub session: Tally,
    /// What the requests of the last turn used (from its start; cleared when the next
    /// turn starts).
    pub last_turn: Tally,
}

/// Tokens and cost summed over some model requests: what users see (`%tokens`, `%info`,
/// `oi -v`, the server's `usage`).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Tally {
    /// Requests whose usage was reported (or counted).
    pub requests: u64,
    /// Tokens of their prompts.
    pub prompt_tokens: u64,
    /// Tokens of their replies.
    pub reply_tokens: u64,
    /// Their cost in USD; `None` when the price of some request is not known (its tokens
    /// count, its cost cannot).
    pub cost: Option<f64>,
}

impl Default for Tally {
    fn default() -> Self {
        Tally {
            requests: 0,
            prompt_tokens: 0,
            reply_tokens: 0,
            cost: Some(0.0),
        }
    }
}

impl Tally {
    /// Adds one request's usage.
    pub fn add(&mut self, usage: &crate::Usage) {
        self.requests += 1;
        self.prompt_tokens = self.prompt_tokens.saturating_add(usage.prompt_tokens);
        self.reply_tokens = self.reply_tokens.saturating_add(usage.reply_tokens);
        self.cost = self.cost.zip(usage.cost).map(|(a, b)| a + b);
    }

    /// The cost as users read it: `$0.0123`, or `unknown` when a price is not known.
    pub fn cost_text(&self) -> String {
        self.cost
            .map_or_else(|| "unknown".to_owned(), |cost| format!("${cost:.4}"))
    }

    /// One line for people: `3 requests, 1200 prompt + 85 reply tokens, $0.0031`, or
    /// `no usage reported` when no request reported any.
    pub fn summary(&self) -> String {
        if self.requests == 0 {
            return "no usage reported".to_owned();
        }
        let plural = if self.requests == 1 { "" } else { "s" };
        let cost = match self.cost {
            Some(cost) => format!("${cost:.4}"),
            None => "cost unknown (oi does not know this model's price)".to_owned(),
        };
        format!(
            "{} request{plural}, {} prompt + {} reply tokens, {cost}",
            self.requests, self.prompt_tokens, self.reply_tokens
        )
    }
}

/// The usage a client is shown (the server's `GET /sessions/{id}` and, when asked for,
/// its `complete`s): the last turn's and the session's tallies, and the spend `max_budget`
/// counts.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct UsageReport {
    /// The requests of the last turn (or of the turn that just completed).
    pub last_turn: Tally,
    /// Every request of the session.
    pub session: Tally,
    /// What the requests with a known price cost, in USD (what `max_budget` is checked
    /// against; a request of unknown price counts 0).
    pub spent: f64,
}

impl RuntimeState {
    /// The usage a client is shown.
    pub fn usage(&self) -> UsageReport {
        UsageReport {
            last_turn: self.last_turn,
            session: self.session,
            spent: self.spent,
        }
    }

    /// Takes what `patch` says about the runtime state (a profile or a flag may name the
    /// conversation file to start with).
    pub fn apply(&mut self, patch: &SettingsPatch) {
        if let Some(name) = &patch.conversation_filename {
            self.conversation_filename.clone_from(name);
        }
    }
}

/// `settings` as JSON with the runtime state a client sees among them
/// (`conversation_filename`, right after `conversation_history_path`, where the original
/// lists it): what `GET /settings` and the Python attributes show.
pub fn settings_with_runtime(settings: &Settings, runtime: &RuntimeState) -> Value {
    let Ok(Value::Object(fields)) = serde_json::to_value(settings) else {
        return Value::Null;
    };
    let filename = runtime
        .conversation_filename
        .clone()
        .map_or(Value::Null, Value::String);
    let mut shown = serde_json::Map::with_capacity(fields.len() + 1);
    let mut pending = Some(filename);
    for (key, value) in fields {
        let after = key == "conversation_history_path";
        shown.insert(key, value);
        if after {
            if let Some(filename) = pending.take() {
                shown.insert(CONVERSATION_FILENAME.to_owned(), filename);
            }
        }
    }
    if let Some(filename) = pending {
        shown.insert(CONVERSATION_FILENAME.to_owned(), filename);
    }
    Value::Object(shown)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn the_file_name_is_shown_beside_the_settings_not_stored_in_them() {
        let settings = Settings::default();
        let plain = serde_json::to_value(&settings).unwrap();
        assert!(plain.get(CONVERSATION_FILENAME).is_none());
        let shown = settings_with_runtime(&settings, &RuntimeState::default());
        assert_eq!(shown[CONVERSATION_FILENAME], Value::Null);
        let runtime = RuntimeState {
            conversation_filename: Some("a.json".into()),
            spent: 1.0,
            ..RuntimeState::default()
        };
        let shown = settings_with_runtime(&settings, &runtime);
        assert_eq!(shown[CONVERSATION_FILENAME], "a.json");
        assert!(shown.get("spent").is_none());
        let keys: Vec<&String> = shown.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), plain.as_object().unwrap().len() + 1);
    }

    #[test]
    fn a_tally_adds_tokens_and_loses_its_cost_to_an_unknown_price() {
        let mut tally = Tally::default();
        assert_eq!(tally.summary(), "no usage reported");
        tally.add(&crate::Usage {
            prompt_tokens: 100,
            reply_tokens: 10,
            cost: Some(0.5),
        });
        assert_eq!(tally.cost_text(), "$0.5000");
        assert_eq!(
            tally.summary(),
            "1 request, 100 prompt + 10 reply tokens, $0.5000"
        );
        tally.add(&crate::Usage {
            prompt_tokens: 1,
            reply_tokens: 2,
            cost: None,
        });
        assert_eq!((tally.prompt_tokens, tally.reply_tokens), (101, 12));
        assert_eq!(tally.cost, None);
        assert_eq!(tally.cost_text(), "unknown");
        assert!(tally.summary().contains("cost unknown"));
    }

    #[test]
    fn a_patch_names_the_file_to_start_with() {
        let mut runtime = RuntimeState::default();
        runtime.apply(&SettingsPatch::default());
        assert_eq!(runtime.conversation_filename, None);
        let patch = SettingsPatch {
            conversation_filename: Some(Some("b.json".into())),
            ..SettingsPatch::default()
        };
        runtime.apply(&patch);
        assert_eq!(runtime.conversation_filename.as_deref(), Some("b.json"));
    }
}
