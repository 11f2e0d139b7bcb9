//! Lenient field readers for provider JSON: a field of an unexpected type is read as
//! absent instead of failing the whole event.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// Text that may be a string, `null`, an array of `{"text": ...}` parts (joined), or
/// anything else (read as absent).
pub(crate) fn text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    deserializer.deserialize_any(TextVisitor)
}

struct TextVisitor;

impl<'de> Visitor<'de> for TextVisitor {
    type Value = Option<String>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("text")
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Self::Value, E> {
        Ok(Some(value.to_owned()))
    }

    fn visit_string<E: de::Error>(self, value: String) -> Result<Self::Value, E> {
        Ok(Some(value))
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(TextVisitor)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut joined: Option<String> = None;
        while let Some(part) = seq.next_element::<Value>()? {
            let text = match &part {
                Value::String(text) => Some(text.as_str()),
                Value::Object(map) => map.get("text").and_then(Value::as_str),
                _ => None,
            };
            if let Some(text) = text {
                joined.get_or_insert_with(String::new).push_str(text);
            }
        }
        Ok(joined)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(None)
    }
}

/// A count that may be a number, `null`, or anything else (read as absent).
pub(crate) fn count<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<u64>, D::Error> {
    Ok(match Value::deserialize(deserializer)? {
        Value::Number(number) => number
            .as_u64()
            .or_else(|| number.as_f64().filter(|v| *v >= 0.0).map(|v| v as u64)),
        _ => None,
    })
}

/// A position that may be a number or a numeric string.
pub(crate) fn index<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<usize>, D::Error> {
    Ok(match Value::deserialize(deserializer)? {
        Value::Number(number) => number.as_u64().map(|v| v as usize),
        Value::String(text) => text.trim().parse().ok(),
        _ => None,
    })
}

/// Tool arguments: a string as is, any other JSON value serialized.
pub(crate) fn arguments<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<String>, D::Error> {
    Ok(match Value::deserialize(deserializer)? {
        Value::Null => None,
        Value::String(text) => Some(text),
        other => Some(other.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde::Deserialize;

    #[derive(Debug, Deserialize, PartialEq)]
    struct Probe {
        #[serde(default, deserialize_with = "super::text")]
        text: Option<String>,
        #[serde(default, deserialize_with = "super::count")]
        count: Option<u64>,
        #[serde(default, deserialize_with = "super::index")]
        index: Option<usize>,
        #[serde(default, deserialize_with = "super::arguments")]
        arguments: Option<String>,
    }

    fn probe(json: &str) -> Probe {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn odd_types_are_read_leniently() {
        assert_eq!(
            probe(
                r#"{"text": [{"type": "text", "text": "a"}, "b"], "count": 3.0, "index": "2", "arguments": {"x": 1}}"#
            ),
            Probe {
                text: Some("ab".into()),
                count: Some(3),
                index: Some(2),
                arguments: Some(r#"{"x":1}"#.into()),
            }
        );
        assert_eq!(
            probe(r#"{"text": {"odd": true}, "count": "many", "index": null, "arguments": null}"#),
            Probe {
                text: None,
                count: None,
                index: None,
                arguments: None,
            }
        );
        assert_eq!(
            probe("{}"),
            Probe {
                text: None,
                count: None,
                index: None,
                arguments: None,
            }
        );
    }
}
