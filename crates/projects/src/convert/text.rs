//! HTML, Markdown and plain text: decoded (a byte-order mark or, for HTML, a declared
//! charset honoured; UTF-8 otherwise, invalid bytes replaced), HTML turned into
//! readable Markdown, the others passed through.

use hearth_fetch::{MediaType, convert_html, decode_text};

use super::Draft;

/// An HTML page: its main content as Markdown, and its title.
pub(super) fn html(bytes: &[u8]) -> Draft {
    let html = decode_text(bytes, &MediaType::parse(Some("text/html")));
    let document = convert_html(&html, None);
    Draft {
        title: Some(document.title),
        markdown: document.markdown,
        image: None,
    }
}

/// Markdown, passed through; its title is its first level-one heading.
pub(super) fn markdown(bytes: &[u8]) -> Draft {
    let markdown = decode(bytes);
    Draft {
        title: first_heading(&markdown),
        markdown,
        image: None,
    }
}

/// Plain text, passed through.
pub(super) fn plain(bytes: &[u8]) -> Draft {
    Draft {
        title: None,
        markdown: decode(bytes),
        image: None,
    }
}

fn decode(bytes: &[u8]) -> String {
    let text = decode_text(bytes, &MediaType::parse(Some("text/plain")));
    if text.contains('\r') {
        text.replace("\r\n", "\n")
    } else {
        text
    }
}

/// The first `# ` heading outside fenced code blocks.
fn first_heading(markdown: &str) -> Option<String> {
    let mut in_fence = false;
    for line in markdown.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if !in_fence && let Some(heading) = trimmed.strip_prefix("# ") {
            let heading = heading.trim().trim_end_matches('#').trim();
            if !heading.is_empty() {
                return Some(heading.to_owned());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn markdown_title_skips_code_fences() {
        let draft = markdown(b"```\n# not a title\n```\n\n# Gr\xc3\xbc\xc3\x9fe #\n");
        assert_eq!(draft.title.as_deref(), Some("Grüße"));
    }

    #[test]
    fn byte_order_marks_are_honoured() {
        assert_eq!(plain(b"\xef\xbb\xbfhi\r\n").markdown, "hi\n");
        assert_eq!(plain(b"\xff\xfeh\x00i\x00").markdown, "hi");
    }
}
