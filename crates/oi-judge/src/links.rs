//! Links the block itself makes (`ln -s / /tmp/r`, `os.symlink('/', '/tmp/r')`,
//! `mount --bind / /mnt/x`): a path through one leads where the link leads, which the
//! lexical reading cannot see. The block is read once to find its links, and again with them
//! known from the start (a link made later in the text may be used in a loop, or by code
//! read earlier).

use crate::places::{Comp, Pattern};

/// How many links one block is followed with; past it, every path may lead anywhere.
pub(crate) const MAX_LINKS: usize = 16;

pub(crate) use crate::resolve::{Link, link};

/// `patterns` with every path through one of `links` also read as where the link leads.
pub(crate) fn through(links: &[Link], patterns: Vec<Pattern>) -> Vec<Pattern> {
    if links.is_empty() {
        return patterns;
    }
    let mut out = patterns;
    // Twice, for a link that leads through another.
    for _ in 0..2 {
        let mut more = Vec::new();
        for pattern in &out {
            for link in links {
                let Some(rest) = under(pattern, &link.at) else {
                    continue;
                };
                let leads: Vec<Pattern> = if link.to.is_empty() {
                    vec![vec![Comp::AnyDepth]]
                } else {
                    link.to.clone()
                };
                for lead in leads {
                    let mut path = lead;
                    path.extend(rest.iter().cloned());
                    more.push(path);
                }
            }
        }
        for path in more {
            if !out.contains(&path) {
                out.push(path);
            }
        }
    }
    out
}

/// What follows `at` in `pattern`, when `pattern` may go through `at`.
fn under<'a>(pattern: &'a Pattern, at: &Pattern) -> Option<&'a [Comp]> {
    if pattern.len() < at.len() {
        return None;
    }
    let same = pattern.iter().zip(at.iter()).all(|(p, a)| match (p, a) {
        (Comp::Glob(p), Comp::Glob(a)) => {
            crate::places::glob_match(p, a) || crate::places::glob_match(a, p)
        }
        _ => false,
    });
    same.then(|| &pattern[at.len()..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::places::pattern;

    #[test]
    fn paths_through_a_link_lead_where_it_leads() {
        let links = [
            link(pattern("/tmp/r", None), Some("/")),
            link(pattern("/tmp/up", None), Some("../home")),
            link(pattern("/mnt/x", None), None),
        ];
        let read = |text: &str| through(&links, vec![pattern(text, None)]);
        assert_eq!(
            read("/tmp/r/home/ada"),
            [pattern("/tmp/r/home/ada", None), pattern("/home/ada", None)]
        );
        assert_eq!(
            read("/tmp/up/ada"),
            [pattern("/tmp/up/ada", None), pattern("/home/ada", None)]
        );
        assert_eq!(
            read("/mnt/x/ada"),
            [pattern("/mnt/x/ada", None), pattern("/\u{1}/ada", None)]
        );
        assert_eq!(read("/tmp/rr/x"), [pattern("/tmp/rr/x", None)]);
    }
}
