//! Zip archives of XML parts (OOXML, ODF, EPUB) and a small walker over XML events,
//! shared by the document converters.

use std::borrow::Cow;
use std::io::{Cursor, Read};

use quick_xml::XmlVersion;
use quick_xml::events::{BytesStart, Event};
use quick_xml::reader::Reader;
use zip::ZipArchive;
use zip::result::ZipError;

use super::error::{ConvertError, Result};
use super::format::SourceFormat;

/// Largest part read out of an archive: a guard against zip bombs.
const MAX_PART_BYTES: u64 = 256 * 1024 * 1024;

/// A document's zip archive, read in memory.
pub(super) struct Archive<'a> {
    zip: ZipArchive<Cursor<&'a [u8]>>,
    format: SourceFormat,
}

impl<'a> Archive<'a> {
    /// Opens `bytes` as the zip archive of a `format` document.
    pub(super) fn open(bytes: &'a [u8], format: SourceFormat) -> Result<Self> {
        let zip = ZipArchive::new(Cursor::new(bytes))
            .map_err(|error| malformed(format, format!("it is not a zip archive ({error})")))?;
        Ok(Self { zip, format })
    }

    /// The names of the archive's entries.
    pub(super) fn names(&self) -> Vec<String> {
        self.zip
            .file_names()
            .filter_map(|name| name.ok().map(Cow::into_owned))
            .collect()
    }

    /// A part's text, `None` if the archive has no such part.
    pub(super) fn text(&mut self, name: &str) -> Result<Option<String>> {
        let format = self.format;
        let mut entry = match self.zip.by_name(name) {
            Ok(entry) => entry,
            Err(ZipError::FileNotFound) => return Ok(None),
            Err(error) => return Err(malformed(format, format!("cannot open {name}: {error}"))),
        };
        let mut contents = Vec::new();
        (&mut entry)
            .take(MAX_PART_BYTES + 1)
            .read_to_end(&mut contents)
            .map_err(|error| malformed(format, format!("cannot read {name}: {error}")))?;
        if contents.len() as u64 > MAX_PART_BYTES {
            return Err(malformed(
                format,
                format!("{name} expands past {MAX_PART_BYTES} bytes"),
            ));
        }
        let (text, _, _) = encoding_rs::UTF_8.decode(&contents);
        Ok(Some(text.into_owned()))
    }

    /// A part's text, an error naming the part if the archive lacks it.
    pub(super) fn required(&mut self, name: &str) -> Result<String> {
        let format = self.format;
        self.text(name)?
            .ok_or_else(|| malformed(format, format!("it has no {name}")))
    }
}

/// A [`ConvertError::Malformed`] for `format`.
pub(super) fn malformed(format: SourceFormat, message: impl Into<String>) -> ConvertError {
    ConvertError::Malformed {
        format,
        message: message.into(),
    }
}

/// One step of [`walk`]: an element opens (empty elements open and close), closes,
/// or text appears (references already resolved).
pub(super) enum Step<'e> {
    /// An element starts; its local name is `name`.
    Open {
        name: &'e str,
        element: &'e BytesStart<'e>,
    },
    /// An element ends.
    Close { name: &'e str },
    /// Character data.
    Text(&'e str),
}

/// Walks the XML of `part`, calling `visit` for each [`Step`]; names are local
/// (namespace prefixes dropped). Fails on XML that is not well formed.
pub(super) fn walk(
    xml: &str,
    format: SourceFormat,
    part: &str,
    mut visit: impl FnMut(Step<'_>),
) -> Result<()> {
    let mut reader = Reader::from_str(xml);
    reader.config_mut().check_end_names = true;
    loop {
        let event = reader.read_event().map_err(|error| {
            malformed(format, format!("{part} is not well-formed XML ({error})"))
        })?;
        match event {
            Event::Start(element) => {
                let name = local_name(&element);
                visit(Step::Open {
                    name: &name,
                    element: &element,
                });
            }
            Event::Empty(element) => {
                let name = local_name(&element);
                visit(Step::Open {
                    name: &name,
                    element: &element,
                });
                visit(Step::Close { name: &name });
            }
            Event::End(element) => {
                let name = element.local_name().as_ref().to_owned();
                visit(Step::Close { name: &name });
            }
            Event::Text(text) => visit(Step::Text(&text.xml_content(XmlVersion::Implicit1_0))),
            Event::CData(data) => visit(Step::Text(data.as_ref())),
            Event::GeneralRef(reference) => {
                if let Some(text) = resolve_reference(&reference) {
                    visit(Step::Text(&text));
                }
            }
            Event::Eof => return Ok(()),
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) => {}
        }
    }
}

fn resolve_reference(reference: &quick_xml::events::BytesRef<'_>) -> Option<String> {
    if let Ok(Some(character)) = reference.resolve_char_ref() {
        return Some(character.to_string());
    }
    let name = reference.xml_content(XmlVersion::Implicit1_0);
    quick_xml::escape::resolve_xml_entity(&name).map(str::to_owned)
}

fn local_name(element: &BytesStart<'_>) -> String {
    element.local_name().as_ref().to_owned()
}

/// The value of the attribute whose local name is `name`, references resolved.
pub(super) fn attribute(element: &BytesStart<'_>, name: &str) -> Option<String> {
    element
        .attributes()
        .flatten()
        .find(|attribute| attribute.key.local_name().as_ref() == name)
        .and_then(|attribute| {
            attribute
                .normalized_value(XmlVersion::Implicit1_0)
                .ok()
                .map(Cow::into_owned)
        })
}

/// The text of the first element named `name` (local name) in `xml`, whitespace
/// collapsed; `None` if it is absent or empty.
pub(super) fn first_text(
    xml: &str,
    format: SourceFormat,
    part: &str,
    name: &str,
) -> Option<String> {
    let mut depth = 0usize;
    let mut found = String::new();
    let mut done = false;
    let walked = walk(xml, format, part, |step| match step {
        Step::Open { name: open, .. } if !done && (depth > 0 || open == name) => depth += 1,
        Step::Close { .. } if depth > 0 => {
            depth -= 1;
            done = depth == 0;
        }
        Step::Text(text) if depth > 0 => found.push_str(text),
        _ => {}
    });
    if walked.is_err() {
        return None;
    }
    let text = found.split_whitespace().collect::<Vec<_>>().join(" ");
    (!text.is_empty()).then_some(text)
}

/// One relationship of an OOXML part (`_rels/*.rels`).
pub(super) struct Relationship {
    pub(super) id: String,
    pub(super) kind: String,
    pub(super) target: String,
}

/// The relationships of the part at `part` (e.g. `ppt/presentation.xml`), targets
/// resolved to archive paths; empty if the part has none.
pub(super) fn relationships(archive: &mut Archive<'_>, part: &str) -> Result<Vec<Relationship>> {
    let (directory, file) = match part.rsplit_once('/') {
        Some((directory, file)) => (directory, file),
        None => ("", part),
    };
    let rels_path = if directory.is_empty() {
        format!("_rels/{file}.rels")
    } else {
        format!("{directory}/_rels/{file}.rels")
    };
    let Some(xml) = archive.text(&rels_path)? else {
        return Ok(Vec::new());
    };
    let mut found = Vec::new();
    walk(&xml, archive.format, &rels_path, |step| {
        if let Step::Open {
            name: "Relationship",
            element,
        } = step
            && attribute(element, "TargetMode").as_deref() != Some("External")
        {
            found.push(Relationship {
                id: attribute(element, "Id").unwrap_or_default(),
                kind: attribute(element, "Type").unwrap_or_default(),
                target: resolve_path(directory, &attribute(element, "Target").unwrap_or_default()),
            });
        }
    })?;
    Ok(found)
}

/// Resolves `target`, relative to the archive folder `directory` (or absolute when it
/// starts with `/`), into an archive path: `.` and `..` segments applied, `%XX`
/// escapes decoded, any fragment dropped.
pub(super) fn resolve_path(directory: &str, target: &str) -> String {
    let target = target.split('#').next().unwrap_or_default();
    let target = percent_decode(target);
    let mut segments: Vec<&str> = if target.starts_with('/') {
        Vec::new()
    } else {
        directory
            .split('/')
            .filter(|segment| !segment.is_empty())
            .collect()
    };
    for segment in target.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            segment => segments.push(segment),
        }
    }
    segments.join("/")
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let escape = (bytes[index] == b'%')
            .then(|| bytes.get(index + 1..index + 3))
            .flatten()
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escape {
            Some(byte) => {
                decoded.push(byte);
                index += 3;
            }
            None => {
                decoded.push(bytes[index]);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn paths_resolve_against_their_folder() {
        assert_eq!(
            resolve_path("ppt/slides", "../notesSlides/n1.xml"),
            "ppt/notesSlides/n1.xml"
        );
        assert_eq!(
            resolve_path("OEBPS", "text/ch%201.xhtml#top"),
            "OEBPS/text/ch 1.xhtml"
        );
        assert_eq!(
            resolve_path("word", "/word/media/a.png"),
            "word/media/a.png"
        );
        assert_eq!(resolve_path("", "./a/../b.xml"), "b.xml");
    }

    #[test]
    fn walk_resolves_references_and_splits_empty_elements() {
        let mut seen = Vec::new();
        walk(
            "<a:r x:y='1'>&amp;&#x6771;<b/>t</a:r>",
            SourceFormat::Docx,
            "part",
            |step| {
                seen.push(match step {
                    Step::Open { name, .. } => format!("<{name}>"),
                    Step::Close { name } => format!("</{name}>"),
                    Step::Text(text) => text.to_owned(),
                })
            },
        )
        .unwrap();
        assert_eq!(seen, ["<r>", "&", "東", "<b>", "</b>", "t", "</r>"]);
    }

    proptest::proptest! {
        #[test]
        fn walking_any_text_ends_in_steps_or_an_error(xml in "(<[a-z:]{1,4}( [a-z]=\"[^\"]{0,4}\")?/?>|</[a-z:]{1,4}>|&[a-z#0-9]{0,5};|[^<&]{0,6}){0,20}") {
            let mut steps = 0usize;
            let walked = walk(&xml, SourceFormat::Docx, "part", |_| steps += 1);
            if let Err(error) = walked {
                proptest::prop_assert!(error.to_string().contains("part"), "{}", error);
            }
        }
    }

    #[test]
    fn broken_xml_is_an_error_naming_the_part() {
        let error = walk("<a><b></a>", SourceFormat::Odt, "content.xml", |_| {}).unwrap_err();
        assert!(error.to_string().contains("content.xml"), "{error}");
    }
}
