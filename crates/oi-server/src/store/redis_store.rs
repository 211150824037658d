//! The Redis session store (`--store redis://HOST:PORT/DB`), over the `redis` crate's tokio
//! connection manager (which reconnects by itself after Redis restarts).
//!
//! Keys of session `ID` (the braces keep them in one Redis Cluster slot):
//! - `oi:{ID}:lease`: the owner's token, with the lease's TTL (`SET NX PX`);
//! - `oi:{ID}:state`: a hash of `messages`, `settings` (JSON), `busy`, and the outbox's
//!   `prefix` and `next_seq`;
//! - `oi:{ID}:outbox`: a hash of sequence number → chunk text, the chunks not yet acked.
//!
//! Renewing, releasing and every write are small Lua scripts that first compare the lease
//! with the writer's token, so a replica that lost its lease changes nothing.

use std::time::Duration;

use redis::Client;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use crate::store::{
    Acquired, SessionStore, Snapshot, StoreError, StoreFuture, Stored, StoredOutbox,
};

const RENEW: &str = "if redis.call('GET', KEYS[1]) == ARGV[1] then \
    return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end";
const RELEASE: &str = "if redis.call('GET', KEYS[1]) == ARGV[1] then \
    return redis.call('DEL', KEYS[1]) else return 0 end";
const SAVE: &str = "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end \
    redis.call('HSET', KEYS[2], 'messages', ARGV[2], 'settings', ARGV[3], 'busy', ARGV[4]) \
    return 1";
const PUT: &str = "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end \
    redis.call('HSET', KEYS[2], 'prefix', ARGV[2], 'next_seq', ARGV[3]) \
    for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 1]) end \
    return 1";
const ACK: &str = "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end \
    for i = 2, #ARGV do redis.call('HDEL', KEYS[2], ARGV[i]) end \
    return 1";

/// How long one Redis command may take before it fails (and is reported).
const RESPONSE_TIMEOUT: Duration = Duration::from_secs(2);

/// A session store in Redis.
#[derive(Clone)]
pub struct RedisStore {
    conn: ConnectionManager,
}

fn lease_key(id: &str) -> String {
    format!("oi:{{{id}}}:lease")
}

fn state_key(id: &str) -> String {
    format!("oi:{{{id}}}:state")
}

fn outbox_key(id: &str) -> String {
    format!("oi:{{{id}}}:outbox")
}

fn unavailable(error: redis::RedisError) -> StoreError {
    StoreError::Unavailable(error.to_string())
}

fn millis(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl RedisStore {
    /// Connects to the Redis at `url`; fails when it cannot be reached now.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        let client = Client::open(url).map_err(|e| {
            StoreError::Unavailable(format!(
                "{url:?} is not a Redis URL ({e}): use redis://HOST:PORT/DB"
            ))
        })?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(RESPONSE_TIMEOUT))
            .set_response_timeout(Some(RESPONSE_TIMEOUT))
            .set_number_of_retries(2)
            .set_max_delay(Duration::from_millis(500));
        let conn = client
            .get_connection_manager_with_config(config)
            .await
            .map_err(|e| {
                StoreError::Unavailable(format!(
                    "cannot reach Redis at {url} ({e}): start it or fix --store"
                ))
            })?;
        Ok(RedisStore { conn })
    }

    fn script(&self, body: &'static str, keys: Vec<String>, args: Vec<String>) -> StoreFuture<i64> {
        let mut conn = self.conn.clone();
        Box::pin(async move {
            let mut cmd = redis::cmd("EVAL");
            cmd.arg(body).arg(keys.len()).arg(&keys).arg(&args);
            // Every script may run twice (they set, extend or delete): once more when the
            // first try met a connection that Redis dropped (a restart); the manager has
            // reconnected by then.
            match cmd.query_async::<i64>(&mut conn).await {
                Ok(answer) => Ok(answer),
                Err(e) if e.is_io_error() || e.is_connection_dropped() => {
                    cmd.query_async::<i64>(&mut conn).await.map_err(unavailable)
                }
                Err(e) => Err(unavailable(e)),
            }
        })
    }
}

/// A Redis hash as its field/value pairs.
type Fields = Vec<(String, String)>;

fn field<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn corrupt(id: &str, what: &'static str, reason: impl ToString) -> StoreError {
    StoreError::Corrupt {
        id: id.to_owned(),
        what,
        reason: reason.to_string(),
    }
}

/// Reads the state hash and the outbox hash back.
fn stored(
    id: &str,
    state: &[(String, String)],
    frames: Vec<(String, String)>,
) -> Result<Stored, StoreError> {
    let snapshot = field(state, "messages").map(|messages| Snapshot {
        messages: messages.to_owned(),
        settings: field(state, "settings").unwrap_or_default().to_owned(),
        busy: field(state, "busy") == Some("1"),
    });
    let outbox = match field(state, "prefix") {
        None => None,
        Some(prefix) => {
            let next_seq = field(state, "next_seq")
                .unwrap_or("0")
                .parse()
                .map_err(|e| corrupt(id, "outbox sequence number", e))?;
            let mut parsed = Vec::with_capacity(frames.len());
            for (seq, text) in frames {
                let seq: u64 = seq
                    .parse()
                    .map_err(|e| corrupt(id, "outbox sequence number", e))?;
                parsed.push((seq, text));
            }
            parsed.sort_by_key(|(seq, _)| *seq);
            Some(StoredOutbox {
                prefix: prefix.to_owned(),
                next_seq,
                frames: parsed,
            })
        }
    };
    Ok(Stored { snapshot, outbox })
}

impl SessionStore for RedisStore {
    fn acquire(&self, id: &str, token: &str, ttl: Duration) -> StoreFuture<Acquired> {
        let mut conn = self.conn.clone();
        let (key, token) = (lease_key(id), token.to_owned());
        Box::pin(async move {
            let set: Option<String> = redis::cmd("SET")
                .arg(&key)
                .arg(&token)
                .arg("NX")
                .arg("PX")
                .arg(millis(ttl))
                .query_async(&mut conn)
                .await
                .map_err(unavailable)?;
            if set.is_some() {
                return Ok(Acquired::Won);
            }
            let left: i64 = redis::cmd("PTTL")
                .arg(&key)
                .query_async(&mut conn)
                .await
                .map_err(unavailable)?;
            Ok(Acquired::Held(Duration::from_millis(
                u64::try_from(left).unwrap_or(0),
            )))
        })
    }

    fn renew(&self, id: &str, token: &str, ttl: Duration) -> StoreFuture<bool> {
        let call = self.script(
            RENEW,
            vec![lease_key(id)],
            vec![token.to_owned(), millis(ttl).to_string()],
        );
        Box::pin(async move { Ok(call.await? == 1) })
    }

    fn release(&self, id: &str, token: &str) -> StoreFuture<()> {
        let call = self.script(RELEASE, vec![lease_key(id)], vec![token.to_owned()]);
        Box::pin(async move { call.await.map(|_| ()) })
    }

    fn load(&self, id: &str) -> StoreFuture<Stored> {
        let mut conn = self.conn.clone();
        let id = id.to_owned();
        Box::pin(async move {
            let (state, frames): (Fields, Fields) = redis::pipe()
                .cmd("HGETALL")
                .arg(state_key(&id))
                .cmd("HGETALL")
                .arg(outbox_key(&id))
                .query_async(&mut conn)
                .await
                .map_err(unavailable)?;
            stored(&id, &state, frames)
        })
    }

    fn save(&self, id: &str, token: &str, snapshot: Snapshot) -> StoreFuture<bool> {
        let busy = if snapshot.busy { "1" } else { "0" };
        let call = self.script(
            SAVE,
            vec![lease_key(id), state_key(id)],
            vec![
                token.to_owned(),
                snapshot.messages,
                snapshot.settings,
                busy.to_owned(),
            ],
        );
        Box::pin(async move { Ok(call.await? == 1) })
    }

    fn put_frames(&self, id: &str, token: &str, outbox: StoredOutbox) -> StoreFuture<bool> {
        let mut args = Vec::with_capacity(3 + 2 * outbox.frames.len());
        args.push(token.to_owned());
        args.push(outbox.prefix);
        args.push(outbox.next_seq.to_string());
        for (seq, text) in outbox.frames {
            args.push(seq.to_string());
            args.push(text);
        }
        let call = self.script(
            PUT,
            vec![lease_key(id), state_key(id), outbox_key(id)],
            args,
        );
        Box::pin(async move { Ok(call.await? == 1) })
    }

    fn ack(&self, id: &str, token: &str, seqs: Vec<u64>) -> StoreFuture<bool> {
        let mut args = vec![token.to_owned()];
        args.extend(seqs.iter().map(u64::to_string));
        let call = self.script(ACK, vec![lease_key(id), outbox_key(id)], args);
        Box::pin(async move { Ok(call.await? == 1) })
    }

    fn forget(&self, id: &str) -> StoreFuture<()> {
        let mut conn = self.conn.clone();
        let keys = vec![state_key(id), outbox_key(id)];
        Box::pin(async move {
            redis::cmd("DEL")
                .arg(&keys)
                .query_async::<i64>(&mut conn)
                .await
                .map(|_| ())
                .map_err(unavailable)
        })
    }
}
