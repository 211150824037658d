//! Commands that make a path lead somewhere else: `ln -s TARGET LINK` and
//! `mount --bind SOURCE DIR` (see [`crate::links`]).

use super::options::is_option;
use crate::context::Context;
use crate::word::{Field, Seg};

/// `ln [-s] [-t DIR] TARGET… [LINK|DIR]`: symbolic links are recorded (a hard link cannot
/// name a directory).
pub(super) fn ln(w: &mut dyn Context, args: &[Field]) {
    let symbolic = args.iter().filter_map(Field::known).any(|a| {
        a == "--symbolic" || (a.starts_with('-') && !a.starts_with("--") && a.contains('s'))
    });
    if !symbolic {
        return;
    }
    let mut directory: Option<Field> = None;
    let mut operands: Vec<&Field> = Vec::new();
    let mut at = 0;
    while let Some(arg) = args.get(at) {
        at += 1;
        match arg.known().as_deref() {
            Some("-t" | "--target-directory") => {
                directory = args.get(at).cloned();
                at += 1;
            }
            Some(text) if text.starts_with("--target-directory=") => {
                directory = Some(Field::lit(&text["--target-directory=".len()..]));
            }
            // A cluster of short options: `-t DIR` (`-st DIR`, `-t/tmp`) and `-S SUFFIX`
            // take a value.
            Some(text) if text.starts_with('-') && !text.starts_with("--") && text.len() > 1 => {
                if let Some(found) = text.find(['t', 'S']) {
                    let rest = &text[found + 1..];
                    let value = if rest.is_empty() {
                        at += 1;
                        args.get(at - 1).cloned()
                    } else {
                        Some(Field::lit(rest))
                    };
                    if text[found..].starts_with('t') {
                        directory = value;
                    }
                }
            }
            _ if is_option(arg) => {}
            _ => operands.push(arg),
        }
    }
    let (targets, place): (&[&Field], Option<&Field>) = match (&directory, operands.as_slice()) {
        (Some(dir), all) => (all, Some(dir)),
        (None, [target]) => (std::slice::from_ref(target), None),
        (None, [targets @ .., last]) => (targets, Some(*last)),
        (None, []) => return,
    };
    for target in targets {
        let name = basename(target);
        match place {
            // `ln -s T L` makes `L`, or `L/NAME` when `L` is a directory.
            Some(place) => {
                if directory.is_none() {
                    w.link(place, Some(target));
                }
                w.link(&child(place, &name), Some(target));
            }
            None => w.link(&name, Some(target)),
        }
    }
}

/// `mount --bind SOURCE DIR` (also `-B`, `--rbind`, `-R`, `-o bind`): `DIR` shows `SOURCE`.
pub(super) fn mount(w: &mut dyn Context, args: &[Field]) {
    let texts: Vec<String> = args.iter().map(Field::shown).collect();
    let operands: Vec<&Field> = args
        .iter()
        .enumerate()
        .filter(|(n, a)| {
            let takes_value = *n > 0
                && matches!(
                    texts[n - 1].as_str(),
                    "-o" | "--options" | "-t" | "--types" | "-L" | "-U" | "--source" | "--target"
                );
            !is_option(a) && !takes_value
        })
        .map(|(_, a)| a)
        .collect();
    // Mounting over a protected place hides what it holds (`mount -t tmpfs tmpfs ~`).
    let mut points: Vec<&Field> = operands.last().copied().into_iter().collect();
    if let Some(n) = texts.iter().position(|t| t == "--target") {
        points.extend(args.get(n + 1));
    }
    for point in points {
        for pattern in w.targets(point) {
            if let Some(what) = w.places().protected(&pattern, crate::places::Harm::Delete) {
                w.block(format!(
                    "it mounts over {what}, hiding what it holds (`mount {}`)",
                    texts.join(" ")
                ));
                return;
            }
        }
    }
    if !operands.is_empty() {
        // What a path under a mount point leads to depends on the mount, which oi does not
        // follow in later blocks.
        w.unsure("mounts a file system, which changes where paths lead");
    }
    let bind = texts.iter().enumerate().any(|(n, t)| {
        matches!(t.as_str(), "--bind" | "-B" | "--rbind" | "-R")
            || (n > 0 && matches!(texts[n - 1].as_str(), "-o" | "--options") && t.contains("bind"))
    });
    if !bind {
        return;
    }
    let operands: Vec<&Field> = args
        .iter()
        .enumerate()
        .filter(|(n, a)| {
            let takes_value = *n > 0 && matches!(texts[n - 1].as_str(), "-o" | "--options" | "-t");
            !is_option(a) && !takes_value
        })
        .map(|(_, a)| a)
        .collect();
    if let [source, place] = operands.as_slice() {
        w.link(place, Some(source));
    }
}

/// The last component of `field` (unknown when it is not known).
fn basename(field: &Field) -> Field {
    match field.known() {
        Some(text) => {
            let trimmed = text.trim_end_matches('/');
            Field::lit(trimmed.rsplit('/').next().unwrap_or(trimmed))
        }
        None => Field::unknown(&field.shown(), false),
    }
}

/// `dir/name`.
fn child(dir: &Field, name: &Field) -> Field {
    let mut out = dir.clone();
    out.segs.push(Seg::Lit("/".to_owned()));
    out.segs.extend(name.segs.iter().cloned());
    out
}
