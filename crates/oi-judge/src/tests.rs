//! The approval rules, table-driven: every disguise of a destructive command is blocked with
//! its reason, ordinary commands are not, allow rules approve only what they say, deny rules
//! see through quoting. Whole verdicts are compared.

use std::path::PathBuf;

use super::*;

/// `rules.judge(language, code)`: the verdict of oi's judge under these rules.
trait JudgeUnder {
    fn judge(&self, language: &str, code: &str) -> Verdict;
}

impl JudgeUnder for Rules {
    fn judge(&self, language: &str, code: &str) -> Verdict {
        verdict(self, language, code)
    }
}

const HOME: &str = "/home/ada";
const CWD: &str = "/home/ada/projects/x";

fn rules(policy: ApprovalPolicy, allow: &[&str], deny: &[&str]) -> Rules {
    Rules {
        policy,
        allow: allow.iter().map(|s| (*s).to_owned()).collect(),
        deny: deny.iter().map(|s| (*s).to_owned()).collect(),
        hard_deny: true,
        home: Some(PathBuf::from(HOME)),
        cwd: Some(PathBuf::from(CWD)),
    }
}

fn hard_block(reason: &str) -> Verdict {
    Verdict::Block(format!(
        "oi blocked this code: {reason}. This is on oi's hard-deny list, which holds even with auto_run; nothing was run."
    ))
}

fn deny_block(rule: &str) -> Verdict {
    Verdict::Block(format!(
        "oi blocked this code: it matches the deny rule `{rule}`; nothing was run."
    ))
}

/// (language, code, reason): blocked even with auto_run, whatever the allow rules say.
const DISGUISES: &[(&str, &str, &str)] = &[
    (
        "shell",
        "for d in $(find / -maxdepth 1); do rm -rf \"$d\"; done",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "r''m -rf /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        r#"\rm -rf /"#,
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        r#""rm" -rf /"#,
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        r#"'r'"m" -rf ~"#,
        "it recursively deletes your home directory (`rm -r /home/ada`)",
    ),
    (
        "shell",
        "$(echo rm) -rf /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "`echo rm` -rf /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "X=rm; $X -rf /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "a=r; b=m; $a$b -rf /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "X=$(echo rm); $X -rf /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        r#"eval "rm -rf /""#,
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "eval rm -rf '~'",
        "it recursively deletes your home directory (`rm -r /home/ada`)",
    ),
    (
        "shell",
        r#"sh -c "rm -rf /""#,
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "bash -c 'rm -rf ~'",
        "it recursively deletes your home directory (`rm -r /home/ada`)",
    ),
    (
        "shell",
        r#"sh -c 'rm -rf "$1"' _ /"#,
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "echo / | xargs rm -rf",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "echo / | xargs -I{} rm -rf {}",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        r#"printf '/\n' | xargs rm -rf"#,
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "$(printf 'r%s' m) -rf /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        r#"$'\x72\x6d' -rf /"#,
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        r#"$(echo -e '\x72\x6d') -rf /"#,
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        r#"x="-rf /"; rm $x"#,
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "$RM -rf /",
        "it runs a command oi cannot read before it runs (`$RM`) with a recursive flag on the whole filesystem (`/`)",
    ),
    (
        "shell",
        r#""$(which rm)" -rf /"#,
        "it runs a command oi cannot read before it runs (`$(which rm)`) with a recursive flag on the whole filesystem (`/`)",
    ),
    (
        "shell",
        "ls $(rm -rf /)",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "echo 'rm -rf /' | sh",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "bash <<EOF\nrm -rf /\nEOF",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        r#"rm -rf "$HOME"/../.."#,
        "it recursively deletes the whole filesystem (`rm -r /home/ada/../..`)",
    ),
    (
        "shell",
        "rm -rf /usr/..",
        "it recursively deletes the whole filesystem (`rm -r /usr/..`)",
    ),
    (
        "shell",
        "rm -rf /{,}",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "rm -rf ~root",
        "it recursively deletes a top-level system directory (`rm -r /root`)",
    ),
    (
        "shell",
        "rm -rf //",
        "it recursively deletes the whole filesystem (`rm -r //`)",
    ),
    (
        "shell",
        "rm -rf /./",
        "it recursively deletes the whole filesystem (`rm -r /./`)",
    ),
    (
        "shell",
        "rm -rf ${HOME}",
        "it recursively deletes your home directory (`rm -r /home/ada`)",
    ),
    (
        "shell",
        r#"rm -rf "$HOME/"*"#,
        "it recursively deletes your home directory (`rm -r /home/ada/*`)",
    ),
    (
        "shell",
        "rm -rf ~/.*",
        "it recursively deletes your home directory (`rm -r /home/ada/.*`)",
    ),
    (
        "shell",
        "rm -rf /*",
        "it recursively deletes the whole filesystem (`rm -r /*`)",
    ),
    (
        "shell",
        "rm -rf /usr",
        "it recursively deletes a top-level system directory (`rm -r /usr`)",
    ),
    (
        "shell",
        "rm -rf /home/bob",
        "it recursively deletes a user's home directory (`rm -r /home/bob`)",
    ),
    (
        "shell",
        "rm -rf ~/projects/x/../..",
        "it recursively deletes your home directory (`rm -r /home/ada/projects/x/../..`)",
    ),
    (
        "shell",
        "rm -rf ..",
        "it recursively deletes a parent of the working directory (`rm -r ..`)",
    ),
    (
        "shell",
        "rm -rf /home/ada/projects",
        "it recursively deletes a parent of the working directory (`rm -r /home/ada/projects`)",
    ),
    (
        "shell",
        "cd / && rm -rf *",
        "it recursively deletes the whole filesystem (`rm -r *`)",
    ),
    (
        "shell",
        "cd build; rm -rf *",
        "it recursively deletes the working directory (`rm -r *`)",
    ),
    (
        "shell",
        r#"D=/; rm -rf "$D""#,
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        r#"for d in /tmp /; do rm -rf "$d"; done"#,
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "if true; then X=/; else X=build; fi; rm -rf $X",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        r#"rm -rf "$UNSET"/"#,
        "it recursively deletes a path oi cannot know before the code runs, which may be the whole filesystem (`rm -r $UNSET/`)",
    ),
    (
        "shell",
        r#"rm -rf "${X:-/}""#,
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "rm -rf $(ls)",
        "it recursively deletes a path oi cannot know before the code runs, which may be the whole filesystem (`rm -r $(ls)`)",
    ),
    (
        "shell",
        "cat list | xargs rm -rf",
        "it recursively deletes a path oi cannot know before the code runs, which may be the whole filesystem (`rm -r <xargs input>`)",
    ),
    (
        "shell",
        r#"for f in *; do rm -rf "$f"; done"#,
        "it recursively deletes the working directory (`rm -r *`)",
    ),
    (
        "shell",
        "sudo rm -rf --no-preserve-root /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "env rm -rf /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "nohup rm -rf / &",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "timeout 5 rm -rf /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "command rm -rf /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "exec rm -rf /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "sudo -u root env X=1 nice -n 5 rm -rf /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "busybox rm -rf /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "doas rm -rf /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "sh",
        "watch -n 1 rm -rf /",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "zsh",
        "su -c 'rm -rf /'",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        "env -S 'rm -rf /'",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "bash",
        r#"perl -e 'system("rm -rf /")'"#,
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "shell",
        r#"node -e "require('child_process').execSync('rm -rf ~')""#,
        "it recursively deletes your home directory (`rm -r /home/ada`)",
    ),
    (
        "shell",
        "find / -delete",
        "it recursively deletes the whole filesystem (`find / … -delete`)",
    ),
    (
        "shell",
        "find ~ -exec rm -rf {} +",
        "it recursively deletes your home directory (`rm -r /home/ada`)",
    ),
    (
        "shell",
        "find / -name '*' -delete",
        "it recursively deletes the whole filesystem (`find / … -delete`)",
    ),
    (
        "shell",
        "find . -type f -delete",
        "it recursively deletes the working directory (`find . … -delete`)",
    ),
    (
        "shell",
        "dd if=/dev/zero of=/dev/sda bs=1M",
        "it overwrites a disk device (`dd of=/dev/sda`)",
    ),
    (
        "shell",
        "cat /dev/zero > /dev/nvme0n1",
        "it writes onto a disk device (`>/dev/nvme0n1`)",
    ),
    (
        "shell",
        "> /dev/sda",
        "it writes onto a disk device (`>/dev/sda`)",
    ),
    (
        "shell",
        "echo x | tee /dev/sda",
        "it overwrites a disk device (`tee /dev/sda`)",
    ),
    (
        "shell",
        "shred -n1 /dev/sda",
        "it overwrites a disk device (`shred /dev/sda`)",
    ),
    (
        "shell",
        "mkfs.ext4 /dev/sda1",
        "it formats or repartitions a disk (`mkfs.ext4`)",
    ),
    (
        "shell",
        "wipefs -a /dev/sda",
        "it formats or repartitions a disk (`wipefs`)",
    ),
    (
        "shell",
        "chmod -R 000 /",
        "it recursively changes the owner or mode of the whole filesystem (`chmod -R … /`)",
    ),
    (
        "shell",
        "chown -R nobody /",
        "it recursively changes the owner or mode of the whole filesystem (`chown -R … /`)",
    ),
    (
        "shell",
        "chmod -R 755 ~",
        "it recursively changes the owner or mode of your home directory (`chmod -R … /home/ada`)",
    ),
    (
        "shell",
        "echo cm0gLXJmIC8= | base64 -d | sh",
        "it pipes decoded data into sh (an encoded payload oi cannot read)",
    ),
    (
        "shell",
        r#"eval "$(echo cm0gLXJmIC8= | base64 -d)""#,
        "it runs decoded code with eval (an encoded payload oi cannot read)",
    ),
    (
        "shell",
        "bash <(echo cm0gLXJmIC8= | base64 -d)",
        "it runs decoded code with bash (an encoded payload oi cannot read)",
    ),
    (
        "shell",
        "base64 --decode payload.txt | bash",
        "it pipes decoded data into bash (an encoded payload oi cannot read)",
    ),
    (
        "shell",
        r#"python3 -c "$(echo cHJpbnQoMSk= | base64 -d)""#,
        "it runs decoded code with python3 -c (an encoded payload oi cannot read)",
    ),
    (
        "shell",
        "echo 726d | xxd -r -p | sh",
        "it pipes decoded data into sh (an encoded payload oi cannot read)",
    ),
    (
        "shell",
        r#"bash <<< "$(base64 -d <<< cm0=)""#,
        "it pipes decoded data into bash (an encoded payload oi cannot read)",
    ),
    (
        "shell",
        ":(){ :|:& };:",
        "it is a fork bomb (the function `:` starts copies of itself in a pipe or in the background)",
    ),
    (
        "shell",
        ":(){:|:&};:",
        "it is a fork bomb (the function `:` starts copies of itself in a pipe or in the background)",
    ),
    (
        "shell",
        "bomb(){ bomb|bomb& }; bomb",
        "it is a fork bomb (the function `bomb` starts copies of itself in a pipe or in the background)",
    ),
    (
        "shell",
        "f() { f | f & } ; f",
        "it is a fork bomb (the function `f` starts copies of itself in a pipe or in the background)",
    ),
    (
        "python",
        "import shutil\nshutil.rmtree('/')",
        "it recursively deletes the whole filesystem (`shutil.rmtree('/')`)",
    ),
    (
        "python",
        "import shutil, os\nshutil.rmtree(os.path.expanduser('~'))",
        "it recursively deletes your home directory (`shutil.rmtree(os.path.expanduser('~'))` deletes `/home/ada`)",
    ),
    (
        "python",
        "import os\nos.system(\"rm -rf /\")",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "python",
        "import subprocess\nsubprocess.run([\"rm\",\"-rf\",\"/\"])",
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "python",
        "import subprocess\nsubprocess.call(\"rm -rf ~\", shell=True)",
        "it recursively deletes your home directory (`rm -r /home/ada`)",
    ),
    (
        "python",
        "import os\nos.popen(\"rm -rf ~\")",
        "it recursively deletes your home directory (`rm -r /home/ada`)",
    ),
    (
        "python",
        "from shutil import rmtree as r\nfrom pathlib import Path\nr(Path.home())",
        "it recursively deletes your home directory (`r(Path.home())` deletes `/home/ada`)",
    ),
    (
        "python",
        "import shutil, os\nshutil.rmtree(os.environ['HOME'])",
        "it recursively deletes your home directory (`shutil.rmtree(os.environ['HOME'])` deletes `/home/ada`)",
    ),
    (
        "python",
        "import shutil\np = '/'\nshutil.rmtree(p)",
        "it recursively deletes the whole filesystem (`shutil.rmtree(p)` deletes `/`)",
    ),
    (
        "py",
        "shutil.rmtree(Path('~').expanduser())",
        "it recursively deletes your home directory (`shutil.rmtree(Path('~').expanduser())` deletes `/home/ada`)",
    ),
    (
        "python",
        r#"os.system(f"rm -rf {os.path.expanduser('~')}")"#,
        "it recursively deletes your home directory (`rm -r /home/ada`)",
    ),
    (
        "python",
        "import os\nwhile True:\n    os.fork()",
        "it is a fork bomb (an endless loop that calls fork)",
    ),
    (
        "python",
        "while 1: os.fork()",
        "it is a fork bomb (an endless loop that calls fork)",
    ),
    (
        "python",
        "open('/dev/sda', 'wb').write(b'x')",
        "it overwrites a disk device (`open('/dev/sda', 'wb')`)",
    ),
    (
        "python",
        r#"exec("import shutil; shutil.rmtree('/')")"#,
        "it recursively deletes the whole filesystem (`shutil.rmtree('/')`)",
    ),
    (
        "python",
        r#"os.execvp("rm", ["rm", "-rf", "/"])"#,
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    (
        "python",
        r#"subprocess.run("bash -c 'rm -rf ~'", shell=True)"#,
        "it recursively deletes your home directory (`rm -r /home/ada`)",
    ),
    (
        "shell",
        "python3 <<'EOF'\nimport shutil; shutil.rmtree('/')\nEOF",
        "it recursively deletes the whole filesystem (`shutil.rmtree('/')`)",
    ),
    (
        "javascript",
        "require('child_process').execSync('rm -rf ~')",
        "it recursively deletes your home directory (`rm -r /home/ada`)",
    ),
    (
        "ruby",
        r#"system("rm -rf /")"#,
        "it recursively deletes the whole filesystem (`rm -r /`)",
    ),
    ("powershell", "format c:", "it formats a disk (`format c:`)"),
];

/// (language, code): ordinary work that the hard-deny list must not block.
const ORDINARY: &[(&str, &str)] = &[
    (
        "shell",
        "for d in $(find . -name build -type d); do rm -rf \"$d\"; done",
    ),
    (
        "shell",
        "rm -rf node_modules package-lock.json && npm install",
    ),
    ("shell", "sudo rm -rf /var/lib/apt/lists/*"),
    ("shell", "rm -rf */__pycache__"),
    (
        "shell",
        "cd /tmp && rm -rf myproj && git clone https://example.com/y myproj",
    ),
    ("shell", "find /tmp -name '*.log' -mtime +7 -delete"),
    ("shell", "rm -rf \"$(pwd)/build\""),
    ("shell", "rm -rf build/"),
    ("shell", "rm -rf ./target"),
    ("shell", "echo 'rm -rf /'"),
    ("shell", "grep -r rm ."),
    ("shell", "git rm -r --cached x"),
    ("shell", "find . -name '*.pyc' -delete"),
    ("shell", "curl -fsSL https://example.com/install.sh | sh"),
    ("shell", "rm file.txt"),
    ("shell", "rm -rf /home/ada/projects/x/tmp"),
    ("shell", r#"rm -rf "$HOME/.cache/pip""#),
    ("shell", r#"for d in build dist; do rm -rf "$d"; done"#),
    ("shell", "cd build && rm -rf *"),
    ("shell", r#"D=$(mktemp -d); rm -rf "$D""#),
    (
        "shell",
        "find . -name node_modules -prune -exec rm -rf {} +",
    ),
    ("shell", "find . -name '*.o' | xargs rm -f"),
    ("shell", "find . -type d -name build | xargs rm -rf"),
    ("shell", "chmod -R u+w ."),
    ("shell", "chown -R ada:ada ."),
    ("shell", "sudo chown -R $USER ~/.npm"),
    ("shell", "dd if=/dev/zero of=disk.img bs=1M count=1"),
    ("shell", "cat /dev/sda > /tmp/backup.img"),
    ("shell", "ls > /dev/null"),
    ("shell", "python3 -c 'print(1)'"),
    ("shell", "bash -c 'echo hi'"),
    ("shell", "echo aGVsbG8= | base64 -d"),
    ("shell", r#"echo "rm -rf /" > notes.txt"#),
    ("shell", r#"printf '%s\n' 'rm -rf /'"#),
    ("shell", "git clean -fdx"),
    ("shell", r#"rm -rf "$TMPDIR/oi-x""#),
    ("shell", "rm -rf $(git rev-parse --show-toplevel)/build"),
    ("shell", "ls -la | grep x"),
    ("shell", r#"for f in build*; do rm -rf "$f"; done"#),
    (
        "shell",
        "X=build\nif [ -d y ]; then X=/tmp/x; fi\nrm -rf \"$X\"",
    ),
    ("shell", "cd /tmp/x && rm -rf *"),
    ("shell", "mkdir -p out && cp a.txt out/"),
    ("python", "shutil.rmtree('build')"),
    ("python", "shutil.rmtree(tmpdir)"),
    ("python", r#"os.system("ls -la")"#),
    ("python", r#"subprocess.run(["git", "status"])"#),
    (
        "python",
        "with tempfile.TemporaryDirectory() as d:\n    shutil.rmtree(d)",
    ),
    ("python", r#"print("rm -rf /")"#),
    ("python", "for i in range(3): os.fork()"),
    (
        "python",
        "shutil.rmtree(os.path.join(os.getcwd(), 'build'))",
    ),
    ("python", "open('/dev/null', 'w')"),
    ("python", "open('/dev/sda', 'rb')"),
    ("javascript", "console.log(1 + 2)"),
];

#[test]
fn every_disguise_is_blocked_even_with_auto_run_and_allow_rules() {
    let mut failures = Vec::new();
    for (language, code, reason) in DISGUISES {
        for judge in [
            rules(ApprovalPolicy::Auto, &[], &[]),
            rules(
                ApprovalPolicy::AlwaysAsk,
                &["rm", "sh", "bash", "find", "eval"],
                &[],
            ),
        ] {
            let verdict = judge.judge(language, code);
            if verdict != hard_block(reason) {
                failures.push(format!("[{language}] {code:?}\n  got {verdict:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn ordinary_commands_are_not_blocked() {
    let mut failures = Vec::new();
    for (language, code) in ORDINARY {
        let auto = rules(ApprovalPolicy::Auto, &[], &[]).judge(language, code);
        let ask = rules(ApprovalPolicy::AlwaysAsk, &[], &[]).judge(language, code);
        if auto != Verdict::Run || ask != Verdict::Ask {
            failures.push(format!("[{language}] {code:?}: auto {auto:?}, ask {ask:?}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn hard_deny_can_be_turned_off_explicitly() {
    let mut off = rules(ApprovalPolicy::Auto, &[], &[]);
    off.hard_deny = false;
    for (language, code, _) in DISGUISES {
        assert_eq!(off.judge(language, code), Verdict::Run, "{code}");
    }
    assert_eq!(
        hard_denied(
            "shell",
            "rm -rf /",
            Some(Path::new(HOME)),
            Some(Path::new(CWD))
        ),
        Some("it recursively deletes the whole filesystem (`rm -r /`)".to_owned())
    );
}

#[test]
fn allow_rules_approve_one_literal_shell_command_matching_as_words() {
    let allow = ["ls", "git status", "grep"];
    let cases: &[(&str, &str, Verdict)] = &[
        ("shell", "ls", Verdict::Run),
        ("shell", "ls -la", Verdict::Run),
        ("bash", "ls -la /tmp", Verdict::Run),
        ("sh", "'ls' \"-la\"", Verdict::Run),
        ("zsh", "git status --short", Verdict::Run),
        ("Shell", "ls | grep x", Verdict::Run),
        ("shell", "ls >/dev/null 2>&1", Verdict::Run),
        ("shell", "# what is here\nls -la", Verdict::Run),
        ("shell", "ls >/dev/null; echo X", Verdict::Ask),
        ("shell", "ls $(cmd)", Verdict::Ask),
        ("shell", "ls `cmd`", Verdict::Ask),
        ("shell", "lsblk", Verdict::Ask),
        ("shell", "/bin/ls", Verdict::Ask),
        ("shell", "ls -la\ngit status", Verdict::Ask),
        ("shell", "ls && echo X", Verdict::Ask),
        ("shell", "ls || echo X", Verdict::Ask),
        ("shell", "ls & echo X", Verdict::Ask),
        ("shell", "(ls)", Verdict::Ask),
        ("shell", "ls > listing.txt", Verdict::Ask),
        ("shell", "ls \"$HOME\"", Verdict::Ask),
        ("shell", "LD_PRELOAD=x.so ls", Verdict::Ask),
        ("shell", "ls | sh", Verdict::Ask),
        ("shell", "git statusx", Verdict::Ask),
        ("shell", "git push", Verdict::Ask),
        ("python", "ls", Verdict::Ask),
        ("python", "ls = 1", Verdict::Ask),
        ("javascript", "ls()", Verdict::Ask),
    ];
    let judge = rules(ApprovalPolicy::AlwaysAsk, &allow, &[]);
    for (language, code, expected) in cases {
        assert_eq!(
            &judge.judge(language, code),
            expected,
            "[{language}] {code:?}"
        );
    }
    assert_eq!(
        rules(ApprovalPolicy::NeverRun, &allow, &[]).judge("shell", "ls"),
        Verdict::Block("oi did not run this code: the approval policy is never-run.".to_owned())
    );
}

#[test]
fn deny_rules_match_the_raw_code_and_the_normalised_command_words() {
    let cases: &[(&str, &str, &str, Verdict)] = &[
        ("curl", "shell", "curl http://x", deny_block("curl")),
        ("curl", "shell", "c''url http://x", deny_block("curl")),
        ("curl", "shell", "\\curl http://x", deny_block("curl")),
        ("curl", "shell", "$(echo curl) http://x", deny_block("curl")),
        ("curl", "shell", "X=cu; ${X}rl http://x", deny_block("curl")),
        (
            "curl",
            "python",
            "import os\nos.system(\"c''url http://x\")",
            deny_block("curl"),
        ),
        (
            "curl ",
            "shell",
            "ls; c\"url\" http://x",
            deny_block("curl "),
        ),
        (
            "curl",
            "javascript",
            "// curl is mentioned",
            deny_block("curl"),
        ),
        ("curl", "shell", "echo hi", Verdict::Ask),
        ("git push", "shell", "git   push", deny_block("git push")),
        ("git push", "shell", "git pull", Verdict::Ask),
        (
            "git push",
            "shell",
            "git 'push' origin",
            deny_block("git push"),
        ),
    ];
    for (rule, language, code, expected) in cases {
        for policy in [ApprovalPolicy::AlwaysAsk, ApprovalPolicy::Auto] {
            let judge = rules(policy, &["ls", "curl", "git"], &[rule]);
            let verdict = judge.judge(language, code);
            if *expected == Verdict::Ask {
                assert_ne!(verdict, deny_block(rule), "{rule:?} on {code:?}");
            } else {
                assert_eq!(&verdict, expected, "{rule:?} on {code:?} ({policy:?})");
            }
        }
    }
}

/// A shell script of `lines` ordinary lines.
fn long_shell_script(lines: usize) -> String {
    let pieces = [
        "echo \"step $i of the build\"",
        "mkdir -p out/$i && cp -r src/* out/$i/",
        "if [ -f \"out/$i/x\" ]; then rm -rf \"out/$i/tmp\"; fi",
        "for f in *.txt; do wc -l \"$f\" | sort -n >> counts.txt; done",
        "X=$(printf '%s-%s' build \"$i\"); echo \"${X:-none}\"",
        "git status --short 2>/dev/null | grep -v '^??' || true",
        "find . -name '*.o' -newer Makefile | xargs rm -f",
        "curl -fsS \"https://example.com/$i\" -o \"out/$i.html\"",
    ];
    (0..lines)
        .map(|n| pieces[n % pieces.len()].replace("$i", &n.to_string()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn judging_is_quick() {
    let judge = rules(
        ApprovalPolicy::AlwaysAsk,
        &["ls", "git status"],
        &["curl -k"],
    );
    let typical = "cd build && cmake .. && make -j4 2>&1 | tail -n 20";
    let script = long_shell_script(1000);
    let python: String = (0..1000)
        .map(|n| format!("x{n} = os.path.join(base, 'f{n}.txt')\nprint(x{n}, len(x{n}))"))
        .collect::<Vec<_>>()
        .join("\n");
    let time = |language: &str, code: &str, runs: u32| {
        let started = std::time::Instant::now();
        for _ in 0..runs {
            assert_eq!(judge.judge(language, code), Verdict::Ask);
        }
        started.elapsed() / runs
    };
    let typical_time = time("shell", typical, 200);
    let script_time = time("shell", &script, 5);
    let python_time = time("python", &python, 5);
    println!(
        "judge: typical shell block {typical_time:?}, 1000-line shell script {script_time:?}, 2000-line Python {python_time:?}"
    );
    assert!(
        script_time < std::time::Duration::from_secs(2),
        "{script_time:?}"
    );
}

#[test]
fn deeply_nested_code_is_blocked_without_exhausting_a_small_stack() {
    let judge = rules(ApprovalPolicy::Auto, &["ls"], &[]);
    let cases = [
        (
            "shell",
            format!("{}ls{}", "(".repeat(20_000), ")".repeat(20_000)),
        ),
        (
            "shell",
            format!("{}ls{}", "$(".repeat(5_000), ")".repeat(5_000)),
        ),
        (
            "python",
            format!("x = {}1{}", "(".repeat(20_000), ")".repeat(20_000)),
        ),
        ("python", format!("x = a{}", ".b".repeat(20_000))),
    ];
    // Worker threads of the async runtime have 2 MiB stacks.
    let verdicts = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let mut verdicts: Vec<Verdict> = cases
                .iter()
                .map(|(language, code)| judge.judge(language, code))
                .collect();
            // Just under the limit, nested eval and sh -c on top, still reads to the end.
            let nested = format!("{}rm -rf /{}", "( ".repeat(40), " )".repeat(40));
            let wrapped = format!("eval 'sh -c \"eval {nested}\"'");
            verdicts.push(judge.judge("shell", &wrapped));
            verdicts
        })
        .unwrap()
        .join()
        .unwrap();
    for verdict in &verdicts[..4] {
        assert_eq!(
            verdict,
            &hard_block("it nests more than 100 levels deep, too deep for oi to check")
        );
    }
    assert_eq!(
        verdicts[4],
        hard_block("it recursively deletes the whole filesystem (`rm -r /`)")
    );
}
