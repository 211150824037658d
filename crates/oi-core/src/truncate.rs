//! `max_output` truncation of stored console output (spec b.11).

/// The notice put in front of truncated output. The original's words point at
/// `computer.ai.summarize`; that only exists while the computer API is imported into the
/// code's session (`computer_api`), so without it the notice says to break the work down
/// only. (The original's `get_last_output()` hint is left out: no such function exists.)
pub fn truncation_notice(max_output: usize, computer_api: bool) -> String {
    if computer_api {
        format!(
            "Output truncated. Showing the last {max_output} characters. You should try again and use computer.ai.summarize(output) over the output, or break it down into smaller steps.\n\n"
        )
    } else {
        format!(
            "Output truncated. Showing the last {max_output} characters. You should try again and break it down into smaller steps.\n\n"
        )
    }
}

/// Keeps the last `max_output` characters of `data`, behind the notice. Idempotent: output
/// that already carries the notice is re-truncated, not noticed twice.
pub fn truncate_output(data: &str, max_output: usize, computer_api: bool) -> String {
    let notice = truncation_notice(max_output, computer_api);
    let (body, was_truncated) = match data.strip_prefix(notice.as_str()) {
        Some(rest) => (rest, true),
        None => (data, false),
    };
    let length = body.chars().count();
    if length <= max_output && !was_truncated {
        return data.to_owned();
    }
    let tail: String = body
        .chars()
        .skip(length.saturating_sub(max_output))
        .collect();
    notice + &tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_output_is_untouched() {
        assert_eq!(truncate_output("hello\n", 2800, false), "hello\n");
    }

    #[test]
    fn long_output_keeps_the_tail_once() {
        let once = truncate_output("abcdef", 3, false);
        assert_eq!(once, format!("{}def", truncation_notice(3, false)));
        let twice = truncate_output(&format!("{once}gh"), 3, false);
        assert_eq!(twice, format!("{}fgh", truncation_notice(3, false)));
    }

    #[test]
    fn the_notice_names_computer_ai_summarize_only_while_the_api_exists() {
        assert!(truncation_notice(5, true).contains("computer.ai.summarize(output)"));
        assert!(!truncation_notice(5, false).contains("computer."));
        assert!(!truncation_notice(5, true).contains("get_last_output"));
    }

    #[test]
    fn counts_characters_not_bytes() {
        assert_eq!(truncate_output("ééé", 3, false), "ééé");
    }
}
