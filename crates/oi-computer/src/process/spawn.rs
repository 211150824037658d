//! Spawning a session's process in the parent: its program found on `PATH`, its pipes, the
//! environment it inherits, the confinement prepared for it, its start through `child.rs`, and
//! the unit its processes will live in.

use std::ffi::{CString, OsString};
use std::fs::File;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::net::unix::pipe;

use crate::base::pipe::pipe;
use crate::base::programs::find_program;
use crate::process::session_unit::Unit;
use crate::sandbox::cgroup::Leaf;
use crate::sandbox::child::{ExitWatch, Plan};
use crate::sandbox::confine::Confine;

/// A spawned session: its exit status, its stdin, the read end of its merged stdout+stderr,
/// and the unit its processes live in.
pub(crate) struct Spawned {
    /// The interpreter's exit status, once it exits.
    pub exit: ExitWatch,
    /// Where commands go.
    pub stdin: pipe::Sender,
    /// stdout and stderr of the child, in one ordered pipe.
    pub output: File,
    /// The session's processes (killed when the last owner drops it).
    pub unit: Arc<Unit>,
}

/// Spawns `program args` as a new session (no controlling terminal) with piped stdin and
/// stdout+stderr merged into one pipe, confined by `confine` (sandbox, resource limits,
/// namespaces, cgroup, environment; `scratch` is the session's private work directory,
/// writable in every sandbox mode). `envs` are set on top of what the child inherits. The
/// child also gets SIGKILL when oi dies. Must be called within a tokio runtime.
pub(crate) fn spawn(
    program: &str,
    args: &[&str],
    envs: &[(&str, &str)],
    confine: &Confine,
    scratch: Option<&Path>,
) -> std::io::Result<Spawned> {
    require_runtime()?;
    let path = locate(program)?;
    let tag = crate::base::nonce::nonce();
    let prepared = confine.prepare(scratch, tag.get(..12).unwrap_or(&tag))?;
    let (stdin_read, stdin_write) = pipe()?;
    let (output, output_write) = pipe()?;
    let environment = child_environment(envs, &prepared.markers, confine);
    let cgroup_procs = prepared
        .leaf
        .as_ref()
        .map(Leaf::procs_for_child)
        .transpose()?;
    let plan = Plan {
        program: c_string(path.as_os_str().as_bytes())?,
        argv: std::iter::once(program)
            .chain(args.iter().copied())
            .map(|a| c_string(a.as_bytes()))
            .collect::<std::io::Result<_>>()?,
        envp: environment.iter().filter_map(env_entry).collect(),
        stdin: OwnedFd::from(stdin_read),
        output: output_write,
        cgroup_procs,
        confinement: prepared.confinement,
    };
    let stdin = pipe::Sender::from_owned_fd(stdin_write)?;
    let (exit, unit) = start_in_unit(plan, prepared.leaf)?;
    Ok(Spawned {
        exit,
        stdin,
        output,
        unit,
    })
}

/// Sessions need a tokio runtime (their stdin is an async pipe).
fn require_runtime() -> std::io::Result<()> {
    if tokio::runtime::Handle::try_current().is_err() {
        return Err(std::io::Error::other(
            "sessions are started from within a tokio runtime",
        ));
    }
    Ok(())
}

/// Where `program` is, or a "not found" error that names it.
fn locate(program: &str) -> std::io::Result<PathBuf> {
    find_program(program).ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("`{program}` was not found on PATH"),
        )
    })
}

/// The child's environment: what it may inherit of oi's, with `envs` and the sandbox's
/// `markers` set on top.
fn child_environment(
    envs: &[(&str, &str)],
    markers: &[(String, String)],
    confine: &Confine,
) -> Vec<(OsString, OsString)> {
    let mut set: Vec<(String, String)> = envs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    set.extend(markers.iter().cloned());
    confine.inherit().environment(std::env::vars_os(), &set)
}

/// Starts the child of `plan` and makes the unit its processes live in (with the cgroup
/// `leaf` when the child joined it). The unit is killed once the interpreter exits: the
/// session is over, so is everything it started.
fn start_in_unit(plan: Plan, leaf: Option<Leaf>) -> std::io::Result<(ExitWatch, Arc<Unit>)> {
    let own_pid_namespace = plan.confinement.own_pid_namespace();
    let (unit_tx, unit_rx) = std::sync::mpsc::channel::<Arc<Unit>>();
    let started = crate::sandbox::child::start(
        plan,
        Box::new(move || {
            // The interpreter is gone: the session is over, so is everything it started.
            if let Ok(unit) = unit_rx.recv() {
                unit.kill();
            }
        }),
    )?;
    let leaf = leaf.filter(|_| started.joined_cgroup);
    let unit = Arc::new(Unit::new(
        started.pid,
        started.pidfd,
        own_pid_namespace,
        leaf,
    ));
    let _ = unit_tx.send(Arc::clone(&unit));
    Ok((started.exit, unit))
}

fn c_string(bytes: &[u8]) -> std::io::Result<CString> {
    CString::new(bytes).map_err(|_| std::io::Error::other("an argument contains a NUL byte"))
}

/// `NAME=value` for the child's environment (`None` for a pair with a NUL byte).
fn env_entry((name, value): &(OsString, OsString)) -> Option<CString> {
    let mut entry = name.as_bytes().to_vec();
    entry.push(b'=');
    entry.extend_from_slice(value.as_bytes());
    CString::new(entry).ok()
}
