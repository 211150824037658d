//! Reading and writing files beneath the working directory without ever following a symbolic
//! link, so that neither a planted link (even a dangling one) nor code in a session swapping a
//! directory for a link between a check and its use can lead outside.
//!
//! The working directory is opened once; every path is resolved relative to that descriptor.
//! On Linux ≥ 5.6 one `openat2` call resolves the whole path with `RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS` (atomic in the kernel); where `openat2` is
//! missing (or filtered), the same is done one component at a time with `openat(O_NOFOLLOW)`,
//! each step relative to the directory opened by the previous one. Uploads are written to a
//! fresh temporary file in the target's directory and renamed over the target, so a hard link
//! or a FIFO planted at the target is replaced, never written through.

use std::ffi::OsStr;
use std::io::{Read as _, Write as _};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Component, Path};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

/// Why a file beneath the working directory could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The path is empty or names the working directory itself.
    #[error("a file path is required")]
    NoPath,
    /// The path is absolute or uses `..`.
    #[error("{0:?} leaves the working directory: use a relative path without '..'")]
    Escapes(String),
    /// The path is, or passes through, a symbolic link.
    #[error(
        "{0:?} is or passes through a symbolic link; links are not followed (they could lead outside the working directory): use the real path"
    )]
    Symlink(String),
    /// Nothing at that path (or a part of it is not a directory).
    #[error("{0:?} does not exist in the working directory")]
    NotFound(String),
    /// The path names a directory, a FIFO, a device or a socket.
    #[error("{0:?} is not a regular file")]
    NotAFile(String),
    /// The file is larger than the caller reads.
    #[error("{path:?} is {size} bytes; at most {limit} bytes are read")]
    TooLarge {
        /// The requested path.
        path: String,
        /// Its size.
        size: u64,
        /// The most the caller reads.
        limit: u64,
    },
    /// The working directory could not be opened at start.
    #[error("the working directory could not be opened: {0}")]
    NoRoot(String),
    /// Any other I/O failure.
    #[error("{path:?}: {source}")]
    Io {
        /// The requested path.
        path: String,
        /// The failure.
        source: std::io::Error,
    },
}

/// The working directory, opened once, and a counter for temporary file names.
#[derive(Debug)]
pub struct FileRoot {
    dir: Result<OwnedFd, String>,
    uploads: AtomicU64,
}

const RESOLVE: ResolveFlags = ResolveFlags::BENEATH
    .union(ResolveFlags::NO_SYMLINKS)
    .union(ResolveFlags::NO_MAGICLINKS);
const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// The normal components of `requested`, refused if it is absolute or uses `..`.
fn components(requested: &str) -> Result<Vec<&OsStr>, FileError> {
    let mut parts = Vec::new();
    for component in Path::new(requested).components() {
        match component {
            Component::Normal(part) => parts.push(part),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(FileError::Escapes(requested.to_owned()));
            }
        }
    }
    if parts.is_empty() {
        return Err(FileError::NoPath);
    }
    Ok(parts)
}

fn join(parts: &[&OsStr]) -> Vec<u8> {
    let mut path = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            path.push(b'/');
        }
        path.extend_from_slice(part.as_bytes());
    }
    path
}

/// Maps an errno from resolving `requested` to what the client is told.
fn resolve_error(errno: Errno, requested: &str) -> FileError {
    match errno {
        Errno::LOOP => FileError::Symlink(requested.to_owned()),
        Errno::XDEV => FileError::Escapes(requested.to_owned()),
        Errno::NOENT | Errno::NOTDIR => FileError::NotFound(requested.to_owned()),
        other => FileError::Io {
            path: requested.to_owned(),
            source: other.into(),
        },
    }
}

/// Whether `openat2` is unusable here (old kernel, or filtered by seccomp).
fn openat2_missing(errno: Errno) -> bool {
    matches!(errno, Errno::NOSYS | Errno::PERM)
}

/// Opens `parts` beneath `root` with `flags` in one `openat2`; `None` when `openat2` is
/// unusable.
fn open_atomically(
    root: BorrowedFd<'_>,
    parts: &[&OsStr],
    flags: OFlags,
) -> Option<Result<OwnedFd, Errno>> {
    let path = join(parts);
    for _ in 0..16 {
        match rustix::fs::openat2(root, path.as_slice(), flags, Mode::empty(), RESOLVE) {
            // A rename elsewhere on the filesystem raced the lookup: try again.
            Err(Errno::AGAIN) => continue,
            Err(errno) if openat2_missing(errno) => return None,
            result => return Some(result),
        }
    }
    Some(Err(Errno::AGAIN))
}

/// Whether `name` in `dir` is a symbolic link (`O_DIRECTORY | O_NOFOLLOW` reports one as "not a
/// directory").
fn is_symlink(dir: BorrowedFd<'_>, name: &OsStr) -> bool {
    rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|stat| FileType::from_raw_mode(stat.st_mode) == FileType::Symlink)
}

/// Opens `parts` beneath `root` one component at a time, never following a link; with
/// `create`, missing directories are made on the way (then the last part is a directory too).
fn open_by_walking(
    root: BorrowedFd<'_>,
    parts: &[&OsStr],
    last_flags: OFlags,
    create: bool,
) -> Result<OwnedFd, Errno> {
    let mut current: Option<OwnedFd> = None;
    for (i, part) in parts.iter().enumerate() {
        let dir = current.as_ref().map_or(root, AsFd::as_fd);
        let flags = if i + 1 == parts.len() {
            last_flags | OFlags::NOFOLLOW
        } else {
            DIR_FLAGS
        };
        let opened = match rustix::fs::openat(dir, *part, flags, Mode::empty()) {
            Err(Errno::NOENT) if create => {
                match rustix::fs::mkdirat(dir, *part, Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(errno) => return Err(errno),
                }
                rustix::fs::openat(dir, *part, flags, Mode::empty())?
            }
            Err(Errno::NOTDIR) if is_symlink(dir, part) => return Err(Errno::LOOP),
            result => result?,
        };
        current = Some(opened);
    }
    match current {
        Some(fd) => Ok(fd),
        None => rustix::fs::openat(root, ".", DIR_FLAGS, Mode::empty()),
    }
}

/// Opens `parts` beneath `root` (atomically where the kernel can).
fn open_beneath(root: BorrowedFd<'_>, parts: &[&OsStr], flags: OFlags) -> Result<OwnedFd, Errno> {
    if parts.is_empty() {
        return rustix::fs::openat(root, ".", DIR_FLAGS, Mode::empty());
    }
    match open_atomically(root, parts, flags | OFlags::NOFOLLOW) {
        // "Not a directory" is also how a link in the way is reported with `O_DIRECTORY`: the
        // walk tells the two apart (and is as safe).
        Some(Err(Errno::NOTDIR)) | None => open_by_walking(root, parts, flags, false),
        Some(result) => result,
    }
}

/// Opens the directory `parts` beneath `root`, creating what is missing.
fn open_dir_creating(root: BorrowedFd<'_>, parts: &[&OsStr]) -> Result<OwnedFd, Errno> {
    match open_beneath(root, parts, DIR_FLAGS) {
        Err(Errno::NOENT) => open_by_walking(root, parts, DIR_FLAGS, true),
        result => result,
    }
}

impl FileRoot {
    /// Opens `dir` (following links in `dir` itself: it is the operator's choice); failures
    /// are reported by every later call.
    pub fn open(dir: &Path) -> Self {
        let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let dir = rustix::fs::open(dir, flags, Mode::empty())
            .map_err(|e| format!("{}: {}", dir.display(), std::io::Error::from(e)));
        FileRoot {
            dir,
            uploads: AtomicU64::new(0),
        }
    }

    fn root(&self) -> Result<BorrowedFd<'_>, FileError> {
        self.dir
            .as_ref()
            .map(AsFd::as_fd)
            .map_err(|e| FileError::NoRoot(e.clone()))
    }

    /// The bytes of the regular file `requested` (relative to the working directory).
    pub fn read(&self, requested: &str) -> Result<Vec<u8>, FileError> {
        self.read_at_most(requested, u64::MAX)
    }

    /// [`FileRoot::read`], refusing a file larger than `limit` bytes (read no further than
    /// that, should it grow meanwhile).
    pub fn read_at_most(&self, requested: &str, limit: u64) -> Result<Vec<u8>, FileError> {
        let parts = components(requested)?;
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let fd =
            open_beneath(self.root()?, &parts, flags).map_err(|e| resolve_error(e, requested))?;
        let io = |source: std::io::Error| FileError::Io {
            path: requested.to_owned(),
            source,
        };
        let stat = rustix::fs::fstat(&fd).map_err(|e| io(e.into()))?;
        if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
            return Err(FileError::NotAFile(requested.to_owned()));
        }
        let size = u64::try_from(stat.st_size).unwrap_or(0);
        if size > limit {
            return Err(FileError::TooLarge {
                path: requested.to_owned(),
                size,
                limit,
            });
        }
        let mut bytes = Vec::new();
        std::fs::File::from(fd)
            .take(limit)
            .read_to_end(&mut bytes)
            .map_err(io)?;
        Ok(bytes)
    }

    /// Writes `bytes` to `requested` (relative to the working directory), creating missing
    /// directories; the file appears whole or not at all. A link at the name is refused.
    pub fn write(&self, requested: &str, bytes: &[u8]) -> Result<(), FileError> {
        self.write_file(requested, bytes, true)
    }

    /// [`FileRoot::write`], except that a link at the name itself is replaced by the file
    /// (never followed): what the user's own exports do when code planted a link there. A
    /// link on the way (a folder) is still refused.
    pub fn write_replacing_link(&self, requested: &str, bytes: &[u8]) -> Result<(), FileError> {
        self.write_file(requested, bytes, false)
    }

    fn write_file(
        &self,
        requested: &str,
        bytes: &[u8],
        refuse_link_at_name: bool,
    ) -> Result<(), FileError> {
        let parts = components(requested)?;
        let Some((name, dirs)) = parts.split_last() else {
            return Err(FileError::NoPath);
        };
        let io = |source: std::io::Error| FileError::Io {
            path: requested.to_owned(),
            source,
        };
        let dir = open_dir_creating(self.root()?, dirs).map_err(|e| resolve_error(e, requested))?;
        match rustix::fs::statat(&dir, *name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(stat) => match FileType::from_raw_mode(stat.st_mode) {
                FileType::Symlink if refuse_link_at_name => {
                    return Err(FileError::Symlink(requested.to_owned()));
                }
                FileType::Directory => return Err(FileError::NotAFile(requested.to_owned())),
                _ => {}
            },
            Err(Errno::NOENT) => {}
            Err(errno) => return Err(io(errno.into())),
        }
        let temp = format!(
            ".oi-upload-{}-{}.tmp",
            std::process::id(),
            self.uploads.fetch_add(1, Ordering::Relaxed)
        );
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(&dir, temp.as_str(), flags, Mode::from_raw_mode(0o666))
            .map_err(|e| io(e.into()))?;
        let written = std::fs::File::from(fd).write_all(bytes);
        let renamed = written.and_then(|()| {
            rustix::fs::renameat(&dir, temp.as_str(), &dir, *name).map_err(Into::into)
        });
        if let Err(e) = renamed {
            let _ = rustix::fs::unlinkat(&dir, temp.as_str(), AtFlags::empty());
            return Err(match e.raw_os_error().map(Errno::from_raw_os_error) {
                Some(Errno::ISDIR) => FileError::NotAFile(requested.to_owned()),
                _ => io(e),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use std::os::unix::fs::symlink;

    fn parts(path: &str) -> Vec<&OsStr> {
        components(path).unwrap()
    }

    #[test]
    fn lexical_refusals() {
        assert!(matches!(components("../x"), Err(FileError::Escapes(_))));
        assert!(matches!(
            components("a/../../x"),
            Err(FileError::Escapes(_))
        ));
        assert!(matches!(
            components("/etc/passwd"),
            Err(FileError::Escapes(_))
        ));
        assert!(matches!(components(""), Err(FileError::NoPath)));
        assert!(matches!(components("./"), Err(FileError::NoPath)));
        assert_eq!(parts("./a//b"), [OsStr::new("a"), OsStr::new("b")]);
    }

    /// The fallback walk refuses links in every position, as `openat2` does.
    #[test]
    fn the_walk_never_follows_links() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        std::fs::create_dir(dir.path().join("real")).unwrap();
        std::fs::write(dir.path().join("real/file"), "f").unwrap();
        symlink(outside.path(), dir.path().join("linkdir")).unwrap();
        symlink(outside.path().join("secret"), dir.path().join("linkfile")).unwrap();
        let root =
            rustix::fs::open(dir.path(), OFlags::PATH | OFlags::DIRECTORY, Mode::empty()).unwrap();
        let read = OFlags::RDONLY | OFlags::NONBLOCK;
        assert!(open_by_walking(root.as_fd(), &parts("real/file"), read, false).is_ok());
        for path in ["linkdir/secret", "linkfile"] {
            let err = open_by_walking(root.as_fd(), &parts(path), read, false).unwrap_err();
            assert_eq!(err, Errno::LOOP, "{path}");
        }
        let err = open_by_walking(root.as_fd(), &parts("linkdir/new"), DIR_FLAGS, true);
        assert_eq!(err.unwrap_err(), Errno::LOOP);
        assert!(!outside.path().join("new").exists());
        assert!(open_by_walking(root.as_fd(), &parts("made/deep"), DIR_FLAGS, true).is_ok());
        assert!(dir.path().join("made/deep").is_dir());
    }

    #[test]
    fn an_export_replaces_a_link_at_its_name_and_refuses_one_on_the_way() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        symlink(&victim, dir.path().join("notes.md")).unwrap();
        symlink(outside.path(), dir.path().join("out")).unwrap();
        let root = FileRoot::open(dir.path());
        assert!(matches!(
            root.write("notes.md", b"x"),
            Err(FileError::Symlink(_))
        ));
        root.write_replacing_link("notes.md", b"export").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("notes.md")).unwrap(),
            "export"
        );
        assert!(matches!(
            root.write_replacing_link("out/notes.md", b"x"),
            Err(FileError::Symlink(_))
        ));
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 1);
    }
}
