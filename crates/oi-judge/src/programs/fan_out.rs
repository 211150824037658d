//! Commands that run another command on many paths: `xargs CMD` (with what the previous stage
//! printed) and `find … -delete` / `-exec CMD {}`.

use super::effects::delete_targets;
use super::options::{after_options, option_value};
use crate::context::Context;
use crate::output::Output;
use crate::places;
use crate::word::{Field, Seg};

/// `xargs [options] CMD ARGS…`: the command gets what the previous stage printed.
pub(super) fn xargs(w: &mut dyn Context, args: &[Field], stdin: &Output) -> Output {
    let with_value = [
        "-d",
        "-n",
        "-L",
        "-l",
        "-P",
        "-I",
        "-s",
        "-E",
        "-e",
        "-a",
        "--delimiter",
        "--max-args",
        "--max-lines",
        "--max-procs",
        "--max-chars",
        "--eof",
        "--arg-file",
        "--replace",
    ];
    let replace = option_value(args, &["-I", "--replace"])
        .and_then(|f| f.known())
        .or_else(|| {
            // `-I{}`, `-IX`: the token written against the option.
            args.iter().find_map(|a| {
                let text = a.known()?;
                text.strip_prefix("-I")
                    .filter(|t| !t.is_empty())
                    .map(str::to_owned)
            })
        })
        .or_else(|| {
            args.iter()
                .any(|a| a.is("-i") || a.is("--replace"))
                .then(|| "{}".to_owned())
        });
    let from_file = option_value(args, &["-a", "--arg-file"]).is_some();
    let at = after_options(args, &with_value);
    let mut command: Vec<Field> = args[at..].to_vec();
    if command.is_empty() {
        command.push(Field::lit("echo"));
    }
    let items: Vec<Field> = match stdin {
        _ if from_file => vec![Field::unknown("<xargs input>", false)],
        // Items end at blanks, or at NULs (`-0`, `--null`; `printf '%s\0' ~ | xargs -0 rm -rf`
        // deleted a canary home in the second review): either way each one is inspected.
        // With `-I`, each line is one item, blanks and all (`xargs -I{} sh -c '{}'`).
        Output::Literal(text) if replace.is_some() => text
            .split(['\n', '\0'])
            .map(|line| line.trim_start())
            .filter(|item| !item.is_empty())
            .map(Field::lit)
            .collect(),
        Output::Literal(text) => text
            .split(|c: char| c.is_whitespace() || c == '\0')
            .filter(|item| !item.is_empty())
            .map(Field::lit)
            .collect(),
        Output::Found(pattern) => vec![Field::lit(pattern)],
        Output::Decoded => vec![Field::unknown("<decoded input>", true)],
        _ => vec![Field::unknown("<xargs input>", false)],
    };
    match replace {
        Some(token) => {
            for item in &items {
                let argv: Vec<Field> = command
                    .iter()
                    .map(|f| substitute(f, &token, item))
                    .collect();
                w.inspect(&argv, &Output::Nothing);
            }
        }
        None => {
            command.extend(items);
            w.inspect(&command, &Output::Nothing);
        }
    }
    Output::Unknown
}

/// `field` with every `token` in its known text replaced by `value`.
fn substitute(field: &Field, token: &str, value: &Field) -> Field {
    let mut out = Field::default();
    for seg in &field.segs {
        match seg {
            Seg::Lit(text) if text.contains(token) => {
                let mut pieces = text.split(token).peekable();
                while let Some(piece) = pieces.next() {
                    if !piece.is_empty() {
                        out.segs.push(Seg::Lit(piece.to_owned()));
                    }
                    if pieces.peek().is_some() {
                        out.segs.extend(value.segs.iter().cloned());
                    }
                }
            }
            other => out.segs.push(other.clone()),
        }
    }
    out
}

/// Programs that delete each path they are given (run by `find -exec` on every path found,
/// they delete the whole tree).
fn deletes_each(program: &str) -> bool {
    let name = program.rsplit('/').next().unwrap_or(program);
    matches!(
        name,
        "rm" | "unlink" | "rmdir" | "shred" | "srm" | "wipe" | "trash" | "trash-put" | "gio"
    )
}

/// Tests that take one argument and may match a protected place, or everything in one, so
/// they never narrow what `find` acts on: a path (`-path $HOME`), the same file
/// (`-samefile ~`), an inode, a regular expression, times, sizes, owners and modes all hold
/// for a home directory as well as for anything else.
const FIND_TESTS_WITH_VALUE: &[&str] = &[
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-regextype",
    "-inum",
    "-samefile",
    "-newer",
    "-anewer",
    "-cnewer",
    "-newermt",
    "-newerat",
    "-newerct",
    "-newermm",
    "-size",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-used",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-perm",
    "-links",
    "-type",
    "-xtype",
    "-fstype",
    "-context",
    "-maxdepth",
    "-mindepth",
];

/// Whether `-iname PATTERN` provably excludes every protected place: the pattern cannot match
/// the last component of any of them, whatever the case.
fn caseless_name_narrows(w: &dyn Context, pattern: &str) -> bool {
    let glob = pattern.to_lowercase();
    !w.places()
        .may_name(&|name| places::glob_match(&glob, &name.to_lowercase()))
}

/// `find ROOTS… EXPRESSION`: `-delete` and `-exec CMD {}` act on what it matches.
pub(super) fn find(w: &mut dyn Context, args: &[Field]) -> Output {
    let starts_expression = |f: &Field| {
        f.known()
            .is_some_and(|t| (t.starts_with('-') && t.len() > 1) || t == "(" || t == "!")
    };
    let split = args
        .iter()
        .position(starts_expression)
        .unwrap_or(args.len());
    let mut roots: Vec<Field> = args[..split].to_vec();
    if roots.is_empty() {
        roots.push(Field::lit("."));
    }
    let expression = &args[split..];
    let mut name: Option<String> = None;
    // Whether the tests so far narrow what the next action acts on: an action acts on what
    // the tests before it matched (`-delete -name x` deletes everything), `-o` starts an
    // alternative that matches afresh, and a negated test does not narrow.
    let mut narrowing = false;
    let mut ever_narrowed = false;
    let mut negated = false;
    let mut narrowed_at_delete = true;
    let mut delete = false;
    let mut execs: Vec<Vec<Field>> = Vec::new();
    let mut at = 0;
    while let Some(arg) = expression.get(at) {
        let text = arg.known().unwrap_or_default();
        at += 1;
        let negate = matches!(text.as_str(), "!" | "-not");
        match text.as_str() {
            "-delete" => {
                delete = true;
                narrowed_at_delete &= narrowing;
            }
            "-o" | "-or" | "," => narrowing = false,
            "-name" | "-iname" => {
                let caseless = text == "-iname";
                if let Some(pattern) = expression.get(at).and_then(Field::known) {
                    // What `-name` matches is checked below as `ROOT/**/PATTERN`: a pattern
                    // that may name a protected place under the root does not narrow.
                    // `-iname` narrows only when no protected name matches it in any case.
                    if !negated
                        && !places::wildcard_all(&pattern)
                        && (!caseless || caseless_name_narrows(&*w, &pattern))
                    {
                        name = Some(pattern);
                        narrowing = true;
                        ever_narrowed = true;
                    }
                }
                at += 1;
            }
            // Only symbolic links match, and deleting a link leaves what it points to.
            "-lname" | "-ilname" => {
                if !negated {
                    narrowing = true;
                    ever_narrowed = true;
                }
                at += 1;
            }
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let end = expression[at..]
                    .iter()
                    .position(|f| f.is(";") || f.is("+"))
                    .map_or(expression.len(), |p| at + p);
                let command = expression[at..end].to_vec();
                // A deleting program run on every path found deletes the tree.
                if command
                    .first()
                    .and_then(Field::known)
                    .is_some_and(|p| deletes_each(&p))
                {
                    delete = true;
                    narrowed_at_delete &= narrowing;
                }
                execs.push(command);
                at = end + 1;
            }
            t if FIND_TESTS_WITH_VALUE.contains(&t) => at += 1,
            _ => {}
        }
        negated = negate;
    }
    let narrowed = if delete {
        narrowed_at_delete
    } else {
        ever_narrowed
    };
    let mut found = String::new();
    for root in &roots {
        let root_text = root.pattern_text();
        let matched = if narrowed {
            let leaf = name.clone().unwrap_or_else(|| "<found>".to_owned());
            format!("{}/**/{leaf}", root_text.trim_end_matches('/'))
        } else {
            root_text
        };
        let matched_field = Field::lit(&matched);
        for exec in &execs {
            let argv: Vec<Field> = exec
                .iter()
                .map(|f| substitute(f, "{}", &matched_field))
                .collect();
            w.inspect(&argv, &Output::Nothing);
        }
        if delete {
            let shown = |_: &Field| format!("find {} … -delete", root.shown());
            delete_targets(w, &[&matched_field], &shown);
        }
        found = matched;
    }
    if delete || !execs.is_empty() {
        Output::Unknown
    } else {
        Output::Found(found)
    }
}
