//! Shows what the computer produced for the person: images and HTML are saved to files and
//! opened in the system's viewer when there is one (spec e.6), and the path is always shown.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use base64::Engine as _;
use oi_core::{Chunk, Kind, Recipient};

/// Whether this chunk is rich output meant for the person (an image or HTML/JS code).
pub fn is_displayable(chunk: &Chunk) -> bool {
    let for_user = chunk.recipient != Some(Recipient::Assistant);
    !chunk.is_flag()
        && for_user
        && match chunk.kind {
            Some(Kind::Image) => chunk
                .format
                .as_deref()
                .is_some_and(|f| f.starts_with("base64")),
            Some(Kind::Code) => {
                chunk.role == oi_core::Role::Computer
                    && matches!(chunk.format.as_deref(), Some("html" | "javascript"))
            }
            _ => false,
        }
}

fn extension(chunk: &Chunk) -> &'static str {
    match chunk.format.as_deref() {
        Some("base64.jpeg" | "base64.jpg") => "jpeg",
        Some("html") => "html",
        Some("javascript") => "js",
        _ => "png",
    }
}

/// The program that opens files in the system's viewer, if this machine has one and a display.
fn opener() -> Option<&'static str> {
    if cfg!(target_os = "macos") {
        return Some("open");
    }
    let has_display =
        std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some();
    let available = Command::new("sh")
        .args(["-c", "command -v xdg-open"])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    (has_display && available).then_some("xdg-open")
}

/// Whether what the code made may be opened in the system's viewer: only when the code runs
/// without a sandbox and with the network — the viewer runs as you, outside any sandbox, with
/// your network (in the second stop-32 review a page from `--sandbox readonly --deny_network`
/// code sent a workspace secret out through it, and then a page sent as an "image": `xdg-open`
/// picks the program by the content, not the name).
pub fn may_open_code(settings: &oi_core::Settings) -> bool {
    let sandbox = &settings.computer.sandbox;
    sandbox.mode == oi_core::settings::SandboxMode::Off && sandbox.network
}

/// Saves the chunk's content into `dir` and, when `open_code`, opens it when possible;
/// returns the line to print.
pub fn show(chunk: &Chunk, dir: &Path, open_code: bool) -> String {
    let text = chunk.text().unwrap_or("");
    let bytes = if chunk.kind == Some(Kind::Image) {
        match base64::engine::general_purpose::STANDARD.decode(text.trim()) {
            Ok(bytes) => bytes,
            Err(e) => return format!("[an image arrived but could not be decoded: {e}]\n"),
        }
    } else {
        text.as_bytes().to_vec()
    };
    let path = unique_path(dir, extension(chunk));
    let written = path
        .file_name()
        .and_then(|name| name.to_str())
        .ok_or_else(|| std::io::Error::other("no file name"))
        .and_then(|name| create_new_in(dir, name))
        .and_then(|mut file| std::io::Write::write_all(&mut file, &bytes));
    if let Err(e) = written {
        return format!("[could not save the output to {}: {e}]\n", path.display());
    }
    if !open_code {
        return format!(
            "[saved to {}; not opened: under a sandbox oi opens nothing the code made]\n",
            path.display()
        );
    }
    match opener() {
        Some(program)
            if Command::new(program)
                .arg(&path)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .is_ok() =>
        {
            format!("[displayed on your machine; saved to {}]\n", path.display())
        }
        _ => format!("[saved to {}]\n", path.display()),
    }
}

fn unique_path(dir: &Path, extension: &str) -> PathBuf {
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    dir.join(format!(
        "oi-output-{}-{stamp}.{extension}",
        std::process::id()
    ))
}

/// A new file `name` in `dir` (made when missing), for oi's own output. Sandboxed code may
/// write the temp directory, so the directory is opened without following a link and the file
/// is created new beneath it, never through a link (symbolic or hard) or a FIFO planted there.
pub fn create_new_in(dir: &Path, name: &str) -> std::io::Result<std::fs::File> {
    use rustix::fs::{Mode, OFlags};
    std::fs::create_dir_all(dir)?;
    let dir = rustix::fs::open(
        dir,
        OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let file = rustix::fs::openat(
        &dir,
        name,
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )?;
    Ok(std::fs::File::from(file))
}

/// Where displayed outputs are saved.
pub fn output_dir() -> PathBuf {
    std::env::temp_dir().join("oi-outputs")
}

#[cfg(test)]
mod tests {
    use super::create_new_in;

    #[test]
    fn saved_outputs_never_go_through_a_planted_link_or_fifo() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("bashrc");
        std::fs::write(&target, "kept").unwrap();
        // A link at the directory: refused, nothing created beside the target.
        let linked = root.path().join("outputs-link");
        std::os::unix::fs::symlink(outside.path(), &linked).unwrap();
        assert!(create_new_in(&linked, "out.txt").is_err());
        // Links (symbolic, hard) and a FIFO at the name: refused, not written through.
        let dir = root.path().join("outputs");
        std::fs::create_dir(&dir).unwrap();
        std::os::unix::fs::symlink(&target, dir.join("a.txt")).unwrap();
        std::fs::hard_link(&target, dir.join("b.txt")).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(dir.join("c.txt"))
            .status()
            .unwrap();
        assert!(made.success());
        for name in ["a.txt", "b.txt", "c.txt"] {
            assert!(create_new_in(&dir, name).is_err(), "{name}");
        }
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "kept");
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 1);
        // A fresh name is created.
        assert!(create_new_in(&dir, "d.txt").is_ok());
    }
}
