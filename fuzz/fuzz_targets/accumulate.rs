//! The server's frame parser and user-chunk accumulator: one frame per input line; the frames
//! that parse as user chunks are pushed. Neither panics, and the messages built are valid
//! stored messages (they survive a round trip through `Message::list_from_json`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use oi_core::Message;
use oi_server::frames::parse_client_frame;
use oi_server::{Accumulator, ClientFrame};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut acc = Accumulator::new();
    for line in text.lines() {
        if let Ok(ClientFrame::Chunk(chunk)) = parse_client_frame(line) {
            acc.push(&chunk);
        }
    }
    let was_empty = acc.is_empty();
    if let Ok(messages) = acc.take() {
        assert_eq!(was_empty, messages.is_empty());
        let json = serde_json::to_string(&messages).unwrap_or_default();
        match Message::list_from_json(&json) {
            Ok(again) => assert_eq!(again, messages, "stored messages changed: {json}"),
            Err(e) => panic!("accumulated messages are not valid LMC: {e}\n{json}"),
        }
    }
    assert!(acc.is_empty(), "take() must empty the accumulator");
});
