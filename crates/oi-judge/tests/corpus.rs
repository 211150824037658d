//! Hard-deny reads effects, not spellings (issue 21 item 8): every line of `disguises.txt` is
//! blocked even with auto_run and allow rules, and every line of `ordinary.txt` is not.

use std::path::PathBuf;

use oi_core::{ApprovalPolicy, Rules, Verdict};

/// Allow rules that would approve each disguise's program if allow rules came first.
const ALLOW: &[&str] = &[
    "rm",
    "find",
    "tar",
    "zip",
    "rsync",
    "git",
    "mv",
    "cd",
    "dd",
    "cat",
    "cp",
    "shred",
    "perl",
    "python",
    "python3",
    "ruby",
    "node",
    "php",
    "cryptsetup",
    "nvme",
    "hdparm",
    "pvcreate",
    "pvremove",
    "vgcreate",
    "mdadm",
    "zpool",
    "sg_format",
    "sudo",
];

fn rules(policy: ApprovalPolicy, allow: &[&str]) -> Rules {
    Rules {
        policy,
        allow: allow.iter().map(|s| (*s).to_owned()).collect(),
        deny: Vec::new(),
        hard_deny: true,
        home: Some(PathBuf::from("/home/ada")),
        cwd: Some(PathBuf::from("/home/ada/projects/x")),
    }
}

/// The text of the corpus files named, each read from this directory; a missing file is empty
/// (`disguises_other_languages.txt` and `ordinary_other_languages.txt` are optional).
fn read(names: &[&str]) -> String {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    names
        .iter()
        .map(|name| std::fs::read_to_string(dir.join(name)).unwrap_or_default())
        .collect::<Vec<_>>()
        .join("\n")
}

fn disguises() -> Vec<(String, String)> {
    corpus(&read(&["disguises.txt", "disguises_other_languages.txt"]))
}

fn ordinary() -> Vec<(String, String)> {
    corpus(&read(&["ordinary.txt", "ordinary_other_languages.txt"]))
}

/// The (language, code) lines of a corpus file.
fn corpus(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|line| {
            let (language, code) = line.split_once('\t').unwrap_or(("shell", line));
            (language.to_owned(), code.replace('⏎', "\n"))
        })
        .collect()
}

#[test]
fn every_disguise_in_the_corpus_is_blocked_even_with_auto_run_and_allow_rules() {
    let disguises = disguises();
    assert!(disguises.len() >= 100, "{} disguises", disguises.len());
    let mut failures = Vec::new();
    for (language, code) in &disguises {
        let auto = oi_judge::verdict(&rules(ApprovalPolicy::Auto, ALLOW), language, code);
        let ask = oi_judge::verdict(&rules(ApprovalPolicy::AlwaysAsk, ALLOW), language, code);
        if !matches!(auto, Verdict::Block(_)) || ask == Verdict::Run {
            failures.push(format!(
                "[{language}] {code:?}\n  auto: {auto:?}\n  ask: {ask:?}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} disguises pass:\n{}",
        failures.len(),
        disguises.len(),
        failures.join("\n")
    );
}

#[test]
fn ordinary_code_in_the_corpus_is_not_blocked() {
    let ordinary = ordinary();
    let mut failures = Vec::new();
    for (language, code) in &ordinary {
        let auto = oi_judge::verdict(&rules(ApprovalPolicy::Auto, &[]), language, code);
        let ask = oi_judge::verdict(&rules(ApprovalPolicy::AlwaysAsk, &[]), language, code);
        if auto != Verdict::Run || ask != Verdict::Ask {
            failures.push(format!(
                "[{language}] {code:?}\n  auto: {auto:?}\n  ask: {ask:?}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} ordinary blocks are blocked:\n{}",
        failures.len(),
        ordinary.len(),
        failures.join("\n")
    );
}

#[test]
fn judging_ordinary_code_is_cheap() {
    let ordinary = ordinary();
    let judge = rules(ApprovalPolicy::Auto, &[]);
    let runs = 20;
    let mut times = Vec::new();
    for (language, code) in &ordinary {
        let started = std::time::Instant::now();
        for _ in 0..runs {
            oi_judge::verdict(&judge, language, code);
        }
        times.push(started.elapsed() / runs);
    }
    times.sort();
    let mean = times.iter().sum::<std::time::Duration>() / times.len() as u32;
    let (median, max) = (times[times.len() / 2], times[times.len() - 1]);
    println!(
        "judge on {} ordinary blocks: mean {mean:?}, median {median:?}, max {max:?}",
        times.len()
    );
    // The measurement is in docs/benchmarks.md; the bound only catches a blow-up.
    assert!(max < std::time::Duration::from_millis(200), "{max:?}");
}
