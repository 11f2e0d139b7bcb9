//! How deep an HTML page nests, measured without parsing it, and its text without its
//! tags. The HTML parsers and converters Hearth uses walk the element tree
//! recursively, one stack frame per level (and free it the same way), so a page of a
//! few megabytes nested hundreds of thousands deep overflows any stack. Such a page is
//! read as plain text instead: both functions here are loops over the bytes.

/// The deepest nesting converted as structure. Real pages stay far below (a browser's
/// own HTML parser stops nesting at 512).
pub const MAX_NESTING: usize = 512;

/// Elements that never hold others (`<br>`), or whose end tag may be left out and that
/// so often are (`<p>`, `<li>`, …): they do not count as a level.
const FLAT: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr", "p", "li", "dt", "dd", "tr", "td", "th", "option", "optgroup", "thead",
    "tbody", "tfoot", "colgroup", "rt", "rp", "html", "head", "body",
];

/// Elements whose content is text, not markup, up to their end tag.
const RAW_TEXT: &[&str] = &["script", "style", "textarea", "title", "xmp", "noscript"];

/// How deep the elements of `html` nest (an estimate from its tags: end tags left out
/// of ordinary elements count as still open).
pub fn nesting_depth(html: &str) -> usize {
    let bytes = html.as_bytes();
    let (mut depth, mut deepest, mut at) = (0usize, 0usize, 0usize);
    while let Some(offset) = memchr::memchr(b'<', &bytes[at..]) {
        let start = at + offset;
        match Tag::read(html, start) {
            Tag::Open {
                name,
                end,
                self_closing,
            } => {
                at = end;
                if RAW_TEXT.contains(&name.as_str()) {
                    at = skip_raw_text(html, end, &name);
                } else if !self_closing && !FLAT.contains(&name.as_str()) {
                    depth += 1;
                    deepest = deepest.max(depth);
                }
            }
            Tag::Close { name, end } => {
                at = end;
                if !FLAT.contains(&name.as_str()) {
                    depth = depth.saturating_sub(1);
                }
            }
            Tag::Other { end } => at = end,
        }
    }
    deepest
}

/// The text of `html` without its tags, scripts, styles and comments, whitespace
/// collapsed, a blank line where a block ended.
pub fn plain_text(html: &str) -> String {
    let bytes = html.as_bytes();
    let mut text = String::with_capacity(html.len() / 2);
    let mut at = 0;
    while at < bytes.len() {
        let Some(offset) = memchr::memchr(b'<', &bytes[at..]) else {
            text.push_str(&html[at..]);
            break;
        };
        let start = at + offset;
        text.push_str(&html[at..start]);
        at = match Tag::read(html, start) {
            Tag::Open { name, end, .. } if RAW_TEXT.contains(&name.as_str()) => {
                skip_raw_text(html, end, &name)
            }
            Tag::Open { name, end, .. } | Tag::Close { name, end } => {
                text.push_str(if is_block(&name) { "\n\n" } else { " " });
                end
            }
            Tag::Other { end } => end,
        };
    }
    let decoded = crate::html::decode_basic_entities(&text);
    let mut paragraphs = Vec::new();
    for paragraph in decoded.split("\n\n") {
        let words = paragraph.split_whitespace().collect::<Vec<_>>().join(" ");
        if !words.is_empty() {
            paragraphs.push(words);
        }
    }
    paragraphs.join("\n\n")
}

fn is_block(name: &str) -> bool {
    matches!(
        name,
        "p" | "div"
            | "br"
            | "li"
            | "tr"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "section"
            | "article"
            | "blockquote"
            | "pre"
            | "table"
            | "ul"
            | "ol"
            | "hr"
            | "header"
            | "footer"
            | "main"
            | "aside"
            | "dt"
            | "dd"
    )
}

/// One thing starting with `<`.
enum Tag {
    Open {
        name: String,
        end: usize,
        self_closing: bool,
    },
    Close {
        name: String,
        end: usize,
    },
    /// A comment, a declaration, or a `<` that starts no tag.
    Other {
        end: usize,
    },
}

impl Tag {
    /// The tag at `start` (which holds `<`); `end` is just past it.
    fn read(html: &str, start: usize) -> Self {
        let bytes = html.as_bytes();
        let rest = &html[start..];
        if let Some(comment) = rest.strip_prefix("<!--") {
            let end = comment
                .find("-->")
                .map_or(html.len(), |offset| start + 4 + offset + 3);
            return Self::Other { end };
        }
        let (closing, name_start) = match bytes.get(start + 1) {
            Some(b'/') => (true, start + 2),
            Some(byte) if byte.is_ascii_alphabetic() => (false, start + 1),
            Some(b'!' | b'?') => {
                return Self::Other {
                    end: tag_end(bytes, start).0,
                };
            }
            _ => return Self::Other { end: start + 1 },
        };
        let name_end = bytes[name_start..]
            .iter()
            .position(|byte| !(byte.is_ascii_alphanumeric() || *byte == b'-' || *byte == b':'))
            .map_or(bytes.len(), |offset| name_start + offset);
        let name = html[name_start..name_end].to_ascii_lowercase();
        let (end, self_closing) = tag_end(bytes, name_end);
        if closing {
            Self::Close { name, end }
        } else {
            Self::Open {
                name,
                end,
                self_closing,
            }
        }
    }
}

/// Just past the `>` that ends a tag begun before `from` (quoted `>` skipped), and
/// whether it was `/>`.
fn tag_end(bytes: &[u8], from: usize) -> (usize, bool) {
    let mut quote = None;
    let mut at = from;
    while at < bytes.len() {
        let byte = bytes[at];
        match quote {
            Some(open) if byte == open => quote = None,
            Some(_) => {}
            None if byte == b'"' || byte == b'\'' => quote = Some(byte),
            None if byte == b'>' => {
                return (at + 1, at > from && bytes[at - 1] == b'/');
            }
            None => {}
        }
        at += 1;
    }
    (bytes.len(), false)
}

/// Just past the end tag `</name` that closes raw text begun at `from`.
fn skip_raw_text(html: &str, from: usize, name: &str) -> usize {
    let closing = format!("</{name}");
    let lower = html[from..].to_ascii_lowercase();
    match lower.find(&closing) {
        Some(offset) => tag_end(html.as_bytes(), from + offset + closing.len()).0,
        None => html.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn depth_counts_open_elements_and_ignores_flat_and_raw_ones() {
        assert_eq!(nesting_depth("plain"), 0);
        assert_eq!(nesting_depth("<div><span>a</span><b><i>x</i></b></div>"), 3);
        assert_eq!(
            nesting_depth("<p>one<p>two<p>three<br><img src='a>b'><li>x"),
            0
        );
        assert_eq!(
            nesting_depth("<script>if (a<b) { '<div><div>' }</script><div/><!-- <div> -->"),
            0
        );
        let deep = "<b>".repeat(100_000);
        assert_eq!(nesting_depth(&deep), 100_000);
    }

    #[test]
    fn plain_text_keeps_the_words_and_drops_the_markup() {
        let html = "<html><head><title>T</title><style>p{}</style></head><body>\
                    <h1>Heading</h1><p>One &amp; <b>two</b></p><script>x()</script>\
                    <div>Three</div></body></html>";
        assert_eq!(plain_text(html), "Heading\n\nOne & two\n\nThree");
        let deep = format!("{}deep{}", "<b>".repeat(50_000), "</b>".repeat(50_000));
        assert_eq!(plain_text(&deep), "deep");
    }
}
