//! Language table, unknown and unavailable languages.

mod common;

use oi_computer::LocalComputer;
use oi_core::computer::{Computer, Output};

#[test]
fn languages_in_the_original_order() {
    let c = LocalComputer::new();
    let names: Vec<String> = c.languages().into_iter().map(|l| l.name).collect();
    assert_eq!(
        names,
        [
            "Ruby",
            "Python",
            "Shell",
            "JavaScript",
            "HTML",
            "AppleScript",
            "R",
            "PowerShell",
            "React",
            "Java"
        ]
    );
    let shell = c
        .languages()
        .into_iter()
        .find(|l| l.name == "Shell")
        .unwrap();
    assert!(shell.matches("ZSH") && shell.matches("bash") && shell.matches(" sh "));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_and_unavailable_languages_give_one_line() {
    let c = LocalComputer::new();
    let out = c.run_collect("cobol", "DISPLAY 'x'").await;
    assert_eq!(
        out,
        vec![Output::console("`cobol` disabled or not supported.")]
    );
    let out = c.run_collect("applescript", "beep").await;
    assert_eq!(out.len(), 1);
    let text = out[0].content.as_text().unwrap();
    if cfg!(target_os = "macos") {
        return;
    }
    assert!(text.contains("only available on macOS"), "{text}");
    assert_eq!(text.lines().count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_programs_give_one_line_with_the_install_hint() {
    let c = LocalComputer::new();
    for (language, program) in [
        ("powershell", "pwsh"),
        ("ruby", "ruby"),
        ("r", "R"),
        ("java", "javac"),
    ] {
        if common::on_path(program) {
            eprintln!(
                "{language}: `{program}` is installed, so its missing message is not checked"
            );
            continue;
        }
        let out = c.run_collect(language, "1").await;
        assert_eq!(out.len(), 1, "{out:?}");
        let text = out[0].content.as_text().unwrap();
        assert!(
            text.contains(&format!("`{program}` is not installed")) && text.contains("Install"),
            "{text}"
        );
        assert_eq!(text.lines().count(), 1);
    }
}
