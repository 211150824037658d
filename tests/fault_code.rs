//! Fault injection on the code side: the real core and the real local computer run code that
//! floods output, forks, sleeps forever, reads stdin, closes its own stdout, or kills its own
//! process group. Each time the run ends in bounded time, the stored conversation stays valid
//! LMC, the next turn works, and after `terminate()` no process of the session is left.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use oi_computer::LocalComputer;
use oi_core::{Chunk, Computer, Interpreter, Message, TurnEvent};
use oi_testkit::{Reply, Script, ScriptedServer};

/// The scripted model, an interpreter, and the computer under it (kept for its process groups).
async fn setup(
    script: Script,
    computer: LocalComputer,
) -> (ScriptedServer, Interpreter, Arc<LocalComputer>) {
    let server = ScriptedServer::start(script)
        .await
        .expect("scripted server starts");
    let settings = common::settings(&server, true);
    let model = Arc::new(oi_llm::OpenAiCompatible::new().with_env(oi_llm::Env::empty()));
    let computer = Arc::new(computer);
    let dyn_computer: Arc<dyn Computer> = computer.clone();
    let oi = Interpreter::new(settings, model, dyn_computer, oi_judge::judge());
    (server, oi, computer)
}

/// Runs a turn to its end (at most `limit`): the chunks; panics on a turn error.
async fn run_turn(oi: &Interpreter, input: &str, limit: Duration) -> Vec<Chunk> {
    let mut turn = oi.chat(input);
    let mut chunks = Vec::new();
    let outcome = tokio::time::timeout(limit, async {
        while let Some(event) = turn.next().await {
            match event {
                TurnEvent::Chunk(chunk) => chunks.push(chunk),
                TurnEvent::Error(error) => panic!("the turn failed: {error}"),
                TurnEvent::Approval(request) => request.approve(),
                TurnEvent::Complete => {}
            }
        }
    })
    .await;
    assert!(outcome.is_ok(), "the turn did not end within {limit:?}");
    chunks
}

fn output_text(chunks: &[Chunk]) -> String {
    chunks
        .iter()
        .filter(|c| c.has_format("output"))
        .filter_map(Chunk::text)
        .collect()
}

/// The stored conversation survives a round trip through the LMC parser.
fn assert_stored_valid(oi: &Interpreter) {
    let messages = oi.messages();
    let json = serde_json::to_string(&messages).unwrap();
    let again = Message::list_from_json(&json).expect("stored messages are valid LMC");
    assert_eq!(again, messages);
}

/// A turn that runs `print('alive')` works after the fault.
async fn assert_next_turn_works(oi: &Interpreter) {
    let chunks = run_turn(oi, "still alive?", Duration::from_secs(15)).await;
    assert!(output_text(&chunks).contains("alive"), "{chunks:?}");
    assert_stored_valid(oi);
}

/// The script of a turn that runs `code`, then one that prints `alive`.
fn script(code: &str) -> Script {
    Script::new([
        Reply::tool_call("python", code),
        Reply::text("done"),
        Reply::tool_call("python", "print('alive')"),
        Reply::text("ok"),
    ])
}

/// Live (non-zombie) processes in process group `pgid`, from /proc.
fn processes_in_group(pgid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        let Some(after) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let fields: Vec<&str> = after.split_whitespace().collect();
        // state ppid pgrp …
        if fields.len() > 2 && fields[0] != "Z" && fields[2].parse::<u32>() == Ok(pgid) {
            found.push(pid);
        }
    }
    found
}

/// Live processes whose environment contains `marker`.
fn processes_with_env(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        let zombie = std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| {
                s.rfind(')')
                    .map(|i| s[i + 1..].trim_start().starts_with('Z'))
            })
            .unwrap_or(true);
        if !zombie
            && environ
                .split(|&b| b == 0)
                .any(|var| var == marker.as_bytes())
        {
            found.push(pid);
        }
    }
    found
}

/// Waits up to 5 s for `check` to find nothing.
async fn assert_gone(what: &str, check: impl Fn() -> Vec<u32>) {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left = check();
        if left.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: processes left behind: {left:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Terminates the computer and checks that none of `groups` has a process left.
async fn assert_terminated_cleanly(computer: &LocalComputer, groups: &[u32]) {
    computer.terminate().await;
    assert!(computer.process_groups().is_empty());
    for &pgid in groups {
        assert_gone(&format!("group {pgid}"), || processes_in_group(pgid)).await;
    }
}

/// Resident memory of this test process, in KiB.
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1).and_then(|v| v.parse().ok()))
        })
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_flooding_output_is_capped_and_memory_stays_bounded() {
    // 64 MiB of output in 256-byte lines.
    let code = "import sys\nline = 'x' * 255 + '\\n'\nfor _ in range(262144):\n    sys.stdout.write(line)\nsys.stdout.flush()\nprint('flood over')";
    let (_server, oi, computer) = setup(script(code), LocalComputer::new()).await;
    let before = rss_kib();
    let chunks = run_turn(&oi, "flood", Duration::from_secs(18)).await;
    let grown_mib = rss_kib().saturating_sub(before) / 1024;
    let shown = output_text(&chunks);
    assert!(shown.len() < 2 * 1024 * 1024, "{} bytes shown", shown.len());
    assert!(
        shown.contains("flood over"),
        "the end of the output is kept"
    );
    assert!(
        grown_mib < 128,
        "memory grew by {grown_mib} MiB for 64 MiB of output"
    );
    let stored: usize = oi.messages().iter().map(|m| m.text().len()).sum();
    assert!(stored < 64 * 1024, "{stored} bytes stored");
    assert_stored_valid(&oi);
    assert_next_turn_works(&oi).await;
    let groups = computer.process_groups();
    assert_terminated_cleanly(&computer, &groups).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_forking_children_leaves_no_process_after_terminate() {
    let marker = format!("OI_FAULT_FORK={}", std::process::id());
    let code = format!(
        "import os, subprocess\nenv = dict(os.environ)\nenv['OI_FAULT_FORK'] = '{}'\nkids = [subprocess.Popen(['sleep', '600'], env=env) for _ in range(50)]\nprint('spawned', len(kids))",
        std::process::id()
    );
    let (_server, oi, computer) = setup(script(&code), LocalComputer::new()).await;
    let chunks = run_turn(&oi, "fork", Duration::from_secs(15)).await;
    assert!(output_text(&chunks).contains("spawned 50"), "{chunks:?}");
    // A scan of /proc taken while other tests start and end processes can miss an entry now
    // and then: look again for up to 5 s before calling a child missing.
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut found = processes_with_env(&marker);
    while found.len() != 50 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        found = processes_with_env(&marker);
    }
    assert_eq!(found.len(), 50, "{found:?}");
    let groups = computer.process_groups();
    assert_eq!(groups.len(), 1);
    assert!(
        processes_in_group(groups[0]).len() > 50,
        "children share the session's group"
    );
    assert_stored_valid(&oi);
    assert_next_turn_works(&oi).await;
    assert_terminated_cleanly(&computer, &groups).await;
    assert_gone("forked children", || processes_with_env(&marker)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_sleeping_forever_is_stopped_and_the_session_keeps_working() {
    let script = Script::new([
        Reply::tool_call(
            "python",
            "import time\nprint('start', flush=True)\ntime.sleep(600)",
        ),
        // A stopped turn does not ask the model again.
        Reply::tool_call("python", "print('alive')"),
        Reply::text("ok"),
    ]);
    let (_server, oi, computer) = setup(script, LocalComputer::new()).await;
    let mut turn = oi.chat("sleep");
    let stop = turn.stop_handle();
    let started = Instant::now();
    let mut seen = String::new();
    let ended = tokio::time::timeout(Duration::from_secs(15), async {
        while let Some(event) = turn.next().await {
            let TurnEvent::Chunk(chunk) = event else {
                continue;
            };
            if chunk.has_format("output") {
                seen.push_str(chunk.text().unwrap_or(""));
                if seen.contains("start") {
                    stop.stop();
                }
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "the turn did not end after stop");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    drop(turn);
    assert_stored_valid(&oi);
    assert_next_turn_works(&oi).await;
    let groups = computer.process_groups();
    assert_terminated_cleanly(&computer, &groups).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_reading_stdin_gets_eof_and_does_not_hang() {
    let code = "import sys\ntry:\n    x = input('name? ')\n    print('got', repr(x))\nexcept EOFError:\n    print('stdin is EOF')\nprint(repr(sys.stdin.read()))";
    let (_server, oi, computer) = setup(script(code), LocalComputer::new()).await;
    let chunks = run_turn(&oi, "read", Duration::from_secs(15)).await;
    let text = output_text(&chunks);
    assert!(text.contains("stdin is EOF"), "{text:?}");
    assert_stored_valid(&oi);
    assert_next_turn_works(&oi).await;
    let groups = computer.process_groups();
    assert_terminated_cleanly(&computer, &groups).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_closing_its_own_stdout_does_not_hang_the_session() {
    let code = "import os\nprint('before', flush=True)\nos.close(1)\nos.close(2)";
    let computer = LocalComputer::new().with_idle_timeout(Duration::from_secs(3));
    let (_server, oi, computer) = setup(script(code), computer).await;
    let started = Instant::now();
    let chunks = run_turn(&oi, "close", Duration::from_secs(15)).await;
    assert!(output_text(&chunks).contains("before"), "{chunks:?}");
    assert!(started.elapsed() < Duration::from_secs(12));
    assert_stored_valid(&oi);
    assert_next_turn_works(&oi).await;
    let groups = computer.process_groups();
    assert_terminated_cleanly(&computer, &groups).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_killing_its_own_process_group_restarts_the_session() {
    let code = "import os\nprint('bye', flush=True)\nos.killpg(os.getpgrp(), 9)";
    let (_server, oi, computer) = setup(script(code), LocalComputer::new()).await;
    // Warm the session up so that its group is known.
    let warm: Vec<_> = computer.run("python", "x = 1").collect().await;
    drop(warm);
    let first = computer.process_groups();
    assert_eq!(first.len(), 1);
    let started = Instant::now();
    let chunks = run_turn(&oi, "kill", Duration::from_secs(15)).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    let text = output_text(&chunks);
    assert!(text.contains("bye"), "{text:?}");
    assert_gone("the killed group", || processes_in_group(first[0])).await;
    assert_stored_valid(&oi);
    assert_next_turn_works(&oi).await;
    let second = computer.process_groups();
    assert_eq!(second.len(), 1);
    assert_ne!(second, first, "a new session was started");
    assert!(
        text.contains("session exited") && text.contains("state was lost"),
        "the run says the session is gone: {text:?}"
    );
    assert_terminated_cleanly(&computer, &second).await;
}
