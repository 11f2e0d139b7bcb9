//! EPUB: `META-INF/container.xml` names the package document (OPF); its spine gives
//! the reading order; each chapter's body is converted from XHTML into Markdown. The
//! title comes from the OPF's `dc:title`.

use std::collections::HashMap;

use htmd::HtmlToMarkdown;

use super::Draft;
use super::error::Result;
use super::format::SourceFormat;
use super::markdown::tidy;
use super::xml::{Archive, Step, attribute, first_text, malformed, resolve_path, walk};

const FORMAT: SourceFormat = SourceFormat::Epub;
const CONTAINER: &str = "META-INF/container.xml";

/// Elements of a chapter that are never text for a reader.
const SKIPPED_ELEMENTS: &[&str] = &[
    "script", "style", "noscript", "template", "svg", "math", "canvas", "iframe", "object",
    "embed", "head", "link", "meta", "button", "input", "select", "textarea", "form",
];

pub(super) fn convert(bytes: &[u8]) -> Result<Draft> {
    let mut archive = Archive::open(bytes, FORMAT)?;
    let container = archive.required(CONTAINER)?;
    let package_path = package_path(&container)?;
    let package = archive.required(&package_path)?;
    let directory = package_path
        .rsplit_once('/')
        .map(|(directory, _)| directory)
        .unwrap_or("");
    let spine = spine(&package, &package_path, directory)?;
    if spine.is_empty() {
        return Err(malformed(
            FORMAT,
            format!("{package_path} lists no chapters in its spine"),
        ));
    }
    let title = first_text(&package, FORMAT, &package_path, "title");
    let converter = HtmlToMarkdown::builder()
        .skip_tags(SKIPPED_ELEMENTS.to_vec())
        .build();
    let mut chapters = Vec::new();
    for chapter in &spine {
        let Some(xhtml) = archive.text(chapter)? else {
            tracing::warn!(%chapter, "EPUB spine names a chapter the archive lacks; skipped");
            continue;
        };
        let chapter_body = body(&xhtml);
        // The converter recurses per level: a chapter nested too deep is read as text.
        let depth = hearth_fetch::nesting_depth(chapter_body);
        let markdown = if depth > hearth_fetch::MAX_NESTING {
            format!(
                "[{chapter} nests its elements {depth} deep, more than the {} Hearth reads as structure; its text follows without formatting.]\n\n{}",
                hearth_fetch::MAX_NESTING,
                hearth_fetch::plain_text(chapter_body)
            )
        } else {
            let markdown = converter
                .convert(chapter_body)
                .map_err(|error| malformed(FORMAT, format!("cannot convert {chapter}: {error}")))?;
            tidy(&markdown)
        };
        if !markdown.is_empty() {
            chapters.push(markdown);
        }
    }
    Ok(Draft {
        title,
        markdown: chapters.join("\n\n"),
        image: None,
    })
}

/// The package document's path, from the container's first `rootfile`.
fn package_path(container: &str) -> Result<String> {
    let mut path = None;
    walk(container, FORMAT, CONTAINER, |step| {
        if let Step::Open {
            name: "rootfile",
            element,
        } = step
            && path.is_none()
        {
            path = attribute(element, "full-path");
        }
    })?;
    path.map(|path| resolve_path("", &path))
        .filter(|path| !path.is_empty())
        .ok_or_else(|| malformed(FORMAT, format!("{CONTAINER} names no package document")))
}

/// The archive paths of the spine's HTML documents, in reading order.
fn spine(package: &str, part: &str, directory: &str) -> Result<Vec<String>> {
    let mut manifest: HashMap<String, (String, String)> = HashMap::new();
    let mut order = Vec::new();
    walk(package, FORMAT, part, |step| match step {
        Step::Open {
            name: "item",
            element,
        } => {
            if let (Some(id), Some(href)) = (attribute(element, "id"), attribute(element, "href")) {
                let media_type = attribute(element, "media-type").unwrap_or_default();
                manifest.insert(id, (href, media_type));
            }
        }
        Step::Open {
            name: "itemref",
            element,
        } => order.extend(attribute(element, "idref")),
        _ => {}
    })?;
    Ok(order
        .iter()
        .filter_map(|id| manifest.get(id))
        .filter(|(_, media_type)| media_type.contains("html") || media_type.is_empty())
        .map(|(href, _)| resolve_path(directory, href))
        .collect())
}

/// The `<body>` element of an XHTML document (the whole text if none is found): the
/// head is dropped before parsing, since an XHTML-style `<title/>` would swallow the
/// rest of the document in an HTML parser.
fn body(xhtml: &str) -> &str {
    let lower = xhtml.to_ascii_lowercase();
    let Some(start) = find_tag(&lower, "<body") else {
        return xhtml;
    };
    let end = lower.rfind("</body").unwrap_or(xhtml.len()).max(start);
    &xhtml[start..end]
}

/// The position of `<name` followed by `>`, `/` or white space.
fn find_tag(lower: &str, tag: &str) -> Option<usize> {
    let mut from = 0;
    while let Some(offset) = lower[from..].find(tag) {
        let at = from + offset;
        let next = lower[at + tag.len()..].chars().next();
        if next.is_some_and(|next| next == '>' || next == '/' || next.is_whitespace()) {
            return Some(at);
        }
        from = at + tag.len();
    }
    None
}
