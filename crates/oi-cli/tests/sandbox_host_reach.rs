//! What sandboxed code could reach of the host besides files, through the real `oi` binary (as
//! root on CI): a tmux server and other Unix sockets (pathname and abstract) of host daemons,
//! with the network allowed or denied; System V shared memory and the uid's keyrings (issue
//! 21, items 3 and 10; `.git` is in `sandbox_git.rs`).

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use oi_testkit::{Reply, Script, ScriptedServer};

mod reach;

use reach::{SANDBOXES, can_run, cannot_run, printed, py, setup, unique};

// ---------------------------------------------------------------------------------------------
// Unix sockets of host daemons

/// A tmux server on a socket of its own, killed when dropped.
struct Tmux {
    socket: PathBuf,
    pid: String,
}

impl Tmux {
    fn start(dir: &Path) -> Tmux {
        let socket = dir.join("tmux.sock");
        let status = Command::new("tmux")
            .arg("-S")
            .arg(&socket)
            .args(["new-session", "-d", "-s", "oi-test", "sleep 600"])
            .env_remove("TMUX")
            .env("TERM", "xterm")
            .status()
            .unwrap();
        assert!(status.success(), "tmux did not start");
        let out = Command::new("tmux")
            .arg("-S")
            .arg(&socket)
            .args(["display-message", "-p", "#{pid}"])
            .output()
            .unwrap();
        let pid = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        Tmux { socket, pid }
    }

    /// `$TMUX` as tmux sets it for the panes it runs (oi started in a tmux window).
    fn env(&self) -> String {
        format!("{},{},0", self.socket.display(), self.pid)
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-S")
            .arg(&self.socket)
            .arg("kill-server")
            .status();
    }
}

/// Python that tries every way out through a Unix socket: tmux through the inherited `$TMUX`
/// and through the socket's path, a pathname listener, an abstract one, a datagram socket
/// reached from a datagram `socketpair`; and shows the variables it inherited. A stream
/// `socketpair` must keep working.
fn socket_code(
    tmux: &Tmux,
    marker: &Path,
    listener: &Path,
    abstract_name: &str,
    datagram: &Path,
) -> String {
    format!(
        r#"
import os, socket, subprocess
print("CODE RAN")
for name in ["TMUX", "TMUX_PANE", "STY", "SSH_AUTH_SOCK", "DBUS_SESSION_BUS_ADDRESS", "DOCKER_HOST", "XDG_RUNTIME_DIR", "WAYLAND_DISPLAY", "DISPLAY", "GPG_AGENT_INFO"]:
    print("var", name, "present" if name in os.environ else "absent")
for argv in [["tmux", "new-window", "touch {marker}"], ["tmux", "-S", {tmux_socket}, "new-window", "touch {marker}"]]:
    r = subprocess.run(argv, capture_output=True, text=True)
    print("tmux exit", r.returncode, r.stderr.strip()[:80])
for address in [{listener}, "\0" + {abstract_name}]:
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(address)
        s.sendall(b"reached")
        print("CONNECTED", repr(address))
    except OSError as e:
        print("refused", e.errno)
try:
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    a.sendto(b"reached", {datagram})
    print("CONNECTED datagram")
except OSError as e:
    print("refused", e.errno)
a, b = socket.socketpair()
a.sendall(b"x")
print("socketpair", b.recv(1) == b"x")
"#,
        datagram = py(&datagram.display().to_string()),
        marker = marker.display(),
        tmux_socket = py(&tmux.socket.display().to_string()),
        listener = py(&listener.display().to_string()),
        abstract_name = py(abstract_name),
    )
}

#[test]
fn sandboxed_code_reaches_no_tmux_and_no_unix_socket_of_the_host() {
    if !can_run("host sockets", &["python3", "tmux"]) {
        return;
    }
    use std::os::linux::net::SocketAddrExt;
    let s = setup();
    // A directory standing for /run, outside the workspace.
    let run = tempfile::tempdir().unwrap();
    let tmux = Tmux::start(run.path());
    let listener_path = run.path().join("daemon.sock");
    let listener = std::os::unix::net::UnixListener::bind(&listener_path).unwrap();
    listener.set_nonblocking(true).unwrap();
    let abstract_name = unique("oi-test-abstract");
    let address = std::os::unix::net::SocketAddr::from_abstract_name(&abstract_name).unwrap();
    let abstract_listener = std::os::unix::net::UnixListener::bind_addr(&address).unwrap();
    abstract_listener.set_nonblocking(true).unwrap();
    let datagram_path = run.path().join("journal.sock");
    let datagram = std::os::unix::net::UnixDatagram::bind(&datagram_path).unwrap();
    datagram.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 64];
    let marker = run.path().join("ran-outside");
    let code = socket_code(
        &tmux,
        &marker,
        &listener_path,
        &abstract_name,
        &datagram_path,
    );
    let tmux_env = tmux.env();
    let env = [
        ("TMUX", tmux_env.as_str()),
        ("TMUX_PANE", "%0"),
        ("SSH_AUTH_SOCK", "/run/ssh-agent.sock"),
        ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/0/bus"),
        ("DOCKER_HOST", "unix:///run/docker.sock"),
        ("XDG_RUNTIME_DIR", "/run/user/0"),
        ("DISPLAY", ":0"),
    ];

    // Without a sandbox the attack works: the command runs in the host's tmux.
    let text = s.run_python(&code, &["--sandbox", "off"], &env);
    let waited = (0..100).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(50));
        marker.exists()
    });
    assert!(waited, "the unsandboxed control did not reach tmux: {text}");
    assert_eq!(text.matches("CONNECTED").count(), 3, "{text}");
    std::fs::remove_file(&marker).unwrap();
    while listener.accept().is_ok()
        || abstract_listener.accept().is_ok()
        || datagram.recv(&mut buf).is_ok()
    {}

    for flags in [
        ["--sandbox", "workspace"],
        ["--sandbox", "readonly"],
        ["--deny_network", "--sandbox=off"],
    ] {
        let mode = flags.join(" ");
        let text = s.run_python(&code, &flags, &env);
        std::thread::sleep(std::time::Duration::from_millis(500));
        assert!(
            !marker.exists(),
            "{mode}: tmux ran the command outside: {text}"
        );
        assert!(!text.contains("CONNECTED"), "{mode}: {text}");
        assert_eq!(text.matches("refused 13").count(), 3, "{mode}: {text}");
        assert!(!text.contains("tmux exit 0"), "{mode}: {text}");
        assert!(
            !text.contains("present"),
            "{mode}: a socket variable was inherited: {text}"
        );
        assert!(text.contains("socketpair True"), "{mode}: {text}");
        assert!(
            listener.accept().is_err(),
            "{mode}: the listener was reached"
        );
        assert!(
            abstract_listener.accept().is_err(),
            "{mode}: the abstract listener was reached"
        );
        assert!(
            datagram.recv(&mut buf).is_err(),
            "{mode}: the datagram socket was reached"
        );
    }
}

/// The sandbox refuses `socket(AF_UNIX)`: every installed language still starts and runs
/// under it (their runtimes use pipes and `socketpair`).
#[test]
fn every_installed_language_starts_under_the_socket_refusal() {
    if !can_run("languages under the sandbox", &["python3"]) {
        return;
    }
    let languages = [
        ("python", "python3", "print('LANG OK python')"),
        ("shell", "bash", "echo LANG OK shell"),
        ("javascript", "node", "console.log('LANG OK javascript')"),
        ("ruby", "ruby", "puts 'LANG OK ruby'"),
        ("r", "Rscript", "cat('LANG OK r\\n')"),
        (
            "java",
            "javac",
            "public class Main { public static void main(String[] a) { System.out.println(\"LANG OK java\"); } }",
        ),
    ];
    let installed: Vec<_> = languages
        .iter()
        .filter(|(_, program, _)| {
            std::env::var_os("PATH")
                .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(program).is_file()))
        })
        .collect();
    let s = setup();
    for mode in SANDBOXES {
        let mut replies = vec![Reply::tool_call("python", "print('CODE RAN')")];
        replies.extend(
            installed
                .iter()
                .map(|(language, _, code)| Reply::tool_call(language, code)),
        );
        replies.push(Reply::text("Done."));
        let server = s
            .runtime
            .block_on(ScriptedServer::start(Script::new(replies)))
            .unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_oi"))
            .args([
                "--api_base",
                &server.base_url(),
                "--api_key",
                "sk-test-0123456789",
            ])
            .args(["-y", "--plain", "--sandbox", mode, "go"])
            .current_dir(s.work.path())
            .env("HOME", s.home.path())
            .env("TERM", "dumb")
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let text = printed(&out);
        for (language, _, _) in &installed {
            assert!(
                text.contains(&format!("LANG OK {language}")),
                "{mode}: {language} did not run: {text}\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

// ---------------------------------------------------------------------------------------------
// System V IPC and keyrings

/// A key in a keyring of the test process, invalidated when dropped.
struct Key(i64);

impl Key {
    /// Adds a `user` key with `payload` to the test's session keyring, readable by every
    /// process of the uid (as a uid's keys often are); with `in_user_keyring`, moves it to the
    /// uid's keyring.
    fn add(description: &str, payload: &str, in_user_keyring: bool) -> Option<Key> {
        const SESSION: libc::c_long = -3;
        const USER: libc::c_long = -4;
        const KEYCTL_SETPERM: libc::c_long = 5;
        const KEYCTL_LINK: libc::c_long = 8;
        const KEYCTL_UNLINK: libc::c_long = 9;
        const POSSESSOR_AND_USER_ALL: libc::c_long = 0x3f3f_0000;
        let kind = c"user";
        let description = std::ffi::CString::new(description).unwrap();
        // SAFETY: valid NUL-terminated strings and a payload buffer of the length given.
        let serial = unsafe {
            libc::syscall(
                libc::SYS_add_key,
                kind.as_ptr(),
                description.as_ptr(),
                payload.as_ptr(),
                payload.len(),
                SESSION,
            )
        };
        if serial <= 0 {
            return None;
        }
        let keyctl = |op: libc::c_long, a: libc::c_long, b: libc::c_long| {
            // SAFETY: integer arguments only.
            let rc = unsafe { libc::syscall(libc::SYS_keyctl, op, a, b) };
            assert_eq!(rc, 0, "keyctl {op}: {}", std::io::Error::last_os_error());
        };
        keyctl(KEYCTL_SETPERM, serial, POSSESSOR_AND_USER_ALL);
        if in_user_keyring {
            keyctl(KEYCTL_LINK, serial, USER);
            keyctl(KEYCTL_UNLINK, serial, SESSION);
        }
        Some(Key(serial))
    }
}

impl Drop for Key {
    fn drop(&mut self) {
        const KEYCTL_INVALIDATE: libc::c_long = 21;
        // SAFETY: integer arguments only.
        unsafe { libc::syscall(libc::SYS_keyctl, KEYCTL_INVALIDATE, self.0) };
    }
}

/// A System V shared memory segment of the host, removed when dropped.
struct Segment(i32);

impl Drop for Segment {
    fn drop(&mut self) {
        // SAFETY: IPC_RMID with a null buffer.
        unsafe { libc::shmctl(self.0, libc::IPC_RMID, std::ptr::null_mut()) };
    }
}

#[test]
fn sandboxed_code_sees_no_host_shared_memory_and_no_keyring_of_the_host() {
    if !can_run("IPC and keyrings", &["python3"]) {
        return;
    }
    let s = setup();
    // SAFETY: plain integer arguments.
    let id = unsafe { libc::shmget(0x0171_2021, 4096, libc::IPC_CREAT | 0o600) };
    assert!(id >= 0, "shmget: {}", std::io::Error::last_os_error());
    let _segment = Segment(id);
    let payload = unique("host-secret");
    let (Some(session_key), Some(user_key)) = (
        Key::add(&unique("oi-session"), &payload, false),
        Key::add(&unique("oi-user"), &payload, true),
    ) else {
        cannot_run("IPC and keyrings", "this kernel has no keyrings");
        return;
    };
    // POSIX shared memory of the host: a file in /dev/shm.
    let host_shm = Path::new("/dev/shm").join(unique("oi-test-host"));
    std::fs::write(&host_shm, &payload).unwrap();
    let code_shm = Path::new("/dev/shm").join(unique("oi-test-code"));
    let code = format!(
        r#"
import ctypes, os
print("CODE RAN")
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
addr = libc.shmat({id}, None, 0)
print("shmat", "ATTACHED" if addr not in (None, ctypes.c_void_p(-1).value) else "refused %d" % ctypes.get_errno())
listed = open("/proc/sysvipc/shm").read().split("\n")[1:]
print("segment listed", any(line.split()[1:2] == ["{id}"] for line in listed if line.strip()))
for serial in [{session}, {user}]:
    buf = ctypes.create_string_buffer(256)
    n = libc.syscall({keyctl}, 11, ctypes.c_long(serial), buf, 256)
    print("key", serial, ("READ " + buf.raw[:n].decode()) if n > 0 else "refused %d" % ctypes.get_errno())
try:
    print("posix shm READ", open({host_shm}).read())
except OSError as e:
    print("posix shm unseen", e.errno)
try:
    open({code_shm}, "w").write("x")
    import multiprocessing
    lock = multiprocessing.Lock()
    with lock:
        print("own shm works")
except OSError as e:
    print("own shm refused", e.errno)
"#,
        host_shm = py(&host_shm.display().to_string()),
        code_shm = py(&code_shm.display().to_string()),
        session = session_key.0,
        user = user_key.0,
        keyctl = libc::SYS_keyctl,
    );

    let text = s.run_python(&code, &["--sandbox", "off"], &[]);
    let _ = std::fs::remove_file(&code_shm);
    assert!(text.contains("shmat ATTACHED"), "control: {text}");
    assert!(
        text.contains(&format!("posix shm READ {payload}")),
        "control: {text}"
    );
    assert_eq!(
        text.matches(&format!("READ {payload}")).count(),
        3,
        "control: {text}"
    );

    for mode in SANDBOXES {
        let text = s.run_python(&code, &["--sandbox", mode], &[]);
        assert!(text.contains("shmat refused"), "{mode}: {text}");
        assert!(text.contains("segment listed False"), "{mode}: {text}");
        assert!(
            !text.contains(&payload),
            "{mode}: a host key was read: {text}"
        );
        assert_eq!(text.matches("refused 1\n").count(), 2, "{mode}: {text}");
        assert!(text.contains("posix shm unseen 2"), "{mode}: {text}");
        assert!(
            !code_shm.exists(),
            "{mode}: the code wrote the host's /dev/shm"
        );
        if mode == "workspace" {
            assert!(text.contains("own shm works"), "{mode}: {text}");
        }
    }
    std::fs::remove_file(&host_shm).unwrap();
}
