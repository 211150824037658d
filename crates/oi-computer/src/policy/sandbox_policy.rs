//! The sandbox policy the user chooses (oi-core's settings type), and the warning about a
//! workspace that covers too much.
//!
//! The policy is enforced in each session's child process before it execs its interpreter
//! (see `confine.rs`), so it covers every language session and everything they spawn.

pub use oi_core::settings::computer::{SandboxMode, SandboxPolicy, UnknownSandboxMode};

/// A warning when `policy`'s workspace mode covers the home directory or `/` (code may then
/// write nearly everywhere the user can), or `None`.
pub fn broad_workspace_warning(policy: &SandboxPolicy) -> Option<String> {
    if policy.mode != SandboxMode::Workspace {
        return None;
    }
    let workspace = crate::policy::protected::canonical(&policy.workspace);
    let home = std::env::var_os("HOME").map(|h| crate::policy::protected::canonical(h.as_ref()));
    let what = if workspace == std::path::Path::new("/") {
        "the whole file system (/)".to_owned()
    } else if home.as_ref() == Some(&workspace) {
        format!("your home directory ({})", workspace.display())
    } else {
        return None;
    };
    Some(format!(
        "warning: the sandbox's workspace is {what}: code may write anywhere in it except oi's own configuration and conversations. Start oi in a project directory to confine the code to it."
    ))
}

/// The note given at start when `workspace` mode lets code write `.git/config` and
/// `.git/hooks` (the user opted in), or `None`.
pub fn git_writable_note(policy: &SandboxPolicy) -> Option<String> {
    (policy.mode == SandboxMode::Workspace && policy.git_writable).then(|| {
        "code may write the workspace's .git/config and .git/hooks (sandbox_git_writable): a hook or core.fsmonitor it sets there runs outside the sandbox at your next git command.".to_owned()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_home_or_root_workspace_is_warned_about() {
        let root = SandboxPolicy::new(SandboxMode::Workspace).with_workspace("/");
        assert!(broad_workspace_warning(&root).is_some_and(|w| w.contains("(/)")));
        let tmp = SandboxPolicy::new(SandboxMode::Workspace).with_workspace("/tmp");
        assert_eq!(broad_workspace_warning(&tmp), None);
        let readonly = SandboxPolicy::new(SandboxMode::ReadOnly).with_workspace("/");
        assert_eq!(broad_workspace_warning(&readonly), None);
    }
}
