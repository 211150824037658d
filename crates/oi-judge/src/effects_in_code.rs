//! Code in a language oi does not parse (Perl, Ruby, JavaScript, PHP, …) and code handed its
//! arguments by a command line: a recursive delete is recognised by the library calls that
//! do it and the places they are pointed at (a protected literal path, the home directory
//! however the language spells it, or a protected argument on the command line).

mod calls;

use crate::places::{self, Harm, Places};
use crate::resolve;
use crate::scan::{Limit, Scan};

/// Names of library calls (and shell commands inside strings) that delete files or trees.
const DELETERS: &[&str] = &[
    "rmtree",
    "remove_tree",
    "rm_rf",
    "rm_r",
    "rmSync",
    "rmdirSync",
    "rimraf",
    "fs.rm",
    "fsPromises.rm",
    "Remove-Item",
    "remove_dir_all",
    "deltree",
    "unlink",
    "rmdir",
    "removedirs",
    "os.remove",
    "FileUtils.rm",
    "File::Path",
    "rm -r",
    "rm -f",
    "rm -R",
    "unlink(",
    "delete_all",
    "Delete(",
    "shred",
];

/// How languages spell the home directory.
const HOME_SPELLINGS: &[&str] = &[
    "Dir.home",
    "homedir()",
    "$ENV{HOME}",
    "$ENV{'HOME'}",
    "$ENV{\"HOME\"}",
    "ENV['HOME']",
    "ENV[\"HOME\"]",
    "ENV.fetch('HOME')",
    "process.env.HOME",
    "process.env['HOME']",
    "Deno.env.get(\"HOME\")",
    "getenv('HOME')",
    "getenv(\"HOME\")",
    "expanduser",
    "Path.home",
    "USERPROFILE",
    "$env:HOME",
    "File.expand_path('~')",
    "File.expand_path(\"~\")",
    "path.expand(\"~\")",
    "Sys.getenv(\"HOME\")",
    "\"~\"",
    "'~'",
    "\"~/\"",
    "'~/'",
];

/// How languages change the working directory (after one, a relative path may be anywhere).
const CHDIR_SPELLINGS: &[&str] = &["chdir", "setwd", "Set-Location", "cd(", "Push-Location"];

/// Whether `code` calls something that deletes files.
pub(crate) fn deletes(code: &str) -> bool {
    DELETERS.iter().any(|name| code.contains(name))
}

/// Judges `code` in a language oi does not parse (`literals` are its string literals): a
/// protected place it deletes, moves or locks is blocked; a call that does so to a target oi
/// cannot evaluate, or a file function reached by a computed name, is "cannot tell".
pub(crate) fn judge(scan: &mut Scan, code: &str, literals: &[String]) {
    if let Some(what) = deleted_place(scan.places, code, literals) {
        scan.block(format!(
            "it calls a library function that deletes files on {what}"
        ));
        return;
    }
    for finding in calls::findings(scan.places, code) {
        match finding {
            calls::Finding::Protected(what) => {
                scan.block(format!(
                    "it calls a library function that deletes, moves or locks {what}"
                ));
                return;
            }
            calls::Finding::Unknown(what) => scan.exceed(Limit::Dynamic(what)),
        }
    }
}

/// The protected place `code` deletes, moves or locks, if it calls a deleter and names one
/// (`literals` are its string literals).
pub(crate) fn deleted_place(places: &Places, code: &str, literals: &[String]) -> Option<String> {
    let by_call = calls::findings(places, code)
        .into_iter()
        .find_map(|f| match f {
            calls::Finding::Protected(why) => Some(why),
            calls::Finding::Unknown(_) => None,
        });
    if by_call.is_some() {
        return by_call;
    }
    if !deletes(code) {
        return None;
    }
    if HOME_SPELLINGS.iter().any(|home| code.contains(home)) {
        return Some("your home directory".to_owned());
    }
    // After a change of directory oi does not follow, a relative path is relative to anywhere.
    let moves = CHDIR_SPELLINGS.iter().any(|chdir| code.contains(chdir));
    literals
        .iter()
        .filter(|l| {
            (moves || l.starts_with('/') || l.starts_with('~'))
                && !l.is_empty()
                && !l.contains(char::is_whitespace)
        })
        .find_map(|literal| {
            let text = match (literal.strip_prefix('~'), places.home()) {
                (Some(rest), Some(home)) => format!("{home}{rest}"),
                _ => literal.clone(),
            };
            let base = if moves {
                None
            } else {
                places.cwd().map(|c| places::pattern(&c, None))
            };
            resolve::resolve(&text, base.as_ref())
                .iter()
                .find_map(|pattern| places.protected(pattern, Harm::Delete))
                .map(|what| format!("{what} (`{literal}`)"))
        })
}
