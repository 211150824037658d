//! A real pseudo-terminal of a chosen size for `oi`, read through a terminal emulator
//! (`vt100`), so tests see the screen a person sees — where every row starts and ends, which
//! cells are coloured — and can resize it (the kernel sends SIGWINCH).

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
use rustix::termios::{Winsize, tcsetwinsize};

/// A program on a pseudo-terminal, its screen emulated.
pub struct Term {
    master: File,
    child: Child,
    parser: Arc<Mutex<vt100::Parser>>,
    raw: Arc<Mutex<Vec<u8>>>,
    cols: u16,
    rows: u16,
}

fn nz(n: u16) -> std::num::NonZeroU16 {
    std::num::NonZeroU16::new(n.max(1)).unwrap()
}

fn winsize(cols: u16, rows: u16) -> Winsize {
    Winsize {
        ws_row: rows,
        ws_col: cols,
        ws_xpixel: 0,
        ws_ypixel: 0,
    }
}

/// Opens a pseudo-terminal pair of the given size: (master, slave).
fn open_pair(cols: u16, rows: u16) -> std::io::Result<(OwnedFd, OwnedFd)> {
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC)?;
    grantpt(&master)?;
    unlockpt(&master)?;
    let name = ptsname(&master, Vec::new())?;
    let slave: OwnedFd = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(name.to_str().map_err(std::io::Error::other)?)?
        .into();
    tcsetwinsize(&master, winsize(cols, rows))?;
    Ok((master, slave))
}

impl Term {
    /// Starts `command` on a new terminal `cols`×`rows`, as the leader of its own session
    /// with the terminal as its controlling terminal. `None` (and a printed reason) when this
    /// machine has no pseudo-terminals.
    pub fn spawn(mut command: Command, cols: u16, rows: u16) -> Option<Term> {
        let (master, slave) = match open_pair(cols, rows) {
            Ok(pair) => pair,
            Err(e) => {
                eprintln!("SKIPPED: no pseudo-terminal on this machine ({e})");
                return None;
            }
        };
        let stdio = |fd: &OwnedFd| Stdio::from(fd.try_clone().unwrap());
        command
            .stdin(stdio(&slave))
            .stdout(stdio(&slave))
            .stderr(stdio(&slave));
        // SAFETY: between fork and exec the closure only makes two system calls (setsid and
        // the TIOCSCTTY ioctl on the inherited standard input), which are async-signal-safe;
        // it allocates nothing and takes no lock.
        unsafe {
            command.pre_exec(|| {
                rustix::process::setsid()?;
                rustix::process::ioctl_tiocsctty(std::io::stdin().as_fd())?;
                Ok(())
            });
        }
        let child = command.spawn().unwrap();
        drop(slave);
        let master = File::from(master);
        let parser = Arc::new(Mutex::new(vt100::Parser::new(nz(rows), nz(cols), 0)));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let mut reader = master.try_clone().unwrap();
        let (parser_in, raw_in) = (Arc::clone(&parser), Arc::clone(&raw));
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        parser_in.lock().unwrap().process(&buf[..n]);
                        raw_in.lock().unwrap().extend_from_slice(&buf[..n]);
                    }
                }
            }
        });
        Some(Term {
            master,
            child,
            parser,
            raw,
            cols,
            rows,
        })
    }

    /// Types `text`.
    pub fn send(&mut self, text: &str) {
        self.master.write_all(text.as_bytes()).unwrap();
        self.master.flush().unwrap();
    }

    /// Types a line and Enter.
    pub fn line(&mut self, text: &str) {
        self.send(text);
        self.send("\r");
    }

    /// The visible screen, one string per row (trailing spaces trimmed).
    pub fn rows(&self) -> Vec<String> {
        let parser = self.parser.lock().unwrap();
        parser
            .screen()
            .rows(0, self.cols)
            .map(|row| row.trim_end().to_owned())
            .collect()
    }

    /// The visible screen as text.
    pub fn screen(&self) -> String {
        let mut rows = self.rows();
        while rows.last().is_some_and(String::is_empty) {
            rows.pop();
        }
        rows.join("\n")
    }

    /// The visible screen with its colours, as escapes (for snapshots).
    pub fn screen_formatted(&self) -> String {
        let parser = self.parser.lock().unwrap();
        let mut rows: Vec<String> = parser
            .screen()
            .rows_formatted(0, self.cols)
            .map(|row| String::from_utf8_lossy(row.as_ref()).into_owned())
            .collect();
        while rows.last().is_some_and(|r| r.trim().is_empty()) {
            rows.pop();
        }
        rows.join("\n")
    }

    /// The cell at `row`, `col`.
    pub fn cell(&self, row: u16, col: u16) -> Option<vt100::Cell> {
        self.parser.lock().unwrap().screen().cell(row, col).cloned()
    }

    /// Every byte the program wrote.
    pub fn raw(&self) -> Vec<u8> {
        self.raw.lock().unwrap().clone()
    }

    /// Waits until the screen holds `needle`; panics with the screen after `timeout`.
    pub fn wait_for(&self, needle: &str, timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let screen = self.screen();
            if screen.contains(needle) {
                return screen;
            }
            if Instant::now() > deadline {
                panic!("{needle:?} did not appear within {timeout:?}; the screen:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until the last row with text is an empty `> ` prompt.
    pub fn wait_prompt(&self, timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let screen = self.screen();
            if screen.lines().last() == Some(">") {
                return screen;
            }
            if Instant::now() > deadline {
                panic!("no prompt within {timeout:?}; the screen:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits until the screen has been still (no byte written) for `quiet`.
    pub fn settle(&self, quiet: Duration, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        let mut last = self.raw.lock().unwrap().len();
        let mut since = Instant::now();
        while Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            let now = self.raw.lock().unwrap().len();
            if now != last {
                last = now;
                since = Instant::now();
            } else if since.elapsed() >= quiet {
                return;
            }
        }
    }

    /// Resizes the terminal (the program gets SIGWINCH) and its emulated screen.
    pub fn resize(&mut self, cols: u16, rows: u16) {
        self.parser.lock().unwrap().set_size(nz(rows), nz(cols));
        tcsetwinsize(&self.master, winsize(cols, rows)).unwrap();
        self.cols = cols;
        self.rows = rows;
    }

    /// Waits for the program to exit; kills it after `timeout`.
    pub fn exit(mut self, timeout: Duration) -> Option<i32> {
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        None
    }
}

impl Drop for Term {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
