//! Processes that escape the session, through the real `oi` binary (as root on CI): code
//! starts `setsid` daemons and double forks; they die when oi exits, on reset, on a stop that
//! kills, when oi is killed with SIGKILL (with its namespace, or at the next start), and they
//! count towards `--max_processes`.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::process::{Command, Stdio};
use std::time::Duration;

use oi_testkit::Reply;

mod sandbox_common;
use sandbox_common::*;

// ---------------------------------------------------------------------------------------------
// Escaping the session

fn modes(test: &str) -> Vec<&'static str> {
    let mut modes = vec!["off"];
    if sandbox_works(test) {
        modes.push("workspace");
    }
    modes
}

#[test]
fn escaped_processes_die_when_oi_exits() {
    if !have("setsid", "escape on exit") {
        return;
    }
    for mode in modes("escape on exit") {
        let s = setup();
        let value = unique("exit");
        let server = s.server(vec![
            Reply::tool_call("shell", &escape_code(&value)),
            Reply::text("Done."),
        ]);
        let out = run(s.oi(&server, &["-y", "--plain", "--sandbox", mode, "go"]));
        assert!(printed(&out).contains("escaped"), "{mode}: {out:?}");
        let marker = format!("OI_ESCAPE={value}");
        assert!(
            eventually(Duration::from_secs(3), || processes_with_env(&marker)
                .is_empty()),
            "{mode}: escaped processes outlived oi: {:?}",
            processes_with_env(&marker)
        );
    }
}

#[test]
fn escaped_processes_die_on_reset_and_on_a_stop_that_kills() {
    if !have("setsid", "escape on reset") || !have("python3", "escape on stop") {
        return;
    }
    for mode in modes("escape on reset") {
        let s = setup();
        let reset_value = unique("reset");
        let stop_value = unique("stop");
        let stop_code = format!(
            r#"
import os, signal, subprocess, time
env = dict(os.environ, OI_ESCAPE={value})
subprocess.Popen(["sleep", "120"], env=env, start_new_session=True)
subprocess.Popen(["nohup", "setsid", "sleep", "120"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execvpe("sleep", ["sleep", "120"], env)
    os._exit(0)
signal.signal(signal.SIGINT, signal.SIG_IGN)
print("ignoring interrupts", flush=True)
time.sleep(600)
"#,
            value = py(&stop_value)
        );
        let server = s.server(vec![
            Reply::tool_call("shell", &escape_code(&reset_value)),
            Reply::text("Started."),
            Reply::tool_call("python", &stop_code),
            Reply::text("Still here."),
        ]);
        let command = s.oi(&server, &["-y", "--plain", "--sandbox", mode]);
        let mut session = match rexpect::session::spawn_command(command, Some(20_000)) {
            Ok(session) => session,
            Err(e) => {
                oi_testkit::skipped!("skipped escape on reset: no pseudo-terminal ({e})");
                return;
            }
        };
        session.exp_string("> ").unwrap();
        session.send_line("start them").unwrap();
        session.exp_string("Started.").unwrap();
        let reset_marker = format!("OI_ESCAPE={reset_value}");
        assert!(
            eventually(Duration::from_secs(3), || processes_with_env(&reset_marker)
                .len()
                >= 3),
            "{mode}: the escapees started"
        );
        session.exp_string("> ").unwrap();
        session.send_line("%reset").unwrap();
        session.exp_string("> ").unwrap();
        assert!(
            eventually(Duration::from_secs(3), || processes_with_env(&reset_marker)
                .is_empty()),
            "{mode}: escaped processes outlived %reset: {:?}",
            processes_with_env(&reset_marker)
        );
        session.send_line("start more").unwrap();
        session.exp_string("ignoring interrupts").unwrap();
        let stop_marker = format!("OI_ESCAPE={stop_value}");
        assert!(
            eventually(Duration::from_secs(3), || processes_with_env(&stop_marker)
                .len()
                >= 3),
            "{mode}: the escapees started"
        );
        session.send_control('c').unwrap();
        session.exp_string("Stopped.").unwrap();
        assert!(
            eventually(Duration::from_secs(4), || processes_with_env(&stop_marker)
                .is_empty()),
            "{mode}: escaped processes outlived the stop: {:?}",
            processes_with_env(&stop_marker)
        );
        session.exp_string("> ").unwrap();
        session.send_control('d').unwrap();
        session.exp_eof().unwrap();
    }
}

#[test]
fn escaped_processes_count_towards_max_processes() {
    if !have("setsid", "max_processes") {
        return;
    }
    for mode in modes("max_processes") {
        let s = setup();
        let value = unique("nproc");
        let code = format!(
            "export OI_ESCAPE={value}\nfor i in $(seq 1 12); do setsid sleep 120 </dev/null >/dev/null 2>&1 & done\nsleep 5\necho NOT-STOPPED"
        );
        let server = s.server(vec![Reply::tool_call("shell", &code), Reply::text("Done.")]);
        let out = run(s.oi(
            &server,
            &[
                "-y",
                "--plain",
                "--sandbox",
                mode,
                "--max_processes",
                "6",
                "go",
            ],
        ));
        let text = printed(&out);
        assert!(text.contains("hit its process limit"), "{mode}: {text}");
        assert!(!text.contains("NOT-STOPPED"), "{mode}: {text}");
        let marker = format!("OI_ESCAPE={value}");
        assert!(
            eventually(Duration::from_secs(3), || processes_with_env(&marker)
                .is_empty()),
            "{mode}"
        );
    }
}

#[test]
fn escapees_of_an_oi_killed_with_sigkill_die_with_its_namespace_or_at_the_next_start() {
    if !have("setsid", "sigkill") {
        return;
    }
    for mode in modes("sigkill") {
        let s = setup();
        let value = unique("sigkill");
        let code = format!("{}\nsleep 60", escape_code(&value));
        let server = s.server(vec![Reply::tool_call("shell", &code), Reply::text("Done.")]);
        let mut oi = s.oi(&server, &["-y", "--plain", "--sandbox", mode, "go"]);
        let mut child = oi
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let marker = format!("OI_ESCAPE={value}");
        assert!(
            eventually(Duration::from_secs(5), || processes_with_env(&marker).len()
                >= 3),
            "{mode}: the escapees started"
        );
        child.kill().unwrap(); // SIGKILL: oi cannot clean up
        child.wait().unwrap();
        if mode == "workspace"
            && oi_computer::probe().namespaces != oi_computer::NamespaceSupport::Unavailable
        {
            // The interpreter got SIGKILL with its parent, and the namespace died with it.
            assert!(
                eventually(Duration::from_secs(3), || processes_with_env(&marker)
                    .is_empty()),
                "{mode}: {:?}",
                processes_with_env(&marker)
            );
            continue;
        }
        if !oi_computer::probe().cgroup {
            eprintln!("no cgroup here: escapees of a killed oi are not swept (best effort)");
            for pid in processes_with_env(&marker) {
                let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
            }
            continue;
        }
        // Sandbox off: they outlive it in their cgroup until the next oi starts a session (any
        // oi of this test binary may be the one, the tests run in parallel).
        let server = s.server(vec![
            Reply::tool_call("shell", "echo next"),
            Reply::text("Done."),
        ]);
        let out = run(s.oi(&server, &["-y", "--plain", "go"]));
        assert!(printed(&out).contains("next"), "{out:?}");
        assert!(
            eventually(Duration::from_secs(3), || processes_with_env(&marker)
                .is_empty()),
            "{mode}: swept by the next oi: {:?}",
            processes_with_env(&marker)
        );
    }
}
