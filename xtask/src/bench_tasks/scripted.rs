//! `--scripted`: the scripted model server answers each task with its known-good solution and
//! then with a wrong one; every solution must pass its checker and every wrong answer fail it.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, bail};
use oi_testkit::{Reply, Script, ScriptedServer};

use super::tasks::{Step, Task};
use super::{Options, fresh_folder};
use crate::bench_local::runs::run_timed;

/// The known-good solution as the scripted model's replies.
fn solution_script(task: &Task) -> Script {
    Script::new(task.solution.iter().map(|step| match step {
        Step::Code(language, code) => Reply::text(format!("```{language}\n{code}\n```")),
        Step::Say(text) => Reply::text(*text),
    }))
}

/// A wrong answer: code that prints nothing useful, then a confident claim (said again if
/// oi's repair step asks it to open a file the task names).
fn wrong_script() -> Script {
    Script::new([
        Reply::text("```python\nprint(\"no idea\")\n```"),
        Reply::text("Done."),
        Reply::text("Done."),
    ])
}

/// The requests a wrong answer takes: its two replies, and one more when the task names a
/// file of its folder that the wrong code never opens (after the codeless "Done.", oi's repair
/// step asks once to open it: crates/oi-core/src/repair_step.rs, `unread_file`; the note after
/// the typed-in `print("no idea")` names the file too, but costs no request of its own).
fn wrong_answer_requests(task: &Task, folder: &Path) -> usize {
    // The repair step's own rule (oi-core), so the count cannot drift from what it does.
    let names_a_file = !oi_core::named_files(task.prompt, folder).is_empty();
    if names_a_file { 3 } else { 2 }
}

/// `--scripted`: every solution passes its checker, every wrong answer fails it.
pub(super) fn scripted(
    opts: &Options,
    target: &Path,
    work: &Path,
    tasks: &[&Task],
) -> anyhow::Result<()> {
    let oi = match &opts.oi {
        Some(oi) => std::fs::canonicalize(oi).with_context(|| format!("--oi {}", oi.display()))?,
        None => {
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
            let status = Command::new(&cargo)
                .args(["build", "--quiet", "--package", "oi-cli"])
                .status()?;
            if !status.success() {
                bail!("building oi failed");
            }
            target.join("debug").join("oi")
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let home = work.join("home-scripted");
    std::fs::create_dir_all(&home)?;
    let mut failures = Vec::new();
    for task in tasks {
        for (what, script, should_pass) in [
            ("solution", solution_script(task), true),
            ("wrong answer", wrong_script(), false),
        ] {
            let server = runtime.block_on(ScriptedServer::start(script))?;
            let folder = fresh_folder(work, task, 0)?;
            let mut command = Command::new(&oi);
            command
                .env("HOME", &home)
                .env_remove("OPENAI_API_KEY")
                .current_dir(&folder)
                .args([
                    "--local",
                    "--api_base",
                    &server.base_url(),
                    "--api_key",
                    "unused",
                    "-y",
                    task.prompt,
                ]);
            let timed = run_timed(&mut command, opts.limit)
                .with_context(|| format!("{}: running oi against the scripted model", task.name))?;
            let verdict = task.check.verify(&folder, &timed.stdout);
            let requests = server.request_count();
            let expected_requests = if should_pass {
                task.solution.len()
            } else {
                wrong_answer_requests(task, &folder)
            };
            let ok = verdict.is_ok() == should_pass && requests == expected_requests;
            println!(
                "  {:<16} {what:<12} {} ({requests} requests{})",
                task.name,
                if ok { "as expected" } else { "WRONG" },
                verdict
                    .as_ref()
                    .err()
                    .map(|e| format!(", {e}"))
                    .unwrap_or_default()
            );
            if !ok {
                failures.push(format!(
                    "{} ({what}): checker {:?}, {requests} requests (expected {expected_requests})\n{}",
                    task.name, verdict, timed.stdout
                ));
            }
            let _ = std::fs::remove_dir_all(&folder);
        }
    }
    if failures.is_empty() {
        println!(
            "bench-tasks --scripted: {} tasks, every solution solved, every wrong answer caught",
            tasks.len()
        );
        Ok(())
    } else {
        bail!("bench-tasks --scripted:\n{}", failures.join("\n"))
    }
}
