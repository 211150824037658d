//! Opening the store `--store` names: `redis://…` (or `rediss://…`) or `memory`.

use std::sync::Arc;

use crate::store::redis_store::RedisStore;
use crate::store::{MemoryStore, SessionStore, StoreError};

/// Opens the store named by `url`: `redis://…` (or `rediss://…`) or `memory`.
pub async fn open(url: &str) -> Result<Arc<dyn SessionStore>, StoreError> {
    let trimmed = url.trim();
    if trimmed == "memory" || trimmed == "memory://" {
        return Ok(Arc::new(MemoryStore::default()));
    }
    if trimmed.starts_with("redis://") || trimmed.starts_with("rediss://") {
        let store = RedisStore::connect(trimmed).await?;
        return Ok(Arc::new(store));
    }
    Err(StoreError::BadUrl(url.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::open;

    #[tokio::test]
    async fn unknown_urls_are_refused_clearly() {
        let err = open("postgres://x").await.err().unwrap();
        assert!(err.to_string().contains("redis://HOST:PORT/DB"), "{err}");
    }
}
