//! The server's limits, below sessions and HTTP: Host and Origin checks, connection and
//! descriptor caps, the exposure rule, and file access beneath a directory.

pub mod allowed_hosts;
pub mod beneath;
pub mod connections;
pub mod exposure;
pub mod fd_limit;
pub mod origin;
