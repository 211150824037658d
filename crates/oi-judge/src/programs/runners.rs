//! Programs that run code: shells (`-c`, standard input, a file), Python, other interpreters,
//! and `env`, which runs the command after its assignments.

use super::options::{after_options, is_option, option_value};
use crate::context::{Context, Script};
use crate::effects_in_code;
use crate::output::Output;
use crate::places::Harm;
use crate::word::Field;

/// `env [-i] [-u NAME] [NAME=VALUE]… [-S STRING] CMD …`.
pub(super) fn env(w: &mut dyn Context, args: &[Field], stdin: &Output) -> Output {
    if let Some(split) = option_value(args, &["-S", "--split-string"]) {
        return w.nested_shell(&split, &[]);
    }
    let options = after_options(args, &["-u", "-C", "--unset", "--chdir"]);
    let mut at = options;
    while args
        .get(at)
        .and_then(Field::known)
        .is_some_and(|t| t.contains('=') && !t.starts_with('='))
    {
        at += 1;
    }
    match chdir_option(&args[..options], &["-C", "--chdir"]) {
        Some(dir) => w.inspect_in(&dir, &args[at..], stdin),
        None => w.inspect(&args[at..], stdin),
    }
}

/// The directory a wrapper runs its command in (`env -C DIR`, `--chdir=DIR`, `-CDIR`,
/// `sudo -D DIR`), given its options and the names of the option.
pub(super) fn chdir_option(options: &[Field], names: &[&str]) -> Option<Field> {
    if let Some(dir) = option_value(options, names) {
        return Some(dir);
    }
    options.iter().find_map(|option| {
        let text = option.known()?;
        names
            .iter()
            .filter(|name| name.len() == 2)
            .find_map(|name| text.strip_prefix(name))
            .filter(|dir| !dir.is_empty())
            .map(Field::lit)
    })
}

/// `bash -c SCRIPT`, `bash` reading its input, `bash FILE`.
pub(super) fn shell(w: &mut dyn Context, name: &str, args: &[Field], stdin: &Output) -> Output {
    let mut at = 0;
    let mut command_mode = false;
    while let Some(arg) = args.get(at) {
        let Some(text) = arg.known() else { break };
        if text == "--" || text == "-" {
            at += 1;
            break;
        }
        if !(text.starts_with('-') || text.starts_with('+')) {
            break;
        }
        at += 1;
        if matches!(
            text.as_str(),
            "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file"
        ) {
            at += 1;
        } else if !text.starts_with("--") && text.contains('c') {
            command_mode = true;
        }
    }
    let rest = args.get(at..).unwrap_or(&[]);
    if command_mode {
        let Some((script, positional)) = rest.split_first() else {
            return Output::Unknown;
        };
        if script.decoded() {
            w.block(format!(
                "it runs decoded code with {name} -c (an encoded payload oi cannot read)"
            ));
            return Output::Unknown;
        }
        super::computed::code(w, script);
        return w.nested_shell(script, positional);
    }
    match rest.first() {
        None => run_stdin(w, name, stdin, Language::Shell),
        Some(file) => run_file(w, name, Some(file), stdin),
    }
    Output::Unknown
}

/// What a program reading code from its standard input is fed.
#[derive(Clone, Copy)]
enum Language {
    Shell,
    Python,
    Other,
}

fn run_stdin(w: &mut dyn Context, name: &str, stdin: &Output, language: Language) {
    match stdin {
        Output::Decoded => w.block(format!(
            "it pipes decoded data into {name} (an encoded payload oi cannot read)"
        )),
        Output::Literal(text) => {
            let field = Field::lit(text);
            match language {
                Language::Shell => {
                    w.nested_shell(&field, &[]);
                }
                Language::Python => w.nested_python(&field),
                Language::Other => w.nested_foreign(&field),
            }
        }
        _ => {}
    }
}

/// `source FILE`, `bash FILE`: blocked when the file is decoded data (`<(… | base64 -d)`).
pub(super) fn run_file(w: &mut dyn Context, name: &str, file: Option<&Field>, stdin: &Output) {
    let Some(file) = file else { return };
    if file.decoded() {
        w.block(format!(
            "it runs decoded code with {name} (an encoded payload oi cannot read)"
        ));
    } else if file.is("/dev/stdin") || file.is("-") {
        run_stdin(w, name, stdin, Language::Shell);
    } else {
        w.run_script(file, Script::Shell);
    }
}

/// Code given on a command line with arguments after it (`perl -e CODE ~`, `python3 -c CODE
/// /`, `python3 - ~ <<EOF`): blocked when the code deletes files and an argument is a
/// protected place (the code deletes what it is handed).
fn code_with_arguments(w: &mut dyn Context, name: &str, code: &str, arguments: &[Field]) {
    if !effects_in_code::deletes(code) {
        return;
    }
    for argument in arguments.iter().filter(|a| !is_option(a)) {
        for pattern in w.targets(argument) {
            if let Some(what) = w.places().protected(&pattern, Harm::Delete) {
                w.block(format!(
                    "it hands {what} (`{}`) to {name} code that deletes files",
                    argument.shown()
                ));
                return;
            }
        }
    }
}

/// The arguments after the option `names` and its value (`-c CODE ARG…`).
fn after_code<'a>(args: &'a [Field], names: &[&str]) -> &'a [Field] {
    let at = args
        .iter()
        .position(|a| a.known().is_some_and(|t| names.contains(&t.as_str())));
    at.and_then(|at| args.get(at + 2..)).unwrap_or(&[])
}

/// `python -c CODE`, `python` reading its input.
pub(super) fn python(w: &mut dyn Context, name: &str, args: &[Field], stdin: &Output) {
    if let Some(code) = option_value(args, &["-c"]) {
        code_with_arguments(w, name, &code.rendered(), after_code(args, &["-c"]));
        if code.decoded() {
            w.block(format!(
                "it runs decoded code with {name} -c (an encoded payload oi cannot read)"
            ));
        } else {
            super::computed::code(w, &code);
            w.nested_python(&code);
        }
        return;
    }
    let at = after_options(args, &["-W", "-X", "-m"]);
    if let Some(module) = option_value(args, &["-m"]).and_then(|m| m.known()) {
        if module == "venv" || module == "virtualenv" {
            made_venv(w, args.get(at..).unwrap_or(&[]));
        }
        // `python -m MODULE ARGS…`: the arguments are the module's, not a script.
        return;
    }
    match args.get(at) {
        None => run_stdin(w, name, stdin, Language::Python),
        Some(file) if file.is("-") || file.is("/dev/stdin") => {
            if let Output::Literal(code) = stdin {
                code_with_arguments(w, name, code, &args[at + 1..]);
            }
            run_stdin(w, name, stdin, Language::Python);
        }
        Some(file) if file.decoded() => w.block(format!(
            "it runs decoded code with {name} (an encoded payload oi cannot read)"
        )),
        Some(file) => w.run_script(file, Script::Python),
    }
}

/// `perl -e CODE`, `node -e CODE`, …: the shell commands in its strings.
pub(super) fn interpreter(w: &mut dyn Context, name: &str, args: &[Field], stdin: &Output) {
    let names = [
        "-e", "-E", "-c", "-r", "--eval", "-Command", "-command", "-p",
    ];
    let code = option_value(args, &names);
    if let Some(code) = &code {
        code_with_arguments(w, name, &code.rendered(), after_code(args, &names));
    }
    match code {
        Some(code) if code.decoded() => w.block(format!(
            "it runs decoded code with {name} (an encoded payload oi cannot read)"
        )),
        Some(code) => {
            super::computed::code(w, &code);
            computed_process_call(w, &code.rendered());
            w.nested_foreign(&code);
            // PowerShell, Tcl and friends write commands as shell does.
            w.unknown_program(std::slice::from_ref(&code), &Output::Nothing);
        }
        None if args.iter().all(is_option) => {
            if let Output::Literal(text) = stdin {
                computed_process_call(w, text);
            }
            run_stdin(w, name, stdin, Language::Other);
            w.unknown_program(&[], stdin);
        }
        None => {}
    }
}

/// Functions of other languages that run a process.
const PROCESS_CALLS: &[&str] = &[
    "system",
    "exec",
    "spawn",
    "popen",
    "IO.popen",
    "Open3",
    "execSync",
    "spawnSync",
    "execFile",
    "shell_exec",
    "passthru",
    "proc_open",
    "qx",
    "%x",
    "Process.Start",
    "Start-Process",
    "Invoke-Expression",
    "iex",
    "os.execute",
    "io.popen",
    "pexpect",
];

/// Records "cannot tell" when `code` runs a process with anything but one string literal
/// (`system("rm", "-rf", Dir.home)`, `system "rm", "-rf", $ENV{HOME}`, `` `$x` ``): what
/// runs is computed, and the literals alone do not show it.
pub(crate) fn computed_process_call(w: &mut dyn Context, code: &str) {
    let computed = PROCESS_CALLS.iter().any(|call| {
        code.match_indices(call).any(|(at, _)| {
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                return false;
            }
            let rest = code[at + call.len()..].trim_start_matches([' ', '(', '{']);
            let Some(quote) = rest.chars().next().filter(|c| matches!(c, '"' | '\'')) else {
                // No literal right after the call (a variable, a list): computed, unless the
                // name is only a word here (no call follows).
                let next = code[at + call.len()..].chars().next();
                return next.is_some_and(|c| matches!(c, '(' | ' ' | '{' | '$' | '@'));
            };
            let body = &rest[1..];
            let Some(end) = body.find(quote) else {
                return true;
            };
            let after = body[end + 1..].trim_start();
            !(after.is_empty() || after.starts_with([')', ';', '}', '\n']))
        })
    }) || code.contains('`')
        && code
            .split('`')
            .skip(1)
            .step_by(2)
            .any(|inner| inner.contains(['$', '#', '@']));
    if computed {
        w.unsure("runs a process from code in another language with a command oi cannot read");
    }
}

/// `python3 -m venv DIR`, `virtualenv DIR`, `uv venv [DIR]`: the block makes `DIR/bin/activate`,
/// the standard activation script, so `source DIR/bin/activate` after it is ordinary.
pub(super) fn made_venv(w: &mut dyn Context, operands: &[Field]) {
    let dirs: Vec<&Field> = operands.iter().filter(|a| !is_option(a)).collect();
    let default = Field::lit(".venv");
    let dirs = if dirs.is_empty() {
        vec![&default]
    } else {
        dirs
    };
    for dir in dirs {
        let mut activate = dir.clone();
        activate
            .segs
            .push(crate::word::Seg::Lit("/bin/activate".to_owned()));
        w.wrote(&activate, Some(String::new()));
    }
}
