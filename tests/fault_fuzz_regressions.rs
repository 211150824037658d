//! Regression tests for inputs found by the fuzz targets in `fuzz/` (`cargo xtask fuzz`).
//! Each test replays one input through the same oracle as its fuzz target.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use oi_core::{Chunk, Message};

/// The oracle of fuzz target `lmc`: whatever parses round-trips.
fn lmc_round_trips(text: &str) {
    if let Ok(chunk) = Chunk::from_json(text) {
        assert_eq!(Chunk::from_json(&chunk.to_json()).unwrap(), chunk);
    }
    if let Ok(message) = Message::from_json(text) {
        let json = serde_json::to_string(&message).unwrap();
        assert_eq!(Message::from_json(&json).unwrap(), message);
    }
    if let Ok(list) = Message::list_from_json(text) {
        let json = serde_json::to_string(&list).unwrap();
        assert_eq!(Message::list_from_json(&json).unwrap(), list);
    }
}

#[test]
fn lmc_seed_inputs_round_trip() {
    lmc_round_trips(
        r#"{"role":"assistant","type":"code","format":"python","content":"print(1)","start":true}"#,
    );
    lmc_round_trips(r#"[{"role":"computer","type":"console","format":"active_line","content":3}]"#);
    lmc_round_trips(
        r#"{"role":"computer","type":"confirmation","format":"execution","content":{"type":"code","format":"python","content":"x"}}"#,
    );
}
