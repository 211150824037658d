//! Saving the conversation when a turn ends: the first save of a session claims a file of
//! its own and writes it whole; later saves append what the turn added
//! ([`history::append()`]), and write the file whole again only when the conversation was
//! changed otherwise (an edit, a reset, messages replaced) or the file was (another writer).

use std::path::Path;

use crate::history::{self, Saved};
use crate::lmc::Message;
use crate::state::Shared;
use crate::turn::TurnError;

/// What one save writes, decided while the conversation is held.
enum Write {
    /// Bytes to write over the closing `]`, and the messages they add.
    Append(Vec<u8>, Vec<Message>),
    /// The whole list, and the messages it holds.
    Whole(Vec<u8>, Vec<Message>),
}

/// Saves the conversation of `shared` into `dir`.
pub(crate) fn save_history(shared: &Shared, dir: &Path) -> Result<(), TurnError> {
    // Held for the whole save: two saves of one session never write its file at once.
    let mut saved = shared.saved();
    let named = shared.runtime().conversation_filename.clone();
    // Decided while the conversation is held, without copying it (a copy per turn cost as
    // much as writing it, in a long conversation): an append copies only the new messages; a
    // whole write (the first save, or after an edit) copies them all, for the next compare.
    let (write, name) = {
        let messages = shared.messages();
        if messages.is_empty() {
            return Ok(());
        }
        // A session's first save claims a file of its own (never another session's, even
        // with the same first words in the same second).
        let name = match named {
            Some(name) => name,
            None => history::claim(dir, &messages, chrono::Local::now())?,
        };
        let tail = match saved.as_ref() {
            Some(before) => {
                history::tail(dir, before, &name, &messages)?.map(|bytes| (bytes, before.count()))
            }
            None => None,
        };
        let write = match tail {
            Some((bytes, _)) if bytes.is_empty() => return Ok(()),
            Some((bytes, count)) => Write::Append(bytes, messages[count..].to_vec()),
            None => Write::Whole(history::to_json(dir, &name, &messages)?, messages.clone()),
        };
        (write, name)
    };
    let filename = shared
        .runtime()
        .conversation_filename
        .get_or_insert(name)
        .clone();
    match write {
        Write::Append(bytes, new) => {
            let Some(before) = saved.as_mut() else {
                return Ok(());
            };
            match history::append(dir, before, &bytes) {
                Ok(len) => before.extend(new, len),
                Err(error) => {
                    // The file is not as this session left it: write it whole.
                    tracing::warn!(%error, "appending failed; the conversation is written whole");
                    *saved = None;
                    drop(saved);
                    return save_history(shared, dir);
                }
            }
        }
        Write::Whole(json, messages) => {
            *saved = None;
            history::save_json(dir, &filename, &json)?;
            *saved = Some(Saved::new(&filename, messages, json.len() as u64));
        }
    }
    Ok(())
}
