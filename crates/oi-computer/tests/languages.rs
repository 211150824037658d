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
    let out = c.run_collect("ruby", "puts 1").await;
    assert_eq!(out.len(), 1);
    let text = out[0].content.as_text().unwrap();
    assert!(text.contains("Ruby") && text.contains("install"), "{text}");
    assert_eq!(text.lines().count(), 1);
}
