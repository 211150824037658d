//! The judge has a budget (issue 21 item 5): blocks built to make reading them explode
//! (doubling variables, deep nesting, huge blocks) are "cannot tell" — asked about, or blocked
//! under auto_run — within a bounded time, and ordinary blocks stay cheap.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use oi_core::{ApprovalPolicy, Rules, Verdict};

fn rules(policy: ApprovalPolicy) -> Rules {
    Rules {
        policy,
        allow: vec!["echo".to_owned(), "ls".to_owned()],
        deny: Vec::new(),
        hard_deny: true,
        home: Some(PathBuf::from("/home/ada")),
        cwd: Some(PathBuf::from("/home/ada/projects/x")),
    }
}

/// `X=ab; X=$X$X` `times` times (2^times characters if followed).
fn doubling(times: usize) -> String {
    let mut code = "X=ab".to_owned();
    for _ in 0..times {
        code.push_str("; X=$X$X");
    }
    code.push_str("; echo $X");
    code
}

/// The judge bombs: (name, language, code).
fn bombs() -> Vec<(&'static str, &'static str, String)> {
    vec![
        ("doubling x24", "shell", doubling(24)),
        ("doubling x40", "shell", doubling(40)),
        ("doubling x400", "shell", doubling(400)),
        (
            "doubling into a command",
            "shell",
            format!("{}; $X -rf /", doubling(40).trim_end_matches("; echo $X")),
        ),
        (
            "quoted doubling",
            "shell",
            format!("X=ab{}; echo \"$X\"", "; X=\"$X$X$X$X\"".repeat(30)),
        ),
        (
            "16 MiB block",
            "shell",
            "echo aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n".repeat(16 << 20 >> 5),
        ),
        (
            "16 MiB python",
            "python",
            "x = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaa'\n".repeat(16 << 20 >> 5),
        ),
        (
            "python doubling",
            "python",
            format!(
                "x = 'ab'\n{}import os\nos.system(x)\n",
                "x = x + x\n".repeat(60)
            ),
        ),
        ("python name chain", "python", {
            let mut code = "x0 = 'ab'\n".to_owned();
            for n in 1..200 {
                code.push_str(&format!("x{n} = x{m} + x{m} + x{m}\n", m = n - 1));
            }
            code.push_str("import os\nos.system(x199)\n");
            code
        }),
        (
            "nested sh -c doubling",
            "shell",
            format!("sh -c '{}'", doubling(60).replace('\'', "")),
        ),
    ]
}

#[test]
fn judge_bombs_are_cannot_tell_within_a_bounded_time() {
    let mut failures = Vec::new();
    for (name, language, code) in bombs() {
        // A chain of names deeper than the reader follows is simply unknown (a command oi
        // cannot read runs as the policy says); it only has to be quick.
        let unknown_is_fine = name == "python name chain";
        for policy in [ApprovalPolicy::Auto, ApprovalPolicy::AlwaysAsk] {
            let started = Instant::now();
            let verdict = oi_judge::verdict(&rules(policy), language, &code);
            let took = started.elapsed();
            println!("{name} ({policy:?}): {took:?}");
            let expected = match policy {
                ApprovalPolicy::Auto => {
                    matches!(&verdict, Verdict::Block(r) if r.contains("cannot tell") || r.contains("hard-deny"))
                }
                _ => {
                    verdict == Verdict::Ask
                        || matches!(&verdict, Verdict::Block(r) if r.contains("hard-deny"))
                }
            };
            if !expected && !unknown_is_fine {
                failures.push(format!("{name} ({policy:?}): {verdict:?}"));
            }
            // Debug builds are slower; the release binary is measured in docs/benchmarks.md.
            if took > Duration::from_secs(5) {
                failures.push(format!("{name} ({policy:?}) took {took:?}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_bomb_under_never_run_is_blocked_and_without_hard_deny_runs_as_the_policy_says() {
    let never = rules(ApprovalPolicy::NeverRun);
    assert!(matches!(
        oi_judge::verdict(&never, "shell", &doubling(40)),
        Verdict::Block(r) if r.contains("never-run")
    ));
    let mut off = rules(ApprovalPolicy::Auto);
    off.hard_deny = false;
    assert_eq!(
        oi_judge::verdict(&off, "shell", &doubling(40)),
        Verdict::Run
    );
}

#[test]
fn ordinary_doubling_within_the_budget_is_still_read() {
    // 2^12 characters: read to the end, so the delete after it is still seen.
    let code = format!("{}; rm -rf ~", doubling(12).trim_end_matches("; echo $X"));
    let verdict = oi_judge::verdict(&rules(ApprovalPolicy::Auto), "shell", &code);
    assert!(
        matches!(&verdict, Verdict::Block(r) if r.contains("home directory")),
        "{verdict:?}"
    );
    let verdict = oi_judge::verdict(&rules(ApprovalPolicy::Auto), "shell", &doubling(12));
    assert_eq!(verdict, Verdict::Run);
}
