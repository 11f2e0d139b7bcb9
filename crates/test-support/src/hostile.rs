//! Documents built to harm the converter that reads them, made here byte by byte (as
//! found in the wild): a spreadsheet whose two cells span the whole sheet, a PDF whose
//! form draws itself, an EPUB and HTML pages nested far too deep. Each is small; each
//! aborts a process that parses it in-line.

use std::io::Write;

/// An XLSX with two cells, A1 and XFD1048576: a reader that keeps a sheet as a dense
/// range from its first to its last cell asks for 16384 × 1048576 cells.
pub fn xlsx_two_far_cells() -> Vec<u8> {
    let sheet = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><dimension ref="A1:XFD1048576"/><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>first</t></is></c></row><row r="1048576"><c r="XFD1048576" t="inlineStr"><is><t>last</t></is></c></row></sheetData></worksheet>"#;
    zip(&[
        (
            "[Content_Types].xml",
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>"#,
        ),
        (
            "_rels/.rels",
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>"#,
        ),
        (
            "xl/workbook.xml",
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>"#,
        ),
        (
            "xl/_rels/workbook.xml.rels",
            r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>"#,
        ),
        ("xl/worksheets/sheet1.xml", sheet),
    ])
}

/// A PDF of one page that draws a form XObject whose content draws itself.
pub fn pdf_self_drawing_form() -> Vec<u8> {
    let form_content = "/F1 Do";
    let page_content = "/F1 Do";
    let objects = [
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_owned(),
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /XObject << /F1 5 0 R >> >> /Contents 4 0 R >>".to_owned(),
        format!(
            "<< /Length {} >>\nstream\n{page_content}\nendstream",
            page_content.len()
        ),
        format!(
            "<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /XObject << /F1 5 0 R >> >> /Length {} >>\nstream\n{form_content}\nendstream",
            form_content.len()
        ),
    ];
    let mut pdf = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (index, object) in objects.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.extend_from_slice(format!("{} 0 obj\n{object}\nendobj\n", index + 1).as_bytes());
    }
    let xref = pdf.len();
    pdf.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for offset in offsets {
        pdf.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    pdf.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    pdf
}

/// `depth` elements nested in one another, with a word at the bottom.
pub fn nested(tag: &str, depth: usize) -> String {
    let mut html = String::with_capacity(depth * (2 * tag.len() + 5) + 64);
    for _ in 0..depth {
        html.push('<');
        html.push_str(tag);
        html.push('>');
    }
    html.push_str("deep");
    for _ in 0..depth {
        html.push_str("</");
        html.push_str(tag);
        html.push('>');
    }
    html
}

/// An HTML page of `depth` nested `<div>`s.
pub fn html_nested_divs(depth: usize) -> Vec<u8> {
    format!(
        "<!DOCTYPE html><html><head><title>Deep</title></head><body>{}</body></html>",
        nested("div", depth)
    )
    .into_bytes()
}

/// An EPUB whose one chapter is `depth` nested `<div>`s.
pub fn epub_nested_divs(depth: usize) -> Vec<u8> {
    let chapter = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><html xmlns=\"http://www.w3.org/1999/xhtml\"><head><title>Deep</title></head><body>{}</body></html>",
        nested("div", depth)
    );
    zip(&[
        ("mimetype", "application/epub+zip"),
        (
            "META-INF/container.xml",
            r#"<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>"#,
        ),
        (
            "OEBPS/content.opf",
            r#"<?xml version="1.0" encoding="UTF-8"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Deep</dc:title><dc:identifier id="id">deep</dc:identifier></metadata><manifest><item id="c1" href="chapter.xhtml" media-type="application/xhtml+xml"/></manifest><spine><itemref idref="c1"/></spine></package>"#,
        ),
        ("OEBPS/chapter.xhtml", &chapter),
    ])
}

/// A zip archive of these files, stored uncompressed.
fn zip(files: &[(&str, &str)]) -> Vec<u8> {
    let mut archive = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    for (name, contents) in files {
        archive.start_file(*name, options).unwrap();
        archive.write_all(contents.as_bytes()).unwrap();
    }
    archive.finish().unwrap().into_inner()
}
