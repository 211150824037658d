//! What a prompt-state file is valid for, written out as its key: the model file, the engine
//! that computed the state, the context's settings and the prompt. A file whose key differs
//! in anything is ignored; its name is a hash of the key and tokens, so different keys rarely
//! even meet.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::hash::{Hasher64, hash64};

/// The engine: the exact `llama-cpp-2` version (pinned with `=` in the workspace).
const ENGINE: &str = "llama-cpp-2=0.1.160";
/// The part of the model file read whole: the GGUF header and metadata start there.
const HEAD: u64 = 1 << 20;
/// Blocks sampled across the rest of the file.
const SAMPLES: u64 = 16;
/// Bytes per sampled block.
const SAMPLE: u64 = 64 << 10;

/// The model file's identity, cheaply: its size, modification time, and a hash of its first
/// mebibyte and of 16 blocks of 64 KiB spread over it (2 MiB read, under 2 ms from the page
/// cache). `None` when the file cannot be read.
pub fn model_fingerprint(path: &Path) -> Option<String> {
    let mut file = File::open(path).ok()?;
    let meta = file.metadata().ok()?;
    let size = meta.len();
    let mut hasher = Hasher64::new(size);
    let mut buffer = vec![0; usize::try_from(HEAD).ok()?];
    let head = read_at(&mut file, 0, &mut buffer)?;
    hasher.update(&buffer[..head]);
    if size > HEAD {
        let stride = (size - HEAD) / (SAMPLES + 1);
        buffer.truncate(usize::try_from(SAMPLE).ok()?);
        for i in 1..=SAMPLES {
            let n = read_at(&mut file, HEAD + i * stride, &mut buffer)?;
            hasher.update(&buffer[..n]);
        }
    }
    Some(format!(
        "size={size} mtime={}.{:09} sample={:016x}",
        meta.mtime(),
        meta.mtime_nsec(),
        hasher.finish()
    ))
}

fn read_at(file: &mut File, offset: u64, buffer: &mut [u8]) -> Option<usize> {
    file.seek(SeekFrom::Start(offset)).ok()?;
    let mut filled = 0;
    while filled < buffer.len() {
        match file.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(_) => return None,
        }
    }
    Some(filled)
}

/// The running program: the state is only reused by the build that computed it (its size
/// and modification time stand for it; a rebuild makes the files be computed again).
pub fn program_identity() -> String {
    std::env::current_exe()
        .and_then(std::fs::metadata)
        .map_or_else(
            |_| "unknown".to_owned(),
            |meta| {
                format!(
                    "size={} mtime={}.{:09}",
                    meta.len(),
                    meta.mtime(),
                    meta.mtime_nsec()
                )
            },
        )
}

/// The key of a state: every input that changes the numbers in it.
pub fn key_text(model: &str, program: &str, context: &str, prefix_text: &str) -> String {
    format!(
        "engine: {ENGINE}\nprogram: {program}\nmodel: {model}\ncontext: {context}\nprefix: {} bytes, hash {:016x}\n",
        prefix_text.len(),
        hash64(0, prefix_text.as_bytes())
    )
}

/// The file name for `key` and `tokens`: 128 bits of hash, in hex.
pub fn file_name(key: &str, tokens: &[i32]) -> String {
    let mut bytes = key.as_bytes().to_vec();
    for token in tokens {
        bytes.extend_from_slice(&token.to_le_bytes());
    }
    format!("{:016x}{:016x}", hash64(1, &bytes), hash64(2, &bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprint_changes_with_the_content() {
        let dir = std::env::temp_dir().join(format!("oi-fp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("m.gguf");
        let mut data = vec![7u8; 3 << 20];
        std::fs::write(&path, &data).unwrap();
        let first = model_fingerprint(&path).unwrap();
        assert_eq!(model_fingerprint(&path).unwrap(), first);
        data[10] = 8;
        std::fs::write(&path, &data).unwrap();
        let changed = model_fingerprint(&path).unwrap();
        assert_ne!(changed.rsplit(' ').next(), first.rsplit(' ').next());
        assert!(model_fingerprint(&dir.join("missing")).is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn names_differ_by_key_and_tokens() {
        let a = file_name("k", &[1, 2]);
        assert_eq!(a.len(), 32);
        assert_ne!(a, file_name("k", &[1, 3]));
        assert_ne!(a, file_name("j", &[1, 2]));
        let key = key_text("m", "p", "c", "system");
        assert!(key.contains("engine: llama-cpp-2") && key.contains("prefix: 6 bytes"));
    }
}
