//! Content lines: unfolding, parsing, escaping, folding.

use super::*;
use pretty_assertions::assert_eq;
use proptest::prelude::*;

fn lines(source: &str) -> Vec<(String, usize, Range<usize>)> {
    Lines::new(source)
        .map(|l| (l.text.into_owned(), l.line, l.span))
        .collect()
}

#[test]
fn unfolds_crlf_lf_and_tabs() {
    let source = "A:1\r\nDESCRIPTION:ab\r\n c\r\n\td\r\nB:2\nC:3";
    assert_eq!(
        lines(source),
        vec![
            ("A:1".to_owned(), 1, 0..5),
            ("DESCRIPTION:abcd".to_owned(), 2, 5..29),
            ("B:2".to_owned(), 5, 29..33),
            ("C:3".to_owned(), 6, 33..36),
        ]
    );
}

#[test]
fn skips_a_byte_order_mark() {
    assert_eq!(lines("\u{feff}A:1\n"), vec![("A:1".to_owned(), 1, 3..7)]);
}

#[test]
fn parses_parameters_quotes_and_colons_in_values() {
    let line = parse_line(
        "ATTENDEE;CN=\"Doe, Jane\";ROLE=REQ-PARTICIPANT;X-A=a,\"b:c\":mailto:jane@example.com",
    )
    .unwrap();
    assert_eq!(line.name, "ATTENDEE");
    assert_eq!(line.param("cn"), Some("Doe, Jane"));
    assert_eq!(line.param("ROLE"), Some("REQ-PARTICIPANT"));
    assert_eq!(
        line.params[2].values,
        vec![Cow::Borrowed("a"), Cow::Borrowed("b:c")]
    );
    assert_eq!(line.value, "mailto:jane@example.com");
}

#[test]
fn decodes_caret_escapes() {
    let line = parse_line("X-A;X-P=\"a^'b^nc^^\":v").unwrap();
    assert_eq!(line.param("X-P"), Some("a\"b\nc^"));
    assert_eq!(line.to_unfolded(), "X-A;X-P=a^'b^nc^^:v");
}

#[test]
fn rejects_malformed_lines_with_reasons() {
    for (text, reason) in [
        ("NO COLON HERE", "no `:`"),
        (":value", "name is empty"),
        ("BAD NAME:x", "not a property name"),
        ("DTSTART;TZID:x", "no `=`"),
        ("A;B=\"open:x", "unclosed quote"),
        ("A;B=\"q\"x:v", "unexpected text"),
    ] {
        let error = parse_line(text).unwrap_err();
        assert!(error.0.contains(reason), "{text}: {}", error.0);
    }
}

#[test]
fn text_escaping_round_trips() {
    let text = "a,b;c\\d\nline";
    assert_eq!(escape_text(text), "a\\,b\\;c\\\\d\\nline");
    assert_eq!(unescape_text(&escape_text(text)), text);
    assert_eq!(unescape_text("x\\Ny"), "x\ny");
    assert_eq!(escape_text("a\r\nb"), "a\\nb");
}

#[test]
fn splits_text_lists_on_unescaped_commas() {
    assert_eq!(
        split_text_list("Work, Meetings\\, weekly ,,x"),
        vec!["Work", "Meetings, weekly", "x"]
    );
}

#[test]
fn folds_at_75_octets_without_splitting_characters() {
    let line = format!("SUMMARY:{}", "é".repeat(60));
    let folded = fold(&line, "\r\n");
    for physical in folded.split("\r\n").filter(|l| !l.is_empty()) {
        assert!(physical.len() <= 75, "{} octets", physical.len());
    }
    let unfolded: Vec<_> = Lines::new(&folded).map(|l| l.text.into_owned()).collect();
    assert_eq!(unfolded, vec![line]);
}

proptest! {
    #[test]
    fn fold_then_unfold_is_identity(value in "[^\r\n]{0,300}") {
        let line = format!("X-TEST:{value}");
        let folded = fold(&line, "\r\n");
        let unfolded: Vec<_> = Lines::new(&folded).map(|l| l.text.into_owned()).collect();
        prop_assert_eq!(unfolded, vec![line]);
    }

    #[test]
    fn escape_then_unescape_is_identity(text in "[^\r]{0,200}") {
        let escaped = escape_text(&text);
        prop_assert_eq!(unescape_text(&escaped).into_owned(), text);
    }

    #[test]
    fn written_lines_parse_back(
        name in "X-[A-Z]{1,8}",
        param in "[^\r\n\"]{0,30}",
        value in "[^\r\n]{0,80}",
    ) {
        let line = ContentLine::new(name.clone(), value.clone())
            .with_param("X-P", param.clone());
        let text = line.to_unfolded();
        let parsed = parse_line(&text).unwrap();
        prop_assert_eq!(parsed.name.as_ref(), name.as_str());
        prop_assert_eq!(parsed.param("X-P"), Some(param.as_str()));
        prop_assert_eq!(parsed.value.as_ref(), value.as_str());
    }

    #[test]
    fn parsing_never_panics(text in "\\PC{0,120}") {
        drop(parse_line(&text));
        prop_assert!(Lines::new(&text).count() <= text.len() + 1);
    }
}
