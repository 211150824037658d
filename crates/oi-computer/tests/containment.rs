//! Session containment with real processes: code that escapes its process group (`setsid`,
//! double forks, `nohup`) dies with the session in every unit oi can build here (a cgroup, a
//! PID namespace, both), is counted by the process limit, and sandboxed code sees only its own
//! processes and holds no capability. Sandbox-off sessions keep seeing and signalling the
//! host's processes, as users rely on.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{have, run, text};
use oi_computer::{
    LocalComputer, NamespaceSupport, ResourceLimits, SandboxMode, SandboxPolicy, SandboxSupport,
    probe,
};
use oi_core::computer::Computer;

/// Live processes whose environment contains `marker` (`NAME=value`).
fn processes_with_env(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        if environ
            .split(|b| *b == 0)
            .any(|var| var == marker.as_bytes())
            && common::alive(pid as i32)
        {
            found.push(pid);
        }
    }
    found
}

/// Waits up to 5 s for no process to carry `marker`; the survivors otherwise.
async fn gone(marker: &str) -> Vec<u32> {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let left = processes_with_env(marker);
        if left.is_empty() || std::time::Instant::now() > deadline {
            return left;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Waits up to 5 s for at least `n` processes to carry `marker`.
async fn at_least(marker: &str, n: usize) -> usize {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let count = processes_with_env(marker).len();
        if count >= n || std::time::Instant::now() > deadline {
            return count;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn new_marker(case: &str) -> (String, String) {
    let value = format!("{case}-{}-{}", std::process::id(), rand_suffix());
    (format!("OI_ESCAPE={value}"), value)
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// Shell code that leaves the process group three ways and returns at once.
fn escape_code(value: &str) -> String {
    format!(
        "export OI_ESCAPE={value}\n\
         setsid sleep 120 </dev/null >/dev/null 2>&1 &\n\
         ( ( sleep 120 </dev/null >/dev/null 2>&1 & ) & )\n\
         nohup setsid sleep 120 </dev/null >/dev/null 2>&1 &\n\
         echo started"
    )
}

fn workspace() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("oi-contain-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
}

/// The units this machine can build, each as a computer maker and a name.
fn units(ws: &std::path::Path) -> Vec<(&'static str, LocalComputer)> {
    let support = probe();
    let mut units = Vec::new();
    if support.cgroup {
        units.push(("sandbox off, cgroup", LocalComputer::new()));
    } else {
        eprintln!("no cgroup v2 here: the sandbox-off unit is the process group (not tested)");
    }
    if support.filesystem() && support.namespaces != NamespaceSupport::Unavailable {
        let policy = SandboxPolicy::new(SandboxMode::Workspace).with_workspace(ws);
        units.push((
            "workspace, PID namespace + cgroup",
            LocalComputer::new().with_sandbox_support(policy.clone(), support),
        ));
        let no_cgroup = SandboxSupport {
            cgroup: false,
            ..support
        };
        units.push((
            "workspace, PID namespace only",
            LocalComputer::new().with_sandbox_support(policy.clone(), no_cgroup),
        ));
        // The path users without CAP_SYS_ADMIN take (root can take it too).
        let user_namespace = SandboxSupport {
            namespaces: NamespaceSupport::WithUserNamespace,
            ..support
        };
        units.push((
            "workspace, PID namespace in a user namespace",
            LocalComputer::new().with_sandbox_support(policy, user_namespace),
        ));
    } else {
        eprintln!("no Landlock or PID namespaces here ({support}): sandboxed units not tested");
    }
    units
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escapees_die_when_the_session_ends_in_every_unit() {
    if !have("bash", "escapees_die") || !have("setsid", "escapees_die") {
        return;
    }
    let ws = workspace();
    for (name, computer) in units(ws.path()) {
        // Dropping the computer (oi exiting).
        let (marker, value) = new_marker("drop");
        let out = text(&run(&computer, "shell", &escape_code(&value)).await);
        assert_eq!(out, "started\n", "{name}");
        assert_eq!(
            at_least(&marker, 3).await,
            3,
            "{name}: the escapees started"
        );
        // terminate() (reset) on the same computer.
        computer.terminate().await;
        assert_eq!(
            gone(&marker).await,
            Vec::<u32>::new(),
            "{name}: after terminate"
        );
        let (marker, value) = new_marker("exit");
        let out = text(&run(&computer, "shell", &escape_code(&value)).await);
        assert_eq!(out, "started\n", "{name}");
        assert_eq!(at_least(&marker, 3).await, 3, "{name}");
        drop(computer);
        assert_eq!(gone(&marker).await, Vec::<u32>::new(), "{name}: after drop");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn escapees_die_when_a_stop_ends_a_session_that_ignores_it() {
    if !have("python3", "escapees_die_on_stop") || !have("setsid", "escapees_die_on_stop") {
        return;
    }
    let ws = workspace();
    for (name, computer) in units(ws.path()) {
        let computer = Arc::new(computer.with_stop_grace(Duration::from_millis(300)));
        let (marker, value) = new_marker("stop");
        let code = format!(
            r#"
import os, signal, subprocess, time
env = dict(os.environ, OI_ESCAPE={value:?})
subprocess.Popen(["sleep", "120"], env=env, start_new_session=True)
subprocess.Popen(["nohup", "sleep", "120"], env=env, start_new_session=True,
                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execvpe("sleep", ["sleep", "120"], env)
    os._exit(0)
signal.signal(signal.SIGINT, signal.SIG_IGN)
print("ignoring", flush=True)
time.sleep(600)
"#
        );
        common::stop_after(Arc::clone(&computer), Duration::from_millis(1500));
        let out = text(&run(computer.as_ref(), "python", &code).await);
        assert!(out.contains("ignoring"), "{name}: {out}");
        assert!(
            out.contains("did not stop when interrupted"),
            "{name}: {out}"
        );
        assert_eq!(gone(&marker).await, Vec::<u32>::new(), "{name}: after stop");
        let out = text(&run(computer.as_ref(), "python", "print('next')").await);
        assert!(out.ends_with("next\n"), "{name}: {out}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_process_limit_counts_processes_that_left_the_group() {
    if !have("bash", "process_limit_escapees") || !have("setsid", "process_limit_escapees") {
        return;
    }
    let ws = workspace();
    for (name, computer) in units(ws.path()) {
        let computer = computer.with_limits(ResourceLimits {
            max_processes: Some(6),
            ..ResourceLimits::default()
        });
        let (marker, value) = new_marker("nproc");
        let code = format!(
            "export OI_ESCAPE={value}\nfor i in $(seq 1 12); do setsid sleep 120 </dev/null >/dev/null 2>&1 & done\nsleep 5\necho NOT-KILLED"
        );
        let out = text(&run(&computer, "shell", &code).await);
        assert!(out.contains("hit its process limit"), "{name}: {out}");
        assert!(!out.contains("NOT-KILLED"), "{name}: {out}");
        assert_eq!(gone(&marker).await, Vec::<u32>::new(), "{name}");
        assert_eq!(text(&run(&computer, "shell", "echo next").await), "next\n");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sandboxed_code_sees_only_its_own_processes() {
    let support = probe();
    if !support.filesystem() || support.namespaces == NamespaceSupport::Unavailable {
        oi_testkit::skipped!("skipped sandboxed_code_sees_only_its_own_processes: {support}");
        return;
    }
    if !have("python3", "own_processes") {
        return;
    }
    let ws = workspace();
    let c = LocalComputer::new()
        .with_sandbox(SandboxPolicy::new(SandboxMode::Workspace).with_workspace(ws.path()));
    let me = std::process::id();
    let code = format!(
        r#"
import os
pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
print("pid", os.getpid(), "ppid", os.getppid())
print("few", len(pids) < 10)
for path in ["/proc/{me}/environ", "/proc/{me}/cmdline"]:
    try:
        open(path, "rb").read()
        print("READ", path)
    except OSError as e:
        print("unreadable", e.errno)
"#
    );
    let out = text(&run(&c, "python", &code).await);
    assert!(out.contains("pid 1 ppid 0"), "{out}");
    assert!(out.contains("few True"), "{out}");
    assert_eq!(out.matches("unreadable 2").count(), 2, "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sandbox_off_still_sees_and_signals_host_processes() {
    if !have("bash", "sandbox_off_host") || !have("ps", "sandbox_off_host") {
        return;
    }
    let mut victim = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let c = LocalComputer::new();
    let me = std::process::id();
    let code = format!(
        "ps -p {me} -o pid= | tr -d ' '; tr '\\0' '\\n' < /proc/{me}/cmdline | head -c 0 && echo cmdline-readable; kill {victim} && echo killed",
        victim = victim.id()
    );
    let out = text(&run(&c, "shell", &code).await);
    assert!(out.contains(&format!("{me}\n")), "{out}");
    assert!(
        out.contains("cmdline-readable") && out.contains("killed"),
        "{out}"
    );
    let status = victim.wait().unwrap();
    assert!(
        !status.success(),
        "the host process was killed from the session"
    );
}

/// (program, language, code setting state, code that runs until interrupted, code printing the
/// state, what it prints).
const LANGUAGES: [(&str, &str, &str, &str, &str, &str); 5] = [
    (
        "python3",
        "python",
        "kept = 'yes'",
        "import time\nprint('running', flush=True)\ntime.sleep(600)",
        "print(kept)",
        "yes\n",
    ),
    (
        "bash",
        "shell",
        "KEPT=yes",
        "echo running; sleep 600",
        "echo $KEPT",
        "yes\n",
    ),
    (
        "node",
        "javascript",
        "var kept = 'yes'",
        "console.log('running'); while (true) {}",
        "console.log(kept)",
        "yes\n",
    ),
    (
        "ruby",
        "ruby",
        "$kept = 'yes'",
        "puts 'running'; $stdout.flush; sleep 600",
        "puts $kept",
        "yes\n",
    ),
    (
        "R",
        "r",
        "kept <- 'yes'",
        "cat('running\\n'); Sys.sleep(600)",
        "cat(kept, '\\n')",
        "yes \n",
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_interrupts_every_language_running_as_pid_1_and_keeps_its_state() {
    let support = probe();
    if !support.filesystem() || support.namespaces == NamespaceSupport::Unavailable {
        oi_testkit::skipped!("skipped stop_interrupts_every_language_running_as_pid_1: {support}");
        return;
    }
    let ws = workspace();
    let c = Arc::new(
        LocalComputer::new()
            .with_sandbox(SandboxPolicy::new(SandboxMode::Workspace).with_workspace(ws.path())),
    );
    for (program, language, set, busy, show, want) in LANGUAGES {
        if !have(program, "stop as PID 1 (one language)") {
            continue;
        }
        run(c.as_ref(), language, set).await;
        common::stop_after(Arc::clone(&c), Duration::from_millis(700));
        let started = std::time::Instant::now();
        let out = text(&run(c.as_ref(), language, busy).await);
        assert!(
            started.elapsed() < Duration::from_millis(2500),
            "{language}: took {:?}: {out}",
            started.elapsed()
        );
        assert!(out.contains("running"), "{language}: {out}");
        assert!(!out.contains("was killed"), "{language}: {out}");
        let out = text(&run(c.as_ref(), language, show).await);
        assert_eq!(out, want, "{language}: the interrupt kept the session");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn orphans_of_a_pid_1_session_do_not_count_or_linger() {
    let support = probe();
    if !support.filesystem() || support.namespaces == NamespaceSupport::Unavailable {
        oi_testkit::skipped!("skipped orphans_of_a_pid_1_session: {support}");
        return;
    }
    if !have("python3", "orphans") {
        return;
    }
    let ws = workspace();
    let c = LocalComputer::new()
        .with_sandbox(SandboxPolicy::new(SandboxMode::Workspace).with_workspace(ws.path()))
        .with_limits(ResourceLimits {
            max_processes: Some(8),
            ..ResourceLimits::default()
        });
    // 30 short-lived orphans: each is re-parented to the interpreter (PID 1), which does not
    // reap them; as zombies they must not count towards the limit.
    let code = r#"
import os, subprocess, time
for _ in range(30):
    subprocess.run(["sh", "-c", "sleep 0.01 &"])
    time.sleep(0.03)
zombies = 0
for pid in os.listdir("/proc"):
    try:
        zombies += pid.isdigit() and open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        pass
print("alive", zombies >= 20)
"#;
    let out = text(&run(&c, "python", code).await);
    assert_eq!(
        out, "alive True\n",
        "the zombies are there, and do not count: {out}"
    );
    let out = text(&run(&c, "python", "print('still')").await);
    assert_eq!(out, "still\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sandbox_off_keeps_root_powers() {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } != 0 || !have("mount", "sandbox_off_keeps_root_powers") {
        oi_testkit::skipped!("skipped sandbox_off_keeps_root_powers: not root");
        return;
    }
    let c = LocalComputer::new();
    let dir = workspace();
    let code = format!(
        "grep -E '^(CapEff|NoNewPrivs)' /proc/self/status; mount -t tmpfs oi-test {dir} && echo mounted && umount {dir} && echo unmounted",
        dir = dir.path().display()
    );
    let out = text(&run(&c, "shell", &code).await);
    assert!(
        out.contains("NoNewPrivs:\t0"),
        "setuid programs keep working: {out}"
    );
    assert!(!out.contains("CapEff:\t0000000000000000"), "{out}");
    assert!(out.contains("mounted\nunmounted"), "{out}");
}
