//! What the session has cost, as users read it: `%tokens`, `%info`, and the line `oi -v`
//! prints after each turn. The numbers are the providers' own usage reports, priced from oi's
//! model table; a model whose price oi does not know shows its tokens and `unknown` cost.

use oi_core::{Interpreter, Tally};

/// The lines about the last turn and the whole session (markdown quotes).
pub fn lines(interpreter: &Interpreter) -> String {
    let runtime = interpreter.runtime();
    format!(
        "> Last turn: {}\n> This session: {}\n",
        runtime.last_turn.summary(),
        session_summary(&runtime.session, runtime.spent)
    )
}

/// The session's tally; when some price was unknown, what the known part cost.
fn session_summary(session: &Tally, spent: f64) -> String {
    if session.cost.is_none() && spent > 0.0 {
        format!(
            "{} (the requests with a known price: ${spent:.4})",
            session.summary()
        )
    } else {
        session.summary()
    }
}

/// The line `oi -v` prints after a turn (on stderr, beside the log): the turn's and the
/// session's tokens and cost.
pub fn after_turn(interpreter: &Interpreter) -> Option<String> {
    if !interpreter.settings().verbose {
        return None;
    }
    let runtime = interpreter.runtime();
    Some(format!(
        "[usage] this turn: {}; this session: {}",
        runtime.last_turn.summary(),
        session_summary(&runtime.session, runtime.spent)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use oi_core::Usage;

    #[test]
    fn an_unknown_price_is_said_with_what_the_known_part_cost() {
        let mut session = Tally::default();
        session.add(&Usage {
            prompt_tokens: 10,
            reply_tokens: 1,
            cost: Some(0.25),
        });
        session.add(&Usage {
            prompt_tokens: 10,
            reply_tokens: 1,
            cost: None,
        });
        let text = session_summary(&session, 0.25);
        assert!(text.contains("cost unknown"), "{text}");
        assert!(text.contains("$0.2500"), "{text}");
    }
}
