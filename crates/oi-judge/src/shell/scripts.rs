//! Script files a block runs (`bash F`, `source F`, `python3 F`, `./F`, `BASH_ENV=F`): judged
//! on what the block itself wrote to them when oi saw it (a here-document, an `echo` or
//! `printf` of literals), else on what they hold on disk when the block did not write them;
//! "cannot tell" when neither can be known (a file written by a command oi cannot follow, or
//! one that does not exist yet).

use crate::context::Script;
use crate::resolve;
use crate::word::Field;

use super::walker::Walker;

/// The largest script file read from disk.
const MAX_SCRIPT: u64 = 64 * 1024;

impl Walker<'_, '_> {
    /// The absolute paths `file` may name (`None` in the list: one oi cannot know).
    fn file_paths(&self, file: &Field) -> Vec<Option<String>> {
        if file.has_unknown() {
            return vec![None];
        }
        let text = file.pattern_text();
        if text.contains(['*', '?', '[']) {
            return vec![None];
        }
        let mut out = Vec::new();
        for cwd in &self.env.cwds {
            for path in resolve::resolve_dirs(&text, cwd.as_deref()) {
                if !out.contains(&path) {
                    out.push(path);
                }
            }
        }
        out
    }

    /// Records that the block writes `file` (`content` when oi sees it; `append`: `>>`).
    pub(crate) fn record_write(&mut self, file: &Field, content: Option<String>, append: bool) {
        for path in self.file_paths(file) {
            let Some(path) = path else {
                self.env.wrote_unknown = true;
                continue;
            };
            let content = match (append, self.env.files.get(&path)) {
                (false, _) => content.clone(),
                (true, Some(Some(before))) => content.as_ref().map(|c| format!("{before}{c}")),
                (true, Some(None)) => None,
                // Appending to a file already on disk: oi reads it and the rest.
                (true, None) => match (read_disk(&path), &content) {
                    (Disk::Text(before), Some(c)) => Some(format!("{before}{c}")),
                    (Disk::Missing, Some(c)) => Some(c.clone()),
                    _ => None,
                },
            };
            let value = if self.env.conditional > 0 && self.env.files.contains_key(&path) {
                // Either content may be there: oi cannot tell which.
                None
            } else {
                content
            };
            self.env.files.insert(path, value);
        }
    }

    /// What `file` holds, when oi can know it: what the block wrote to it, or a small text
    /// file on disk (outside `/proc`, `/sys` and `/dev`) the block did not write.
    pub(crate) fn file_content(&self, file: &Field) -> Option<String> {
        let paths = self.file_paths(file);
        let [Some(path)] = paths.as_slice() else {
            return None;
        };
        match self.env.files.get(path) {
            Some(content) => content.clone(),
            None if self.env.wrote_unknown => None,
            None if ["/proc/", "/sys/", "/dev/"]
                .iter()
                .any(|p| path.starts_with(p)) =>
            {
                None
            }
            None => match read_disk(path) {
                Disk::Text(text) => Some(text),
                _ => None,
            },
        }
    }

    /// Runs the script `file` as `language`.
    pub(crate) fn script(&mut self, file: &Field, language: Script) {
        for path in self.file_paths(file) {
            let Some(path) = path else {
                self.scan.exceed(crate::scan::Limit::Dynamic(
                    "runs a script file oi cannot name before it runs",
                ));
                return;
            };
            let content = match self.env.files.get(&path) {
                Some(Some(content)) => content.clone(),
                Some(None) => {
                    self.scan.exceed(crate::scan::Limit::Dynamic(
                        "runs a script file it writes with content oi cannot see",
                    ));
                    return;
                }
                None if self.env.wrote_unknown => {
                    self.scan.exceed(crate::scan::Limit::Dynamic(
                        "runs a script file after writing a file oi cannot name",
                    ));
                    return;
                }
                None => match read_disk(&path) {
                    Disk::Text(text) => text,
                    // A compiled program: oi reads no program's machine code.
                    Disk::Binary => return,
                    // A program run by its path that is not there fails to start.
                    Disk::Missing if language == Script::Shebang => return,
                    Disk::Missing | Disk::Unreadable => {
                        self.scan.exceed(crate::scan::Limit::Dynamic(
                            "runs a script file that oi cannot read (missing, unreadable or too large)",
                        ));
                        return;
                    }
                },
            };
            self.read_script(&content, language);
        }
    }

    fn read_script(&mut self, content: &str, language: Script) {
        let language = match language {
            Script::Shebang => {
                let first = content.lines().next().unwrap_or("");
                if !first.starts_with("#!") {
                    Script::Shell
                } else if first.contains("python") {
                    Script::Python
                } else if ["sh", "bash", "zsh", "dash", "ksh"].iter().any(|s| {
                    first.ends_with(&format!("/{s}"))
                        || first.contains(&format!("/{s} "))
                        || first.contains(&format!("env {s}"))
                }) {
                    Script::Shell
                } else {
                    Script::Other
                }
            }
            other => other,
        };
        match language {
            Script::Shell | Script::Shebang => {
                let env = self.env.clone();
                self.scan.shell(content, env);
            }
            Script::Python => {
                let cwds = self.env.cwds.clone();
                self.scan.python(content, &cwds);
            }
            Script::Other => self.scan.foreign(content),
        }
    }
}

/// What a file on disk holds.
enum Disk {
    Text(String),
    Binary,
    Missing,
    Unreadable,
}

fn read_disk(path: &str) -> Disk {
    let Ok(meta) = std::fs::metadata(path) else {
        return match std::fs::symlink_metadata(path) {
            Ok(_) => Disk::Unreadable,
            Err(_) => Disk::Missing,
        };
    };
    if !meta.is_file() || meta.len() > MAX_SCRIPT {
        return Disk::Unreadable;
    }
    match std::fs::read(path) {
        Ok(bytes) if bytes.contains(&0) => Disk::Binary,
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => Disk::Text(text),
            Err(_) => Disk::Binary,
        },
        Err(_) => Disk::Unreadable,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use oi_core::{ApprovalPolicy, Rules, Verdict};

    fn verdict(dir: &Path, code: &str) -> Verdict {
        let rules = Rules {
            policy: ApprovalPolicy::Auto,
            allow: Vec::new(),
            deny: Vec::new(),
            hard_deny: true,
            home: Some("/home/ada".into()),
            cwd: Some(dir.to_path_buf()),
        };
        crate::verdict(&rules, "shell", code)
    }

    #[test]
    fn scripts_on_disk_are_read_as_their_language() {
        let dir = std::env::temp_dir().join(format!("oi-judge-scripts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("build.sh"), "set -e\ncargo build\n").unwrap();
        std::fs::write(dir.join("script.py"), "print('hi')\n").unwrap();
        std::fs::write(dir.join("evil.sh"), "rm -rf ~\n").unwrap();
        std::fs::write(
            dir.join("evil.py"),
            "import shutil, os\nshutil.rmtree(os.path.expanduser('~'))\n",
        )
        .unwrap();
        let results = [
            verdict(&dir, "bash build.sh"),
            verdict(&dir, "python3 script.py"),
            verdict(&dir, "bash evil.sh"),
            verdict(&dir, "python3 evil.py"),
            verdict(&dir, "./evil.sh"),
        ];
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(results[..2], [Verdict::Run, Verdict::Run]);
        for result in &results[2..] {
            assert!(
                matches!(result, Verdict::Block(r) if r.contains("home")),
                "{result:?}"
            );
        }
    }
}
