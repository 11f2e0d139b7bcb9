//! Markdown building blocks shared by the converters: blocks rendered to text, tables,
//! tidying, and the output cap.

/// Drops trailing spaces and collapses runs of blank lines (as for fetched text).
pub(super) use hearth_fetch::tidy_text as tidy;

/// One block of a document, as the XML-based converters collect them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Block {
    /// A heading, level 1 to 6.
    Heading { level: usize, text: String },
    /// A paragraph; lines inside it are hard breaks.
    Paragraph(String),
    /// A list item, `depth` 0 for the outermost list.
    ListItem {
        depth: usize,
        ordered: bool,
        text: String,
    },
    /// A table; the first row is rendered as the header.
    Table(Vec<Vec<String>>),
}

/// Renders blocks as Markdown, consecutive list items kept together.
pub(super) fn render(blocks: &[Block]) -> String {
    let mut out = String::new();
    let mut previous_was_item = false;
    for block in blocks {
        let is_item = matches!(block, Block::ListItem { .. });
        if !out.is_empty() {
            out.push_str(if is_item && previous_was_item {
                "\n"
            } else {
                "\n\n"
            });
        }
        previous_was_item = is_item;
        match block {
            Block::Heading { level, text } => {
                let level = (*level).clamp(1, 6);
                out.push_str(&"#".repeat(level));
                out.push(' ');
                out.push_str(&one_line(text));
            }
            Block::Paragraph(text) => out.push_str(&hard_breaks(text)),
            Block::ListItem {
                depth,
                ordered,
                text,
            } => {
                out.push_str(&"  ".repeat(*depth));
                out.push_str(if *ordered { "1. " } else { "- " });
                out.push_str(&one_line(text));
            }
            Block::Table(rows) => out.push_str(&table(rows)),
        }
    }
    out
}

/// Renders rows as a Markdown table: the first row is the header, every row is padded
/// to the widest, and cell text is kept on one line with `|` escaped.
pub(super) fn table(rows: &[Vec<String>]) -> String {
    let width = rows.iter().map(Vec::len).max().unwrap_or(0).max(1);
    let mut out = String::new();
    for (index, row) in rows.iter().enumerate() {
        out.push('|');
        for column in 0..width {
            let cell = row.get(column).map(String::as_str).unwrap_or("");
            out.push(' ');
            out.push_str(&table_cell(cell));
            out.push_str(" |");
        }
        out.push('\n');
        if index == 0 {
            out.push('|');
            out.push_str(&" --- |".repeat(width));
            out.push('\n');
        }
    }
    out.truncate(out.trim_end().len());
    out
}

fn table_cell(text: &str) -> String {
    let mut cell = String::with_capacity(text.len());
    for (index, line) in text.trim().lines().enumerate() {
        if index > 0 {
            cell.push_str("<br>");
        }
        cell.push_str(&line.trim().replace('|', "\\|"));
    }
    cell
}

/// Text on one line: inner line breaks become spaces.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Lines inside a paragraph as Markdown hard breaks (a trailing backslash).
fn hard_breaks(text: &str) -> String {
    let lines: Vec<&str> = text.trim().lines().map(str::trim_end).collect();
    lines.join("\\\n")
}

/// Caps `markdown` at `max_bytes` bytes, note included: cut on a character boundary
/// (at a line end when one is near), followed by a line saying how much was left out.
pub(super) fn cap(mut markdown: String, max_bytes: usize) -> (String, bool) {
    if markdown.len() <= max_bytes {
        return (markdown, false);
    }
    let total = markdown.len();
    // The note's length depends on the number it carries; reserve for the longest.
    let note_room = note(total, total).len();
    let mut cut = floor_char_boundary(&markdown, max_bytes.saturating_sub(note_room));
    if let Some(line_end) = markdown[..cut].rfind('\n')
        && cut - line_end < 1024
    {
        cut = line_end;
    }
    markdown.truncate(cut);
    markdown.truncate(markdown.trim_end().len());
    let note = note(total - markdown.len(), total);
    if markdown.len() + note.len() <= max_bytes {
        markdown.push_str(&note);
    }
    (markdown, true)
}

fn note(left_out: usize, total: usize) -> String {
    format!("\n\n[Truncated: {left_out} of {total} bytes of converted text left out.]")
}

fn floor_char_boundary(text: &str, index: usize) -> usize {
    if index >= text.len() {
        return text.len();
    }
    (0..=index)
        .rev()
        .find(|at| text.is_char_boundary(*at))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn blocks_render_with_lists_kept_together() {
        let blocks = [
            Block::Heading {
                level: 1,
                text: "Grüße".into(),
            },
            Block::Paragraph("one\ntwo".into()),
            Block::ListItem {
                depth: 0,
                ordered: false,
                text: "a".into(),
            },
            Block::ListItem {
                depth: 1,
                ordered: true,
                text: "b".into(),
            },
            Block::Table(vec![vec!["x".into(), "y|z".into()], vec!["1".into()]]),
        ];
        assert_eq!(
            render(&blocks),
            "# Grüße\n\none\\\ntwo\n\n- a\n  1. b\n\n| x | y\\|z |\n| --- | --- |\n| 1 |  |"
        );
    }

    #[test]
    fn cap_cuts_on_a_char_boundary_and_fits_the_note() {
        let text = "東京".repeat(100);
        let (capped, truncated) = cap(text.clone(), 120);
        assert!(truncated);
        assert!(capped.len() <= 120, "{}", capped.len());
        assert!(capped.starts_with("東京"), "{capped}");
        assert!(
            capped.ends_with("of 600 bytes of converted text left out.]"),
            "{capped}"
        );
        assert_eq!(cap(text.clone(), 600), (text, false));
    }

    proptest::proptest! {
        #[test]
        fn cap_never_exceeds_its_limit(text in "\\PC{0,200}", max in 0usize..400) {
            let (capped, truncated) = cap(text.clone(), max);
            proptest::prop_assert_eq!(truncated, text.len() > max);
            proptest::prop_assert!(capped.len() <= max || !truncated);
            if !truncated {
                proptest::prop_assert_eq!(capped, text);
            }
        }
    }

    #[test]
    fn cap_smaller_than_the_note_still_holds() {
        let (capped, truncated) = cap("abcdef".repeat(10), 4);
        assert!(truncated);
        assert!(capped.len() <= 4, "{capped}");
    }
}
