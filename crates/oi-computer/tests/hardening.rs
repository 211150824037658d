//! Attacks from sandboxed (and unsandboxed) code against the host, performed with real
//! processes: device nodes and capabilities as root, terminal injection, pathname Unix
//! sockets with the network denied, and rewriting oi's own directories.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::Read;
use std::os::fd::FromRawFd;
use std::path::Path;

use common::{have, run, text};
use oi_computer::{
    LocalComputer, NamespaceSupport, SandboxMode, SandboxPolicy, SandboxSupport, probe,
};

fn workspace() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("oi-harden-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
}

fn py(path: &Path) -> String {
    format!("{:?}", path.to_string_lossy())
}

fn sandboxed(ws: &Path) -> Option<LocalComputer> {
    let support = probe();
    if !support.filesystem() || !support.seccomp {
        oi_testkit::skipped!("skipped: no Landlock or seccomp here ({support})");
        return None;
    }
    Some(
        LocalComputer::new()
            .with_sandbox(SandboxPolicy::new(SandboxMode::Workspace).with_workspace(ws)),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn root_in_the_sandbox_has_no_capabilities_and_makes_no_devices() {
    if !have("python3", "no_capabilities") {
        return;
    }
    let ws = workspace();
    let Some(c) = sandboxed(ws.path()) else {
        return;
    };
    let code = format!(
        r#"
import os, socket, stat, tempfile
status = dict(l.split(":", 1) for l in open("/proc/self/status").read().splitlines() if ":" in l)
print("caps", [status[k].strip() for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")])
print("uid", os.getuid(), "nnp", status["NoNewPrivs"].strip())
for where in [{ws}, tempfile.gettempdir(), os.getcwd()]:
    for name, kind, dev in [("kmsg", stat.S_IFCHR, os.makedev(1, 11)), ("loop", stat.S_IFBLK, os.makedev(7, 0))]:
        path = os.path.join(where, "oi-dev-%d-%s" % (os.getpid(), name))
        try:
            os.mknod(path, kind | 0o600, dev)
            print("MADE", path)
            os.unlink(path)
        except OSError as e:
            print("mknod refused", e.errno)
try:
    socket.sethostname("pwned")
    print("HOSTNAME CHANGED")
except OSError as e:
    print("sethostname refused", e.errno)
os.mkfifo(os.path.join({ws}, "fifo"))
print("fifo ok")
"#,
        ws = py(ws.path())
    );
    let out = text(&run(&c, "python", &code).await);
    let zero = "'0000000000000000'";
    assert!(
        out.contains(&format!("caps [{zero}, {zero}, {zero}, {zero}, {zero}]")),
        "{out}"
    );
    assert!(
        out.contains("uid 0 nnp 1") || !out.contains("uid 0"),
        "{out}"
    );
    assert_eq!(out.matches("mknod refused 1").count(), 6, "{out}");
    assert!(out.contains("sethostname refused 1"), "{out}");
    assert!(!out.contains("MADE") && !out.contains("CHANGED"), "{out}");
    assert!(out.contains("fifo ok"), "{out}");
    // The shell's mknod(1) too (a second layer: seccomp refuses even with a capability).
    let out = text(
        &run(
            &c,
            "shell",
            "mknod ./null2 c 1 3 2>&1 || echo refused; ls ./null2 2>/dev/null || echo absent",
        )
        .await,
    );
    assert!(out.contains("refused") && out.contains("absent"), "{out}");
    // readonly mode: its only writable place, the session's scratch directory, takes no
    // device nodes either.
    let readonly = LocalComputer::new()
        .with_sandbox(SandboxPolicy::new(SandboxMode::ReadOnly).with_workspace(ws.path()));
    let out = text(
        &run(
            &readonly,
            "shell",
            "d=\"$__OI_DIR\"; touch \"$d/ok\" && echo scratch-writable; mknod \"$d/kmsg\" c 1 11 2>/dev/null || echo char-refused; mknod \"$d/loop\" b 7 0 2>/dev/null || echo block-refused",
        )
        .await,
    );
    assert_eq!(
        out, "scratch-writable\nchar-refused\nblock-refused\n",
        "{out}"
    );
}

/// A pseudo-terminal pair: (master, slave path).
fn open_pty() -> Option<(std::fs::File, String)> {
    // SAFETY: posix_openpt returns a new descriptor or -1.
    let master = unsafe { libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY) };
    if master < 0 {
        return None;
    }
    // SAFETY: `master` is the descriptor just opened; ptsname's buffer is read at once.
    let path = unsafe {
        if libc::grantpt(master) != 0 || libc::unlockpt(master) != 0 {
            return None;
        }
        let name = libc::ptsname(master);
        if name.is_null() {
            return None;
        }
        std::ffi::CStr::from_ptr(name)
            .to_string_lossy()
            .into_owned()
    };
    // SAFETY: `master` is ours.
    Some((unsafe { std::fs::File::from_raw_fd(master) }, path))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn terminal_injection_is_refused_in_every_mode() {
    if !have("python3", "terminal_injection") {
        return;
    }
    let Some((_master, slave)) = open_pty() else {
        oi_testkit::skipped!("skipped terminal_injection_is_refused_in_every_mode: no pty");
        return;
    };
    let ws = workspace();
    let mut computers = vec![("off", LocalComputer::new())];
    if let Some(c) = sandboxed(ws.path()) {
        computers.push(("workspace", c));
    }
    let code = format!(
        r#"
import fcntl, os, pty, termios
def own_terminal():
    # The session can still use terminals of its own (opened after the attack: the numbers
    # of a private /dev/pts start at 0 too).
    master, child = pty.openpty()
    os.write(master, b"typed\n")
    print("own terminal works", os.read(child, 6), os.ttyname(child).startswith("/dev/pts/"))
try:
    fd = os.open({slave:?}, os.O_RDWR | os.O_NOCTTY)
except OSError as e:
    print("terminal unreachable", e.errno)
    own_terminal()
    raise SystemExit
own_terminal()
try:
    for ch in b"echo PWNED\n":
        fcntl.ioctl(fd, termios.TIOCSTI, bytes([ch]))
    print("INJECTED")
except OSError as e:
    print("TIOCSTI refused", e.errno)
try:
    fcntl.ioctl(fd, 0x541C, bytes([3]))
    print("TIOCLINUX passed")
except OSError as e:
    print("TIOCLINUX refused", e.errno)
print("controlling tty", os.path.exists("/proc/self/fd/0") and os.isatty(0))
"#
    );
    let private_terminals = probe().namespaces != NamespaceSupport::Unavailable;
    for (mode, c) in &computers {
        let out = text(&run(c, "python", &code).await);
        assert!(
            out.contains("own terminal works b'typed\\n' True"),
            "{mode}: {out}"
        );
        if *mode == "workspace" && private_terminals {
            // Its own /dev/pts: oi's terminals are not there to open.
            assert!(out.contains("terminal unreachable 2"), "{mode}: {out}");
            continue;
        }
        assert!(out.contains("TIOCSTI refused 1"), "{mode}: {out}");
        assert!(out.contains("TIOCLINUX refused 1"), "{mode}: {out}");
        assert!(out.contains("controlling tty False"), "{mode}: {out}");
    }
    // Nothing arrived in the terminal's input queue.
    let mut slave_file = std::fs::File::options()
        .read(true)
        .custom_flags_nonblocking()
        .open(&slave)
        .unwrap();
    let mut buf = [0u8; 64];
    let read = slave_file.read(&mut buf);
    assert!(
        matches!(&read, Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the terminal received {read:?}: {:?}",
        String::from_utf8_lossy(&buf)
    );
}

trait NonBlocking {
    fn custom_flags_nonblocking(&mut self) -> &mut Self;
}

impl NonBlocking for std::fs::OpenOptions {
    fn custom_flags_nonblocking(&mut self) -> &mut Self {
        use std::os::unix::fs::OpenOptionsExt;
        self.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pathname_unix_sockets_are_unreachable_without_network() {
    let support = probe();
    if !support.network() || !have("python3", "unix_sockets") {
        oi_testkit::skipped!(
            "skipped pathname_unix_sockets_are_unreachable_without_network ({support})"
        );
        return;
    }
    let dir = workspace();
    let path = dir.path().join("listener.sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    listener.set_nonblocking(true).unwrap();
    let code = format!(
        r#"
import socket
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect({path})
    print("CONNECTED")
except OSError as e:
    print("refused", e.errno)
a, b = socket.socketpair()
a.sendall(b"x")
print("socketpair", b.recv(1))
"#,
        path = py(&path)
    );
    let ws = workspace();
    let mut cases = vec![(
        "off, no network",
        LocalComputer::new().with_sandbox(SandboxPolicy::new(SandboxMode::Off).with_network(false)),
    )];
    if support.filesystem() {
        cases.push((
            "workspace, no network",
            LocalComputer::new().with_sandbox(
                SandboxPolicy::new(SandboxMode::Workspace)
                    .with_network(false)
                    .with_workspace(ws.path()),
            ),
        ));
    }
    for (name, c) in &cases {
        let out = text(&run(c, "python", &code).await);
        assert!(out.contains("refused 13"), "{name}: {out}");
        assert!(out.contains("socketpair b'x'"), "{name}: {out}");
    }
    assert!(listener.accept().is_err(), "no connection arrived");
    // With the network allowed the same code connects (the refusal above is the sandbox's).
    let open = LocalComputer::new();
    let out = text(&run(&open, "python", &code).await);
    assert!(out.contains("CONNECTED"), "{out}");
}

/// Code that tries to rewrite a profile in `config`, directly and by swapping its parent.
fn rewrite_code(config: &Path) -> String {
    format!(
        r#"
import os, shutil
config = {config}
profile = os.path.join(config, "profiles", "default.yaml")
for attempt in ["read", "write", "swap", "remove"]:
    try:
        if attempt == "read":
            print(open(profile).read())
        elif attempt == "write":
            open(profile, "w").write("sandbox: off\n")
        elif attempt == "swap":
            parent = os.path.dirname(config)
            os.rename(parent, parent + ".old")
            os.makedirs(os.path.join(config, "profiles"))
            open(profile, "w").write("sandbox: off\n")
        else:
            shutil.rmtree(config)
        print("DONE", attempt)
    except OSError as e:
        print("refused", attempt, e.errno)
open(os.path.join("sub", "elsewhere.txt"), "w").write("ok")
print("workspace writable")
"#,
        config = py(config)
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oi_directories_inside_the_workspace_stay_read_only() {
    let support = probe();
    if !support.filesystem() || !have("python3", "oi_directories") {
        oi_testkit::skipped!(
            "skipped oi_directories_inside_the_workspace_stay_read_only ({support})"
        );
        return;
    }
    let mut variants = vec![(
        "Landlock only",
        SandboxSupport {
            namespaces: NamespaceSupport::Unavailable,
            ..support
        },
    )];
    if support.namespaces != NamespaceSupport::Unavailable {
        variants.push(("mount namespace", support));
    }
    for (name, support) in variants {
        let ws = workspace();
        let config = ws.path().join("home/.config/open-interpreter");
        std::fs::create_dir_all(config.join("profiles")).unwrap();
        std::fs::create_dir_all(ws.path().join("sub")).unwrap();
        std::fs::write(config.join("profiles/default.yaml"), "sandbox: workspace\n").unwrap();
        let c = LocalComputer::new()
            .with_protected_dir(&config)
            .with_sandbox_support(
                SandboxPolicy::new(SandboxMode::Workspace).with_workspace(ws.path()),
                support,
            );
        let out = text(&run(&c, "python", &rewrite_code(&config)).await);
        assert!(!out.contains("DONE"), "{name}: {out}");
        // Neither readable (hidden, or left out of Landlock's reads) nor writable.
        assert_eq!(out.matches("refused").count(), 4, "{name}: {out}");
        assert_eq!(
            std::fs::read_to_string(config.join("profiles/default.yaml")).unwrap(),
            "sandbox: workspace\n",
            "{name}"
        );
        assert!(ws.path().join("home/.config").is_dir(), "{name}");
        assert!(!ws.path().join("home/.config.old").exists(), "{name}");
        assert!(out.contains("workspace writable"), "{name}: {out}");
    }
}
