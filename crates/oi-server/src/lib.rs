//! oi-server (being assembled)
