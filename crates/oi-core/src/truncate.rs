//! `max_output` truncation of stored console output (spec b.11).

/// The notice put in front of truncated output.
pub fn truncation_notice(max_output: usize, add_scrollbars: bool) -> String {
    let notice = format!(
        "Output truncated. Showing the last {max_output} characters. You should try again and use computer.ai.summarize(output) over the output, or break it down into smaller steps.\n\n"
    );
    if add_scrollbars {
        format!(
            "{} Run `get_last_output()[0:{max_output}]` to see the first page.\n\n",
            notice.trim()
        )
    } else {
        notice
    }
}

/// Keeps the last `max_output` characters of `data`, behind the notice. Idempotent: output
/// that already carries the notice is re-truncated, not noticed twice.
pub fn truncate_output(data: &str, max_output: usize, add_scrollbars: bool) -> String {
    let notice = truncation_notice(max_output, add_scrollbars);
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
    fn counts_characters_not_bytes() {
        assert_eq!(truncate_output("ééé", 3, false), "ééé");
    }
}
