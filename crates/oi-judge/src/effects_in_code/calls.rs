//! Calls of JavaScript, Ruby and R (and Perl) libraries that delete, move or lock a path,
//! found in the source text and judged on their target: a literal path (relative ones
//! resolved against the directories the code may be in, `..` included), the home or working
//! directory however the language spells it, `path.join`/`File.join`/`file.path`/`+`/template
//! strings of those, and names assigned one of those. A target the reader cannot evaluate is
//! one oi cannot tell, and so is reaching `fs`/`child_process` by a computed name
//! (`fs['rm'+'Sync']`) or a method by a name (`FileUtils.send`, `do.call`).

use crate::places::{self, Harm, Places};
use crate::resolve;

/// What one call does to its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Effect {
    Delete,
    Move,
    /// Changes the mode; the argument position of the mode and of the path.
    Lock {
        mode: usize,
        path: usize,
    },
    /// Runs a program with a list of arguments (`execFileSync('rm', ['-rf', p])`).
    Program,
}

/// Library calls, by the text before their `(`.
const CALLS: &[(&str, Effect)] = &[
    ("rmSync", Effect::Delete),
    ("rmdirSync", Effect::Delete),
    ("fs.rm", Effect::Delete),
    ("fsp.rm", Effect::Delete),
    ("promises.rm", Effect::Delete),
    ("fs.rmdir", Effect::Delete),
    ("rimraf", Effect::Delete),
    ("rimrafSync", Effect::Delete),
    ("removeSync", Effect::Delete),
    ("fs.remove", Effect::Delete),
    ("emptyDirSync", Effect::Delete),
    ("FileUtils.rm_rf", Effect::Delete),
    ("FileUtils.rm_r", Effect::Delete),
    ("FileUtils.rmtree", Effect::Delete),
    ("FileUtils.remove_dir", Effect::Delete),
    ("FileUtils.remove_entry", Effect::Delete),
    ("FileUtils.remove_entry_secure", Effect::Delete),
    ("Dir.rmdir", Effect::Delete),
    ("Dir.delete", Effect::Delete),
    ("unlink", Effect::Delete),
    ("unlinkSync", Effect::Delete),
    ("file.remove", Effect::Delete),
    ("dir_delete", Effect::Delete),
    ("remove_tree", Effect::Delete),
    ("rmtree", Effect::Delete),
    ("renameSync", Effect::Move),
    ("fs.rename", Effect::Move),
    ("fsp.rename", Effect::Move),
    ("promises.rename", Effect::Move),
    ("moveSync", Effect::Move),
    ("File.rename", Effect::Move),
    ("FileUtils.mv", Effect::Move),
    ("FileUtils.move", Effect::Move),
    ("file.rename", Effect::Move),
    ("chmodSync", Effect::Lock { mode: 1, path: 0 }),
    ("fs.chmod", Effect::Lock { mode: 1, path: 0 }),
    ("fsp.chmod", Effect::Lock { mode: 1, path: 0 }),
    ("Sys.chmod", Effect::Lock { mode: 1, path: 0 }),
    ("File.chmod", Effect::Lock { mode: 0, path: 1 }),
    ("FileUtils.chmod", Effect::Lock { mode: 0, path: 1 }),
    ("FileUtils.chmod_R", Effect::Lock { mode: 0, path: 1 }),
    ("execFileSync", Effect::Program),
    ("execFile", Effect::Program),
    ("spawnSync", Effect::Program),
    ("spawn", Effect::Program),
    ("system", Effect::Program),
    ("system2", Effect::Program),
    ("Process.spawn", Effect::Program),
];

/// Ways to reach a function by a name computed at run time.
const DYNAMIC: &[&str] = &[
    "fs[",
    "fsp[",
    "promises[",
    "child_process[",
    "cp[",
    "fs')[",
    "fs\")[",
    "child_process')[",
    "child_process\")[",
    "FileUtils.send(",
    "FileUtils.public_send(",
    "FileUtils.__send__(",
    "File.send(",
    "Dir.send(",
    "method(:rm",
    "do.call(",
    "match.fun(",
    "Reflect.apply(",
];

/// How languages spell the home directory, as a whole expression (blanks removed).
const HOME: &[&str] = &[
    "homedir()",
    "os.homedir()",
    "require('os').homedir()",
    "require(\"os\").homedir()",
    "process.env.HOME",
    "process.env['HOME']",
    "process.env[\"HOME\"]",
    "Dir.home",
    "Dir.home()",
    "ENV['HOME']",
    "ENV[\"HOME\"]",
    "ENV.fetch('HOME')",
    "ENV.fetch(\"HOME\")",
    "File.expand_path('~')",
    "File.expand_path(\"~\")",
    "path.expand('~')",
    "path.expand(\"~\")",
    "normalizePath('~')",
    "normalizePath(\"~\")",
    "Sys.getenv('HOME')",
    "Sys.getenv(\"HOME\")",
    "Deno.env.get('HOME')",
    "Deno.env.get(\"HOME\")",
    "$ENV{HOME}",
    "$ENV{'HOME'}",
    "$ENV{\"HOME\"}",
    "'~'",
    "\"~\"",
];

/// How languages spell the working directory.
const CWD: &[&str] = &[
    "process.cwd()",
    "Dir.pwd",
    "Dir.pwd()",
    "getwd()",
    "__dirname",
    "__dir__",
    "'.'",
    "\".\"",
    "Deno.cwd()",
];

/// Calls that change the working directory.
const CHDIRS: &[&str] = &["process.chdir", "Dir.chdir", "setwd", "chdir", "Deno.chdir"];

/// What an expression may be.
#[derive(Debug, Clone, PartialEq)]
enum Val {
    /// Known text (a path).
    Text(String),
    /// Several values (a list).
    List(Vec<Val>),
    /// Something the reader cannot evaluate.
    Unknown,
}

/// What the calls of `code` do: the first protected place touched, or why oi cannot tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Finding {
    /// Deletes, moves or locks a protected place: why.
    Protected(String),
    /// A target or function oi cannot evaluate: what.
    Unknown(&'static str),
}

/// Reads the calls of `code` (see the module's documentation).
pub(crate) fn findings(places: &Places, code: &str) -> Vec<Finding> {
    let reader = Reader {
        places,
        assignments: assignments(code),
    };
    let mut out = Vec::new();
    if DYNAMIC.iter().any(|d| code.contains(d)) {
        out.push(Finding::Unknown(
            "reaches a file or process function by a name computed at run time",
        ));
    }
    let mut cwds: Vec<Option<String>> = vec![places.cwd()];
    for (at, name) in calls(code) {
        let Some(args) = arguments(code, at) else {
            continue;
        };
        if CHDIRS.iter().any(|c| name.ends_with(c)) {
            let target = args.first().map(|a| reader.eval(a, 0));
            let mut new = Vec::new();
            for cwd in &cwds {
                match &target {
                    Some(Val::Text(t)) => new.extend(resolve::resolve_dirs(t, cwd.as_deref())),
                    _ => new.push(None),
                }
            }
            for dir in new {
                if !cwds.contains(&dir) {
                    cwds.push(dir);
                }
            }
            continue;
        }
        let Some((_, effect)) = CALLS
            .iter()
            .find(|(call, _)| name == *call || name.ends_with(&format!(".{call}")))
        else {
            continue;
        };
        let call = &code[at..at + name.len()];
        reader.call(*effect, call, &args, &cwds, &mut out);
    }
    out
}

struct Reader<'a> {
    places: &'a Places,
    assignments: Vec<(String, String)>,
}

impl Reader<'_> {
    fn call(
        &self,
        effect: Effect,
        call: &str,
        args: &[String],
        cwds: &[Option<String>],
        out: &mut Vec<Finding>,
    ) {
        let targets: Vec<(Val, Harm, &str)> = match effect {
            Effect::Delete => args
                .first()
                .map(|a| (self.eval(a, 0), Harm::Delete, "deletes"))
                .into_iter()
                .collect(),
            Effect::Move => args
                .first()
                .map(|a| (self.eval(a, 0), Harm::Delete, "moves away"))
                .into_iter()
                .collect(),
            Effect::Lock { mode, path } => {
                let keeps = args.get(mode).is_some_and(|m| keeps_owner_rights(m));
                if keeps {
                    return;
                }
                args.get(path)
                    .map(|a| {
                        (
                            self.eval(a, 0),
                            Harm::Permissions,
                            "takes the owner's rights away on",
                        )
                    })
                    .into_iter()
                    .collect()
            }
            Effect::Program => {
                let mut words = Vec::new();
                for arg in args {
                    match self.eval(arg, 0) {
                        Val::List(items) => words.extend(items),
                        other => words.push(other),
                    }
                }
                let program = match words.first() {
                    Some(Val::Text(p)) => p.rsplit('/').next().unwrap_or(p).to_owned(),
                    // `system("rm -rf ~")`: the string is read as a shell command elsewhere.
                    _ => return,
                };
                let rest: Vec<Val> = words
                    .into_iter()
                    .skip(1)
                    .filter(|w| !matches!(w, Val::Text(t) if t.starts_with('-')))
                    .collect();
                match program.as_str() {
                    "rm" | "rmdir" | "shred" => rest
                        .into_iter()
                        .map(|v| (v, Harm::Delete, "deletes"))
                        .collect(),
                    "mv" => {
                        let count = rest.len().saturating_sub(1);
                        rest.into_iter()
                            .take(count)
                            .map(|v| (v, Harm::Delete, "moves away"))
                            .collect()
                    }
                    _ => return,
                }
            }
        };
        for (value, harm, verb) in targets {
            self.judge(value, harm, verb, call, cwds, out);
        }
    }

    fn judge(
        &self,
        value: Val,
        harm: Harm,
        verb: &str,
        call: &str,
        cwds: &[Option<String>],
        out: &mut Vec<Finding>,
    ) {
        match value {
            Val::Text(text) => {
                let text = match (text.strip_prefix('~'), self.places.home()) {
                    (Some(rest), Some(home)) if rest.is_empty() || rest.starts_with('/') => {
                        format!("{home}{rest}")
                    }
                    _ => text,
                };
                for cwd in cwds {
                    let base = cwd.as_deref().map(|c| places::pattern(c, None));
                    let protected = resolve::resolve(&text, base.as_ref())
                        .iter()
                        .find_map(|p| self.places.protected(p, harm));
                    if let Some(what) = protected {
                        out.push(Finding::Protected(format!(
                            "{what} (`{call}` {verb} `{text}`)"
                        )));
                        return;
                    }
                }
            }
            Val::List(items) => {
                for item in items {
                    self.judge(item, harm, verb, call, cwds, out);
                }
            }
            Val::Unknown => out.push(Finding::Unknown(
                "deletes, moves or locks a path computed at run time (it may be a protected place)",
            )),
        }
    }

    /// What the expression `text` may be.
    fn eval(&self, text: &str, depth: usize) -> Val {
        let text = strip_keyword(text.trim());
        if depth > 6 || text.is_empty() {
            return Val::Unknown;
        }
        let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        if HOME.contains(&compact.as_str()) {
            return match self.places.home() {
                Some(home) => Val::Text(home),
                None => Val::Unknown,
            };
        }
        if CWD.contains(&compact.as_str()) {
            return Val::Text(".".to_owned());
        }
        if let Some(literal) = whole_literal(text) {
            return self.interpolated(&literal, depth);
        }
        // `a + b`, `paste0(a, b)`: concatenation.
        let parts = split_top(text, '+');
        if parts.len() > 1 {
            return self.concat(&parts, "", depth);
        }
        for (prefix, separator) in [
            ("path.join(", "/"),
            ("path.resolve(", "/"),
            ("path.posix.join(", "/"),
            ("File.join(", "/"),
            ("file.path(", "/"),
            ("paste0(", ""),
            ("File.expand_path(", "/"),
            ("path.normalize(", "/"),
            ("normalizePath(", "/"),
            ("path.expand(", "/"),
            ("String(", ""),
            ("str(", ""),
        ] {
            if let Some(inner) = text.strip_prefix(prefix).and_then(|t| t.strip_suffix(')')) {
                let parts = split_top(inner, ',');
                return self.concat(&parts, separator, depth);
            }
        }
        if let Some(inner) = text
            .strip_prefix("path.dirname(")
            .or_else(|| text.strip_prefix("File.dirname("))
            .or_else(|| text.strip_prefix("dirname("))
            .and_then(|t| t.strip_suffix(')'))
        {
            return match self.eval(inner, depth + 1) {
                Val::Text(t) => Val::Text(format!("{t}/..")),
                _ => Val::Unknown,
            };
        }
        let list = text
            .strip_prefix('[')
            .and_then(|t| t.strip_suffix(']'))
            .or_else(|| text.strip_prefix("c(").and_then(|t| t.strip_suffix(')')));
        if let Some(inner) = list {
            return Val::List(
                split_top(inner, ',')
                    .iter()
                    .filter(|p| !p.trim().is_empty())
                    .map(|p| self.eval(p, depth + 1))
                    .collect(),
            );
        }
        if text
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == '@')
        {
            let values: Vec<Val> = self
                .assignments
                .iter()
                .filter(|(name, _)| name == text)
                .map(|(_, value)| self.eval(value, depth + 1))
                .collect();
            return match values.len() {
                0 => Val::Unknown,
                1 => values.into_iter().next().unwrap_or(Val::Unknown),
                _ if values.contains(&Val::Unknown) => Val::Unknown,
                _ => Val::List(values),
            };
        }
        Val::Unknown
    }

    fn concat(&self, parts: &[String], separator: &str, depth: usize) -> Val {
        let mut out = String::new();
        for (n, part) in parts.iter().enumerate() {
            match self.eval(part, depth + 1) {
                Val::Text(t) => {
                    if separator == "/" && t.starts_with('/') {
                        out.clear();
                    } else if n > 0 && !out.is_empty() {
                        out.push_str(separator);
                    }
                    out.push_str(&t);
                }
                _ => return Val::Unknown,
            }
        }
        Val::Text(out)
    }

    /// A string literal's text with `${…}` / `#{…}` parts evaluated.
    fn interpolated(&self, literal: &str, depth: usize) -> Val {
        let mut out = String::new();
        let mut rest = literal;
        loop {
            let start = ["${", "#{"].iter().filter_map(|m| rest.find(m)).min();
            let Some(start) = start else {
                out.push_str(rest);
                return Val::Text(out);
            };
            out.push_str(&rest[..start]);
            let after = &rest[start + 2..];
            let Some(end) = after.find('}') else {
                return Val::Unknown;
            };
            match self.eval(&after[..end], depth + 1) {
                Val::Text(t) => out.push_str(&t),
                _ => return Val::Unknown,
            }
            rest = &after[end + 1..];
        }
    }
}

/// `recursive = TRUE`, `force: true`, `args = c(…)`: the value of a keyword argument.
fn strip_keyword(text: &str) -> &str {
    let name_end = text
        .char_indices()
        .find(|(_, c)| !(c.is_alphanumeric() || *c == '_' || *c == '.'))
        .map_or(text.len(), |(i, _)| i);
    if name_end == 0 {
        return text;
    }
    let rest = text[name_end..].trim_start();
    if let Some(value) = rest.strip_prefix('=').filter(|v| !v.starts_with('=')) {
        return value.trim();
    }
    if let Some(value) = rest.strip_prefix(':').filter(|v| !v.starts_with(':')) {
        return value.trim();
    }
    text
}

/// The text of `text` when it is one string literal (`'…'`, `"…"`, `` `…` ``).
fn whole_literal(text: &str) -> Option<String> {
    let quote = text
        .chars()
        .next()
        .filter(|c| matches!(c, '\'' | '"' | '`'))?;
    let mut out = String::new();
    let mut chars = text[1..].chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push(chars.next()?),
            c if c == quote => {
                return chars.as_str().trim().is_empty().then_some(out);
            }
            c => out.push(c),
        }
    }
    None
}

/// `text` split at `separator` outside quotes and brackets.
fn split_top(text: &str, separator: char) -> Vec<String> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) => {
                current.push(c);
                if c == '\\' {
                    if let Some(n) = chars.next() {
                        current.push(n);
                    }
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' | '`' => {
                    quote = Some(c);
                    current.push(c);
                }
                '(' | '[' | '{' => {
                    depth += 1;
                    current.push(c);
                }
                ')' | ']' | '}' => {
                    depth = depth.saturating_sub(1);
                    current.push(c);
                }
                c if c == separator && depth == 0 => parts.push(std::mem::take(&mut current)),
                c => current.push(c),
            },
        }
    }
    parts.push(current);
    parts.into_iter().map(|p| p.trim().to_owned()).collect()
}

/// The calls in `code`: where each callee's dotted name starts, and the name (`fs.rmSync`),
/// outside string literals.
fn calls(code: &str) -> Vec<(usize, String)> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if let Some(q) = quote {
            if c == b'\\' {
                i += 2;
                continue;
            }
            if c == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        if matches!(c, b'\'' | b'"' | b'`') {
            quote = Some(c);
            i += 1;
            continue;
        }
        if c == b'(' {
            let mut start = i;
            while start > 0 {
                let p = bytes[start - 1];
                if p.is_ascii_alphanumeric() || p == b'_' || p == b'.' || p == b'$' {
                    start -= 1;
                } else {
                    break;
                }
            }
            if start < i {
                out.push((start, code[start..i].to_owned()));
            }
        }
        i += 1;
    }
    out
}

/// The arguments of the call whose name starts at `at`.
fn arguments(code: &str, at: usize) -> Option<Vec<String>> {
    let open = at + code[at..].find('(')?;
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut end = None;
    let mut chars = code[open..].char_indices();
    while let Some((i, c)) = chars.next() {
        match quote {
            Some(q) => {
                if c == '\\' {
                    chars.next();
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '\'' | '"' | '`' => quote = Some(c),
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = Some(open + i);
                        break;
                    }
                }
                _ => {}
            },
        }
    }
    let inner = &code[open + 1..end?];
    Some(
        split_top(inner, ',')
            .into_iter()
            .filter(|a| !a.is_empty())
            .collect(),
    )
}

/// `NAME = EXPR`, `const NAME = EXPR`, `NAME <- EXPR` in `code`.
fn assignments(code: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for statement in code.split(['\n', ';']) {
        let statement = statement.trim();
        let statement = ["const ", "let ", "var ", "my "]
            .iter()
            .find_map(|k| statement.strip_prefix(k))
            .unwrap_or(statement)
            .trim();
        let (name, value) = if let Some((n, v)) = statement.split_once("<-") {
            (n.trim(), v.trim())
        } else if let Some((n, v)) = statement.split_once('=') {
            if v.starts_with('=') || n.ends_with(['!', '<', '>', '=', '+', '-']) {
                continue;
            }
            (n.trim(), v.trim())
        } else {
            continue;
        };
        let name = name.trim_start_matches('$');
        if !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            out.push((name.to_owned(), value.to_owned()));
        }
    }
    out
}

/// Whether a mode literal leaves the owner read, write and search rights (`0o755`, `0755`,
/// `"755"`, `'u+rwx'`).
fn keeps_owner_rights(mode: &str) -> bool {
    let mode = mode.trim().trim_matches(['\'', '"']);
    let digits = mode
        .strip_prefix("0o")
        .or_else(|| mode.strip_prefix("0O"))
        .unwrap_or(mode);
    match u32::from_str_radix(digits, 8) {
        Ok(bits) => bits & 0o700 == 0o700,
        Err(_) => mode.contains("u+rwx") || mode.contains("a+rwx"),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn places() -> Places {
        Places::new(
            Some(Path::new("/home/ada")),
            Some(Path::new("/home/ada/projects/x")),
        )
    }

    fn finding(code: &str) -> Option<Finding> {
        findings(&places(), code).into_iter().next()
    }

    #[test]
    fn protected_targets_and_unknown_ones() {
        for code in [
            "require('fs').rmSync('../..', {recursive:true,force:true})",
            "require('fs').rmSync('../../../ada', {recursive:true})",
            "FileUtils.rm_rf('../../../ada')",
            "unlink('../..', recursive = TRUE)",
            "fs.renameSync(require('os').homedir(), '/tmp/gone')",
            "fs.chmodSync(process.env.HOME, 0)",
            "File.rename(Dir.home, '/tmp/gone')",
            "file.rename(path.expand(\"~\"), '/tmp/gone')",
            "execFileSync('rm', ['-rf', homedir()])",
            "spawnSync('rm', ['-rf', os.homedir()])",
            "system('rm', '-rf', Dir.home)",
            "system2('rm', c('-rf', path.expand('~')))",
            "process.chdir('/home'); require('fs').rmSync('ada', {recursive: true})",
            "Dir.chdir('/home') { FileUtils.rm_rf('ada') }",
            "setwd('/home'); unlink('ada', recursive = TRUE)",
            "const h = require('os').homedir(); fs.rmSync(h, {recursive: true})",
            "fs.rmSync(`${os.homedir()}`, {recursive: true})",
            "FileUtils.rm_rf(\"#{Dir.home}/\")",
            "fs.rmSync(path.join(os.homedir(), '..'), {recursive: true})",
        ] {
            assert!(
                matches!(finding(code), Some(Finding::Protected(_))),
                "{code}: {:?}",
                finding(code)
            );
        }
        for code in [
            "fs['rm'+'Sync'](process.env['HO'+'ME'], {recursive: true})",
            "fs.rmSync(process.argv[2], {recursive: true})",
            "FileUtils.rm_rf(ARGV[0])",
            "unlink(readline(), recursive = TRUE)",
            "execFileSync('rm', ['-rf', process.argv[2]])",
            "FileUtils.send(:rm_rf, x)",
            "process.chdir(process.argv[2]); require('fs').rmSync('ada', {recursive: true})",
        ] {
            assert!(
                findings(&places(), code)
                    .iter()
                    .any(|f| matches!(f, Finding::Unknown(_) | Finding::Protected(_))),
                "{code}"
            );
        }
        for code in [
            "fs.rmSync('dist', {recursive: true})",
            "require('fs').rmSync('build', { recursive: true, force: true })",
            "FileUtils.rm_rf('build')",
            "unlink('out.txt')",
            "fs.renameSync('a.txt', 'b.txt')",
            "fs.chmodSync('run.sh', 0o755)",
            "File.chmod(0755, 'run.sh')",
            "const out = 'dist'; fs.rmSync(out, {recursive: true})",
            "fs.rmSync(path.join(__dirname, 'dist'), {recursive: true})",
            "execFileSync('rm', ['-f', 'out.txt'])",
            "console.log(require('os').homedir())",
        ] {
            assert_eq!(findings(&places(), code), Vec::new(), "{code}");
        }
    }
}
