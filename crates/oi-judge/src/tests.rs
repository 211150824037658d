//! The approval rules, table-driven: every disguise of a destructive command is blocked with
//! its reason, ordinary commands are not, allow rules approve only what they say, deny rules
//! see through quoting. Whole verdicts are compared.

use std::path::PathBuf;

use super::*;

mod disguises;
mod ordinary;

use disguises::DISGUISES;
use ordinary::ORDINARY;

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
