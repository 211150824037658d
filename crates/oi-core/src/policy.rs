//! Approval policy: whether a code block runs, is asked about, or is blocked.
//!
//! Order of precedence: the hard-deny list (recursive deletes of `/`, of the home directory or of
//! the working directory's parents, disk formatting) blocks even with `auto_run`, unless the user
//! turned `hard_deny` off explicitly; then `deny` rules; then the `never-run` policy; then `allow`
//! rules (run without asking); then the policy (`auto` runs, `always-ask` asks).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// How code blocks are approved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalPolicy {
    /// Ask before every block (the CLI's default; `auto_run: false`).
    #[default]
    AlwaysAsk,
    /// Run without asking (`auto_run: true`).
    Auto,
    /// Never run code.
    NeverRun,
}

/// What to do with one code block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Run it without asking.
    Run,
    /// Ask the consumer (emit the confirmation chunk).
    Ask,
    /// Do not run it; the reason goes to the model and the user.
    Block(String),
}

/// The rules in force for one turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rules {
    /// The policy (after `auto_run` is taken into account).
    pub policy: ApprovalPolicy,
    /// Line prefixes that run without asking (every line of the block must match one).
    pub allow: Vec<String>,
    /// Substrings that block a block wherever they appear; deny wins over allow.
    pub deny: Vec<String>,
    /// Apply the built-in hard-deny list.
    pub hard_deny: bool,
    /// The home directory and the working directory, for the hard-deny list.
    pub home: Option<PathBuf>,
    /// The working directory.
    pub cwd: Option<PathBuf>,
}

impl Rules {
    /// The verdict on `code` in `language`.
    pub fn judge(&self, language: &str, code: &str) -> Verdict {
        if self.hard_deny {
            if let Some(reason) =
                hard_denied(language, code, self.home.as_deref(), self.cwd.as_deref())
            {
                return Verdict::Block(format!(
                    "oi blocked this code: {reason}. This is on oi's hard-deny list, which holds even with auto_run; nothing was run."
                ));
            }
        }
        if let Some(rule) = self
            .deny
            .iter()
            .find(|rule| !rule.is_empty() && code.contains(rule.as_str()))
        {
            return Verdict::Block(format!(
                "oi blocked this code: it matches the deny rule `{rule}`; nothing was run."
            ));
        }
        if self.policy == ApprovalPolicy::NeverRun {
            return Verdict::Block(
                "oi did not run this code: the approval policy is never-run.".to_owned(),
            );
        }
        if self.allowed(code) {
            return Verdict::Run;
        }
        match self.policy {
            ApprovalPolicy::Auto => Verdict::Run,
            _ => Verdict::Ask,
        }
    }

    fn allowed(&self, code: &str) -> bool {
        let lines: Vec<&str> = code
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        !self.allow.is_empty()
            && !lines.is_empty()
            && lines.iter().all(|line| {
                self.allow
                    .iter()
                    .any(|rule| !rule.is_empty() && line.starts_with(rule.as_str()))
            })
    }
}

/// Words of a shell line, with quotes removed (good enough to recognise dangerous commands).
fn words(line: &str) -> Vec<String> {
    line.split_whitespace()
        .map(|w| w.trim_matches(|c| c == '"' || c == '\'').to_owned())
        .collect()
}

/// Whether `target` (as written in code) names `/`, the home directory, or the working
/// directory or one of its parents.
fn protected_target(target: &str, home: Option<&Path>, cwd: Option<&Path>) -> Option<&'static str> {
    let t = target.trim_end_matches('/');
    let t = if t.is_empty() && target.starts_with('/') {
        "/"
    } else {
        t
    };
    if matches!(t, "/" | "/*" | "*" | "/.") {
        return Some("the whole filesystem");
    }
    if matches!(
        t,
        "~" | "~/*" | "$HOME" | "${HOME}" | "$HOME/*" | "${HOME}/*"
    ) {
        return Some("your home directory");
    }
    if matches!(t, "." | "./*" | ".." | "../.." | "../*" | "../../*") {
        return Some("the working directory or one of its parents");
    }
    let path = Path::new(t.trim_end_matches("/*"));
    if path.is_absolute() {
        if home.is_some_and(|h| h == path) {
            return Some("your home directory");
        }
        if cwd.is_some_and(|c| c.starts_with(path)) {
            return Some("the working directory or one of its parents");
        }
    }
    None
}

/// Why `code` is on the hard-deny list, if it is.
pub fn hard_denied(
    language: &str,
    code: &str,
    home: Option<&Path>,
    cwd: Option<&Path>,
) -> Option<String> {
    let lowered = code.to_lowercase();
    for line in code.lines() {
        let w = words(line);
        for (i, word) in w.iter().enumerate() {
            let command = word.rsplit('/').next().unwrap_or(word);
            if command == "rm" {
                let args = &w[i + 1..];
                let recursive = args.iter().any(|a| {
                    a == "--recursive"
                        || (a.starts_with('-')
                            && !a.starts_with("--")
                            && (a.contains('r') || a.contains('R')))
                });
                if recursive {
                    if let Some(what) = args
                        .iter()
                        .filter(|a| !a.starts_with('-'))
                        .find_map(|a| protected_target(a, home, cwd))
                    {
                        return Some(format!("it recursively deletes {what}"));
                    }
                }
            }
            if command.starts_with("mkfs")
                || command == "wipefs"
                || command == "fdisk"
                || command == "parted"
            {
                return Some(format!("it formats or repartitions a disk (`{command}`)"));
            }
            if command == "dd"
                && w.iter().any(|a| {
                    a.starts_with("of=/dev/sd")
                        || a.starts_with("of=/dev/nvme")
                        || a.starts_with("of=/dev/disk")
                        || a.starts_with("of=/dev/vd")
                })
            {
                return Some("it overwrites a disk device (`dd of=/dev/...`)".to_owned());
            }
        }
    }
    if lowered.contains(":(){ :|:& };:") || lowered.contains(":(){:|:&};:") {
        return Some("it is a fork bomb".to_owned());
    }
    if lowered.contains("format c:") {
        return Some("it formats a disk (`format c:`)".to_owned());
    }
    if matches!(language, "python" | "py") {
        for needle in ["shutil.rmtree(", "rmtree("] {
            let mut rest = code;
            while let Some(at) = rest.find(needle) {
                let inner = &rest[at + needle.len()..];
                let argument: String = inner
                    .chars()
                    .take_while(|c| *c != ')' && *c != ',')
                    .collect();
                let argument = argument.trim();
                let stripped = argument.trim_matches(|c| c == '"' || c == '\'');
                let home_words = [
                    "os.path.expanduser('~'",
                    "os.path.expanduser(\"~\"",
                    "path.home(",
                    "os.environ['home'",
                    "os.environ[\"home\"",
                    "os.getenv('home'",
                    "os.getenv(\"home\"",
                ];
                if home_words
                    .iter()
                    .any(|h| argument.to_lowercase().starts_with(h))
                {
                    return Some("it recursively deletes your home directory".to_owned());
                }
                if argument.starts_with(['"', '\'']) {
                    if let Some(what) = protected_target(stripped, home, cwd) {
                        return Some(format!("it recursively deletes {what}"));
                    }
                }
                rest = &inner[argument.len().min(inner.len())..];
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(policy: ApprovalPolicy) -> Rules {
        Rules {
            policy,
            allow: vec!["ls".into(), "git status".into()],
            deny: vec!["curl ".into()],
            hard_deny: true,
            home: Some(PathBuf::from("/home/ada")),
            cwd: Some(PathBuf::from("/home/ada/projects/x")),
        }
    }

    #[test]
    fn the_approval_matrix() {
        let cases = [
            (ApprovalPolicy::AlwaysAsk, "echo hi", Verdict::Ask),
            (ApprovalPolicy::Auto, "echo hi", Verdict::Run),
            (
                ApprovalPolicy::AlwaysAsk,
                "ls -la\ngit status",
                Verdict::Run,
            ),
            (ApprovalPolicy::AlwaysAsk, "ls -la\necho hi", Verdict::Ask),
        ];
        for (policy, code, expected) in cases {
            assert_eq!(
                rules(policy).judge("shell", code),
                expected,
                "{policy:?} {code}"
            );
        }
        for policy in [
            ApprovalPolicy::AlwaysAsk,
            ApprovalPolicy::Auto,
            ApprovalPolicy::NeverRun,
        ] {
            let deny = rules(policy).judge("shell", "ls; curl http://x");
            assert!(
                matches!(deny, Verdict::Block(ref r) if r.contains("deny rule `curl `")),
                "{policy:?}: {deny:?}"
            );
        }
        assert!(
            matches!(rules(ApprovalPolicy::NeverRun).judge("shell", "ls"), Verdict::Block(r) if r.contains("never-run"))
        );
    }

    #[test]
    fn hard_deny_holds_with_auto_run_and_can_be_disabled() {
        let home = Some(Path::new("/home/ada"));
        let cwd = Some(Path::new("/home/ada/projects/x"));
        for (language, code) in [
            ("shell", "rm -rf /"),
            ("shell", "sudo rm -rf --no-preserve-root /"),
            ("shell", "rm -fr ~"),
            ("shell", "rm -r -f $HOME/"),
            ("shell", "cd /tmp && rm -Rf /home/ada"),
            ("shell", "rm -rf .."),
            ("shell", "rm -rf /home/ada/projects"),
            ("bash", "mkfs.ext4 /dev/sda1"),
            ("shell", "dd if=/dev/zero of=/dev/sda bs=1M"),
            ("shell", ":(){ :|:& };:"),
            ("python", "import shutil\nshutil.rmtree('/')"),
            (
                "python",
                "import shutil, os\nshutil.rmtree(os.path.expanduser('~'))",
            ),
        ] {
            assert!(hard_denied(language, code, home, cwd).is_some(), "{code}");
            assert!(
                matches!(
                    rules(ApprovalPolicy::Auto).judge(language, code),
                    Verdict::Block(_)
                ),
                "{code}"
            );
        }
        for (language, code) in [
            ("shell", "rm -rf build/"),
            ("shell", "rm -rf ./target"),
            ("shell", "rm file.txt"),
            ("shell", "rm -rf /home/ada/projects/x/tmp"),
            ("python", "shutil.rmtree('build')"),
            ("shell", "echo 'rm -rf is dangerous'"),
        ] {
            assert_eq!(hard_denied(language, code, home, cwd), None, "{code}");
        }
        let mut off = rules(ApprovalPolicy::Auto);
        off.hard_deny = false;
        assert_eq!(off.judge("shell", "rm -rf /"), Verdict::Run);
    }
}
