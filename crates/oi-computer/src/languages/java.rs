//! Java, one shot per run: the host shell (inside the sandbox) writes the code, which reaches it
//! as here-documents on its command pipe, as `<Class>.java` in a fresh directory under the
//! session's private work directory; it is compiled with `javac` and run with `java` from the
//! current directory; nothing is left behind. oi itself opens no file for it.

use std::path::Path;

use crate::base::programs::program_exists;
use crate::languages::Language;
use crate::languages::heredoc::Heredocs;
use crate::languages::shell_host;
use crate::languages::start_error::StartError;
use crate::process::spawn::Spawned;
use crate::sandbox::confine::Confine;

/// Starts the host for Java runs, or says which program is missing.
pub(crate) fn start(
    confine: &Confine,
) -> Result<(Spawned, Vec<u8>, tempfile::TempDir), StartError> {
    for program in ["javac", "java"] {
        if !program_exists(program) {
            return Err(StartError::NotInstalled {
                program,
                language: Language::Java,
                install: "a JDK (e.g. `apt-get install default-jdk-headless`)",
            });
        }
    }
    shell_host::start("oi-java-", confine)
}

/// The command that compiles and runs `code` as run `id` (`workdir`: the session's private
/// directory, named to the shell, never opened by oi).
pub(crate) fn command(id: u64, code: &str, workdir: &Path, nonce: &str) -> Vec<u8> {
    let Some(class) = class_name(code) else {
        return shell_host::framed(
            id,
            nonce,
            "printf 'Error: No class definition found in the provided code.\\n'",
        );
    };
    // A fresh directory of a name no code can guess ahead, made by the host (inside the
    // sandbox); the source is written there by the host too.
    let template = shell_host::quote(&workdir.join("run-XXXXXXXXXX").to_string_lossy());
    let write =
        Heredocs::new(code).write_to(&format!("\"$__oi_d/{class}.java\""), "[ -n \"$__oi_d\" ]");
    format!(
        "{start}; __oi_d=$(mktemp -d {template})\n{write}\
         if [ -n \"$__oi_d\" ] && (cd \"$__oi_d\" && javac -encoding UTF-8 -d . {class}.java) >\"$__oi_d/javac.log\" 2>&1 </dev/null; \
         then java -Dfile.encoding=UTF-8 -Dsun.stdout.encoding=UTF-8 -Dsun.stderr.encoding=UTF-8 -Dstdout.encoding=UTF-8 -Dstderr.encoding=UTF-8 -cp \"$__oi_d\" {class} </dev/null; \
         elif [ -n \"$__oi_d\" ]; then printf 'Compilation Error:\\n'; cat \"$__oi_d/javac.log\"; fi; \
         [ -n \"$__oi_d\" ] && rm -rf \"$__oi_d\"; __oi_d=; {done}\n",
        start = shell_host::start_event(id, nonce),
        done = shell_host::done_event(id, nonce),
    )
    .into_bytes()
}

/// The class to compile and run: the first `public class`, else the first `class`.
fn class_name(code: &str) -> Option<String> {
    let words: Vec<&str> = code
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
        .filter(|w| !w.is_empty())
        .collect();
    let mut first = None;
    for (i, word) in words.iter().enumerate() {
        if *word != "class" {
            continue;
        }
        let Some(name) = words.get(i + 1) else { break };
        if !is_identifier(name) {
            continue;
        }
        let public = words[..i]
            .iter()
            .rev()
            .take_while(|w| matches!(**w, "public" | "final" | "abstract" | "static" | "strictfp"))
            .any(|w| *w == "public");
        if public {
            return Some((*name).to_owned());
        }
        first.get_or_insert((*name).to_owned());
    }
    first
}

fn is_identifier(word: &str) -> bool {
    word.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_' || c == '$')
}

#[cfg(test)]
mod tests {
    use super::class_name;

    #[test]
    fn finds_the_class() {
        assert_eq!(
            class_name("class A {}\npublic final class Main { }").as_deref(),
            Some("Main")
        );
        assert_eq!(class_name("class Hello {}").as_deref(), Some("Hello"));
        assert_eq!(class_name("int x = 1;"), None);
    }
}
