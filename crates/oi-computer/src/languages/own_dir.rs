//! Where oi keeps files of its own that it, or a helper it starts outside the sandbox (the
//! headless browser), writes by name: beneath oi's config directory, which sandboxed code may
//! never write (`confine.rs` keeps it read-only in every mode), never in a temp directory that
//! sandboxed code may write and so fill with links.

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::PathBuf;

/// A fresh private directory (mode 0700, removed on drop) beneath [`private_dir`].
pub(crate) fn temp_dir(prefix: &str) -> std::io::Result<tempfile::TempDir> {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(private_dir()?)
}

/// oi's directory for its own temporary files (`<config dir>/tmp`, mode 0700, made when
/// missing), which sandboxed code cannot write; an error when there is no config directory or
/// the path is not a real directory.
pub fn private_dir() -> std::io::Result<PathBuf> {
    let base = base()?;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&base)?;
    // A link there would lead oi elsewhere: only a real directory will do.
    let meta = std::fs::symlink_metadata(&base)?;
    if !meta.is_dir() {
        return Err(std::io::Error::other(format!(
            "{} is not a directory",
            base.display()
        )));
    }
    std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o700))?;
    Ok(base)
}

/// `<config dir>/tmp`.
fn base() -> std::io::Result<PathBuf> {
    oi_core::settings::config_dir()
        .map(|dir| dir.join("tmp"))
        .ok_or_else(|| std::io::Error::other("oi has no config directory for its own files"))
}
