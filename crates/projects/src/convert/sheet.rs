//! Spreadsheets (XLSX, XLSM, XLSB, XLS, ODS): each sheet as `## Sheet name` and a
//! Markdown table, its first row as the header, at most [`MAX_ROWS`] rows per sheet.

use std::io::{Cursor, Read, Seek};

use calamine::{Data, Ods, Reader, Xls, Xlsb, Xlsx, open_workbook_from_rs};

use super::Draft;
use super::error::Result;
use super::format::SourceFormat;
use super::markdown::table;
use super::xml::{Archive, malformed};

/// Rows shown per sheet, the header row included; the rest are counted in a note.
pub(super) const MAX_ROWS: usize = 1000;

const FORMAT: SourceFormat = SourceFormat::Xlsx;

pub(super) fn convert(bytes: &[u8]) -> Result<Draft> {
    let reader = Cursor::new(bytes);
    let sections = match kind(bytes) {
        Kind::Xls => sections(open_workbook_from_rs::<Xls<_>, _>(reader))?,
        Kind::Xlsb => sections(open_workbook_from_rs::<Xlsb<_>, _>(reader))?,
        Kind::Ods => sections(open_workbook_from_rs::<Ods<_>, _>(reader))?,
        Kind::Xlsx => sections(open_workbook_from_rs::<Xlsx<_>, _>(reader))?,
    };
    Ok(Draft {
        title: None,
        markdown: sections.join("\n\n"),
        image: None,
    })
}

/// The spreadsheet formats calamine reads.
enum Kind {
    Xls,
    Xlsx,
    Xlsb,
    Ods,
}

/// Which reader to use, from the content: a compound file is XLS; a zip archive is
/// ODS by its `mimetype`, XLSB by its binary workbook part, XLSX otherwise.
fn kind(bytes: &[u8]) -> Kind {
    if bytes.starts_with(&[0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]) {
        return Kind::Xls;
    }
    let Ok(mut archive) = Archive::open(bytes, FORMAT) else {
        return Kind::Xlsx;
    };
    let names = archive.names();
    if names.iter().any(|name| name == "xl/workbook.bin") {
        return Kind::Xlsb;
    }
    match archive.text("mimetype") {
        Ok(Some(mimetype)) if mimetype.trim() == ODS_MIMETYPE => Kind::Ods,
        _ => Kind::Xlsx,
    }
}

const ODS_MIMETYPE: &str = "application/vnd.oasis.opendocument.spreadsheet";

/// Each sheet of an opened workbook as a `## name` section with its table.
fn sections<RS, R>(opened: std::result::Result<R, R::Error>) -> Result<Vec<String>>
where
    RS: Read + Seek,
    R: Reader<RS>,
    R::Error: std::fmt::Display,
{
    let mut workbook = opened.map_err(|error| malformed(FORMAT, error.to_string()))?;
    let mut sections = Vec::new();
    for name in workbook.sheet_names() {
        let range = workbook
            .worksheet_range(&name)
            .map_err(|error| malformed(FORMAT, format!("sheet {name:?}: {error}")))?;
        let rows: Vec<Vec<String>> = range
            .rows()
            .map(|row| row.iter().map(cell_text).collect::<Vec<_>>())
            .filter(|row| row.iter().any(|cell| !cell.trim().is_empty()))
            .collect();
        let mut section = format!("## {name}\n\n");
        if rows.is_empty() {
            section.push_str("(empty sheet)");
        } else {
            let shown = rows.len().min(MAX_ROWS);
            section.push_str(&table(&rows[..shown]));
            let left_out = rows.len() - shown;
            if left_out > 0 {
                section.push_str(&format!(
                    "\n\n({left_out} more rows not shown; the sheet has {} rows with data.)",
                    rows.len()
                ));
            }
        }
        sections.push(section);
    }
    Ok(sections)
}

/// A cell as text: dates as ISO 8601, errors as Excel shows them.
fn cell_text(cell: &Data) -> String {
    match cell {
        Data::DateTime(value) if value.is_datetime() => {
            let (year, month, day, hour, minute, second, _) = value.to_ymd_hms_milli();
            if (hour, minute, second) == (0, 0, 0) {
                format!("{year:04}-{month:02}-{day:02}")
            } else {
                format!("{year:04}-{month:02}-{day:02} {hour:02}:{minute:02}:{second:02}")
            }
        }
        other => other.to_string(),
    }
}
