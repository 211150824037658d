//! Building blocks: errno, pipes, nonces, `PATH`, signals to a process group, `/proc`.

pub(crate) mod errno;
pub(crate) mod nonce;
pub(crate) mod pipe;
pub(crate) mod process_group;
pub(crate) mod procfs;
pub(crate) mod programs;
