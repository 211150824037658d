//! The HTTP face, on top of everything else: the key's door (`auth.rs`), the routes and their
//! handlers, the insecure routes, the OpenAI-compatible endpoint, the WebSocket, the web page
//! and the accept loop that serves them.

pub mod auth;
pub mod insecure;
pub mod openai;
pub mod routes;
pub mod server;
pub mod web;
pub mod ws;
