//! What one command does, judged from its words: wrappers (`sudo`, `env`, `timeout`, …) are
//! looked through, code handed to shells and interpreters is read in turn, and the commands
//! that destroy data are checked against the protected places.

mod computed;
mod disks;
mod effects;
mod fan_out;
mod linking;
mod movers;
mod options;
mod printing;
mod runners;

use crate::context::{Context, Script};
use crate::output::Output;
use crate::places::{self, Harm};
use crate::word::Field;
use effects::clobber_targets;

use effects::{delete_targets, disk_write};
use options::{after_options, is_option, join_fields, option_value, strip_field_prefix};

/// Shells: `-c` takes a script, no script means standard input.
const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "rbash", "fish", "yash", "posh",
];

/// Interpreters whose `-e`/`-c` code oi reads for shell commands in its strings.
const INTERPRETERS: &[&str] = &[
    "perl",
    "ruby",
    "node",
    "nodejs",
    "php",
    "lua",
    "Rscript",
    "tclsh",
    "pwsh",
    "powershell",
    "osascript",
    "deno",
    "bun",
];

/// Programs that never run code: their arguments and input are data, not read as commands.
const DATA_ONLY: &[&str] = &[
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "ack",
    "cat",
    "head",
    "tail",
    "wc",
    "sort",
    "uniq",
    "cut",
    "ls",
    "touch",
    "mkdir",
    "rmdir",
    "diff",
    "cmp",
    "file",
    "stat",
    "du",
    "df",
    "basename",
    "dirname",
    "true",
    "false",
    "sleep",
    "date",
    "test",
    "[",
    "[[",
    "jq",
    "less",
    "more",
    "column",
    "nl",
    "fold",
    "fmt",
    "paste",
    "join",
    "comm",
    "seq",
    "yes",
    "id",
    "whoami",
    "hostname",
    "uname",
    "which",
    "type",
    "read",
    "local",
    "declare",
    "typeset",
    "export",
    "readonly",
    "return",
    "exit",
    "shift",
    "set",
    "wait",
    "kill",
    "sha256sum",
    "sha1sum",
    "md5sum",
    "realpath",
    "readlink",
    "curl",
    "wget",
    "ping",
    "notify-send",
    "logger",
    "clear",
    "tput",
    "shopt",
    "hash",
    "umask",
    "ulimit",
    "getopts",
    ":",
];

/// Programs that format, wipe or repartition a disk whatever their arguments.
const FORMATTERS: &[&str] = &[
    "mke2fs",
    "mkdosfs",
    "mkntfs",
    "mkexfatfs",
    "wipefs",
    "fdisk",
    "sfdisk",
    "cfdisk",
    "gdisk",
    "sgdisk",
    "cgdisk",
    "parted",
    "blkdiscard",
];

/// Programs that only run the command they are given (with these options taking a value).
const WRAPPERS: &[(&str, &[&str])] = &[
    (
        "sudo",
        &[
            "-u",
            "-g",
            "-h",
            "-p",
            "-C",
            "-D",
            "-r",
            "-t",
            "-T",
            "-U",
            "--user",
            "--group",
            "--host",
            "--prompt",
            "--chdir",
            "--role",
            "--type",
            "--other-user",
            "--close-from",
        ],
    ),
    ("doas", &["-u", "-C"]),
    ("nohup", &[]),
    ("time", &["-f", "-o", "--format", "--output"]),
    ("command", &[]),
    ("builtin", &[]),
    ("exec", &["-a"]),
    ("nice", &["-n", "--adjustment"]),
    (
        "ionice",
        &["-c", "-n", "-p", "-P", "-u", "--class", "--classdata"],
    ),
    ("setsid", &[]),
    (
        "stdbuf",
        &["-i", "-o", "-e", "--input", "--output", "--error"],
    ),
    ("unbuffer", &[]),
    ("caffeinate", &["-t", "-w"]),
    ("chronic", &[]),
    ("catchsegv", &[]),
    (
        "strace",
        &[
            "-o", "-e", "-p", "-s", "-u", "-E", "-P", "-I", "-a", "-b", "-S", "-O",
        ],
    ),
    ("ltrace", &["-o", "-e", "-p", "-s", "-u", "-n", "-a"]),
    ("torsocks", &[]),
    ("proxychains", &["-f"]),
    ("firejail", &[]),
];

/// Judges one command; returns what it writes to standard output.
pub(crate) fn inspect(w: &mut dyn Context, argv: &[Field], stdin: &Output) -> Output {
    let Some((program, args)) = argv.split_first() else {
        return Output::Unknown;
    };
    if program.decoded() {
        w.block(format!(
            "it runs a program whose name is decoded at run time (`{}`)",
            program.shown()
        ));
        return Output::Unknown;
    }
    let Some(path) = program.known() else {
        computed::program(w, program);
        unreadable_program(w, program, args);
        return passed_on(stdin);
    };
    let name = path.rsplit('/').next().unwrap_or(&path).to_owned();
    if let Some((_, with_value)) = WRAPPERS.iter().find(|(n, _)| *n == name) {
        if name == "command" && args.iter().any(|a| a.is("-v") || a.is("-V")) {
            return Output::Unknown;
        }
        let at = after_options(args, with_value);
        let shell_flag = args[..at].iter().any(|a| {
            a.is("--shell")
                || a.is("--login")
                || a.known().is_some_and(|t| {
                    t.starts_with('-') && !t.starts_with("--") && t.contains(['s', 'i'])
                })
        });
        if name == "sudo" && shell_flag {
            // `sudo -s`/`sudo -i`: a shell runs the command, or reads its input.
            let mut argv = vec![Field::lit("sh")];
            if at < args.len() {
                argv.push(Field::lit("-c"));
                argv.push(join_fields(&args[at..]));
            }
            return inspect(w, &argv, stdin);
        }
        if name == "sudo" {
            if let Some(dir) = runners::chdir_option(&args[..at], &["-D", "--chdir"]) {
                return w.inspect_in(&dir, &args[at..], stdin);
            }
        }
        return inspect(w, &args[at..], stdin);
    }
    match name.as_str() {
        "env" => runners::env(w, args, stdin),
        "timeout" => {
            let at = after_options(args, &["-s", "-k", "--signal", "--kill-after"]);
            inspect(w, args.get(at + 1..).unwrap_or(&[]), stdin)
        }
        "taskset" => {
            let at = after_options(args, &[]);
            inspect(w, args.get(at + 1..).unwrap_or(&[]), stdin)
        }
        "flock" => {
            if let Some(script) = option_value(args, &["-c", "--command"]) {
                return w.nested_shell(&script, &[]);
            }
            let at = after_options(args, &["-w", "-E", "--timeout", "--conflict-exit-code"]);
            inspect(w, args.get(at + 1..).unwrap_or(&[]), stdin)
        }
        "busybox" => inspect(w, args, stdin),
        // Paths the command names are under the new root, which oi does not follow.
        "chroot" => {
            let at = after_options(args, &["--userspec", "--groups"]);
            match args.get(at..).unwrap_or(&[]) {
                [root, command @ ..] if root.is("/") => inspect(w, command, stdin),
                [_, _, ..] => {
                    w.unsure("runs a command under another root directory (chroot)");
                    Output::Unknown
                }
                _ => Output::Unknown,
            }
        }
        "su" | "runuser" | "script" | "sg" => {
            unknown_program(w, args, stdin);
            match option_value(args, &["-c", "--command"]) {
                Some(script) => w.nested_shell(&script, &[]),
                None => Output::Unknown,
            }
        }
        // `trap 'CODE' SIGNAL…` runs CODE later (on exit, on each command with DEBUG).
        "trap" => {
            let at = after_options(args, &[]);
            if let Some(code) = args.get(at).filter(|c| !c.is("-")) {
                w.nested_shell(code, &[]);
            }
            Output::Nothing
        }
        "watch" => {
            let at = after_options(args, &["-n", "-d", "--interval", "--differences"]);
            let script = join_fields(&args[at..]);
            w.nested_shell(&script, &[])
        }
        "eval" => {
            let script = join_fields(args);
            if script.decoded() {
                w.block(
                    "it runs decoded code with eval (an encoded payload oi cannot read)".to_owned(),
                );
                return Output::Unknown;
            }
            computed::code(w, &script);
            w.nested_shell(&script, &[])
        }
        "source" | "." => {
            runners::run_file(w, &name, args.first(), stdin);
            Output::Unknown
        }
        "xargs" => fan_out::xargs(w, args, stdin),
        "ln" => {
            linking::ln(w, args);
            Output::Unknown
        }
        "mount" => {
            linking::mount(w, args);
            Output::Unknown
        }
        "find" => fan_out::find(w, args),
        "rm" => {
            remove(w, args);
            Output::Unknown
        }
        "chmod" | "chown" | "chgrp" => {
            change_owner_or_mode(w, &name, args);
            Output::Unknown
        }
        "dd" => {
            for arg in args {
                if let Some(target) = strip_field_prefix(arg, "of=") {
                    disk_write(w, &target, "dd of=");
                    clobber_targets(w, &[&target], "dd of=");
                    w.wrote(&target, None);
                }
            }
            passed_on(stdin)
        }
        "shred" | "wipe" | "tee" | "mkswap" | "badblocks" => {
            let operands: Vec<&Field> = args.iter().filter(|a| !is_option(a)).collect();
            for arg in &operands {
                disk_write(w, arg, &format!("{name} "));
                if name == "tee" {
                    let content = match stdin {
                        Output::Literal(text) => Some(text.clone()),
                        _ => None,
                    };
                    w.wrote(arg, content);
                }
            }
            if name == "shred" || name == "wipe" {
                clobber_targets(w, &operands, &name);
            }
            if name == "tee" {
                return stdin.clone();
            }
            passed_on(stdin)
        }
        "unzip" | "7z" | "7za" | "unrar" | "cpio" => {
            w.wrote(&Field::unknown("<extracted files>", false), None);
            unknown_program(w, args, stdin);
            passed_on(stdin)
        }
        "tar" | "bsdtar" | "gtar" => {
            let extracts = args.iter().enumerate().any(|(n, a)| {
                a.known().is_some_and(|t| {
                    t == "--extract"
                        || t == "--get"
                        || (t.starts_with('-') && !t.starts_with("--") && t.contains('x'))
                        || (n == 0 && !t.starts_with('-') && t.contains('x'))
                })
            });
            if extracts {
                // Files oi cannot see: a script run after this may be one of them.
                w.wrote(&Field::unknown("<extracted files>", false), None);
            }
            movers::tar(w, args);
            passed_on(stdin)
        }
        "zip" => {
            movers::zip(w, args);
            Output::Unknown
        }
        "rsync" => {
            movers::rsync(w, args);
            Output::Unknown
        }
        "git" => {
            movers::git(w, args);
            Output::Unknown
        }
        "mv" => {
            movers::mv(w, args);
            if let Some(last) = args.iter().rfind(|a| !is_option(a)) {
                disk_write(w, last, "mv … ");
                w.wrote(last, None);
            }
            Output::Unknown
        }
        "cp" | "install" | "ddrescue" | "pv" => {
            if let Some(last) = args.iter().rfind(|a| !is_option(a)) {
                disk_write(w, last, &format!("{name} … "));
                w.wrote(last, None);
            }
            passed_on(stdin)
        }
        "echo" => printing::echo(args),
        "printf" => printing::printf(args),
        "mktemp" => Output::Literal("/tmp/tmp.oi-mktemp\n".to_owned()),
        "pwd" => match w.cwd() {
            Some(cwd) => Output::Literal(format!("{cwd}\n")),
            None => Output::Unknown,
        },
        "cd" | "pushd" => {
            let target = args.iter().find(|a| !is_option(a));
            w.change_directory(target);
            Output::Nothing
        }
        "popd" => {
            w.change_directory(Some(&Field::lit("-")));
            Output::Nothing
        }
        "format" if args.iter().any(|a| a.known().is_some_and(|t| is_drive(&t))) => {
            w.block("it formats a disk (`format c:`)".to_owned());
            Output::Unknown
        }
        "diskutil"
            if args.first().and_then(Field::known).is_some_and(|verb| {
                let verb = verb.to_lowercase();
                verb.starts_with("erase")
                    || verb.starts_with("zero")
                    || verb.starts_with("secureerase")
                    || verb == "partitiondisk"
            }) =>
        {
            w.block("it erases or repartitions a disk (`diskutil`)".to_owned());
            Output::Unknown
        }
        _ if disks::formats(&name, args).is_some() => {
            if let Some(reason) = disks::formats(&name, args) {
                w.block(reason);
            }
            Output::Unknown
        }
        _ if name.starts_with("mkfs") || FORMATTERS.contains(&name.as_str()) => {
            w.block(format!("it formats or repartitions a disk (`{name}`)"));
            Output::Unknown
        }
        _ if SHELLS.contains(&name.as_str()) => runners::shell(w, &name, args, stdin),
        _ if is_python(&name) => {
            runners::python(w, &name, args, stdin);
            Output::Unknown
        }
        _ if INTERPRETERS.contains(&name.as_str()) => {
            runners::interpreter(w, &name, args, stdin);
            Output::Unknown
        }
        _ if is_decoder(&name, args) => Output::Decoded,
        "cat" if args.iter().all(|a| is_option(a) || a.is("-")) => stdin.clone(),
        "cat" if args.len() == 1 => w
            .file_text(&args[0])
            .map_or(Output::Unknown, Output::Literal),
        "awk" | "gawk" | "mawk" | "nawk" | "busybox-awk" => {
            for arg in args {
                let text = arg.rendered();
                runners::computed_process_call(w, &text);
                // `cmd | getline`, `print | cmd`, `|&`: a pipe to or from a command (not `||`).
                let pipe = text.char_indices().any(|(i, c)| {
                    c == '|' && !text[..i].ends_with('|') && !text[i + 1..].starts_with('|')
                });
                if pipe {
                    w.unsure("runs a command from awk through a pipe");
                }
            }
            unknown_program(w, args, stdin);
            passed_on(stdin)
        }
        "virtualenv" => {
            runners::made_venv(w, args);
            Output::Unknown
        }
        "uv" if args.first().is_some_and(|a| a.is("venv")) => {
            runners::made_venv(w, &args[1..]);
            Output::Unknown
        }
        "curl" | "wget" => {
            if let Some(file) = option_value(args, &["-o", "--output", "-O", "--output-document"]) {
                w.wrote(&file, None);
            }
            passed_on(stdin)
        }
        "truncate" => {
            let operands =
                movers::operands(args, &["-s", "--size", "-r", "--reference"], &['s', 'r']);
            clobber_targets(w, &operands, "truncate");
            Output::Unknown
        }
        "sed" | "gsed"
            if args.iter().any(|a| {
                a.known().is_some_and(|t| {
                    t.starts_with("-i")
                        || t.starts_with("--in-place")
                        || (t.starts_with('-') && !t.starts_with("--") && t.contains('i'))
                })
            }) =>
        {
            let script_given = args
                .iter()
                .any(|a| a.is("-e") || a.is("-f") || a.is("--expression") || a.is("--file"));
            let operands = movers::operands(
                args,
                &["-e", "-f", "--expression", "--file", "-l", "--line-length"],
                &['e', 'f', 'l'],
            );
            let files: Vec<&Field> = operands
                .into_iter()
                .skip(usize::from(!script_given))
                .collect();
            clobber_targets(w, &files, "sed -i");
            Output::Unknown
        }
        _ if path.contains('/') && !DATA_ONLY.contains(&name.as_str()) => {
            w.run_script(program, Script::Shebang);
            unknown_program(w, args, stdin);
            passed_on(stdin)
        }
        _ if DATA_ONLY.contains(&name.as_str()) => passed_on(stdin),
        _ => {
            unknown_program(w, args, stdin);
            passed_on(stdin)
        }
    }
}

/// A program oi does not know may run what it is given (`chrt -o 0 rm -rf ~`, `tmux new
/// 'rm -rf ~'`, `awk 'BEGIN{system("rm -rf ~")}'`, `ed <<< '!rm -rf ~'`): every suffix of its
/// arguments is read as a command, and every argument and the text fed to it as code.
fn unknown_program(w: &mut dyn Context, args: &[Field], stdin: &Output) {
    w.unknown_program(args, stdin);
}

/// A filter fed by a decoder still carries the decoded payload.
fn passed_on(stdin: &Output) -> Output {
    match stdin {
        Output::Decoded => Output::Decoded,
        _ => Output::Unknown,
    }
}

fn is_python(name: &str) -> bool {
    let rest = name
        .strip_prefix("python")
        .or_else(|| name.strip_prefix("pypy"));
    rest.is_some_and(|r| r.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

fn is_drive(text: &str) -> bool {
    let mut chars = text.chars();
    matches!((chars.next(), chars.next(), chars.next()), (Some(c), Some(':'), None) if c.is_ascii_alphabetic())
}

/// Whether the command decodes its input (`base64 -d`, `xxd -r`, `gunzip`, `rev`, `tr`, …).
fn is_decoder(name: &str, args: &[Field]) -> bool {
    let flag = |letter: char, long: &str| {
        args.iter().any(|a| {
            a.known().is_some_and(|t| {
                t == long || (t.starts_with('-') && !t.starts_with("--") && t.contains(letter))
            })
        })
    };
    match name {
        "base64" | "base32" | "basenc" | "gbase64" => {
            flag('d', "--decode") || flag('D', "--decode")
        }
        "xxd" => flag('r', "--revert"),
        "openssl" => args
            .iter()
            .any(|a| a.is("-d") || a.is("-base64") || a.is("base64")),
        "gzip" | "bzip2" | "xz" | "zstd" | "lzma" | "lz4" | "brotli" => flag('d', "--decompress"),
        "uudecode" | "gunzip" | "zcat" | "gzcat" | "bunzip2" | "bzcat" | "unxz" | "xzcat"
        | "unzstd" | "zstdcat" | "lzcat" | "unlzma" | "rev" | "tr" | "recode" | "iconv" => true,
        _ => false,
    }
}

/// A program oi cannot name (`$(cmd) -rf /`, `$X …`): blocked when the rest of the command
/// would be dangerous for `rm`, or it names a disk.
fn unreadable_program(w: &mut dyn Context, program: &Field, args: &[Field]) {
    let recursive = args.iter().any(|a| {
        a.known().is_some_and(|t| {
            t == "--recursive"
                || t == "-delete"
                || (t.starts_with('-') && !t.starts_with("--") && t.contains(['r', 'R']))
        })
    });
    for arg in args.iter().filter(|a| !is_option(a)) {
        if recursive {
            for target in w.targets(arg) {
                if let Some(what) = w.places().protected(&target, Harm::Delete) {
                    w.block(format!(
                        "it runs a command oi cannot read before it runs (`{}`) with a recursive flag on {what} (`{}`)",
                        program.shown(),
                        arg.shown()
                    ));
                    return;
                }
            }
        }
        if !arg.starts_unknown() && w.targets(arg).iter().any(places::is_disk) {
            w.block(format!(
                "it runs a command oi cannot read before it runs (`{}`) on a disk device (`{}`)",
                program.shown(),
                arg.shown()
            ));
            return;
        }
    }
}

/// `rm`: a recursive delete of a protected place.
fn remove(w: &mut dyn Context, args: &[Field]) {
    let mut recursive = false;
    let mut targets = Vec::new();
    let mut options_done = false;
    for arg in args {
        let text = arg.known();
        if !options_done && text.as_deref() == Some("--") {
            options_done = true;
            continue;
        }
        if !options_done && is_option(arg) {
            let text = arg.shown();
            recursive |=
                text == "--recursive" || (!text.starts_with("--") && text.contains(['r', 'R']));
            continue;
        }
        targets.push(arg);
    }
    if recursive {
        delete_targets(w, &targets, &|t| format!("rm -r {}", t.shown()));
    }
}

/// `chmod -R`, `chown -R`, `chgrp -R` of a protected place (the working directory is allowed).
fn change_owner_or_mode(w: &mut dyn Context, name: &str, args: &[Field]) {
    let recursive = args.iter().any(|a| {
        a.known().is_some_and(|t| {
            t == "--recursive" || (t.starts_with('-') && !t.starts_with("--") && t.contains('R'))
        })
    });
    if !recursive {
        if name == "chmod" {
            locks_out(w, args);
        }
        return;
    }
    let reference = args
        .iter()
        .any(|a| a.known().is_some_and(|t| t.starts_with("--reference")));
    let operands: Vec<&Field> = args
        .iter()
        .filter(|a| !is_option(a) || (name == "chmod" && is_mode(a)))
        .collect();
    let skip = usize::from(!reference);
    for target in operands.iter().skip(skip) {
        for pattern in w.targets(target) {
            if let Some(what) = w.places().protected(&pattern, Harm::Permissions) {
                w.block(format!(
                    "it recursively changes the owner or mode of {what} (`{name} -R … {}`)",
                    target.shown()
                ));
                return;
            }
        }
    }
}

/// A chmod mode written like an option (`-x`, `-rwx`).
fn is_mode(field: &Field) -> bool {
    field.known().is_some_and(|t| {
        t.len() > 1 && t.starts_with('-') && t[1..].chars().all(|c| "rwxXst".contains(c))
    })
}

/// `chmod MODE DIR` (not recursive) that takes the owner's read or search permission from a
/// protected place (`chmod 000 ~`, `chmod u-x ~`, `chmod a= /`): everything under it is out of
/// reach until someone restores the mode. The working directory itself is fair game.
fn locks_out(w: &mut dyn Context, args: &[Field]) {
    let operands: Vec<&Field> = args
        .iter()
        .filter(|a| !is_option(a) || is_mode(a))
        .collect();
    let Some((mode, targets)) = operands.split_first() else {
        return;
    };
    let Some(mode) = mode.known() else { return };
    if !takes_owner_access(&mode) {
        return;
    }
    for target in targets {
        for pattern in w.targets(target) {
            if let Some(what) = w.places().protected(&pattern, Harm::Permissions) {
                w.block(format!(
                    "it takes the owner's access to {what} away (`chmod {mode} {}`)",
                    target.shown()
                ));
                return;
            }
        }
    }
}

/// Whether a chmod mode leaves the owner without read or search permission.
fn takes_owner_access(mode: &str) -> bool {
    if !mode.is_empty() && mode.len() <= 4 && mode.chars().all(|c| c.is_digit(8)) {
        let digits: Vec<u32> = mode.chars().filter_map(|c| c.to_digit(8)).collect();
        let owner = if digits.len() >= 3 {
            digits[digits.len() - 3]
        } else {
            0
        };
        return owner & 5 != 5;
    }
    mode.split(',').any(|clause| {
        let at = clause.find(['+', '-', '=']).unwrap_or(clause.len());
        let (who, action) = clause.split_at(at);
        let owner = who.is_empty() || who.contains(['u', 'a']);
        let perms: String = action.chars().skip(1).collect();
        owner
            && match action.chars().next() {
                Some('-') => perms.contains(['r', 'x']),
                Some('=') => !(perms.contains('r') && perms.contains(['x', 'X'])),
                _ => false,
            }
    })
}
