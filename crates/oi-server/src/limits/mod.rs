//! The server's limits, below sessions and HTTP: Host and Origin checks, connection and
//! descriptor caps, the exposure rule, and file access beneath a directory.

pub mod allowed_hosts;
/// Files beneath a directory, never through a link: oi-computer's, shared with oi-mcp.
pub mod beneath {
    pub use oi_computer::{FileError, FileRoot};
}
pub mod connections;
pub mod exposure;
pub mod fd_limit;
pub mod origin;
