//! HTML to readable Markdown: readability extraction of the main content, then
//! conversion with scripts, styles, SVG, comments and other non-content dropped.

use dom_smoothie::{Config, Readability};
use htmd::HtmlToMarkdown;

use crate::nesting::{MAX_NESTING, nesting_depth, plain_text};

/// Elements whose content is never text for a reader.
const SKIPPED_ELEMENTS: &[&str] = &[
    "script", "style", "noscript", "template", "svg", "math", "canvas", "iframe", "object",
    "embed", "head", "link", "meta", "button", "input", "select", "textarea", "nav", "form",
    "dialog",
];

/// Page chrome also dropped when readability finds no main content and the whole page
/// is converted instead.
const CHROME_ELEMENTS: &[&str] = &["header", "footer", "aside"];

/// A page turned into Markdown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Document {
    /// The page's title (empty if it has none).
    pub title: String,
    /// The main content as Markdown.
    pub markdown: String,
}

/// Extracts the main content of an HTML page and converts it to Markdown.
///
/// `base_url` (the page's final URL) makes relative links absolute. If readability
/// finds no main content, the whole body is converted, page chrome removed. A page
/// nested deeper than [`MAX_NESTING`] (which the recursive parsers would overflow their
/// stack on) is read as plain text, with a note saying so. CPU-bound: call it from a
/// blocking thread for large pages.
pub fn convert_html(html: &str, base_url: Option<&str>) -> Document {
    let depth = nesting_depth(html);
    if depth > MAX_NESTING {
        return Document {
            title: fallback_title(html),
            markdown: format!(
                "[This page nests its elements {depth} deep, more than the {MAX_NESTING} Hearth reads as structure; its text follows without formatting.]\n\n{}",
                plain_text(html)
            ),
        };
    }
    let base_url = base_url.filter(|url| url::Url::parse(url).is_ok());
    let article = Readability::new(html, base_url, Some(Config::default()))
        .and_then(|mut readability| readability.parse());
    match article {
        Ok(article) if !article.text_content.trim().is_empty() => {
            let markdown = to_markdown(&article.content, SKIPPED_ELEMENTS);
            let title = if article.title.trim().is_empty() {
                fallback_title(html)
            } else {
                collapse_whitespace(&article.title)
            };
            Document { title, markdown }
        }
        Ok(_) | Err(_) => convert_whole(html),
    }
}

/// Converts the whole page, chrome removed.
fn convert_whole(html: &str) -> Document {
    let skipped: Vec<&str> = SKIPPED_ELEMENTS
        .iter()
        .chain(CHROME_ELEMENTS)
        .copied()
        .collect();
    Document {
        title: fallback_title(html),
        markdown: to_markdown(html, &skipped),
    }
}

fn to_markdown(html: &str, skipped: &[&str]) -> String {
    let converter = HtmlToMarkdown::builder()
        .skip_tags(skipped.to_vec())
        .build();
    match converter.convert(html) {
        Ok(markdown) => tidy(&markdown),
        Err(error) => {
            tracing::warn!(%error, "HTML to Markdown conversion failed; returning no text");
            String::new()
        }
    }
}

/// Trims trailing spaces (keeping Markdown's two-space line breaks) and collapses runs
/// of blank lines.
fn tidy(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut blank_run = 0;
    for line in markdown.lines() {
        let trimmed = if line.ends_with("  ") && !line.trim().is_empty() {
            line
        } else {
            line.trim_end()
        };
        if trimmed.is_empty() {
            blank_run += 1;
            if blank_run > 1 {
                continue;
            }
        } else {
            blank_run = 0;
        }
        out.push_str(trimmed);
        out.push('\n');
    }
    out.trim().to_owned()
}

/// The `<title>` element's text, found without a full parse.
fn fallback_title(html: &str) -> String {
    let lower = html.to_ascii_lowercase();
    let Some(open) = lower.find("<title") else {
        return String::new();
    };
    let Some(start) = lower[open..].find('>').map(|offset| open + offset + 1) else {
        return String::new();
    };
    let Some(end) = lower[start..].find("</title").map(|offset| start + offset) else {
        return String::new();
    };
    collapse_whitespace(&decode_basic_entities(&html[start..end]))
}

pub(crate) fn decode_basic_entities(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&nbsp;", " ")
        .replace("&amp;", "&")
}

fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn article_page(extra: &str) -> String {
        let paragraph = "Hearth keeps every conversation on the user's own machine, \
            organised into projects, and lets agents act only through tools whose \
            writes the user approves. ";
        format!(
            "<!doctype html><html><head><title>Field notes</title>\
             <style>body {{ color: red }}</style><script>var leaked = 'SCRIPT';</script></head>\
             <body><nav><a href=\"/\">Home</a> | <a href=\"/about\">About</a></nav>\
             <article><h1>Field notes</h1>{extra}\
             <p>{p}</p><p>{p}</p><p>{p} <a href=\"/more\">Read more</a></p>\
             <!-- a comment nobody should read -->\
             <svg><text>SVG TEXT</text></svg>\
             <script>document.write('INLINE SCRIPT')</script></article>\
             <footer>Copyright</footer></body></html>",
            p = paragraph.repeat(3)
        )
    }

    #[test]
    fn main_content_is_extracted_without_scripts_styles_svg_or_comments() {
        let page = article_page("<ul><li>one</li><li>two</li></ul>");
        let document = convert_html(&page, Some("https://example.com/notes/"));
        assert_eq!(document.title, "Field notes");
        let markdown = &document.markdown;
        for leaked in ["SCRIPT", "color: red", "SVG TEXT", "a comment", "<!--"] {
            assert!(
                !markdown.contains(leaked),
                "{leaked} leaked into: {markdown}"
            );
        }
        assert!(
            markdown.contains("Hearth keeps every conversation"),
            "{markdown}"
        );
        assert!(markdown.contains("*   one"), "{markdown}");
        assert!(
            markdown.contains("[Read more](https://example.com/more)"),
            "{markdown}"
        );
    }

    const TINY: &str = "<html><head><title>Tiny &amp; plain</title><script>x()</script>\
        </head><body><nav>Menu</nav><header>Banner</header><p>Short text.</p>\
        <footer>Foot</footer></body></html>";

    #[test]
    fn small_pages_keep_their_text_and_lose_navigation() {
        let document = convert_html(TINY, None);
        assert_eq!(document.title, "Tiny & plain");
        assert!(document.markdown.contains("Short text."), "{document:?}");
        assert!(!document.markdown.contains("x()"), "{document:?}");
        assert!(!document.markdown.contains("Menu"), "{document:?}");
    }

    #[test]
    fn whole_page_conversion_drops_chrome() {
        assert_eq!(
            convert_whole(TINY),
            Document {
                title: "Tiny & plain".into(),
                markdown: "Short text.".into()
            }
        );
    }

    #[test]
    fn blank_line_runs_collapse() {
        assert_eq!(tidy("a\n\n\n\nb  \n  \nc   "), "a\n\nb  \n\nc");
    }
}
