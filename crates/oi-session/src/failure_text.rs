//! A failed turn's error chunk says why: `"kind"` (and `"status"`, the model server's HTTP
//! status, when it gave one) added to the chunk's JSON text, after the keys it has, in order:
//! `{"role":"server","type":"error","content":"…","kind":"rate_limit","status":429}`.

use std::fmt;

use oi_core::Failure;
use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::Value;

/// A JSON object's entries in the order they were written.
struct Ordered(Vec<(String, Value)>);

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> Visitor<'de> for Entries {
            type Value = Ordered;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry::<String, Value>()? {
                    entries.push(entry);
                }
                Ok(Ordered(entries))
            }
        }
        deserializer
            .deserialize_map(Entries)
            .map_err(de::Error::custom)
    }
}

impl Serialize for Ordered {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (key, value) in &self.0 {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

impl Ordered {
    /// Sets `key` to `value`: in place when it is there, else at the end.
    fn set(&mut self, key: &str, value: Value) {
        match self.0.iter_mut().find(|(k, _)| k == key) {
            Some((_, old)) => *old = value,
            None => self.0.push((key.to_owned(), value)),
        }
    }
}

/// The error chunk's text `text` (a JSON object, as the WebSocket sends it) with the
/// failure's `"kind"` and, when there is one, its upstream `"status"` added after the keys
/// already there. Text that is not a JSON object comes back unchanged.
pub fn with_failure(text: &str, failure: &Failure) -> String {
    let Ok(mut object) = serde_json::from_str::<Ordered>(text) else {
        return text.to_owned();
    };
    object.set("kind", Value::from(failure.kind.as_str()));
    if let Some(status) = failure.status {
        object.set("status", Value::from(status));
    }
    serde_json::to_string(&object).unwrap_or_else(|_| text.to_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use oi_core::FailureKind;

    #[test]
    fn keeps_the_order_and_adds_at_the_end() {
        let failure = Failure::new(FailureKind::Budget, "spent");
        assert_eq!(
            with_failure(
                r#"{"role":"server","type":"error","content":"x\"y"}"#,
                &failure
            ),
            r#"{"role":"server","type":"error","content":"x\"y","kind":"budget"}"#
        );
        assert_eq!(with_failure("not json", &failure), "not json");
        assert_eq!(with_failure("[1]", &failure), "[1]");
    }
}
