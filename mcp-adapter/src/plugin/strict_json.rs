//! JSON parsing that refuses duplicate object keys.
//!
//! `serde_json::Value` keeps the last of two equal keys silently, which would hide a server
//! declared twice in `mcpServers` (MCP-44). Manifests are parsed here instead: a duplicate key
//! anywhere is an error with its position.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Marker in the serde error message for a duplicate key.
pub(crate) const DUPLICATE_KEY: &str = "duplicate key";

struct Strict(Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(Strict(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if out.contains_key(&key) {
                return Err(de::Error::custom(DUPLICATE_KEY));
            }
            let Strict(v) = map.next_value()?;
            out.insert(key, v);
        }
        Ok(Value::Object(out))
    }
}

/// Parses `bytes` as JSON, refusing duplicate keys. The error carries line and column only.
pub(crate) fn parse(bytes: &[u8]) -> Result<Value, StrictError> {
    serde_json::from_slice::<Strict>(bytes)
        .map(|s| s.0)
        .map_err(|e| StrictError {
            duplicate_key: e.to_string().starts_with(DUPLICATE_KEY),
            line: e.line(),
            column: e.column(),
        })
}

/// Where parsing failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StrictError {
    /// The failure is a repeated key.
    pub(crate) duplicate_key: bool,
    /// 1-based line.
    pub(crate) line: usize,
    /// 1-based column.
    pub(crate) column: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicate_keys_are_refused_at_any_depth() {
        assert!(parse(br#"{"a":1,"b":{"c":1,"c":2}}"#).is_err_and(|e| e.duplicate_key));
        assert!(parse(br#"{"a":1,"a":1}"#).is_err_and(|e| e.duplicate_key));
        assert_eq!(
            parse(br#"{"a":[1,{"b":null}],"c":1.5}"#).ok(),
            Some(serde_json::json!({"a":[1,{"b":null}],"c":1.5}))
        );
        assert!(parse(b"{").is_err_and(|e| !e.duplicate_key));
    }
}
