//! The folder sessions are kept in, and how its files are opened: trusted only as far as its
//! owner (what is read back becomes a conversation the model is shown), and read without
//! following a link or waiting on a pipe.

use std::path::Path;

/// Whether `dir` is a folder this server may read sessions from and write them to: a real
/// folder (not a link), owned by this user, that no other user may write to. A folder of
/// ours that others may read is made `0700`.
pub fn trusted_folder(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let meta = std::fs::symlink_metadata(dir)
        .map_err(|e| format!("cannot read the sessions folder {}: {e}", dir.display()))?;
    if !meta.is_dir() {
        return Err(format!(
            "the sessions folder {} is not a folder (a link or a file): give --sessions_dir a folder of your own",
            dir.display()
        ));
    }
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() != me {
        return Err(format!(
            "the sessions folder {} belongs to user {}, not to this user ({me}): give --sessions_dir a folder of your own",
            dir.display(),
            meta.uid()
        ));
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o022 != 0 {
        return Err(format!(
            "other users may write to the sessions folder {} (mode {mode:o}): run `chmod 700 {}`",
            dir.display(),
            dir.display()
        ));
    }
    if mode & 0o077 != 0 {
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    }
    Ok(())
}

/// Opens `path` for reading if it is a regular file: opened without following a link and
/// without waiting on a pipe, then checked on the open file itself (no window between a
/// check of the name and the open).
pub fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    use rustix::fs::{Mode, OFlags};
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let file = std::fs::File::from(rustix::fs::open(path, flags, Mode::empty())?);
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    Ok(file)
}
