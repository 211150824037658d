//! The steps a session's child takes between clone and exec, named so that a failed one can
//! be reported to the parent (through the report pipe, as a number) and described in the
//! error.

/// A step of the child between clone and exec, for error reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Joining the session's cgroup (not fatal: the session runs without it).
    JoinCgroup,
    /// `setsid`: a new session without a controlling terminal.
    NewSession,
    /// `PR_SET_PDEATHSIG`.
    DeathSignal,
    /// Pointing stdin, stdout and stderr at the session's pipes.
    Stdio,
    /// Writing the user namespace's maps.
    UserMaps,
    /// Making mount propagation private.
    Propagation,
    /// Mounting the session's own `/proc`.
    Proc,
    /// Bind-mounting protected directories.
    Bind,
    /// Hiding oi's own directories.
    Hide,
    /// Making every mount read-only but the writable roots.
    WriteWall,
    /// A directory the sandbox is built on was swapped since the parent opened it.
    Swapped,
    /// Changing to the working directory.
    WorkDir,
    /// Setting resource limits.
    Rlimits,
    /// Joining a new anonymous session keyring.
    Keyring,
    /// Dropping capabilities.
    Capabilities,
    /// Setting `no_new_privs`.
    NoNewPrivs,
    /// Enforcing the Landlock ruleset.
    Landlock,
    /// Installing a seccomp filter.
    Seccomp,
    /// `execve`.
    Exec,
}

const STEPS: [Step; 19] = [
    Step::JoinCgroup,
    Step::NewSession,
    Step::DeathSignal,
    Step::Stdio,
    Step::UserMaps,
    Step::Propagation,
    Step::Proc,
    Step::Bind,
    Step::Hide,
    Step::WriteWall,
    Step::Swapped,
    Step::WorkDir,
    Step::Rlimits,
    Step::Keyring,
    Step::Capabilities,
    Step::NoNewPrivs,
    Step::Landlock,
    Step::Seccomp,
    Step::Exec,
];

impl Step {
    /// The step's number in a report record.
    pub(crate) fn code(self) -> u8 {
        STEPS
            .iter()
            .position(|s| *s == self)
            .and_then(|i| u8::try_from(i).ok())
            .unwrap_or(u8::MAX)
    }

    /// The step a report record names (`Exec` for an unknown number).
    pub(crate) fn from_code(code: u8) -> Step {
        STEPS.get(usize::from(code)).copied().unwrap_or(Step::Exec)
    }

    /// What failed, for the error message.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Step::JoinCgroup => "could not join the session's cgroup",
            Step::NewSession => "could not start a new terminal session",
            Step::DeathSignal => "could not tie the session to oi's life",
            Step::Stdio => "could not connect the session's pipes",
            Step::UserMaps => "could not map the user into the session's user namespace",
            Step::Propagation => "could not make the session's mounts private",
            Step::Proc => "could not mount the session's own /proc",
            Step::Bind => "could not bind-mount oi's directories read-only for the session",
            Step::Hide => "could not hide oi's own directories from the session",
            Step::WriteWall => {
                "could not make the file system read-only outside the session's writable directories"
            }
            Step::Swapped => {
                "a directory the sandbox is built on was replaced (by a link?) while the session started; nothing was run"
            }
            Step::WorkDir => "could not enter the working directory",
            Step::Rlimits => "could not set the resource limits",
            Step::Keyring => "could not give the session a keyring of its own",
            Step::Capabilities => "could not drop capabilities",
            Step::NoNewPrivs => "could not set no_new_privs",
            Step::Landlock => "could not enforce the Landlock sandbox",
            Step::Seccomp => "could not install the seccomp filter",
            Step::Exec => "could not run the program",
        }
    }
}
