//! oi-mcp: the Model Context Protocol both ways, with the official Rust SDK (`rmcp`).
//!
//! - As a server ([`OiMcp`]): oi's code interpreter for any agent. Tools run code in
//!   persistent, named sessions (state kept between calls), stop and reset them, list the
//!   languages, and read and write files inside the workspace. Every run goes through oi's
//!   judge (the hard-deny list and `deny` rules; the calling agent is the one who approves)
//!   and runs on the computer oi-config builds from the settings, so the sandbox, the
//!   resource limits and the withheld secrets apply as to any code. A cancelled call stops its
//!   code. [`serve_stdio`] is `oi --mcp`; [`http_service`] is oi-server's `/mcp`.
//! - As a client ([`client::McpClients`]): the servers of a profile's `mcp_servers:`, their
//!   tools under `SERVER__TOOL` names, calls made on them.
//! - The wire shapes (tool names and schemas) are in [`tools`] and docs/protocol.md.

pub mod client;
mod files;
pub mod http_client;
pub mod offer;
mod output;
mod run;
mod server;
mod sessions;
mod slots;
pub mod tools;

pub use server::{HttpLimits, HttpService, McpHttp, OiMcp, ServeError, http_service, serve_stdio};
pub use sessions::{LiveSettings, MAX_SESSIONS, Sessions, fixed};
pub use slots::{Slot, Slots};
