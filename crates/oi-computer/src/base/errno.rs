//! The calling thread's `errno`, readable between clone and exec (no allocation).

/// The calling thread's errno (no allocation: usable between clone and exec).
pub(crate) fn errno() -> i32 {
    std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}
