//! Attacks by the code the model writes, through the real `oi` binary (as root on CI): the
//! scripted model "writes" the attack, `oi` runs it, and the test checks from outside that it
//! failed — terminal injection into oi's own terminal, device nodes and capabilities under the
//! sandbox, reading oi's secrets, processes escaping the session, rewriting oi's profiles,
//! reaching a Unix socket listener with the network denied.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use oi_testkit::Reply;

mod sandbox_common;
use sandbox_common::*;
// ---------------------------------------------------------------------------------------------
// The controlling terminal

/// Python that finds oi's terminal (through /proc/<ppid>/fd/0, else every /dev/pts/N) and
/// pushes `y` and a command into it with TIOCSTI.
fn tiocsti_code(marker: &Path) -> String {
    format!(
        r#"
import fcntl, glob, os, termios
ttys = []
try:
    ttys.append(os.readlink("/proc/%d/fd/0" % os.getppid()))
except OSError:
    pass
ttys += sorted(glob.glob("/dev/pts/[0-9]*"))
pushed = refused = opened = 0
for tty in ttys:
    try:
        fd = os.open(tty, os.O_RDWR | os.O_NOCTTY)
        opened += 1
    except OSError:
        continue
    try:
        for ch in b"y\ntouch {marker}\n":
            fcntl.ioctl(fd, termios.TIOCSTI, bytes([ch]))
        pushed += 1
    except OSError as e:
        refused += 1
    os.close(fd)
print("opened", opened, "pushed", pushed, "refused", refused > 0)
"#,
        marker = marker.display()
    )
}

#[test]
fn code_cannot_type_into_oi_terminal_or_answer_its_prompt() {
    if !have("python3", "tiocsti") {
        return;
    }
    let mut modes = vec!["off"];
    if sandbox_works("tiocsti (workspace mode)") {
        modes.push("workspace");
    }
    let private_terminals =
        oi_computer::probe().namespaces != oi_computer::NamespaceSupport::Unavailable;
    for mode in modes {
        let s = setup();
        let marker = s.work.path().join(format!("pwned-{mode}"));
        let second = s.work.path().join(format!("second-{mode}"));
        let server = s.server(vec![
            Reply::tool_call("python", &tiocsti_code(&marker)),
            Reply::tool_call("shell", &format!("touch {}", second.display())),
            Reply::text("Done."),
        ]);
        let command = s.oi(&server, &["--plain", "--sandbox", mode]);
        let mut session = match rexpect::session::spawn_command(command, Some(20_000)) {
            Ok(session) => session,
            Err(e) => {
                oi_testkit::skipped!("skipped tiocsti: no pseudo-terminal ({e})");
                return;
            }
        };
        session.exp_string("> ").unwrap();
        session.send_line("go").unwrap();
        session
            .exp_string("Would you like to run this code? (y/n)")
            .unwrap();
        session.send_line("y").unwrap();
        let (_, shown) = session
            .exp_regex("opened [0-9]+ pushed [0-9]+ refused \\w+")
            .unwrap();
        if mode == "workspace" && private_terminals {
            // The session has its own /dev/pts: oi's terminal is not there to open.
            assert!(shown.contains("opened 0 pushed 0"), "{mode}: {shown}");
        } else {
            assert!(shown.contains("pushed 0 refused True"), "{mode}: {shown}");
        }
        // The second block waits for an answer: nothing pushed earlier answers it.
        session
            .exp_string("Would you like to run this code? (y/n)")
            .unwrap();
        std::thread::sleep(Duration::from_millis(500));
        assert!(!second.exists(), "{mode}: the second block ran unapproved");
        session.send_line("n").unwrap();
        session.exp_string("> ").unwrap();
        session.send_control('d').unwrap();
        session.exp_eof().unwrap();
        assert!(!marker.exists(), "{mode}: the pushed command ran");
        assert!(!second.exists(), "{mode}: the declined block ran");
    }
}

// ---------------------------------------------------------------------------------------------
// Root inside the sandbox

#[test]
fn sandboxed_root_cannot_make_devices_set_the_hostname_or_keep_capabilities() {
    if !have("python3", "root") || !sandbox_works("root") {
        return;
    }
    let s = setup();
    let code = r#"
import os, socket, stat, tempfile
status = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines() if ":" in l)
print("CapEff", status["CapEff"].strip(), "CapBnd", status["CapBnd"].strip(), "CapPrm", status["CapPrm"].strip())
for where in [".", tempfile.gettempdir()]:
    for kind, dev in [(stat.S_IFCHR, os.makedev(1, 11)), (stat.S_IFBLK, os.makedev(7, 0))]:
        path = os.path.join(where, "oi-node-%d-%d" % (os.getpid(), kind))
        try:
            os.mknod(path, kind | 0o600, dev)
            print("NODE MADE", path)
        except OSError as e:
            print("mknod refused", e.errno)
try:
    socket.sethostname("pwned")
    print("HOSTNAME CHANGED")
except OSError as e:
    print("sethostname refused", e.errno)
"#;
    let server = s.server(vec![Reply::tool_call("python", code), Reply::text("Done.")]);
    let out = run(s.oi(&server, &["-y", "--plain", "--sandbox", "workspace", "go"]));
    let text = printed(&out);
    let zero = "0000000000000000";
    assert!(
        text.contains(&format!("CapEff {zero} CapBnd {zero} CapPrm {zero}")),
        "{text}"
    );
    assert_eq!(text.matches("mknod refused 1").count(), 4, "{text}");
    assert!(text.contains("sethostname refused 1"), "{text}");
    assert!(!text.contains("NODE MADE") && !text.contains("HOSTNAME CHANGED"));
}

// ---------------------------------------------------------------------------------------------
// Secrets

/// Python that prints which secret-looking variables it sees, and what it can read of its
/// parent's environ and cmdline.
const SECRETS_CODE: &str = r#"
import os
for name in ["INTERPRETER_API_KEY", "OPENAI_API_KEY", "COPY_OF_KEY", "REPLICATE_API_KEY", "AWS_SECRET_ACCESS_KEY", "PLAIN_VAR"]:
    print("var", name, "present" if name in os.environ else "absent")
values = "\n".join(os.environ.values())
print("model key in env", "sk-test-model-key" in values)
print("server key in env", "srv-test-server-key" in values)
ppid = os.getppid()
print("ppid", ppid)
for what in ["environ", "cmdline"]:
    try:
        data = open("/proc/%d/%s" % (ppid, what), "rb").read()
        print(what, "readable", "keys inside" if (b"sk-test-model-key" in data or b"srv-test-server-key" in data) else "no keys")
    except OSError as e:
        print(what, "unreadable", e.errno)
"#;

fn secrets_run(s: &Setup, extra: &[&str]) -> String {
    let server = s.server(vec![
        Reply::tool_call("python", SECRETS_CODE),
        Reply::text("Done."),
    ]);
    let mut args = vec!["-y", "--plain"];
    args.extend_from_slice(extra);
    args.push("go");
    let mut command = s.oi(&server, &args);
    command
        .env("INTERPRETER_API_KEY", "srv-test-server-key-0123456789")
        .env("OPENAI_API_KEY", "sk-test-model-key-from-env-0123")
        .env("COPY_OF_KEY", MODEL_KEY)
        .env("REPLICATE_API_KEY", "r8-test-other-provider-0123")
        .env("AWS_SECRET_ACCESS_KEY", "aws-test-secret-0123456789")
        .env("PLAIN_VAR", "plain");
    let out = run(command);
    printed(&out)
}

#[test]
fn code_never_sees_oi_secrets_and_sandboxed_code_no_provider_keys() {
    if !have("python3", "secrets") {
        return;
    }
    let s = setup();
    // Sandbox off: oi's own secrets are withheld; other variables pass.
    let off = secrets_run(&s, &[]);
    for name in ["INTERPRETER_API_KEY", "OPENAI_API_KEY", "COPY_OF_KEY"] {
        assert!(off.contains(&format!("var {name} absent")), "{off}");
    }
    for name in ["REPLICATE_API_KEY", "AWS_SECRET_ACCESS_KEY", "PLAIN_VAR"] {
        assert!(off.contains(&format!("var {name} present")), "{off}");
    }
    assert!(off.contains("model key in env False"), "{off}");
    assert!(off.contains("server key in env False"), "{off}");
    if !sandbox_works("secrets (sandboxed)") {
        return;
    }
    // Sandboxed: provider keys too, and oi's /proc is out of reach.
    let boxed = secrets_run(&s, &["--sandbox", "workspace"]);
    for name in [
        "INTERPRETER_API_KEY",
        "OPENAI_API_KEY",
        "COPY_OF_KEY",
        "REPLICATE_API_KEY",
        "AWS_SECRET_ACCESS_KEY",
    ] {
        assert!(boxed.contains(&format!("var {name} absent")), "{boxed}");
    }
    assert!(boxed.contains("var PLAIN_VAR present"), "{boxed}");
    assert!(!boxed.contains("keys inside"), "{boxed}");
    if oi_computer::probe().namespaces != oi_computer::NamespaceSupport::Unavailable {
        assert!(boxed.contains("ppid 0"), "{boxed}");
        assert!(boxed.contains("environ unreadable 2"), "{boxed}");
        assert!(boxed.contains("cmdline unreadable 2"), "{boxed}");
    }
    // --pass_env lets one through by name, and only that one.
    let passed = secrets_run(
        &s,
        &["--sandbox", "workspace", "--pass_env", "REPLICATE_API_KEY"],
    );
    assert!(passed.contains("var REPLICATE_API_KEY present"), "{passed}");
    assert!(
        passed.contains("var AWS_SECRET_ACCESS_KEY absent"),
        "{passed}"
    );
    assert!(passed.contains("var OPENAI_API_KEY absent"), "{passed}");
}

#[test]
fn a_profile_can_pass_a_variable_through() {
    if !have("python3", "profile pass_env") || !sandbox_works("profile pass_env") {
        return;
    }
    let s = setup();
    let profile = s.work.path().join("pass.yaml");
    std::fs::write(
        &profile,
        "sandbox: workspace\npass_env: [REPLICATE_API_KEY]\n",
    )
    .unwrap();
    let out = secrets_run(&s, &["--profile", profile.to_str().unwrap()]);
    assert!(out.contains("var REPLICATE_API_KEY present"), "{out}");
    assert!(out.contains("var AWS_SECRET_ACCESS_KEY absent"), "{out}");
}

// ---------------------------------------------------------------------------------------------
// oi's own configuration

#[test]
fn a_sandbox_cannot_loosen_itself_by_rewriting_the_default_profile() {
    if !have("python3", "profile rewrite") || !sandbox_works("profile rewrite") {
        return;
    }
    let s = setup();
    let profiles = s.config_dir().join("profiles");
    std::fs::create_dir_all(&profiles).unwrap();
    std::fs::create_dir_all(s.config_dir().join("conversations")).unwrap();
    let default = profiles.join("default.yaml");
    let original = "sandbox: workspace\nauto_run: true\n";
    std::fs::write(&default, original).unwrap();
    // The workspace is HOME, which contains the config directory.
    let code = format!(
        r#"
import os
config = {config}
profile = os.path.join(config, "profiles", "default.yaml")
attempts = {{
    "write": lambda: open(profile, "w").write("sandbox: off\n"),
    "swap": lambda: (os.rename(os.path.dirname(config), os.path.dirname(config) + ".old"),
                     os.makedirs(os.path.join(config, "profiles")),
                     open(profile, "w").write("sandbox: off\n")),
    "new profile": lambda: open(os.path.join(config, "profiles", "evil.yaml"), "w").write("sandbox: off\n"),
    "conversation": lambda: open(os.path.join(config, "conversations", "x.json"), "w").write("[]"),
}}
for name, attempt in attempts.items():
    try:
        attempt()
        print("DONE", name)
    except OSError as e:
        print("refused", name, e.errno)
open("note.txt", "w").write("the workspace itself stays writable")
print("wrote note")
"#,
        config = py(&s.config_dir().display().to_string())
    );
    let server = s.server(vec![
        Reply::tool_call("python", &code),
        Reply::text("Done."),
    ]);
    let out = run(s.oi_in(s.home.path(), &server, &["--plain", "go"]));
    let text = printed(&out);
    assert!(stderr(&out).contains("sandbox: workspace"), "{out:?}");
    assert!(
        stderr(&out).contains("workspace is your home directory"),
        "{}",
        stderr(&out)
    );
    assert_eq!(text.matches("refused").count(), 4, "{text}");
    // The config directory is hidden under an empty read-only tmpfs: the files are not even
    // there to open (ENOENT), and nothing can be made there (EROFS).
    assert!(!text.contains("DONE"), "{text}");
    assert!(text.contains("wrote note"), "{text}");
    assert_eq!(std::fs::read_to_string(&default).unwrap(), original);
    assert!(!profiles.join("evil.yaml").exists());
    assert!(!s.home.path().join(".config.old").exists());
    // The next run is still sandboxed.
    let server = s.server(vec![
        Reply::tool_call("shell", "echo mode=${OI_SANDBOX:-none}"),
        Reply::text("Done."),
    ]);
    let out = run(s.oi_in(s.home.path(), &server, &["--plain", "go"]));
    assert!(printed(&out).contains("mode=workspace"), "{out:?}");
}

// ---------------------------------------------------------------------------------------------
// The network switch

#[test]
fn deny_network_keeps_code_from_a_unix_socket_listener() {
    if !have("python3", "unix socket") {
        return;
    }
    let support = oi_computer::probe();
    if !support.network() {
        oi_testkit::skipped!("skipped unix socket: no seccomp ({support})");
        return;
    }
    let s = setup();
    let outside = tempfile::tempdir().unwrap();
    let path = outside.path().join("listener.sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    listener.set_nonblocking(true).unwrap();
    let code = format!(
        r#"
import socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect({path})
s.sendall(b"exfiltrated")
print("CONNECTED")
"#,
        path = py(&path.display().to_string())
    );
    let mut modes = vec![vec!["--deny_network"]];
    if sandbox_works("unix socket (workspace)") {
        modes.push(vec!["--deny_network", "--sandbox", "workspace"]);
    }
    for flags in modes {
        let server = s.server(vec![
            Reply::tool_call("python", &code),
            Reply::text("Done."),
        ]);
        let mut args = vec!["-y", "--plain"];
        args.extend(flags.iter().copied());
        args.push("go");
        let text = printed(&run(s.oi(&server, &args)));
        assert!(!text.contains("CONNECTED"), "{flags:?}: {text}");
        assert!(text.contains("PermissionError"), "{flags:?}: {text}");
        assert!(
            listener.accept().is_err(),
            "{flags:?}: a connection arrived"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The same as a user without privileges

/// Whether this test runs as root (the effective uid in `/proc/self/status`).
fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .and_then(|ids| ids.split_whitespace().nth(1).map(|e| e == "0"))
        })
        .unwrap_or(false)
}

#[test]
fn an_unprivileged_user_gets_the_same_containment() {
    if !running_as_root() || !have("setpriv", "unprivileged") {
        oi_testkit::skipped!(
            "skipped an_unprivileged_user_gets_the_same_containment: needs root and setpriv to become nobody"
        );
        return;
    }
    if !sandbox_works("unprivileged") || !have("bash", "unprivileged") {
        return;
    }
    let probe = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "unshare",
            "-Urpf",
            "true",
        ])
        .status();
    if !probe.is_ok_and(|s| s.success()) {
        oi_testkit::skipped!(
            "skipped an_unprivileged_user_gets_the_same_containment: user namespaces are not available to nobody here"
        );
        return;
    }
    let s = setup();
    for dir in [s.home.path(), s.work.path()] {
        std::os::unix::fs::chown(dir, Some(65534), Some(65534)).unwrap();
    }
    let value = unique("nobody");
    let code = format!(
        "{escape}\necho pid=$$ uid=$(id -u)\ngrep CapEff /proc/self/status\nls /proc | grep -c '^[0-9]' | sed 's/^/visible=/'\ntouch {config}/x 2>/dev/null && echo CONFIG-WRITTEN || echo config-refused",
        escape = escape_code(&value),
        config = s.config_dir().display()
    );
    let server = s.server(vec![Reply::tool_call("shell", &code), Reply::text("Done.")]);
    let mut command = Command::new("setpriv");
    command
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_oi"))
        .args(["--api_base", &server.base_url(), "--api_key", MODEL_KEY])
        .args(["-y", "--plain", "--sandbox", "workspace", "go"])
        .current_dir(s.work.path())
        .env("HOME", s.home.path())
        .env("XDG_CONFIG_HOME", s.home.path().join(".config"))
        .env("SHELL", "/bin/bash");
    std::fs::create_dir_all(s.config_dir()).unwrap();
    std::os::unix::fs::chown(s.home.path().join(".config"), Some(65534), Some(65534)).unwrap();
    std::os::unix::fs::chown(s.config_dir(), Some(65534), Some(65534)).unwrap();
    let out = run(command);
    let text = printed(&out);
    assert!(
        stderr(&out).contains("PID+mount+IPC namespaces (in a user namespace)"),
        "{}",
        stderr(&out)
    );
    assert!(text.contains("escaped"), "{out:?}");
    assert!(text.contains("pid=1 uid=65534"), "{text}");
    assert!(text.contains("CapEff:\t0000000000000000"), "{text}");
    assert!(text.contains("config-refused"), "{text}");
    let visible: usize = text
        .split("visible=")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(usize::MAX);
    assert!(visible < 10, "only the session's processes: {text}");
    let marker = format!("OI_ESCAPE={value}");
    assert!(
        eventually(Duration::from_secs(3), || processes_with_env(&marker)
            .is_empty()),
        "escaped processes outlived oi: {:?}",
        processes_with_env(&marker)
    );
}
