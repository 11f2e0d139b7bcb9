//! A snapshot's metadata header: YAML front matter whose values are JSON scalars, so
//! it reads as plain front matter and parses without a YAML parser on the warm path.
//!
//! ```text
//! ---
//! hearth_snapshot: 1
//! fingerprint: "1733212345123456789:20481"
//! source: {"type":"file","path":"/home/me/report.pdf"}
//! converted_at: "2025-12-02T04:00:00Z"
//! title: "Quarterly report"
//! truncated: false
//! ---
//! ```

use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;

use super::source::ContextSource;

/// The header format written; a snapshot with another version is re-converted.
const VERSION: u32 = 1;
/// Titles longer than this are cut (characters), keeping the header small.
const MAX_TITLE_CHARACTERS: usize = 300;

/// What a snapshot records about itself.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SnapshotHeader {
    /// Freshness: file `mtime_ns:size`, remote `kind:url`.
    pub(crate) fingerprint: String,
    /// The source converted.
    pub(crate) source: ContextSource,
    /// When it was converted.
    pub(crate) converted_at: DateTime<Utc>,
    /// The document's title, if any.
    pub(crate) title: Option<String>,
    /// Whether the Markdown was cut at the output limit.
    pub(crate) truncated: bool,
}

/// How a header read from a file's first bytes ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Parsed {
    /// A complete header of the current version.
    Header(SnapshotHeader),
    /// The closing `---` was not within the bytes given.
    Incomplete,
    /// Not a header Hearth wrote (or an older version): treat as a miss.
    Invalid,
}

impl SnapshotHeader {
    /// The header followed by the Markdown body.
    pub(crate) fn render(&self, body: &str) -> String {
        let title = self.title.as_deref().and_then(clean_title);
        let mut text = String::with_capacity(body.len() + 512);
        text.push_str("---\n");
        push_field(&mut text, "hearth_snapshot", &VERSION);
        push_field(&mut text, "fingerprint", &self.fingerprint);
        push_field(&mut text, "source", &self.source);
        push_field(&mut text, "converted_at", &self.converted_at);
        push_field(&mut text, "title", &title);
        push_field(&mut text, "truncated", &self.truncated);
        text.push_str("---\n\n");
        text.push_str(body);
        if !body.ends_with('\n') {
            text.push('\n');
        }
        text
    }

    /// Parses the header at the start of `bytes`.
    pub(crate) fn parse(bytes: &[u8]) -> Parsed {
        let Some(rest) = bytes.strip_prefix(b"---\n") else {
            return Parsed::Invalid;
        };
        let Some(end) = find_closing(rest) else {
            return Parsed::Incomplete;
        };
        let Ok(block) = std::str::from_utf8(&rest[..end]) else {
            return Parsed::Invalid;
        };
        let mut version = None;
        let mut fingerprint = None;
        let mut source = None;
        let mut converted_at = None;
        let mut title = None;
        let mut truncated = None;
        for line in block.lines() {
            let Some((key, value)) = line.split_once(": ") else {
                return Parsed::Invalid;
            };
            match key {
                "hearth_snapshot" => version = value_of::<u32>(value),
                "fingerprint" => fingerprint = value_of::<String>(value),
                "source" => source = value_of::<ContextSource>(value),
                "converted_at" => converted_at = value_of::<DateTime<Utc>>(value),
                "title" => title = value_of::<Option<String>>(value),
                "truncated" => truncated = value_of::<bool>(value),
                _ => {}
            }
        }
        match (version, fingerprint, source, converted_at, title, truncated) {
            (
                Some(VERSION),
                Some(fingerprint),
                Some(source),
                Some(converted_at),
                Some(title),
                Some(truncated),
            ) => Parsed::Header(Self {
                fingerprint,
                source,
                converted_at,
                title,
                truncated,
            }),
            _ => Parsed::Invalid,
        }
    }
}

/// A title on one line, at most [`MAX_TITLE_CHARACTERS`]; `None` if blank.
pub(crate) fn clean_title(title: &str) -> Option<String> {
    let single_line = title.split_whitespace().collect::<Vec<_>>().join(" ");
    let cut: String = single_line.chars().take(MAX_TITLE_CHARACTERS).collect();
    (!cut.is_empty()).then_some(cut)
}

fn push_field(text: &mut String, key: &str, value: &impl serde::Serialize) {
    // Serializing these plain values to JSON cannot fail; an empty value would make
    // the header invalid, which only costs a re-conversion.
    let value = serde_json::to_string(value).unwrap_or_default();
    text.push_str(key);
    text.push_str(": ");
    text.push_str(&value);
    text.push('\n');
}

fn value_of<T: DeserializeOwned>(value: &str) -> Option<T> {
    serde_json::from_str(value).ok()
}

/// Offset of the closing `---` line within the header block.
fn find_closing(rest: &[u8]) -> Option<usize> {
    if rest.starts_with(b"---\n") {
        return Some(0);
    }
    rest.windows(5)
        .position(|window| window == b"\n---\n")
        .map(|offset| offset + 1)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn header() -> SnapshotHeader {
        SnapshotHeader {
            fingerprint: "12:34".to_owned(),
            source: ContextSource::File {
                path: PathBuf::from("/p/a: b.pdf"),
            },
            converted_at: DateTime::from_timestamp(1_700_000_000, 0).unwrap(),
            title: Some("A \"quoted\"\ntitle".to_owned()),
            truncated: false,
        }
    }

    #[test]
    fn round_trips() {
        let text = header().render("# Body\n\n---\n\nmore");
        assert!(text.starts_with(
            "---\nhearth_snapshot: 1\nfingerprint: \"12:34\"\nsource: {\"type\":\"file\",\"path\":\"/p/a: b.pdf\"}\n"
        ));
        let mut expected = header();
        expected.title = Some("A \"quoted\" title".to_owned());
        assert_eq!(
            SnapshotHeader::parse(text.as_bytes()),
            Parsed::Header(expected)
        );
        // The front matter is YAML too.
        let front = text.split("---\n").nth(1).unwrap();
        let yaml: serde_yaml_ng::Value = serde_yaml_ng::from_str(front).unwrap();
        assert_eq!(yaml["fingerprint"].as_str(), Some("12:34"));
    }

    #[test]
    fn incomplete_and_invalid_headers() {
        let text = header().render("body");
        assert_eq!(
            SnapshotHeader::parse(&text.as_bytes()[..40]),
            Parsed::Incomplete
        );
        assert_eq!(SnapshotHeader::parse(b"# Just markdown\n"), Parsed::Invalid);
        let older = text.replace("hearth_snapshot: 1", "hearth_snapshot: 0");
        assert_eq!(SnapshotHeader::parse(older.as_bytes()), Parsed::Invalid);
    }
}
