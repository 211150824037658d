//! Reopening a session from its file after a restart (no store): its conversation, with a
//! note that the interpreter's state is gone, and its settings taken as a replica takes a
//! stored session's ([`crate::sessions::settings_adopt`]: data, never policy) — except that
//! where the session had been made stricter than the server's configuration (asking before
//! running code, never running code, scanning, more `deny` rules, `hard_deny`), the stricter
//! of the two stays: a restart never loosens a session. A replica adopting a session from the
//! store takes its settings by the same rule (`Sessions::adopt`): a store can tighten a session
//! it holds, never loosen the replica's configuration.

use oi_core::{ApprovalPolicy, Message, Settings, settings::SafeMode};

use crate::sessions::session_files::{RESTART_NOTE, SavedSession};
use crate::sessions::settings_adopt::adopt_settings;
use crate::sessions::settings_patch::NetworkPolicy;

/// The settings a reopened session is served with: `own` (the server's) with the data of
/// `stored`, and the stricter of both for approval.
pub fn reopened_settings(own: &Settings, stored: &Settings, policy: NetworkPolicy) -> Settings {
    let (mut settings, _) = adopt_settings(own, stored, policy);
    settings.auto_run = own.auto_run && stored.auto_run;
    settings.approval_policy = stricter_policy(own.approval_policy, stored.approval_policy);
    settings.safe_mode = stricter_scan(own.safe_mode, stored.safe_mode);
    settings.hard_deny = own.hard_deny || stored.hard_deny;
    for rule in &stored.deny {
        if !settings.deny.contains(rule) {
            settings.deny.push(rule.clone());
        }
    }
    settings
}

fn stricter_policy(a: ApprovalPolicy, b: ApprovalPolicy) -> ApprovalPolicy {
    let rank = |p: ApprovalPolicy| match p {
        ApprovalPolicy::Auto => 0,
        ApprovalPolicy::AlwaysAsk => 1,
        ApprovalPolicy::NeverRun => 2,
    };
    if rank(b) > rank(a) { b } else { a }
}

fn stricter_scan(a: SafeMode, b: SafeMode) -> SafeMode {
    let rank = |m: SafeMode| match m {
        SafeMode::Off => 0,
        SafeMode::Ask => 1,
        SafeMode::Auto => 2,
    };
    if rank(b) > rank(a) { b } else { a }
}

/// The conversation of a reopened session: the saved one, ending with the restart note (added
/// once: a session reopened twice with nothing said in between keeps one).
pub fn reopened_messages(saved: SavedSession) -> Vec<Message> {
    let mut messages = saved.messages;
    let note = Message::console_output(RESTART_NOTE);
    if messages.last() != Some(&note) {
        messages.push(note);
    }
    messages
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn a_tightened_session_stays_tight_and_a_loose_one_does_not_loosen_the_server() {
        let own = Settings {
            auto_run: true,
            approval_policy: ApprovalPolicy::Auto,
            ..Settings::default()
        };
        let mut stored = own.clone();
        stored.auto_run = false;
        stored.approval_policy = ApprovalPolicy::AlwaysAsk;
        stored.deny = vec!["rm ".into()];
        stored.custom_instructions = "kept".into();
        let got = reopened_settings(&own, &stored, NetworkPolicy::default());
        let mut expected = own;
        expected.auto_run = false;
        expected.approval_policy = ApprovalPolicy::AlwaysAsk;
        expected.deny = vec!["rm ".into()];
        expected.custom_instructions = "kept".into();
        assert_eq!(got, expected);

        let strict = Settings::default();
        let mut loose = strict.clone();
        loose.auto_run = true;
        loose.approval_policy = ApprovalPolicy::Auto;
        loose.hard_deny = false;
        assert_eq!(
            reopened_settings(&strict, &loose, NetworkPolicy::default()),
            strict
        );
    }

    #[test]
    fn the_note_is_added_once() {
        let saved = SavedSession {
            id: "a".into(),
            messages: vec![Message::user("hi")],
            settings: None,
        };
        let once = reopened_messages(saved.clone());
        assert_eq!(
            once,
            vec![Message::user("hi"), Message::console_output(RESTART_NOTE)]
        );
        let again = SavedSession {
            messages: once.clone(),
            ..saved
        };
        assert_eq!(reopened_messages(again), once);
    }
}
