//! Property: the text-mode parser finds the same text and code however the stream is cut.

use oi_core::ModelDelta;
use oi_llm::fence::FenceParser;
use proptest::prelude::*;

fn parse(pieces: &[String]) -> (String, String, String) {
    let mut parser = FenceParser::new();
    let mut deltas = Vec::new();
    for piece in pieces {
        deltas.extend(parser.push(piece));
    }
    deltas.extend(parser.finish());
    let (mut text, mut code, mut language) = (String::new(), String::new(), String::new());
    for delta in deltas {
        match delta {
            ModelDelta::Message(t) => text.push_str(&t),
            ModelDelta::Code {
                language: l,
                code: c,
            } => {
                language = l;
                code.push_str(&c);
            }
            ModelDelta::Usage(_) => {}
        }
    }
    (text, code, language)
}

/// Cuts `text` at the given char positions.
fn cut(text: &str, cuts: &[usize]) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (chars.len() + 1)).collect();
    points.sort_unstable();
    points.dedup();
    let mut pieces = Vec::new();
    let mut from = 0;
    for p in points.into_iter().chain([chars.len()]) {
        pieces.push(chars[from..p].iter().collect());
        from = p;
    }
    pieces
}

fn reply() -> impl Strategy<Value = String> {
    let text = "[a-zé` \n.]{0,20}";
    let language = prop_oneof![
        Just(""),
        Just("python"),
        Just("bash"),
        Just("python3"),
        Just("js ")
    ];
    let code = "[a-z0-9`'\"() =\n\t é]{0,40}";
    (text, language, code, "[a-z ]{0,10}")
        .prop_map(|(t, l, c, after)| format!("{t}```{l}\n{c}\n```\n{after}"))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn every_cut_gives_the_same_result(text in reply(), cuts in prop::collection::vec(0usize..200, 0..12)) {
        let whole = parse(std::slice::from_ref(&text));
        let pieces = cut(&text, &cuts);
        prop_assert_eq!(&parse(&pieces), &whole);
        let one_char: Vec<String> = text.chars().map(String::from).collect();
        prop_assert_eq!(&parse(&one_char), &whole);
    }

    #[test]
    fn code_is_exactly_what_was_written(
        before in "[a-z .\n]{0,20}",
        code in "[a-z0-9'\"() =\n]{0,40}",
        cuts in prop::collection::vec(0usize..200, 0..12),
    ) {
        prop_assume!(!code.lines().any(|l| l.trim_start().starts_with("```")));
        let text = format!("{before}```python\n{code}\n```\nThat is all.");
        let (message, parsed, language) = parse(&cut(&text, &cuts));
        prop_assert_eq!(message, before);
        prop_assert_eq!(&parsed, &code);
        prop_assert_eq!(language, if code.is_empty() { "" } else { "python" });
    }
}
