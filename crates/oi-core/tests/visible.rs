//! The rule for showing code before it is approved (issue 34, item 6): what a character is
//! decides whether it shows as itself or as an escape, and the shared vectors
//! (`visible_vectors.json`, also checked by the page in the browser) hold.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use oi_core::visible::{
    CodeView, UNICODE_VERSION, has_hidden_characters, hidden_characters, show_code, warning,
};
use serde::Deserialize;

/// The TAG-character payload of issue 34: `exec` of a string made only of tags.
fn tag_payload(command: &str) -> String {
    let tags: String = command
        .chars()
        .map(|c| char::from_u32(0xE0000 + c as u32).unwrap())
        .collect();
    format!("exec(''.join(chr(ord(c)-0xE0000) for c in '{tags}'))")
}

#[test]
fn the_rule_is_pinned_to_unicode_16() {
    assert_eq!(UNICODE_VERSION, "16.0.0");
}

#[test]
fn a_tag_payload_is_shown_whole() {
    let code = tag_payload("import os; os.system('touch pwned')");
    let shown = show_code(&code);
    assert!(shown.starts_with(
        "exec(''.join(chr(ord(c)-0xE0000) for c in '<U+E0069><U+E006D><U+E0070><U+E006F>"
    ));
    assert!(shown.ends_with("<U+E0027><U+E0029>'))"));
    assert_eq!(hidden_characters(&code).len(), 35);
    assert_eq!(
        warning(&code).unwrap(),
        "this code contains control or invisible characters, 35 in all (U+E0069 TAG LATIN SMALL LETTER I, U+E006D TAG LATIN SMALL LETTER M, U+E0070 TAG LATIN SMALL LETTER P, and 18 other kinds), shown above as escapes: ␍ for a carriage return, ␛ for an escape, <U+…> for the others"
    );
}

#[test]
fn each_category_is_escaped_by_what_it_is() {
    let cases = [
        // Default-ignorable, whatever else it is.
        ('\u{AD}', "<U+00AD>"),     // soft hyphen (Cf)
        ('\u{34F}', "<U+034F>"),    // combining grapheme joiner (Mn)
        ('\u{61C}', "<U+061C>"),    // Arabic letter mark (Cf)
        ('\u{115F}', "<U+115F>"),   // Hangul choseong filler (Lo)
        ('\u{1160}', "<U+1160>"),   // Hangul jungseong filler (Lo)
        ('\u{3164}', "<U+3164>"),   // Hangul filler (Lo)
        ('\u{FFA0}', "<U+FFA0>"),   // halfwidth Hangul filler (Lo)
        ('\u{FE0F}', "<U+FE0F>"),   // variation selector-16 (Mn)
        ('\u{E0100}', "<U+E0100>"), // variation selector-17 (Mn)
        ('\u{2065}', "<U+2065>"),   // reserved, default-ignorable (Cn)
        // Format (Cf): bidi controls, zero widths, tags.
        ('\u{202E}', "<U+202E>"),
        ('\u{2066}', "<U+2066>"),
        ('\u{200B}', "<U+200B>"),
        ('\u{200D}', "<U+200D>"),
        ('\u{E0041}', "<U+E0041>"),
        ('\u{110BD}', "<U+110BD>"), // Kaithi number sign: Cf, not default-ignorable
        // Control (Cc): C0 as pictures, DEL, C1.
        ('\r', "␍"),
        ('\u{1B}', "␛"),
        ('\u{0}', "␀"),
        ('\u{7F}', "␡"),
        ('\u{85}', "<U+0085>"),
        ('\u{9B}', "<U+009B>"),
        // Private use (Co), unassigned (Cn).
        ('\u{E000}', "<U+E000>"),
        ('\u{F0000}', "<U+F0000>"),
        ('\u{378}', "<U+0378>"),
        ('\u{10FFFF}', "<U+10FFFF>"),
        // Spaces and separators (Zs, Zl, Zp) but U+0020.
        ('\u{A0}', "<U+00A0>"),
        ('\u{2003}', "<U+2003>"),
        ('\u{3000}', "<U+3000>"),
        ('\u{2028}', "<U+2028>"),
        ('\u{2029}', "<U+2029>"),
    ];
    let got: Vec<(char, String)> = cases
        .iter()
        .map(|&(c, _)| (c, show_code(&format!("a{c}b"))))
        .collect();
    let want: Vec<(char, String)> = cases
        .iter()
        .map(|&(c, shown)| (c, format!("a{shown}b")))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn tab_newline_and_space_stay() {
    let code = "def f(x):\n\tif x:  return 1\n";
    assert_eq!(show_code(code), code);
    assert!(!has_hidden_characters(code));
    assert_eq!(warning(code), None);
}

#[test]
fn combining_marks_show_only_on_a_visible_base() {
    // On a letter, on a shown mark, on a CJK ideograph: shown.
    for text in ["cafe\u{301}", "e\u{301}\u{323}", "字\u{20DD}", "1\u{20E3}"] {
        assert_eq!(show_code(text), text);
    }
    // At the start, after a line break, a space, a tab or an escaped character: escaped.
    let cases = [
        ("\u{301}x", "<U+0301>x"),
        ("a\n\u{301}", "a\n<U+0301>"),
        ("a \u{301}", "a <U+0301>"),
        ("a\t\u{301}", "a\t<U+0301>"),
        ("a\u{200B}\u{301}", "a<U+200B><U+0301>"),
        ("\u{301}\u{301}", "<U+0301><U+0301>"),
        ("\u{903}", "<U+0903>"), // a spacing mark (Mc) alone
    ];
    let got: Vec<(&str, String)> = cases.iter().map(|&(t, _)| (t, show_code(t))).collect();
    let want: Vec<(&str, String)> = cases.iter().map(|&(t, s)| (t, s.to_owned())).collect();
    assert_eq!(got, want);
}

#[test]
fn a_mark_cut_from_its_base_by_a_piece_boundary_still_shows() {
    let mut view = CodeView::new();
    let got = view.push("cafe") + &view.push("\u{301} ") + &view.push("\u{301}");
    assert_eq!(got, "cafe\u{301} <U+0301>");
}

#[test]
fn every_script_and_emoji_stay_readable() {
    let text = "print('你好，世界') # مرحبا بالعالم — Ελληνικά, русский, हिन्दी, 한국어 🎉👍🏽🇫🇷 ✓ €½";
    assert_eq!(show_code(text), text);
    // A joined emoji shows its joiner: it is default-ignorable (and can hide a payload).
    assert_eq!(show_code("👩\u{200D}💻"), "👩<U+200D>💻");
}

#[test]
fn the_warning_counts_and_names() {
    assert_eq!(
        warning("rm -rf ~ #\u{202E} nothing\r").unwrap(),
        "this code contains control or invisible characters, 2 in all (U+202E RIGHT-TO-LEFT OVERRIDE, U+000D CARRIAGE RETURN), shown above as escapes: ␍ for a carriage return, ␛ for an escape, <U+…> for the others"
    );
    assert_eq!(
        warning("x = '\u{3164}\u{3164}\u{A0}\u{E001}\u{E0001}'").unwrap(),
        "this code contains control or invisible characters, 5 in all (U+3164 HANGUL FILLER, U+00A0 NO-BREAK SPACE, U+E001 a private-use character, and 1 other kind), shown above as escapes: ␍ for a carriage return, ␛ for an escape, <U+…> for the others"
    );
}

/// `visible_vectors.json`: the cases the Rust rule and the page's generated table both meet.
#[derive(Debug, Deserialize)]
struct Vectors {
    unicode: String,
    vectors: Vec<Vector>,
}

#[derive(Debug, Deserialize, PartialEq)]
struct Vector {
    name: String,
    input: String,
    shown: String,
    hidden: usize,
}

#[test]
fn the_shared_vectors_hold() {
    let vectors: Vectors = serde_json::from_str(include_str!("visible_vectors.json")).unwrap();
    assert_eq!(vectors.unicode, UNICODE_VERSION);
    assert!(vectors.vectors.len() >= 20);
    let got: Vec<Vector> = vectors
        .vectors
        .iter()
        .map(|v| Vector {
            name: v.name.clone(),
            input: v.input.clone(),
            shown: show_code(&v.input),
            hidden: hidden_characters(&v.input).len(),
        })
        .collect();
    assert_eq!(got, vectors.vectors);
}
