//! Text-mode code detection (`oi_llm::fence::FenceParser` and oi-llm's `TextDecoder` on top
//! of it): never panics, and however the reply is cut into pieces the result is the same as
//! for the whole reply.
#![no_main]

use libfuzzer_sys::fuzz_target;
use oi_core::ModelDelta;
use oi_llm::fence::FenceParser;
use oi_fuzz::{normalise, split_cuts, str_pieces};
use oi_llm::text_mode::TextDecoder;

fn fence(pieces: &[&str]) -> Vec<ModelDelta> {
    let mut parser = FenceParser::new();
    let mut out = Vec::new();
    for piece in pieces {
        out.extend(parser.push(piece));
    }
    out.extend(parser.finish());
    normalise(out)
}

fn decoder(pieces: &[&str]) -> Vec<ModelDelta> {
    let mut decoder = TextDecoder::new();
    let mut out = Vec::new();
    for piece in pieces {
        out.extend(decoder.push(piece));
    }
    out.extend(decoder.finish());
    normalise(out)
}

fuzz_target!(|data: &[u8]| {
    let (cuts, payload) = split_cuts(data);
    let Ok(text) = std::str::from_utf8(payload) else {
        return;
    };
    let pieces = str_pieces(text, &cuts);
    assert_eq!(
        fence(&pieces),
        fence(&[text]),
        "FenceParser depends on the cuts: {pieces:?}"
    );
    assert_eq!(
        decoder(&pieces),
        decoder(&[text]),
        "TextDecoder depends on the cuts: {pieces:?}"
    );
});
