//! LMC parsing: `Chunk::from_json`, `Message::from_json`, `Message::list_from_json` never
//! panic, and whatever they accept serialises back to JSON that parses to the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use oi_core::{Chunk, Message};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(chunk) = Chunk::from_json(text) {
        let json = chunk.to_json();
        match Chunk::from_json(&json) {
            Ok(again) => assert_eq!(again, chunk, "chunk round trip changed it: {json}"),
            Err(e) => panic!("a parsed chunk does not parse again: {e}\n{json}"),
        }
    }
    if let Ok(message) = Message::from_json(text) {
        let json = serde_json::to_string(&message).unwrap_or_default();
        match Message::from_json(&json) {
            Ok(again) => assert_eq!(again, message, "message round trip changed it: {json}"),
            Err(e) => panic!("a parsed message does not parse again: {e}\n{json}"),
        }
    }
    if let Ok(list) = Message::list_from_json(text) {
        let json = serde_json::to_string(&list).unwrap_or_default();
        match Message::list_from_json(&json) {
            Ok(again) => assert_eq!(again, list, "list round trip changed it: {json}"),
            Err(e) => panic!("a parsed list does not parse again: {e}\n{json}"),
        }
    }
});
