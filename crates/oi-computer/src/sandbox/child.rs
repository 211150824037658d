//! Starting a session's process without a copy of oi staying behind: a raw `clone` with fork
//! semantics (on Linux with new PID and mount namespaces when the plan asks, so the child *is*
//! PID 1 of its namespace and oi's direct child), the child's steps up to `execve`, and the
//! thread that started it waiting for it.
//!
//! The child runs only async-signal-safe syscalls on memory built before the clone, like the
//! standard library's own `fork`/`exec`. A failed step is reported through a close-on-exec
//! pipe (end of file means the exec happened). The thread that clones is the one that waits:
//! `PR_SET_PDEATHSIG` fires when the thread that created the child ends, and this thread ends
//! only once the child is gone, so the signal no longer depends on which thread ran a turn.

use std::ffi::CString;
use std::io::Read;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::process::ExitStatus;

use tokio::sync::watch;

use crate::base::errno::errno;
use crate::sandbox::child_step::Step;
use crate::sandbox::clone::{clone_process, reap};
use crate::sandbox::confinement::Confinement;

/// Stack of the thread that starts and waits for one child.
const STARTER_STACK: usize = 256 * 1024;

/// A report record kind: the child gave up.
const FATAL: u8 = 1;
/// A report record kind: a step failed but the child went on.
const WARNING: u8 = 2;

/// Everything the child needs, built before the clone.
#[derive(Debug)]
pub(crate) struct Plan {
    /// The program's path (found on `PATH` by the parent).
    pub program: CString,
    /// `argv`, the program's name first.
    pub argv: Vec<CString>,
    /// The environment, as `NAME=value`.
    pub envp: Vec<CString>,
    /// The read end of the session's stdin pipe.
    pub stdin: OwnedFd,
    /// The write end of the session's output pipe (stdout and stderr).
    pub output: OwnedFd,
    /// The session cgroup's `cgroup.procs`, to join before anything else.
    pub cgroup_procs: Option<OwnedFd>,
    /// Namespaces, limits, capabilities, Landlock and seccomp.
    pub confinement: Confinement,
}

/// A started child.
#[derive(Debug)]
pub(crate) struct Started {
    /// Its pid (and process group id, and session id), as oi sees it.
    pub pid: u32,
    /// A pidfd for it, where the kernel has them (signals never hit a recycled pid).
    pub pidfd: Option<OwnedFd>,
    /// Whether it joined its cgroup.
    pub joined_cgroup: bool,
    /// Its exit status, once it has exited and been reaped.
    pub exit: ExitWatch,
}

/// The exit status of a child, published by the thread that waits for it.
#[derive(Debug, Clone)]
pub(crate) struct ExitWatch(watch::Receiver<Option<Option<ExitStatus>>>);

impl ExitWatch {
    /// Waits until the child has exited; `None` when its status could not be read.
    pub(crate) async fn wait(&mut self) -> Option<ExitStatus> {
        loop {
            if let Some(status) = *self.0.borrow_and_update() {
                return status;
            }
            if self.0.changed().await.is_err() {
                return None;
            }
        }
    }
}

/// Starts `plan` from a new thread that then waits for the child, publishes its exit status
/// and calls `after_exit`. Returns once the child has exec'd (or failed to).
pub(crate) fn start(plan: Plan, after_exit: Box<dyn FnOnce() + Send>) -> std::io::Result<Started> {
    let (started_tx, started_rx) = std::sync::mpsc::sync_channel(1);
    let (exit_tx, exit_rx) = watch::channel(None);
    std::thread::Builder::new()
        .name("oi-session-child".to_owned())
        .stack_size(STARTER_STACK)
        .spawn(move || {
            block_signals();
            let cloned = clone_and_exec(plan);
            let pid = match cloned {
                Ok((pid, pidfd, joined_cgroup)) => {
                    let _ = started_tx.send(Ok((pid, pidfd, joined_cgroup)));
                    pid
                }
                Err(e) => {
                    let _ = started_tx.send(Err(e));
                    return;
                }
            };
            let status = reap(pid);
            let _ = exit_tx.send(Some(status));
            after_exit();
        })?;
    let (pid, pidfd, joined_cgroup) = started_rx
        .recv()
        .map_err(|_| std::io::Error::other("the thread starting the session ended early"))??;
    Ok(Started {
        pid: u32::try_from(pid).unwrap_or(0),
        pidfd,
        joined_cgroup,
        exit: ExitWatch(exit_rx),
    })
}

/// Clones, runs the child's steps in the child, and reads its report: the pid, a pidfd, and
/// whether the cgroup was joined.
fn clone_and_exec(plan: Plan) -> std::io::Result<(libc::pid_t, Option<OwnedFd>, bool)> {
    let argv = pointers(&plan.argv);
    let envp = pointers(&plan.envp);
    let (mut report_read, report_write) = crate::base::pipe::pipe()?;
    // SAFETY: getpid cannot fail and touches no memory.
    let parent = unsafe { libc::getpid() };
    let flags = plan.confinement.clone_flags();
    let own_pid_namespace = plan.confinement.own_pid_namespace();
    let (pid, pidfd) = clone_process(flags, true)?;
    if pid == 0 {
        run_child(
            &plan,
            &argv,
            &envp,
            report_write.as_raw_fd(),
            parent,
            own_pid_namespace,
        );
    }
    // Our copies of the child's ends: the output pipe must reach EOF once the session is gone.
    let joining = plan.cgroup_procs.is_some();
    drop(plan);
    drop(report_write);
    let mut report = Vec::new();
    let _ = report_read.read_to_end(&mut report);
    let mut joined_cgroup = joining;
    for record in report.chunks_exact(8) {
        let step = Step::from_code(record[1]);
        let code = i32::from_le_bytes([record[4], record[5], record[6], record[7]]);
        if record[0] == WARNING {
            joined_cgroup &= step != Step::JoinCgroup;
            continue;
        }
        reap(pid);
        let cause = std::io::Error::from_raw_os_error(code);
        return Err(std::io::Error::new(
            cause.kind(),
            format!("{}: {cause}", step.describe()),
        ));
    }
    Ok((pid, pidfd, joined_cgroup))
}

/// The NULL-terminated pointer array of `strings` (which outlive it).
fn pointers(strings: &[CString]) -> Vec<*const libc::c_char> {
    strings
        .iter()
        .map(|s| s.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect()
}

/// Writes one report record to `fd`.
fn report(fd: RawFd, kind: u8, step: Step, code: i32) {
    let code = code.to_le_bytes();
    let record = [kind, step.code(), 0, 0, code[0], code[1], code[2], code[3]];
    // SAFETY: `record` is valid for its length; a pipe write this small is atomic.
    unsafe { libc::write(fd, record.as_ptr().cast(), record.len()) };
}

/// The child: its steps, then `execve`; on failure, a report and `_exit(127)`.
fn run_child(
    plan: &Plan,
    argv: &[*const libc::c_char],
    envp: &[*const libc::c_char],
    report_fd: RawFd,
    parent: libc::pid_t,
    own_pid_namespace: bool,
) -> ! {
    let (step, code) = child_steps(plan, argv, envp, report_fd, parent, own_pid_namespace);
    report(report_fd, FATAL, step, code);
    // SAFETY: _exit ends the child at once, running nothing of the parent's state.
    unsafe { libc::_exit(127) }
}

/// The child's steps in order; returns only when one fails (or exec does).
fn child_steps(
    plan: &Plan,
    argv: &[*const libc::c_char],
    envp: &[*const libc::c_char],
    report_fd: RawFd,
    parent: libc::pid_t,
    own_pid_namespace: bool,
) -> (Step, i32) {
    if let Some(procs) = &plan.cgroup_procs {
        // SAFETY: writes two valid bytes to an open descriptor.
        if unsafe { libc::write(procs.as_raw_fd(), b"0".as_ptr().cast(), 1) } != 1 {
            report(report_fd, WARNING, Step::JoinCgroup, errno());
        }
    }
    // SAFETY: setsid takes no arguments; we are not a group leader, so it succeeds.
    if unsafe { libc::setsid() } < 0 {
        return (Step::NewSession, errno());
    }
    if let Err(code) = set_death_signal(parent, own_pid_namespace) {
        return (Step::DeathSignal, code);
    }
    reset_signals();
    for (from, to) in [
        (plan.stdin.as_raw_fd(), 0),
        (plan.output.as_raw_fd(), 1),
        (plan.output.as_raw_fd(), 2),
    ] {
        // SAFETY: dup2 on open descriptors (the pipes are above 2, see process::pipe).
        if unsafe { libc::dup2(from, to) } < 0 {
            return (Step::Stdio, errno());
        }
    }
    if let Err(failed) = plan.confinement.apply_in_child() {
        return failed;
    }
    close_other_descriptors_at_exec();
    // SAFETY: `program`, `argv` and `envp` are NUL-terminated strings and NULL-terminated
    // pointer arrays built before the clone, all alive in our copy of the memory.
    unsafe { libc::execve(plan.program.as_ptr(), argv.as_ptr(), envp.as_ptr()) };
    (Step::Exec, errno())
}

/// SIGKILL when the thread that cloned us ends (it ends only after we are gone, or when oi
/// dies). Outside a PID namespace, a parent that already died is caught by `getppid`.
#[cfg(target_os = "linux")]
fn set_death_signal(parent: libc::pid_t, own_pid_namespace: bool) -> Result<(), i32> {
    // SAFETY: prctl with integer arguments only.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) } != 0 {
        return Err(errno());
    }
    // SAFETY: getppid cannot fail.
    if !own_pid_namespace && unsafe { libc::getppid() } != parent {
        return Err(libc::ESRCH);
    }
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn set_death_signal(_parent: libc::pid_t, _own_pid_namespace: bool) -> Result<(), i32> {
    Ok(())
}

/// Blocks every signal on the calling thread (the one that clones and then only waits), so
/// that the child starts with all of them blocked and none of oi's handlers can run in it
/// before [`reset_signals`].
fn block_signals() {
    // SAFETY: an all-zero sigset_t is valid storage for sigfillset to initialise; the call
    // only changes the calling thread's mask.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, std::ptr::null_mut());
    }
}

/// In the child, with every signal blocked: every signal oi handles goes back to its default
/// action (as `posix_spawn` does; a handler of oi's must not run in the child), SIGPIPE too
/// (oi ignores it; `yes | head` in the session needs it), and SIGINT and SIGQUIT even where
/// oi inherited them ignored (a script's background job, `nohup … &`, starts so): Stop
/// interrupts the session with SIGINT, and bash cannot undo a signal ignored at its start.
/// Then every signal is unblocked.
fn reset_signals() {
    // SAFETY: all-zero sigaction and sigset_t values are valid storage for the kernel and
    // sigemptyset to fill; the calls only touch these locals and the calling thread's
    // dispositions and mask.
    unsafe {
        for signal in 1..65 {
            if signal == libc::SIGKILL || signal == libc::SIGSTOP {
                continue;
            }
            let mut current: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &mut current) != 0 {
                continue;
            }
            let handled =
                current.sa_sigaction != libc::SIG_DFL && current.sa_sigaction != libc::SIG_IGN;
            let must_reach_the_session =
                signal == libc::SIGPIPE || signal == libc::SIGINT || signal == libc::SIGQUIT;
            if handled || must_reach_the_session {
                libc::signal(signal, libc::SIG_DFL);
            }
        }
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
    }
}

/// Marks every descriptor above stderr close-on-exec, so the session inherits nothing of oi
/// (a listening socket, a log file) even where oi forgot the flag (Linux 5.11+; best effort).
#[cfg(target_os = "linux")]
fn close_other_descriptors_at_exec() {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    // SAFETY: close_range with integer arguments only; it changes descriptor flags.
    unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3 as libc::c_uint,
            libc::c_uint::MAX,
            CLOSE_RANGE_CLOEXEC,
        )
    };
}

#[cfg(not(target_os = "linux"))]
fn close_other_descriptors_at_exec() {}
