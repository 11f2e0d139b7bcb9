//! Content types: what a caller accepts, what a response declares, and decoding a body
//! to text.

use std::fmt;

use encoding_rs::{Encoding, UTF_8};

/// The content types a caller accepts, as `type/subtype`, `type/*` or `*/*` patterns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContentTypes {
    patterns: Vec<String>,
}

impl ContentTypes {
    /// Accepts every content type.
    pub fn any() -> Self {
        Self {
            patterns: vec!["*/*".to_owned()],
        }
    }

    /// Accepts only the given patterns (case-insensitive).
    pub fn only<'a>(patterns: impl IntoIterator<Item = &'a str>) -> Self {
        Self {
            patterns: patterns
                .into_iter()
                .map(|pattern| pattern.trim().to_ascii_lowercase())
                .collect(),
        }
    }

    /// Whether a media type essence (`text/html`) is accepted.
    pub fn accepts(&self, essence: &str) -> bool {
        let essence = essence.to_ascii_lowercase();
        let top = essence.split('/').next().unwrap_or_default();
        self.patterns.iter().any(|pattern| {
            pattern == "*/*"
                || *pattern == essence
                || pattern
                    .strip_suffix("/*")
                    .is_some_and(|pattern_top| pattern_top == top)
        })
    }

    /// The `Accept` header value.
    pub(crate) fn accept_header(&self) -> String {
        self.patterns.join(", ")
    }
}

impl fmt::Display for ContentTypes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.patterns.join(", "))
    }
}

/// A response's declared media type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MediaType {
    /// `type/subtype`, lowercase (`application/octet-stream` when none was sent).
    pub essence: String,
    /// The `charset` parameter, lowercase, if any.
    pub charset: Option<String>,
}

impl MediaType {
    /// Parses a `Content-Type` header value; a missing or blank one is
    /// `application/octet-stream`.
    pub fn parse(header: Option<&str>) -> Self {
        let header = header.unwrap_or_default();
        let mut parts = header.split(';');
        let essence = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
        let essence = if essence.contains('/') {
            essence
        } else {
            "application/octet-stream".to_owned()
        };
        let charset = parts.find_map(|parameter| {
            let (name, value) = parameter.split_once('=')?;
            name.trim()
                .eq_ignore_ascii_case("charset")
                .then(|| value.trim().trim_matches('"').to_ascii_lowercase())
        });
        Self { essence, charset }
    }

    /// Whether the body is HTML or XHTML.
    pub fn is_html(&self) -> bool {
        matches!(self.essence.as_str(), "text/html" | "application/xhtml+xml")
    }
}

impl fmt::Display for MediaType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.essence)?;
        if let Some(charset) = &self.charset {
            write!(f, "; charset={charset}")?;
        }
        Ok(())
    }
}

/// Decodes a body to text: a byte-order mark wins, then the declared charset, then
/// (for HTML) a `<meta>` charset in the first 1024 bytes, then UTF-8. Malformed
/// sequences become U+FFFD.
pub fn decode_text(body: &[u8], media_type: &MediaType) -> String {
    let declared = media_type
        .charset
        .as_deref()
        .and_then(|label| Encoding::for_label(label.as_bytes()));
    let sniffed = || {
        media_type
            .is_html()
            .then(|| meta_charset(body))
            .flatten()
            .and_then(Encoding::for_label)
    };
    let encoding = declared.or_else(sniffed).unwrap_or(UTF_8);
    let (text, _, _) = encoding.decode(body);
    text.into_owned()
}

/// The label of a `<meta charset=…>` or `<meta http-equiv … content="…; charset=…">`.
fn meta_charset(body: &[u8]) -> Option<&[u8]> {
    let head = &body[..body.len().min(1024)];
    let lower = head.to_ascii_lowercase();
    let mut from = 0;
    while let Some(offset) = find(&lower[from..], b"charset") {
        let mut at = from + offset + b"charset".len();
        from = at;
        while lower.get(at).is_some_and(u8::is_ascii_whitespace) {
            at += 1;
        }
        if lower.get(at) != Some(&b'=') {
            continue;
        }
        at += 1;
        while lower
            .get(at)
            .is_some_and(|byte| byte.is_ascii_whitespace() || *byte == b'"' || *byte == b'\'')
        {
            at += 1;
        }
        let end = lower[at..]
            .iter()
            .position(|byte| !(byte.is_ascii_alphanumeric() || b"-_:.".contains(byte)))
            .map_or(lower.len(), |length| at + length);
        if end > at {
            return Some(&head[at..end]);
        }
    }
    None
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len())
        .position(|window| window == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn patterns_match_exactly_or_by_top_level_type() {
        let types = ContentTypes::only(["text/*", "application/PDF"]);
        assert!(types.accepts("text/html"));
        assert!(types.accepts("TEXT/calendar"));
        assert!(types.accepts("application/pdf"));
        assert!(!types.accepts("application/json"));
        assert!(!types.accepts("textual/html"));
        assert!(ContentTypes::any().accepts("image/png"));
        assert_eq!(types.accept_header(), "text/*, application/pdf");
    }

    #[test]
    fn media_types_parse_leniently() {
        assert_eq!(
            MediaType::parse(Some("Text/HTML; Charset=\"ISO-8859-1\"")),
            MediaType {
                essence: "text/html".into(),
                charset: Some("iso-8859-1".into())
            }
        );
        assert_eq!(
            MediaType::parse(None).essence,
            "application/octet-stream".to_owned()
        );
        assert_eq!(
            MediaType::parse(Some("garbage")).essence,
            "application/octet-stream".to_owned()
        );
    }

    #[test]
    fn text_is_decoded_by_bom_header_meta_then_utf8() {
        let html = MediaType::parse(Some("text/html"));
        let latin1 = b"<meta charset=\"iso-8859-1\"><p>caf\xe9</p>";
        assert_eq!(
            decode_text(latin1, &html),
            "<meta charset=\"iso-8859-1\"><p>café</p>"
        );
        let equiv =
            b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=windows-1252\">\x93";
        assert!(decode_text(equiv, &html).ends_with('\u{201c}'));
        let declared = MediaType::parse(Some("text/plain; charset=iso-8859-1"));
        assert_eq!(decode_text(b"caf\xe9", &declared), "café");
        let plain = MediaType::parse(Some("text/plain"));
        assert_eq!(decode_text("café".as_bytes(), &plain), "café");
        assert_eq!(decode_text(b"\xef\xbb\xbfhi", &declared), "hi");
        assert_eq!(decode_text(b"bad \xff", &plain), "bad \u{fffd}");
    }
}
