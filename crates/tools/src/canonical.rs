//! Canonical JSON and SHA-256: what an approval binds to.
//!
//! Canonical JSON here is the value with object keys sorted by their UTF-8 bytes, no
//! insignificant whitespace, strings escaped as `serde_json` escapes them and numbers as
//! `serde_json` prints them. It does not depend on the order a map was built in, so the
//! same payload always has the same hash.

use serde_json::Value;

/// The canonical JSON text of `value`.
pub fn canonical_json(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Null | Value::Bool(_) | Value::Number(_) | Value::String(_) => {
            out.push_str(&value.to_string());
        }
        Value::Array(items) => {
            out.push('[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            out.push('{');
            for (index, (key, item)) in entries.into_iter().enumerate() {
                if index > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(item, out);
            }
            out.push('}');
        }
    }
}

pub use hearth_fs::sha256_hex;

/// The hash of a value: SHA-256 of its canonical JSON.
pub fn value_hash(value: &Value) -> String {
    sha256_hex(canonical_json(value).as_bytes())
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn keys_are_sorted_at_every_level_and_whitespace_dropped() {
        let value = json!({"b": 1, "a": {"z": [true, null, "x\n"], "m": 2.5}});
        assert_eq!(
            canonical_json(&value),
            r#"{"a":{"m":2.5,"z":[true,null,"x\n"]},"b":1}"#
        );
    }

    #[test]
    fn equal_values_hash_equally_whatever_their_key_order() {
        let one: Value = serde_json::from_str(r#"{"x": 1, "y": [1, 2]}"#).unwrap();
        let two: Value = serde_json::from_str(r#"{ "y": [1,2], "x": 1 }"#).unwrap();
        assert_eq!(value_hash(&one), value_hash(&two));
        assert_ne!(value_hash(&one), value_hash(&json!({"x": 2, "y": [1, 2]})));
    }

    #[test]
    fn hashes_are_sha256_hex() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
