//! The prompt-state files on disk, read only when this user wrote them.
//!
//! The cache is an optimisation: any file that is missing, not a regular file (a symbolic
//! link, a FIFO, a device, a directory), owned by another user, writable by anyone else,
//! larger than [`MAX_FILE`], truncated, damaged or computed for something else is ignored
//! with a `tracing` note and replaced on the next write. Files are opened without following
//! symbolic links and without blocking, checked on the opened descriptor (no race between
//! check and use), read with a size bound, and written atomically: a new `0600` file
//! (`O_EXCL`, which never follows a link) renamed over the old name. The directory is made
//! `0700`, and is not used when it is a link, another user's, or writable by others.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

/// The largest file read (a 2,000-token system prompt of a 1.5B model is about 60 MB).
pub const MAX_FILE: u64 = 256 * 1024 * 1024;
/// The files' extension.
pub const EXTENSION: &str = "oikv";
/// How many files are kept (the newest); older ones are removed when a new one is written.
const KEEP: usize = 8;
/// Temporary files older than this are left-overs of a killed writer.
const STALE_TEMP: Duration = Duration::from_secs(600);

/// A directory of prompt-state files.
#[derive(Debug, Clone)]
pub struct StateStore {
    dir: PathBuf,
    uid: u32,
}

impl StateStore {
    /// The store in `dir`, made (`0700`) when missing; `None`, with a note, when the directory
    /// cannot be made or is not safe to trust.
    pub fn open(dir: &Path) -> Option<StateStore> {
        if let Err(error) = DirBuilder::new().recursive(true).mode(0o700).create(dir) {
            tracing::warn!(dir = %dir.display(), "prompt cache off: cannot make the directory: {error}");
            return None;
        }
        let uid = rustix::process::geteuid().as_raw();
        let meta = match std::fs::symlink_metadata(dir) {
            Ok(meta) => meta,
            Err(error) => {
                tracing::warn!(dir = %dir.display(), "prompt cache off: {error}");
                return None;
            }
        };
        let problem = if !meta.is_dir() {
            Some("it is not a directory (a symbolic link?)".to_owned())
        } else if meta.uid() != uid {
            Some(format!("it belongs to uid {}, not {uid}", meta.uid()))
        } else if meta.mode() & 0o022 != 0 {
            Some(format!(
                "other users may write in it (mode {:o})",
                meta.mode() & 0o777
            ))
        } else {
            None
        };
        if let Some(problem) = problem {
            tracing::warn!(dir = %dir.display(), "prompt cache off: {problem}");
            return None;
        }
        Some(StateStore {
            dir: dir.to_owned(),
            uid,
        })
    }

    /// Where the file `name` is.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.{EXTENSION}"))
    }

    /// The bytes of the file `name` when it is safe to use; `None` otherwise (with a note
    /// saying why, unless it simply does not exist).
    pub fn read(&self, name: &str) -> Option<Vec<u8>> {
        let path = self.path(name);
        match self.read_checked(&path) {
            Ok(bytes) => Some(bytes),
            Err(Skip::Missing) => {
                tracing::debug!(path = %path.display(), "no prompt-state file yet");
                None
            }
            Err(Skip::Unsafe(why)) => {
                tracing::warn!(path = %path.display(), "prompt-state file ignored: {why}");
                None
            }
        }
    }

    fn read_checked(&self, path: &Path) -> Result<Vec<u8>, Skip> {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let fd = match rustix::fs::open(path, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Err(Skip::Missing),
            Err(Errno::LOOP) => return Err(Skip::unsafe_("it is a symbolic link")),
            Err(error) => return Err(Skip::Unsafe(format!("cannot open it: {error}"))),
        };
        let file = File::from(fd);
        let meta = file
            .metadata()
            .map_err(|e| Skip::Unsafe(format!("cannot stat it: {e}")))?;
        if !meta.is_file() {
            return Err(Skip::unsafe_("it is not a regular file"));
        }
        if meta.uid() != self.uid {
            return Err(Skip::Unsafe(format!(
                "it belongs to uid {}, not {}",
                meta.uid(),
                self.uid
            )));
        }
        if meta.mode() & 0o022 != 0 {
            return Err(Skip::Unsafe(format!(
                "other users may write it (mode {:o})",
                meta.mode() & 0o777
            )));
        }
        if meta.len() > MAX_FILE {
            return Err(Skip::Unsafe(format!(
                "it is {} bytes, more than {MAX_FILE}",
                meta.len()
            )));
        }
        let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
        file.take(MAX_FILE + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| Skip::Unsafe(format!("cannot read it: {e}")))?;
        if bytes.len() as u64 > MAX_FILE {
            return Err(Skip::unsafe_(
                "it grew past the size limit while being read",
            ));
        }
        Ok(bytes)
    }

    /// Writes `bytes` as the file `name`, atomically; failures are noted, never returned (the
    /// cache is an optimisation). Returns whether the file is in place.
    pub fn write(&self, name: &str, bytes: &[u8]) -> bool {
        let path = self.path(name);
        let nanos = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let temp = self
            .dir
            .join(format!(".{name}.{}.{nanos}.tmp", std::process::id()));
        let written = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temp)
            .and_then(|mut file| file.write_all(bytes))
            .and_then(|()| std::fs::rename(&temp, &path));
        match written {
            Ok(()) => {
                self.prune();
                true
            }
            Err(error) => {
                let _ = std::fs::remove_file(&temp);
                tracing::warn!(path = %path.display(), "cannot write the prompt-state file: {error}");
                false
            }
        }
    }

    /// Keeps the [`KEEP`] newest files of this user and removes stale temporary files.
    fn prune(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let now = SystemTime::now();
        let mut files = Vec::new();
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            if !meta.is_file() || meta.uid() != self.uid {
                continue;
            }
            let name = entry.file_name().to_string_lossy().into_owned();
            let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            if name.starts_with('.') && name.ends_with(".tmp") {
                let age = now.duration_since(modified).unwrap_or_default();
                if age > STALE_TEMP {
                    let _ = std::fs::remove_file(entry.path());
                }
            } else if name.ends_with(&format!(".{EXTENSION}")) {
                files.push((modified, entry.path()));
            }
        }
        files.sort_by_key(|f| std::cmp::Reverse(f.0));
        for (_, path) in files.into_iter().skip(KEEP) {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Why a file was not read.
enum Skip {
    /// There is none.
    Missing,
    /// There is one, but it is not safe to use.
    Unsafe(String),
}

impl Skip {
    fn unsafe_(why: &str) -> Self {
        Skip::Unsafe(why.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn store(name: &str) -> (StateStore, PathBuf) {
        let dir = std::env::temp_dir().join(format!("oi-store-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = StateStore::open(&dir).unwrap();
        (store, dir)
    }

    #[test]
    fn writes_private_files_atomically_and_reads_them_back() {
        let (store, dir) = store("good");
        assert_eq!(store.read("a"), None);
        assert!(store.write("a", b"state"));
        let meta = std::fs::symlink_metadata(store.path("a")).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o600);
        assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
        assert_eq!(store.read("a").as_deref(), Some(&b"state"[..]));
        // Only the newest files are kept, and no temporary file is left.
        for i in 0..12 {
            assert!(store.write(&format!("f{i}"), b"x"));
        }
        let names: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
        assert_eq!(names.len(), KEEP, "{names:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn refuses_links_fifos_open_modes_and_huge_files_then_replaces_them() {
        let (store, dir) = store("hostile");
        let path = store.path("a");
        let elsewhere = dir.join("elsewhere");
        std::fs::write(&elsewhere, b"planted").unwrap();
        std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
        assert_eq!(store.read("a"), None, "a symbolic link");
        std::fs::remove_file(&path).unwrap();

        let fifo = std::process::Command::new("mkfifo").arg(&path).status();
        if fifo.is_ok_and(|s| s.success()) {
            assert_eq!(store.read("a"), None, "a FIFO (and no hang)");
            assert!(store.write("a", b"good"), "a FIFO is replaced");
            assert_eq!(store.read("a").as_deref(), Some(&b"good"[..]));
        } else {
            assert!(store.write("a", b"good"), "a link is replaced");
        }

        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        assert_eq!(store.read("a"), None, "writable by others");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();

        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_len(MAX_FILE + 1)
            .unwrap();
        assert_eq!(store.read("a"), None, "too large");

        if rustix::process::geteuid().is_root() {
            std::fs::write(&path, b"theirs").unwrap();
            std::os::unix::fs::chown(&path, Some(65_534), None).unwrap();
            assert_eq!(store.read("a"), None, "another user's");
        }
        assert!(store.write("a", b"good"));
        assert_eq!(store.read("a").as_deref(), Some(&b"good"[..]));
        assert_eq!(
            std::fs::read(&elsewhere).unwrap(),
            b"planted",
            "the link's target was not written"
        );

        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        assert_eq!(store.read("a"), None, "a directory");
        assert!(!store.write("a", b"good"), "a directory is not replaced");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_unsafe_directory_is_not_used() {
        let (_, dir) = store("dirs");
        let open = dir.join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(StateStore::open(&open).is_none());
        let link = dir.join("link");
        std::os::unix::fs::symlink(&dir, &link).unwrap();
        assert!(StateStore::open(&link).is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
