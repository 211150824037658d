//! How the cost of reading a streamed `execute` call grows with its size: prints the time to
//! feed N bytes of code as one-character argument pieces (as some servers stream them).
//!
//! `cargo run --release -p oi-llm --example tool_stream_cost -- 100000 200000 400000`

use std::time::Instant;

use oi_llm::tool_stream::{ToolCallPiece, ToolCallReader};

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() {
        vec![50_000, 100_000, 200_000]
    } else {
        sizes
    };
    for size in sizes {
        let code: String = "print(1)\n".chars().cycle().take(size).collect();
        let arguments = serde_json::json!({"language": "python", "code": code}).to_string();
        let mut reader = ToolCallReader::new();
        let started = Instant::now();
        let mut total = 0;
        reader.call(ToolCallPiece {
            index: 0,
            name: Some("execute"),
            arguments: None,
        });
        let mut buf = [0u8; 4];
        for c in arguments.chars() {
            let piece = c.encode_utf8(&mut buf);
            for delta in reader.call(ToolCallPiece {
                index: 0,
                name: None,
                arguments: Some(piece),
            }) {
                if let oi_core::ModelDelta::Code { code, .. } = delta {
                    total += code.len();
                }
            }
        }
        let elapsed = started.elapsed();
        assert_eq!(total, size);
        println!(
            "{size:>9} bytes of code in {:>8.2} ms ({:.1} ns/byte)",
            elapsed.as_secs_f64() * 1e3,
            elapsed.as_nanos() as f64 / size as f64
        );
    }
}
