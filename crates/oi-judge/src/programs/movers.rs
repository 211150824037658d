//! Programs that delete as a side effect of another job: archivers that remove what they
//! archived (`tar --remove-files`, `zip -m`), `rsync --delete` into a protected destination,
//! `git clean` of a protected work tree, and `mv` of a protected directory.

use crate::context::Context;
use crate::places::Harm;
use crate::word::{Field, Seg};

use super::effects::delete_targets;
use super::options::is_option;

/// The operands of a command: its arguments that are not options nor the values of the
/// options in `with_value` (`-f ARCHIVE`, or a short-option cluster ending in one of them).
pub(super) fn operands<'a>(
    args: &'a [Field],
    with_value: &[&str],
    short_with_value: &[char],
) -> Vec<&'a Field> {
    let mut out = Vec::new();
    let mut skip_next = false;
    let mut options_done = false;
    for (n, arg) in args.iter().enumerate() {
        if skip_next {
            skip_next = false;
            continue;
        }
        let text = arg.known().unwrap_or_default();
        if !options_done && text == "--" {
            options_done = true;
            continue;
        }
        if options_done || !is_option(arg) {
            // tar's first argument may be a cluster of letters without a dash (`tar cf X`).
            if n == 0 && short_with_value.iter().any(|c| text.contains(*c)) && is_cluster(&text) {
                skip_next = true;
                continue;
            }
            out.push(arg);
            continue;
        }
        if text.starts_with("--") {
            skip_next = !text.contains('=') && with_value.contains(&text.as_str());
        } else {
            let letters: Vec<char> = text.chars().skip(1).collect();
            skip_next = letters
                .last()
                .is_some_and(|last| short_with_value.contains(last))
                || with_value.contains(&text.as_str());
        }
    }
    out
}

/// Whether `text` is a bundle of tar's letter options (`cf`, `czvf`).
fn is_cluster(text: &str) -> bool {
    !text.is_empty() && text.len() <= 8 && text.chars().all(|c| c.is_ascii_alphabetic())
}

fn has_long(args: &[Field], prefix: &str) -> bool {
    args.iter()
        .any(|a| a.known().is_some_and(|t| t.starts_with(prefix)))
}

fn has_short(args: &[Field], letter: char) -> bool {
    args.iter().any(|a| {
        a.known().is_some_and(|t| {
            t.starts_with('-') && !t.starts_with("--") && t.chars().skip(1).any(|c| c == letter)
        })
    })
}

fn shown(name: &str, args: &[Field]) -> String {
    let words: Vec<String> = args.iter().map(Field::shown).collect();
    format!("{name} {}", words.join(" "))
}

/// `tar --remove-files`: what it archives is deleted, each operand relative to the directory
/// the last `-C DIR` before it names (`tar -cf /dev/null --remove-files -C / home`).
pub(super) fn tar(w: &mut dyn Context, args: &[Field]) {
    if !has_long(args, "--remove-files") {
        return;
    }
    let with_value = [
        "--file",
        "--exclude",
        "-T",
        "--files-from",
        "-X",
        "--exclude-from",
    ];
    let mut dir = Field::lit(".");
    let mut targets: Vec<Field> = Vec::new();
    let mut skip_next = false;
    let mut options_done = false;
    for (n, arg) in args.iter().enumerate() {
        if skip_next {
            skip_next = false;
            continue;
        }
        let text = arg.known().unwrap_or_default();
        if !options_done && text == "--" {
            options_done = true;
            continue;
        }
        let directory = if options_done {
            None
        } else if text == "-C" || text == "--directory" {
            skip_next = true;
            args.get(n + 1).cloned()
        } else if let Some(value) = text.strip_prefix("--directory=") {
            Some(Field::lit(value))
        } else {
            text.strip_prefix("-C")
                .filter(|v| !v.is_empty())
                .map(Field::lit)
        };
        if let Some(next) = directory {
            dir = join(&dir, &next);
            continue;
        }
        if options_done || !is_option(arg) {
            if n == 0 && is_cluster(&text) {
                skip_next = text.contains(['f', 'T', 'X', 'b', 'L', 'N']);
                if text.contains('C') {
                    // `tar cfC ARCHIVE DIR …`: values in the order of their letters.
                    skip_next = true;
                }
                continue;
            }
            targets.push(join(&dir, arg));
            continue;
        }
        if text.starts_with("--") {
            skip_next = !text.contains('=') && with_value.contains(&text.as_str());
        } else {
            let letters: Vec<char> = text.chars().skip(1).collect();
            skip_next = letters
                .last()
                .is_some_and(|last| ['f', 'T', 'X', 'b', 'L', 'N'].contains(last))
                || with_value.contains(&text.as_str());
        }
    }
    let command = shown("tar", args);
    let targets: Vec<&Field> = targets.iter().collect();
    delete_targets(w, &targets, &|_| command.clone());
}

/// `zip -m`: the files put into the archive are deleted.
pub(super) fn zip(w: &mut dyn Context, args: &[Field]) {
    if !has_short(args, 'm') && !has_long(args, "--move") {
        return;
    }
    let all = operands(args, &["-b", "-n", "-t", "-tt", "-x", "-i"], &['b', 'n']);
    let targets: Vec<&Field> = all.into_iter().skip(1).collect();
    let command = shown("zip", args);
    delete_targets(w, &targets, &|_| command.clone());
}

/// `rsync --delete…` deletes what the destination has and the source lacks;
/// `--remove-source-files` deletes the sources.
pub(super) fn rsync(w: &mut dyn Context, args: &[Field]) {
    let with_value = [
        "-e",
        "--rsh",
        "--rsync-path",
        "--exclude",
        "--include",
        "--filter",
        "-f",
        "--files-from",
        "--password-file",
        "--log-file",
        "-T",
        "--temp-dir",
        "--partial-dir",
        "--backup-dir",
        "--compare-dest",
        "--link-dest",
        "--copy-dest",
        "--chmod",
        "--chown",
        "--usermap",
        "--groupmap",
        "-B",
        "--max-size",
        "--min-size",
        "--timeout",
        "--bwlimit",
        "--port",
        "--exclude-from",
        "--include-from",
    ];
    let paths = operands(args, &with_value, &['e', 'f', 'T', 'B']);
    let Some((destination, sources)) = paths.split_last() else {
        return;
    };
    let command = shown("rsync", args);
    if has_long(args, "--del") {
        delete_targets(w, &[*destination], &|_| command.clone());
    }
    if has_long(args, "--remove-source-files") {
        delete_targets(w, sources, &|_| command.clone());
    }
}

/// `mv SOURCE… DEST`: each source is gone from where it was.
pub(super) fn mv(w: &mut dyn Context, args: &[Field]) {
    let paths = operands(
        args,
        &["-t", "--target-directory", "-S", "--suffix"],
        &['t', 'S'],
    );
    let target_given = has_short(args, 't') || has_long(args, "--target-directory");
    let sources: Vec<&Field> = if target_given {
        paths
    } else {
        paths
            .split_last()
            .map(|(_, s)| s.to_vec())
            .unwrap_or_default()
    };
    let command = shown("mv", args);
    for source in sources {
        for pattern in w.targets(source) {
            if let Some(what) = w.places().protected(&pattern, Harm::Delete) {
                w.block(format!("it moves {what} away (`{command}`)"));
                return;
            }
        }
    }
}

/// `git [-C DIR] [--work-tree=DIR] clean -f…`: deletes untracked files of the work tree.
/// Blocked when the work tree (or a path given) is a protected place other than the working
/// directory, or, with `-ff` (nested repositories and their history too), the working
/// directory itself (`git clean -fdx` there is an ordinary clean build).
pub(super) fn git(w: &mut dyn Context, args: &[Field]) {
    let mut tree = Field::lit(".");
    let mut at = 0;
    while let Some(arg) = args.get(at) {
        let text = arg.known().unwrap_or_default();
        at += 1;
        match text.as_str() {
            "-C" | "--work-tree" => {
                if let Some(dir) = args.get(at) {
                    tree = join(&tree, dir);
                }
                at += 1;
            }
            // `-c alias.x='!CMD'`, `-c core.pager=CMD`, `-c core.sshCommand=CMD`: settings
            // that run commands.
            "-c" => {
                if let Some(value) = args.get(at).and_then(Field::known) {
                    if let Some((_, command)) = value.split_once('=') {
                        w.unknown_program(&[Field::lit(command)], &crate::output::Output::Nothing);
                    }
                }
                at += 1;
            }
            "--git-dir" | "--namespace" | "--exec-path" => at += 1,
            t if t.starts_with("--work-tree=") => {
                tree = Field::lit(&t["--work-tree=".len()..]);
            }
            t if t.starts_with('-') => {}
            _ => break,
        }
    }
    if args
        .get(at.wrapping_sub(1))
        .is_some_and(|a| a.is("clone") || a.is("pull"))
    {
        // Files oi cannot see: a script run after this may be one of them.
        w.wrote(&Field::unknown("<cloned files>", false), None);
    }
    if !args.get(at.wrapping_sub(1)).is_some_and(|a| a.is("clean")) {
        return;
    }
    let options = &args[at..];
    let mut forced = 0;
    let mut dry = false;
    let mut paths: Vec<Field> = Vec::new();
    let mut skip = false;
    for arg in options {
        if skip {
            skip = false;
            continue;
        }
        let text = arg.known().unwrap_or_default();
        match text.as_str() {
            "--force" => forced += 1,
            "--dry-run" | "--interactive" => dry = true,
            "-e" | "--exclude" => skip = true,
            t if t.starts_with("--") => {}
            t if t.starts_with('-') => {
                for c in t.chars().skip(1) {
                    match c {
                        'f' => forced += 1,
                        'n' | 'i' => dry = true,
                        _ => {}
                    }
                }
            }
            _ => paths.push(join(&tree, arg)),
        }
    }
    if forced == 0 || dry {
        return;
    }
    if paths.is_empty() {
        paths.push(tree);
    }
    let command = shown("git", args);
    for path in &paths {
        for pattern in w.targets(path) {
            let harmful = w.places().protected(&pattern, Harm::Permissions).is_some()
                || (forced > 1 && w.places().protected(&pattern, Harm::Delete).is_some());
            if harmful {
                let what = w
                    .places()
                    .protected(&pattern, Harm::Delete)
                    .unwrap_or("a protected place");
                w.block(format!(
                    "it deletes the untracked files of {what} (`{command}`)"
                ));
                return;
            }
        }
    }
}

/// `dir/path` (or `path` when it is absolute).
fn join(dir: &Field, path: &Field) -> Field {
    if path.known().is_some_and(|p| p.starts_with('/')) || dir.is(".") {
        return path.clone();
    }
    let mut joined = dir.clone();
    joined.segs.push(Seg::Lit("/".to_owned()));
    joined.segs.extend(path.segs.iter().cloned());
    joined
}
