//! What a character is, and so how code shows it: as itself, or as an escape.
//!
//! The rule is decided by Unicode properties, not by a list of known bad characters. It is
//! pinned to **Unicode 16.0.0**: the general category comes from the
//! `unicode-general-category` crate (1.1.x, generated from the 16.0.0 database) and the
//! default-ignorable set is the table below, copied from `DerivedCoreProperties.txt` 16.0.0.
//! When either moves to a newer Unicode, [`UNICODE_VERSION`] and the page's generated table
//! (`crates/oi-server/web/visible_table.js`) move with it.

use unicode_general_category::{GeneralCategory as Gc, get_general_category};

/// The Unicode version the rule implements.
pub const UNICODE_VERSION: &str = "16.0.0";

/// `Default_Ignorable_Code_Point` of Unicode 16.0.0 (DerivedCoreProperties.txt), inclusive
/// ranges: characters a renderer may draw as nothing at all, whatever their category.
const DEFAULT_IGNORABLE: &[(u32, u32)] = &[
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
];

/// How code shows one character, before looking at its neighbours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Shown as itself: letters, digits, punctuation and symbols of any script, the space,
    /// tab and newline.
    Shown,
    /// A combining mark (Mn, Mc, Me): shown as itself only right after a character shown as
    /// itself that is not a space, tab or newline; escaped anywhere else.
    Mark,
    /// Always shown as an escape: default-ignorable, format (Cf), control (Cc, but tab and
    /// newline), private-use (Co), surrogate (Cs), unassigned (Cn), and every space or
    /// separator (Zs, Zl, Zp) but U+0020.
    Escaped,
}

/// Whether code point `cp` is default-ignorable in Unicode 16.0.0.
pub fn is_default_ignorable(cp: u32) -> bool {
    DEFAULT_IGNORABLE
        .binary_search_by(|&(first, last)| {
            if last < cp {
                std::cmp::Ordering::Less
            } else if first > cp {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// How character `c` is shown (see [`Class`]).
pub fn class(c: char) -> Class {
    if matches!(c, '\t' | '\n' | ' ') {
        return Class::Shown;
    }
    if is_default_ignorable(c as u32) {
        return Class::Escaped;
    }
    match get_general_category(c) {
        Gc::Format
        | Gc::Control
        | Gc::PrivateUse
        | Gc::Surrogate
        | Gc::Unassigned
        | Gc::SpaceSeparator
        | Gc::LineSeparator
        | Gc::ParagraphSeparator => Class::Escaped,
        Gc::NonspacingMark | Gc::SpacingMark | Gc::EnclosingMark => Class::Mark,
        _ => Class::Shown,
    }
}

/// How code point `cp` is shown, surrogates included (they are no `char`, but the page's
/// JavaScript strings can hold them): for the page's generated table.
pub fn class_of(cp: u32) -> Class {
    char::from_u32(cp).map_or(Class::Escaped, class)
}

/// Writes the escape for `c`: a control picture for C0 controls (`␍`, `␛`, …) and DEL
/// (`␡`), `<U+XXXX>` (at least four upper-case hex digits) for everything else.
pub fn push_escape(c: char, out: &mut String) {
    let cp = c as u32;
    match cp {
        0x00..=0x1F => out.push(char::from_u32(0x2400 + cp).unwrap_or('?')),
        0x7F => out.push('\u{2421}'),
        _ => {
            use std::fmt::Write as _;
            let _ = write!(out, "<U+{cp:04X}>");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_category_data_is_the_version_the_rule_names() {
        let (major, minor, update) = unicode_general_category::UNICODE_VERSION;
        assert_eq!(format!("{major}.{minor}.{update}"), UNICODE_VERSION);
    }

    #[test]
    fn the_default_ignorable_table_is_sorted_and_disjoint() {
        assert!(DEFAULT_IGNORABLE.windows(2).all(|w| w[0].1 < w[1].0));
        assert!(DEFAULT_IGNORABLE.iter().all(|(first, last)| first <= last));
        let count: u32 = DEFAULT_IGNORABLE.iter().map(|(f, l)| l - f + 1).sum();
        // DerivedCoreProperties.txt 16.0.0: "Total code points: 4174".
        assert_eq!(count, 4174);
    }
}
