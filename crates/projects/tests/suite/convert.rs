//! Converters on real documents: every document is generated here (zip archives of
//! real OOXML, ODF and EPUB parts, a PDF with a correct cross-reference table, image
//! headers), written to a temporary folder and converted through the public API.

use std::io::{Cursor, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use bytes::Bytes;
use hearth_projects::convert::{
    ConvertError, ConvertLimits, Converted, ImageInfo, SourceFormat, convert_bytes, convert_file,
};
use pretty_assertions::assert_eq;
use tempfile::TempDir;
use zip::CompressionMethod;
use zip::write::{SimpleFileOptions, ZipWriter};

const NON_ASCII: &str = "Grüße, 東京, Ελληνικά";

// ---------------------------------------------------------------------------------
// Document builders
// ---------------------------------------------------------------------------------

/// A zip archive of `entries`; an entry named `mimetype` is stored uncompressed, as
/// ODF and EPUB require.
fn zip_archive(entries: &[(&str, &str)]) -> Vec<u8> {
    let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
    for (name, contents) in entries {
        let method = if *name == "mimetype" {
            CompressionMethod::Stored
        } else {
            CompressionMethod::Deflated
        };
        let options = SimpleFileOptions::default().compression_method(method);
        writer.start_file(*name, options).unwrap();
        writer.write_all(contents.as_bytes()).unwrap();
    }
    writer.finish().unwrap().into_inner()
}

/// A PDF with one page per entry, each line drawn with Helvetica (WinAnsi encoding, so
/// Latin-1 letters survive), an optional title (UTF-16 in `/Info`), and a
/// cross-reference table whose offsets are the objects' real byte positions.
fn pdf(title: Option<&str>, pages: &[&[&str]]) -> Vec<u8> {
    let page_count = pages.len();
    let font_id = 3;
    let first_page_id = 4;
    let mut objects: Vec<Vec<u8>> = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        format!(
            "<< /Type /Pages /Count {page_count} /Kids [{}] >>",
            (0..page_count)
                .map(|index| format!("{} 0 R", first_page_id + 2 * index))
                .collect::<Vec<_>>()
                .join(" ")
        )
        .into_bytes(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
            .to_vec(),
    ];
    for (index, lines) in pages.iter().enumerate() {
        let content_id = first_page_id + 2 * index + 1;
        objects.push(
            format!(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] \
                 /Resources << /Font << /F1 {font_id} 0 R >> >> /Contents {content_id} 0 R >>"
            )
            .into_bytes(),
        );
        let mut stream = b"BT /F1 12 Tf 16 TL 72 720 Td".to_vec();
        for line in *lines {
            stream.extend_from_slice(b" (");
            for character in line.chars() {
                match character {
                    '(' | ')' | '\\' => stream.extend_from_slice(&[b'\\', character as u8]),
                    _ => stream.push(u8::try_from(u32::from(character)).expect("Latin-1 text")),
                }
            }
            stream.extend_from_slice(b") Tj T*");
        }
        stream.extend_from_slice(b" ET");
        let mut object = format!("<< /Length {} >>\nstream\n", stream.len()).into_bytes();
        object.extend_from_slice(&stream);
        object.extend_from_slice(b"\nendstream");
        objects.push(object);
    }
    let mut info = String::new();
    if let Some(title) = title {
        let hex: String = title
            .encode_utf16()
            .map(|unit| format!("{unit:04X}"))
            .collect();
        objects.push(format!("<< /Title <FEFF{hex}> >>").into_bytes());
        info = format!(" /Info {} 0 R", objects.len());
    }
    let mut out = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = Vec::new();
    for (index, object) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", index + 1).as_bytes());
        out.extend_from_slice(object);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R{info} >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

const W: &str = "xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\"";
const CORE: &str = "xmlns:cp=\"http://schemas.openxmlformats.org/package/2006/metadata/core-properties\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\"";

fn docx() -> Vec<u8> {
    let paragraph =
        |properties: &str, runs: &str| format!("<w:p><w:pPr>{properties}</w:pPr>{runs}</w:p>");
    let run = |text: &str| format!("<w:r><w:t xml:space=\"preserve\">{text}</w:t></w:r>");
    let list = |num: u32, level: u32| {
        format!("<w:numPr><w:ilvl w:val=\"{level}\"/><w:numId w:val=\"{num}\"/></w:numPr>")
    };
    let cell = |text: &str| format!("<w:tc><w:p>{}</w:p></w:tc>", run(text));
    let body = [
        paragraph("<w:pStyle w:val=\"Heading1\"/>", &run("Bericht aus 東京")),
        paragraph("<w:pStyle w:val=\"berschrift2\"/>", &run("Abschnitt")),
        paragraph(
            "",
            &format!(
                "{}<w:r><w:br/><w:t>{NON_ASCII}</w:t></w:r>",
                run("Erste Zeile &amp; mehr")
            ),
        ),
        paragraph(&list(1, 0), &run("Punkt eins")),
        paragraph(&list(1, 1), &run("Unterpunkt")),
        paragraph(&list(2, 0), &run("Schritt eins")),
        paragraph("", ""),
        format!(
            "<w:tbl><w:tr>{}{}</w:tr><w:tr>{}{}</w:tr></w:tbl>",
            cell("Stadt"),
            cell("Sprache"),
            cell("東京"),
            cell("Ελληνικά | mehr")
        ),
        paragraph(
            "",
            "<w:r><w:t>Ende</w:t></w:r><w:del><w:r><w:delText>gelöscht</w:delText></w:r></w:del>",
        ),
    ]
    .concat();
    let document = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><w:document {W}><w:body>{body}<w:sectPr/></w:body></w:document>"
    );
    let styles = format!(
        "<w:styles {W}><w:style w:type=\"paragraph\" w:styleId=\"Heading1\"><w:name w:val=\"heading 1\"/></w:style>\
         <w:style w:type=\"paragraph\" w:styleId=\"berschrift2\"><w:name w:val=\"heading 2\"/></w:style></w:styles>"
    );
    let numbering = format!(
        "<w:numbering {W}>\
         <w:abstractNum w:abstractNumId=\"0\"><w:lvl w:ilvl=\"0\"><w:numFmt w:val=\"bullet\"/></w:lvl><w:lvl w:ilvl=\"1\"><w:numFmt w:val=\"bullet\"/></w:lvl></w:abstractNum>\
         <w:abstractNum w:abstractNumId=\"1\"><w:lvl w:ilvl=\"0\"><w:numFmt w:val=\"decimal\"/></w:lvl></w:abstractNum>\
         <w:num w:numId=\"1\"><w:abstractNumId w:val=\"0\"/></w:num><w:num w:numId=\"2\"><w:abstractNumId w:val=\"1\"/></w:num></w:numbering>"
    );
    let core = format!(
        "<cp:coreProperties {CORE}><dc:title>Grüße aus 東京</dc:title></cp:coreProperties>"
    );
    zip_archive(&[
        (
            "[Content_Types].xml",
            "<Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"/>",
        ),
        ("word/document.xml", &document),
        ("word/styles.xml", &styles),
        ("word/numbering.xml", &numbering),
        ("docProps/core.xml", &core),
    ])
}

const A: &str = "xmlns:a=\"http://schemas.openxmlformats.org/drawingml/2006/main\" xmlns:p=\"http://schemas.openxmlformats.org/presentationml/2006/main\" xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\"";
const RELS: &str = "xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\"";

fn slide(paragraphs: &[&str]) -> String {
    let paragraphs: String = paragraphs
        .iter()
        .map(|text| format!("<a:p><a:r><a:rPr lang=\"de-DE\"/><a:t>{text}</a:t></a:r></a:p>"))
        .collect();
    format!(
        "<p:sld {A}><p:cSld><p:spTree><p:sp><p:txBody><a:bodyPr/>{paragraphs}</p:txBody></p:sp></p:spTree></p:cSld></p:sld>"
    )
}

fn pptx() -> Vec<u8> {
    let presentation = format!(
        "<p:presentation {A}><p:sldIdLst><p:sldId id=\"256\" r:id=\"rId7\"/><p:sldId id=\"257\" r:id=\"rId2\"/></p:sldIdLst></p:presentation>"
    );
    let slide_type = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/slide";
    let rels = format!(
        "<Relationships {RELS}><Relationship Id=\"rId2\" Type=\"{slide_type}\" Target=\"slides/slide2.xml\"/>\
         <Relationship Id=\"rId7\" Type=\"{slide_type}\" Target=\"slides/slide1.xml\"/></Relationships>"
    );
    let slide1_rels = format!(
        "<Relationships {RELS}><Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/notesSlide\" Target=\"../notesSlides/notesSlide1.xml\"/></Relationships>"
    );
    let notes = format!(
        "<p:notes {A}><p:cSld><p:spTree>\
         <p:sp><p:nvSpPr><p:nvPr><p:ph type=\"sldImg\"/></p:nvPr></p:nvSpPr></p:sp>\
         <p:sp><p:nvSpPr><p:nvPr><p:ph type=\"body\" idx=\"1\"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>Langsam sprechen</a:t></a:r></a:p></p:txBody></p:sp>\
         <p:sp><p:nvSpPr><p:nvPr><p:ph type=\"sldNum\"/></p:nvPr></p:nvSpPr><p:txBody><a:p><a:r><a:t>1</a:t></a:r></a:p></p:txBody></p:sp>\
         </p:spTree></p:cSld></p:notes>"
    );
    // Written second-slide first: the order comes from the presentation, not the archive.
    zip_archive(&[
        (
            "ppt/slides/slide2.xml",
            &slide(&["Zweite Folie", "Ελληνικά"]),
        ),
        ("ppt/slides/slide1.xml", &slide(&["Erste Folie", NON_ASCII])),
        ("ppt/slides/_rels/slide1.xml.rels", &slide1_rels),
        ("ppt/notesSlides/notesSlide1.xml", &notes),
        ("ppt/presentation.xml", &presentation),
        ("ppt/_rels/presentation.xml.rels", &rels),
        (
            "docProps/core.xml",
            &format!("<cp:coreProperties {CORE}><dc:title>Vortrag</dc:title></cp:coreProperties>"),
        ),
    ])
}

const SHEET: &str = "xmlns=\"http://schemas.openxmlformats.org/spreadsheetml/2006/main\" xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\"";

fn xlsx(extra_rows: usize) -> Vec<u8> {
    let workbook = format!(
        "<workbook {SHEET}><sheets><sheet name=\"Zahlen\" sheetId=\"1\" r:id=\"rId1\"/><sheet name=\"Städte\" sheetId=\"2\" r:id=\"rId2\"/></sheets></workbook>"
    );
    let sheet_type =
        "http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet";
    let rels = format!(
        "<Relationships {RELS}><Relationship Id=\"rId1\" Type=\"{sheet_type}\" Target=\"worksheets/sheet1.xml\"/>\
         <Relationship Id=\"rId2\" Type=\"{sheet_type}\" Target=\"worksheets/sheet2.xml\"/>\
         <Relationship Id=\"rId3\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings\" Target=\"sharedStrings.xml\"/></Relationships>"
    );
    let shared = format!(
        "<sst {SHEET} count=\"4\" uniqueCount=\"4\"><si><t>Name</t></si><si><t>Wert</t></si><si><t>東京</t></si><si><t>Ελληνικά</t></si></sst>"
    );
    let mut numbers = String::from(
        "<row r=\"1\"><c r=\"A1\" t=\"s\"><v>0</v></c><c r=\"B1\" t=\"s\"><v>1</v></c></row>\
         <row r=\"2\"><c r=\"A2\" t=\"inlineStr\"><is><t>Grüße</t></is></c><c r=\"B2\"><v>42</v></c></row>\
         <row r=\"3\"><c r=\"A3\" t=\"inlineStr\"><is><t>Pi | ungefähr</t></is></c><c r=\"B3\"><v>3.14</v></c></row>",
    );
    for index in 0..extra_rows {
        let row = index + 4;
        numbers.push_str(&format!(
            "<row r=\"{row}\"><c r=\"A{row}\"><v>{index}</v></c></row>"
        ));
    }
    let sheet1 = format!("<worksheet {SHEET}><sheetData>{numbers}</sheetData></worksheet>");
    let sheet2 = format!(
        "<worksheet {SHEET}><sheetData><row r=\"1\"><c r=\"A1\" t=\"s\"><v>2</v></c><c r=\"B1\" t=\"s\"><v>3</v></c></row></sheetData></worksheet>"
    );
    zip_archive(&[
        (
            "[Content_Types].xml",
            "<Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\"/>",
        ),
        (
            "_rels/.rels",
            &format!(
                "<Relationships {RELS}><Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument\" Target=\"xl/workbook.xml\"/></Relationships>"
            ),
        ),
        ("xl/workbook.xml", &workbook),
        ("xl/_rels/workbook.xml.rels", &rels),
        ("xl/sharedStrings.xml", &shared),
        ("xl/worksheets/sheet1.xml", &sheet1),
        ("xl/worksheets/sheet2.xml", &sheet2),
    ])
}

const ODF: &str = "xmlns:office=\"urn:oasis:names:tc:opendocument:xmlns:office:1.0\" xmlns:text=\"urn:oasis:names:tc:opendocument:xmlns:text:1.0\" xmlns:table=\"urn:oasis:names:tc:opendocument:xmlns:table:1.0\" xmlns:style=\"urn:oasis:names:tc:opendocument:xmlns:style:1.0\"";

const MANIFEST: &str =
    "<manifest:manifest xmlns:manifest=\"urn:oasis:names:tc:opendocument:xmlns:manifest:1.0\"/>";

fn odt() -> Vec<u8> {
    let content = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<office:document-content {ODF}>\
         <office:automatic-styles><text:list-style style:name=\"L1\"><text:list-level-style-number text:level=\"1\"/></text:list-style>\
         <text:list-style style:name=\"L2\"><text:list-level-style-bullet text:level=\"1\"/><text:list-level-style-bullet text:level=\"2\"/></text:list-style></office:automatic-styles>\
         <office:body><office:text>\n  \
         <text:h text:outline-level=\"1\">Grüße aus 東京</text:h>\n  \
         <text:h text:outline-level=\"2\">Teil <text:span>zwei</text:span></text:h>\n  \
         <text:p>Erste<text:s text:c=\"2\"/>Zeile<text:line-break/>{NON_ASCII}</text:p>\n  \
         <text:list text:style-name=\"L2\"><text:list-item><text:p>Punkt</text:p>\
         <text:list><text:list-item><text:p>Unterpunkt</text:p></text:list-item></text:list></text:list-item></text:list>\n  \
         <text:list text:style-name=\"L1\"><text:list-item><text:p>Schritt</text:p></text:list-item></text:list>\n  \
         <table:table><table:table-row><table:table-cell><text:p>Stadt</text:p></table:table-cell><table:table-cell><text:p>Sprache</text:p></table:table-cell></table:table-row>\
         <table:table-row><table:table-cell><text:p>東京</text:p></table:table-cell><table:table-cell><text:p>Ελληνικά</text:p></table:table-cell></table:table-row></table:table>\n  \
         <text:p>Fußnote<text:note><text:note-citation>1</text:note-citation><text:note-body><text:p>versteckt</text:p></text:note-body></text:note></text:p>\n\
         </office:text></office:body></office:document-content>"
    );
    let meta = "<office:document-meta xmlns:office=\"urn:oasis:names:tc:opendocument:xmlns:office:1.0\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\"><office:meta><dc:title>Ελληνικά</dc:title></office:meta></office:document-meta>";
    zip_archive(&[
        ("mimetype", "application/vnd.oasis.opendocument.text"),
        ("META-INF/manifest.xml", MANIFEST),
        ("content.xml", &content),
        ("meta.xml", meta),
    ])
}

fn epub() -> Vec<u8> {
    let container = "<?xml version=\"1.0\"?><container version=\"1.0\" xmlns=\"urn:oasis:names:tc:opendocument:xmlns:container\"><rootfiles><rootfile full-path=\"OEBPS/content.opf\" media-type=\"application/oebps-package+xml\"/></rootfiles></container>";
    let opf = "<?xml version=\"1.0\"?><package xmlns=\"http://www.idpf.org/2007/opf\" version=\"3.0\"><metadata xmlns:dc=\"http://purl.org/dc/elements/1.1/\"><dc:title>Reise nach 東京</dc:title></metadata>\
        <manifest><item id=\"c2\" href=\"text/chapter%202.xhtml\" media-type=\"application/xhtml+xml\"/><item id=\"c1\" href=\"text/chapter1.xhtml\" media-type=\"application/xhtml+xml\"/><item id=\"css\" href=\"style.css\" media-type=\"text/css\"/></manifest>\
        <spine><itemref idref=\"c1\"/><itemref idref=\"c2\"/></spine></package>";
    let chapter = |title: &str, body: &str| {
        format!("<?xml version=\"1.0\" encoding=\"utf-8\"?><html xmlns=\"http://www.w3.org/1999/xhtml\"><head><title/><style>p {{ color: red }}</style></head><body>{body}</body></html>")
            .replace("<title/>", title)
    };
    zip_archive(&[
        ("mimetype", "application/epub+zip"),
        ("META-INF/container.xml", container),
        ("OEBPS/content.opf", opf),
        (
            "OEBPS/text/chapter 2.xhtml",
            &chapter("<title>Zwei</title>", "<h1>Kapitel 2</h1><p>Ελληνικά</p>"),
        ),
        (
            "OEBPS/text/chapter1.xhtml",
            &chapter(
                "<title/>",
                &format!("<h1>Kapitel 1</h1><p>{NON_ASCII}</p><ul><li>eins</li></ul>"),
            ),
        ),
        ("OEBPS/style.css", "p { color: red }"),
    ])
}

fn png(width: u32, height: u32) -> Vec<u8> {
    let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
    bytes.extend_from_slice(&width.to_be_bytes());
    bytes.extend_from_slice(&height.to_be_bytes());
    bytes.extend_from_slice(&[8, 6, 0, 0, 0, 0, 0, 0, 0]);
    bytes
}

/// A JPEG whose frame header follows a JFIF segment and a large EXIF segment.
fn jpeg(width: u16, height: u16) -> Vec<u8> {
    let mut bytes = vec![0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10];
    bytes.extend_from_slice(b"JFIF\0\x01\x01\0\0\x01\0\x01\0\0");
    bytes.extend_from_slice(&[0xff, 0xe1, 0x10, 0x02]);
    bytes.extend(std::iter::repeat_n(0u8, 0x1000));
    bytes.extend_from_slice(&[0xff, 0xff, 0xc2, 0x00, 0x11, 0x08]);
    bytes.extend_from_slice(&height.to_be_bytes());
    bytes.extend_from_slice(&width.to_be_bytes());
    bytes.extend_from_slice(&[3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1, 0xff, 0xd9]);
    bytes
}

fn gif(width: u16, height: u16) -> Vec<u8> {
    let mut bytes = b"GIF89a".to_vec();
    bytes.extend_from_slice(&width.to_le_bytes());
    bytes.extend_from_slice(&height.to_le_bytes());
    bytes.extend_from_slice(&[0, 0, 0, 0x3b]);
    bytes
}

// ---------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------

fn write(dir: &TempDir, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

async fn convert(name: &str, bytes: &[u8]) -> Converted {
    let dir = TempDir::new().unwrap();
    let path = write(&dir, name, bytes);
    convert_file(&path, &ConvertLimits::default())
        .await
        .unwrap_or_else(|error| panic!("{name}: {error}"))
}

async fn convert_error(name: &str, bytes: &[u8]) -> ConvertError {
    let dir = TempDir::new().unwrap();
    let path = write(&dir, name, bytes);
    match convert_file(&path, &ConvertLimits::default()).await {
        Ok(converted) => panic!("{name} converted: {converted:?}"),
        Err(error) => error,
    }
}

fn document(format: SourceFormat, title: Option<&str>, markdown: &str) -> Converted {
    Converted {
        format,
        title: title.map(str::to_owned),
        markdown: markdown.to_owned(),
        image: None,
        truncated: false,
    }
}

// ---------------------------------------------------------------------------------
// Formats
// ---------------------------------------------------------------------------------

#[test]
fn formats_come_from_the_extension_in_any_case() {
    let cases = [
        ("a.PDF", Some(SourceFormat::Pdf)),
        ("a.docx", Some(SourceFormat::Docx)),
        ("a.Pptx", Some(SourceFormat::Pptx)),
        ("a.xlsx", Some(SourceFormat::Xlsx)),
        ("a.ods", Some(SourceFormat::Xlsx)),
        ("a.odt", Some(SourceFormat::Odt)),
        ("a.epub", Some(SourceFormat::Epub)),
        ("a.HTM", Some(SourceFormat::Html)),
        ("a.markdown", Some(SourceFormat::Markdown)),
        ("a.csv", Some(SourceFormat::Text)),
        ("a.JPEG", Some(SourceFormat::Image)),
        ("a.webp", Some(SourceFormat::Image)),
        ("a.exe", None),
        ("Makefile", None),
    ];
    for (name, expected) in cases {
        assert_eq!(SourceFormat::from_path(Path::new(name)), expected, "{name}");
    }
}

#[tokio::test]
async fn multi_page_pdf_keeps_its_pages_apart() {
    let bytes = pdf(
        Some("Bericht: Grüße aus 東京"),
        &[
            &["Erste Seite", "Grüße aus Köln"],
            &["Zweite Seite"],
            &["Dritte Seite (Ende)"],
        ],
    );
    assert_eq!(
        convert("bericht.pdf", &bytes).await,
        document(
            SourceFormat::Pdf,
            Some("Bericht: Grüße aus 東京"),
            "## Page 1\n\nErste Seite\nGrüße aus Köln\n\n## Page 2\n\nZweite Seite\n\n\
             ## Page 3\n\nDritte Seite (Ende)"
        )
    );
}

#[tokio::test]
async fn a_long_pdf_split_between_workers_keeps_its_page_order() {
    let texts: Vec<String> = (1..=37).map(|page| format!("Seite {page}")).collect();
    let lines: Vec<[&str; 1]> = texts.iter().map(|text| [text.as_str()]).collect();
    let pages: Vec<&[&str]> = lines.iter().map(|line| line.as_slice()).collect();
    let expected = (1..=37)
        .map(|page| format!("## Page {page}\n\nSeite {page}"))
        .collect::<Vec<_>>()
        .join("\n\n");
    assert_eq!(
        convert("lang.pdf", &pdf(None, &pages)).await.markdown,
        expected
    );
}

#[tokio::test]
async fn a_damaged_pdf_page_costs_only_that_page() {
    let mut bytes = pdf(None, &[&["Vorher"], &["Kaputt"], &["Nachher"]]);
    // Blank out the second page's MediaBox, keeping every byte offset: the extractor
    // panics on a page without one.
    let media_box = b"/MediaBox [0 0 612 792]";
    let second = bytes
        .windows(media_box.len())
        .enumerate()
        .filter(|(_, window)| *window == media_box)
        .nth(1)
        .map(|(at, _)| at)
        .unwrap();
    bytes[second..second + media_box.len()].fill(b' ');
    assert_eq!(
        convert("teilweise.pdf", &bytes).await.markdown,
        "## Page 1\n\nVorher\n\n## Page 2\n\n[Page 2 could not be read: its content is damaged]\n\n\
         ## Page 3\n\nNachher"
    );
}

#[tokio::test]
async fn docx_headings_lists_tables_and_breaks() {
    assert_eq!(
        convert("bericht.docx", &docx()).await,
        document(
            SourceFormat::Docx,
            Some("Grüße aus 東京"),
            "# Bericht aus 東京\n\n## Abschnitt\n\nErste Zeile & mehr\\\nGrüße, 東京, Ελληνικά\n\n\
             - Punkt eins\n  - Unterpunkt\n1. Schritt eins\n\n\
             | Stadt | Sprache |\n| --- | --- |\n| 東京 | Ελληνικά \\| mehr |\n\nEnde"
        )
    );
}

#[tokio::test]
async fn pptx_slides_in_presentation_order_with_notes() {
    assert_eq!(
        convert("vortrag.pptx", &pptx()).await,
        document(
            SourceFormat::Pptx,
            Some("Vortrag"),
            "## Slide 1\n\nErste Folie\n\nGrüße, 東京, Ελληνικά\n\nNotes: Langsam sprechen\n\n\
             ## Slide 2\n\nZweite Folie\n\nΕλληνικά"
        )
    );
}

#[tokio::test]
async fn pptx_without_a_presentation_part_orders_slides_by_number() {
    let bytes = zip_archive(&[
        ("ppt/slides/slide10.xml", &slide(&["zehn"])),
        ("ppt/slides/slide2.xml", &slide(&["zwei"])),
        ("ppt/slides/slide1.xml", &slide(&["eins"])),
    ]);
    assert_eq!(
        convert("folien.pptx", &bytes).await.markdown,
        "## Slide 1\n\neins\n\n## Slide 2\n\nzwei\n\n## Slide 3\n\nzehn"
    );
}

#[tokio::test]
async fn xlsx_sheets_as_tables() {
    assert_eq!(
        convert("tabelle.xlsx", &xlsx(0)).await,
        document(
            SourceFormat::Xlsx,
            None,
            "## Zahlen\n\n| Name | Wert |\n| --- | --- |\n| Grüße | 42 |\n| Pi \\| ungefähr | 3.14 |\n\n\
             ## Städte\n\n| 東京 | Ελληνικά |\n| --- | --- |"
        )
    );
}

#[tokio::test]
async fn xlsx_rows_past_the_cap_are_counted() {
    let converted = convert("gross.xlsx", &xlsx(1500)).await;
    let zahlen = converted.markdown.split("## Städte").next().unwrap();
    assert_eq!(
        zahlen
            .lines()
            .filter(|line| line.starts_with("| ") && !line.starts_with("| ---"))
            .count(),
        1000
    );
    assert!(
        zahlen.contains("(503 more rows not shown; the sheet has 1503 rows with data.)"),
        "{zahlen}"
    );
    assert!(!converted.truncated);
}

#[tokio::test]
async fn ods_sheets_as_tables() {
    let content = format!(
        "<office:document-content {ODF} office:version=\"1.2\"><office:body><office:spreadsheet>\
         <table:table table:name=\"Übersicht\"><table:table-row>\
         <table:table-cell office:value-type=\"string\"><text:p>Ort</text:p></table:table-cell>\
         <table:table-cell office:value-type=\"string\"><text:p>Zahl</text:p></table:table-cell></table:table-row>\
         <table:table-row><table:table-cell office:value-type=\"string\"><text:p>東京</text:p></table:table-cell>\
         <table:table-cell office:value-type=\"float\" office:value=\"7\"><text:p>7</text:p></table:table-cell></table:table-row>\
         </table:table></office:spreadsheet></office:body></office:document-content>"
    );
    let bytes = zip_archive(&[
        ("mimetype", "application/vnd.oasis.opendocument.spreadsheet"),
        ("META-INF/manifest.xml", MANIFEST),
        ("content.xml", &content),
    ]);
    assert_eq!(
        convert("tabelle.ods", &bytes).await,
        document(
            SourceFormat::Xlsx,
            None,
            "## Übersicht\n\n| Ort | Zahl |\n| --- | --- |\n| 東京 | 7 |"
        )
    );
}

#[tokio::test]
async fn odt_headings_lists_tables_without_footnote_bodies() {
    assert_eq!(
        convert("brief.odt", &odt()).await,
        document(
            SourceFormat::Odt,
            Some("Ελληνικά"),
            "# Grüße aus 東京\n\n## Teil zwei\n\nErste  Zeile\\\nGrüße, 東京, Ελληνικά\n\n\
             - Punkt\n  - Unterpunkt\n1. Schritt\n\n\
             | Stadt | Sprache |\n| --- | --- |\n| 東京 | Ελληνικά |\n\nFußnote1"
        )
    );
}

#[tokio::test]
async fn epub_chapters_in_spine_order() {
    assert_eq!(
        convert("reise.epub", &epub()).await,
        document(
            SourceFormat::Epub,
            Some("Reise nach 東京"),
            "# Kapitel 1\n\nGrüße, 東京, Ελληνικά\n\n*   eins\n\n# Kapitel 2\n\nΕλληνικά"
        )
    );
}

#[tokio::test]
async fn html_page_to_markdown() {
    let html = format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Grüße</title><script>var x = 'SCRIPT';</script></head>\
         <body><nav>Menü</nav><main><h1>Reise</h1><p>{NON_ASCII}</p></main></body></html>"
    );
    let converted = convert("seite.html", html.as_bytes()).await;
    assert_eq!(converted.title.as_deref(), Some("Grüße"));
    assert!(converted.markdown.contains(NON_ASCII), "{converted:?}");
    assert!(!converted.markdown.contains("SCRIPT"), "{converted:?}");
    assert!(!converted.markdown.contains("Menü"), "{converted:?}");
}

#[tokio::test]
async fn markdown_and_text_pass_through() {
    let markdown = format!("\u{feff}# Notizen\r\n\r\n{NON_ASCII}\r\n");
    assert_eq!(
        convert("notizen.md", markdown.as_bytes()).await,
        document(
            SourceFormat::Markdown,
            Some("Notizen"),
            &format!("# Notizen\n\n{NON_ASCII}\n")
        )
    );
    assert_eq!(
        convert("liste.txt", b"a\xffb").await,
        document(SourceFormat::Text, None, "a\u{fffd}b")
    );
}

#[tokio::test]
async fn images_are_described_by_their_headers() {
    let cases = [
        ("foto.png", png(1200, 800), 1200, 800, "image/png"),
        ("foto.jpg", jpeg(640, 480), 640, 480, "image/jpeg"),
        ("anim.gif", gif(32, 16), 32, 16, "image/gif"),
    ];
    for (name, bytes, width, height, media_type) in cases {
        assert_eq!(
            convert(name, &bytes).await,
            Converted {
                format: SourceFormat::Image,
                title: None,
                markdown: format!("Image: {name}, {width}×{height} px, {media_type}"),
                image: Some(ImageInfo {
                    width,
                    height,
                    media_type
                }),
                truncated: false,
            }
        );
    }
}

#[tokio::test]
async fn bytes_convert_like_files() {
    let converted = convert_bytes(
        Bytes::from(pdf(None, &[&["Nur eine Seite"]])),
        SourceFormat::Pdf,
        &ConvertLimits::default(),
    )
    .await
    .unwrap();
    assert_eq!(
        converted,
        document(SourceFormat::Pdf, None, "Nur eine Seite")
    );
    let image = convert_bytes(
        Bytes::from(png(3, 4)),
        SourceFormat::Image,
        &ConvertLimits::default(),
    )
    .await
    .unwrap();
    assert_eq!(image.markdown, "Image: 3×4 px, image/png");
}

#[tokio::test]
async fn content_overrides_a_lying_extension() {
    assert_eq!(
        convert("really-a-pdf.docx", &pdf(None, &[&["PDF"]]))
            .await
            .format,
        SourceFormat::Pdf
    );
    assert_eq!(
        convert("really-a-docx.pdf", &docx()).await.format,
        SourceFormat::Docx
    );
    assert_eq!(
        convert("really-an-epub.zip.txt", &epub()).await.format,
        SourceFormat::Epub
    );
    assert_eq!(
        convert("really-an-odt.docx", &odt()).await.format,
        SourceFormat::Odt
    );
    // A control: an honest name is kept.
    assert_eq!(convert("brief.odt", &odt()).await.format, SourceFormat::Odt);
}

// ---------------------------------------------------------------------------------
// Limits and failures
// ---------------------------------------------------------------------------------

#[tokio::test]
async fn output_is_capped_on_a_char_boundary_with_a_note() {
    let text = "東京 Grüße\n".repeat(1000);
    let limits = ConvertLimits {
        max_output_bytes: 1000,
        ..ConvertLimits::default()
    };
    let converted = convert_bytes(Bytes::from(text.clone()), SourceFormat::Text, &limits)
        .await
        .unwrap();
    assert!(converted.truncated);
    assert!(
        converted.markdown.len() <= 1000,
        "{}",
        converted.markdown.len()
    );
    let (kept, note) = converted.markdown.split_once("\n\n[Truncated: ").unwrap();
    assert!(text.starts_with(kept), "{kept}");
    assert_eq!(
        note,
        format!(
            "{} of {} bytes of converted text left out.]",
            text.len() - kept.len(),
            text.len()
        )
    );
    // A control: the same text under the default cap is whole.
    let whole = convert_bytes(
        Bytes::from(text.clone()),
        SourceFormat::Text,
        &ConvertLimits::default(),
    )
    .await
    .unwrap();
    assert_eq!((whole.markdown, whole.truncated), (text, false));
}

#[tokio::test]
async fn a_file_over_the_input_limit_is_refused_unread() {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("riesig.pdf");
    // Sparse: 200 MB of nothing on disk; reading it would be the failure.
    std::fs::File::create(&path)
        .unwrap()
        .set_len(200_000_000)
        .unwrap();
    let error = convert_file(&path, &ConvertLimits::default())
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            ConvertError::TooLarge {
                bytes: 200_000_000,
                limit: 104_857_600
            }
        ),
        "{error:?}"
    );
    assert_eq!(
        error.to_string(),
        "the document is 200000000 bytes, over the 104857600-byte conversion limit; \
         convert a smaller file or raise the limit"
    );
    let small = ConvertLimits {
        max_input_bytes: 3,
        ..ConvertLimits::default()
    };
    let error = convert_bytes(Bytes::from_static(b"four"), SourceFormat::Text, &small)
        .await
        .unwrap_err();
    assert!(
        matches!(error, ConvertError::TooLarge { bytes: 4, limit: 3 }),
        "{error:?}"
    );
}

#[tokio::test]
async fn unsupported_and_missing_files_say_so() {
    let error = convert_error("programm.exe", b"MZ").await;
    assert!(
        matches!(&error, ConvertError::Unsupported { extension } if extension == "exe"),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .starts_with("cannot convert files with the extension .exe"),
        "{error}"
    );

    let missing = Path::new("/nonexistent/hearth/bericht.pdf");
    let error = convert_file(missing, &ConvertLimits::default())
        .await
        .unwrap_err();
    assert!(
        matches!(&error, ConvertError::Io { path, .. } if path == missing),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .starts_with("could not read /nonexistent/hearth/bericht.pdf: "),
        "{error}"
    );
}

#[tokio::test]
async fn corrupt_documents_are_errors_naming_their_format() {
    let truncated_zip = |bytes: Vec<u8>| bytes[..bytes.len() / 2].to_vec();
    let cases: Vec<(&str, Vec<u8>, SourceFormat, &str)> = vec![
        (
            "kaputt.pdf",
            b"%PDF-1.4\n1 0 obj garbage".to_vec(),
            SourceFormat::Pdf,
            "",
        ),
        (
            "kaputt.docx",
            truncated_zip(docx()),
            SourceFormat::Docx,
            "not a zip archive",
        ),
        (
            "kaputt.pptx",
            b"not a zip".to_vec(),
            SourceFormat::Pptx,
            "not a zip archive",
        ),
        (
            "kaputt.xlsx",
            truncated_zip(xlsx(0)),
            SourceFormat::Xlsx,
            "",
        ),
        (
            "kaputt.odt",
            truncated_zip(odt()),
            SourceFormat::Odt,
            "not a zip archive",
        ),
        (
            "kaputt.epub",
            truncated_zip(epub()),
            SourceFormat::Epub,
            "not a zip archive",
        ),
        (
            "leer.docx",
            zip_archive(&[("word/other.xml", "<a/>")]),
            SourceFormat::Docx,
            "it has no word/document.xml",
        ),
        (
            "schief.odt",
            zip_archive(&[("content.xml", "<a><b></a>")]),
            SourceFormat::Odt,
            "content.xml is not well-formed XML",
        ),
        (
            "leer.epub",
            zip_archive(&[("META-INF/container.xml", "<container/>")]),
            SourceFormat::Epub,
            "names no package document",
        ),
        (
            "kaputt.png",
            b"\x89PNG\r\n\x1a\n\0\0".to_vec(),
            SourceFormat::Image,
            "truncated or damaged",
        ),
        (
            "kaputt.jpg",
            b"not an image".to_vec(),
            SourceFormat::Image,
            "not a PNG, JPEG, GIF, WebP or BMP image",
        ),
    ];
    for (name, bytes, expected_format, fragment) in cases {
        let error = convert_error(name, &bytes).await;
        let ConvertError::Malformed { format, message } = &error else {
            panic!("{name}: {error:?}");
        };
        assert_eq!(*format, expected_format, "{name}: {error}");
        assert!(message.contains(fragment), "{name}: {error}");
        let prefix = format!("could not read the {} document: ", expected_format.name());
        assert!(error.to_string().starts_with(&prefix), "{name}: {error}");
    }
}

#[tokio::test]
async fn a_conversion_past_its_time_limit_times_out() {
    let limits = ConvertLimits {
        time_limit: Duration::ZERO,
        ..ConvertLimits::default()
    };
    let bytes = Bytes::from(pdf(None, &vec![&["Seite"][..]; 200]));
    let error = convert_bytes(bytes, SourceFormat::Pdf, &limits)
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            ConvertError::TimedOut {
                format: SourceFormat::Pdf,
                limit: Duration::ZERO
            }
        ),
        "{error:?}"
    );
}
