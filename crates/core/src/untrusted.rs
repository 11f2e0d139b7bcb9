//! Showing text Hearth did not write — an agent's answer or permission option, a model's
//! reasoning, a tool's result, an MCP server's message, a calendar's event title, a file
//! name, a URL the user or a server gave — without letting it act on the screen or leak
//! a password.
//!
//! - [`escape_controls`] shows the characters a terminal would act on as escapes
//!   (`\x1b`, `\x07`, `\u{9b}`, `\u{202e}`): C0 controls except line feed, tab and
//!   the carriage return of a `\r\n` line end, DEL, the C1 controls U+0080–U+009F, and
//!   the bidirectional overrides and isolates U+202A–U+202E and U+2066–U+2069 (which
//!   reorder what is shown around them).
//!   [`escape_controls_inline`] also escapes line feeds and tabs, for text that must
//!   stay on its line (a title, a label, a path).
//! - [`redact_userinfo`] replaces the user name and password of every URL in a message
//!   (`https://alice:pw@host/` → `https://[redacted]@host/`).
//!
//! All three return the text itself, borrowed, when there is nothing to change. They
//! escape; they do not strip: the reader sees that something was there. Hearth applies
//! them to the untrusted pieces before adding its own words and styling, so its own
//! colours stay.

use std::borrow::Cow;

/// What credentials in a URL are replaced with.
pub const REDACTED: &str = "[redacted]";

/// Whether line feeds and tabs are kept.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lines {
    /// Kept: the text may span lines.
    Kept,
    /// Escaped: the text stays on one line.
    Escaped,
}

/// Whether a terminal could act on `c` (or reorder the text around it).
fn is_control(c: char, lines: Lines) -> bool {
    match c {
        '\n' | '\t' => lines == Lines::Escaped,
        '\0'..='\x1f' | '\x7f' | '\u{80}'..='\u{9f}' => true,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        _ => false,
    }
}

/// Whether the character at `index` of `text` must be escaped: a control, except a
/// carriage return that ends a line (`\r\n`) where lines are kept — harmless, and how
/// iCalendar and Windows files end their lines.
fn must_escape(text: &str, index: usize, c: char, lines: Lines) -> bool {
    is_control(c, lines)
        && !(c == '\r' && lines == Lines::Kept && text[index + 1..].starts_with('\n'))
}

fn escape(text: &str, lines: Lines) -> Cow<'_, str> {
    let Some(first) = text
        .char_indices()
        .find(|&(index, c)| must_escape(text, index, c, lines))
        .map(|(index, _)| index)
    else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str(&text[..first]);
    for (index, c) in text[first..].char_indices() {
        if !must_escape(text, first + index, c, lines) {
            out.push(c);
            continue;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0'..='\x7f' => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            _ => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
        }
    }
    Cow::Owned(out)
}

/// `text` with every character a terminal would act on shown escaped (`\x1b`, `\x07`,
/// a lone `\r`, `\u{9b}`, `\u{202e}`); line feeds, tabs and `\r\n` line ends are
/// kept. Borrowed when there is nothing to escape.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    escape(text, Lines::Kept)
}

/// [`escape_controls`], with line feeds and tabs escaped too (`\n`, `\t`): for a title,
/// a label, a path or a command that must stay on its line.
pub fn escape_controls_inline(text: &str) -> Cow<'_, str> {
    escape(text, Lines::Escaped)
}

/// Where the authority of a URL whose `://` ends at `start` ends: at the first character
/// that cannot be part of it (a path, query or fragment, or the end of the URL in a
/// sentence or a quotation).
fn authority_end(text: &str, start: usize) -> usize {
    text[start..]
        .find(|c: char| c.is_whitespace() || matches!(c, '/' | '?' | '#' | '"' | '<' | '>' | '`'))
        .map_or(text.len(), |end| start + end)
}

/// `text` with the user-info of every URL in it (`scheme://user:password@host`)
/// replaced by [`REDACTED`]: `scheme://[redacted]@host`. The last `@` of the authority
/// ends the user-info, as URL parsers read it, so a password holding `@` goes whole.
/// Borrowed when no URL in it has user-info.
pub fn redact_userinfo(text: &str) -> Cow<'_, str> {
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut from = 0;
    while let Some(found) = text[from..].find("://") {
        let start = from + found + 3;
        let end = authority_end(text, start);
        if let Some(at) = text[start..end].rfind('@') {
            let shown = out.get_or_insert_with(|| String::with_capacity(text.len()));
            shown.push_str(&text[copied..start]);
            shown.push_str(REDACTED);
            copied = start + at;
        }
        from = end.max(start);
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut shown) => {
            shown.push_str(&text[copied..]);
            Cow::Owned(shown)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;

    /// Characters no escaped text may hold: ESC, BEL and every other C0 control but
    /// line feed and tab, DEL, C1, and the bidirectional overrides and isolates.
    fn forbidden(c: char) -> bool {
        (c < ' ' && c != '\n' && c != '\t' && c != '\r')
            || ('\u{7f}'..='\u{9f}').contains(&c)
            || ('\u{202a}'..='\u{202e}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c)
    }

    /// Whether `text` holds something a terminal acts on: a [`forbidden`] character, or a
    /// carriage return that does not end a line.
    fn acts_on_a_terminal(text: &str) -> bool {
        text.chars().any(forbidden) || text.replace("\r\n", "\n").contains('\r')
    }

    #[test]
    fn escape_sequences_are_shown_not_sent() {
        let cases = [
            (
                "Refuse\x1b[8m (allow always)",
                "Refuse\\x1b[8m (allow always)",
            ),
            (
                "\x1b]52;c;cm0gLXJmIH4=\x07copied",
                "\\x1b]52;c;cm0gLXJmIH4=\\x07copied",
            ),
            ("\x1b]0;owned\x07", "\\x1b]0;owned\\x07"),
            ("\x1b[2J\x1b[H", "\\x1b[2J\\x1b[H"),
            ("over\rwrite", "over\\rwrite"),
            ("crlf\r\nlines\r\n", "crlf\r\nlines\r\n"),
            ("lone\r\r\n", "lone\\r\r\n"),
            ("\u{9b}31m red", "\\u{9b}31m red"),
            ("abc\u{202e}fdp.exe", "abc\\u{202e}fdp.exe"),
            ("\u{2066}isolated\u{2069}", "\\u{2066}isolated\\u{2069}"),
            ("back\x08space\x7f\0", "back\\x08space\\x7f\\x00"),
            ("two\nlines\tand a tab", "two\nlines\tand a tab"),
            ("naïve café — ünïcode ✓ 🎉", "naïve café — ünïcode ✓ 🎉"),
            (r"C:\x1b is text already", r"C:\x1b is text already"),
        ];
        for (input, expected) in cases {
            assert_eq!(escape_controls(input), expected, "{input:?}");
        }
    }

    #[test]
    fn inline_text_stays_on_its_line() {
        assert_eq!(
            escape_controls_inline("Yes\n  [2] allow once\tx\r\n"),
            "Yes\\n  [2] allow once\\tx\\r\\n"
        );
        assert_eq!(escape_controls_inline("a\x1b[2Jb"), "a\\x1b[2Jb");
    }

    #[test]
    fn clean_text_is_borrowed() {
        assert!(matches!(escape_controls("plain\ntext"), Cow::Borrowed(_)));
        assert!(matches!(escape_controls_inline("plain"), Cow::Borrowed(_)));
        assert!(matches!(
            redact_userinfo("see https://example.com/a@b and me@example.com"),
            Cow::Borrowed(_)
        ));
        // Controls: the test can fail.
        assert!(matches!(escape_controls("\x1b"), Cow::Owned(_)));
        assert!(matches!(escape_controls_inline("a\nb"), Cow::Owned(_)));
    }

    #[test]
    fn credentials_in_urls_are_redacted() {
        let cases = [
            (
                "CalDAV calendar `work` (http://alice:secretpw@127.0.0.1:9/cal/): REPORT http://alice:secretpw@127.0.0.1:9/cal/ failed",
                "CalDAV calendar `work` (http://[redacted]@127.0.0.1:9/cal/): REPORT http://[redacted]@127.0.0.1:9/cal/ failed",
            ),
            (
                "https://ann:s3cret@example.com/x",
                "https://[redacted]@example.com/x",
            ),
            (
                "https://token@example.com",
                "https://[redacted]@example.com",
            ),
            ("http://a:p@ss@host/path", "http://[redacted]@host/path"),
            ("(http://u:p@h:1)", "(http://[redacted]@h:1)"),
            (
                "base URL `http://u:pw@127.0.0.1:9/v1` is not usable",
                "base URL `http://[redacted]@127.0.0.1:9/v1` is not usable",
            ),
            ("\"ws://x:y@h/\"", "\"ws://[redacted]@h/\""),
            (
                "https://example.com/mail?to=bob@example.com",
                "https://example.com/mail?to=bob@example.com",
            ),
            ("https://example.com/@user", "https://example.com/@user"),
            ("write to bob@example.com", "write to bob@example.com"),
            ("no url at all ://", "no url at all ://"),
            ("://a:b@c", "://[redacted]@c"),
        ];
        for (input, expected) in cases {
            assert_eq!(redact_userinfo(input), expected, "{input}");
        }
    }

    /// Text rich in what must be escaped: any character, or one of the ranges above.
    fn hostile_text() -> impl Strategy<Value = String> {
        let range = |low: u32, high: u32| (low..=high).prop_filter_map("a char", char::from_u32);
        prop::collection::vec(
            prop_oneof![
                any::<char>(),
                range(0, 0x1f),
                range(0x7f, 0x9f),
                range(0x202a, 0x202e),
                range(0x2066, 0x2069),
            ],
            0..48,
        )
        .prop_map(|chars| chars.into_iter().collect())
    }

    proptest! {
        #[test]
        fn escaped_text_holds_no_control(text in hostile_text()) {
            let escaped = escape_controls(&text);
            prop_assert!(!acts_on_a_terminal(&escaped), "{escaped:?}");
            let inline = escape_controls_inline(&text);
            prop_assert!(
                !inline.chars().any(|c| forbidden(c) || c == '\n' || c == '\t' || c == '\r'),
                "{inline:?}"
            );
            // Escaping what is escaped changes nothing.
            prop_assert_eq!(escape_controls(&escaped), escaped.clone());
        }

        #[test]
        fn text_without_controls_passes_unchanged(
            text in "[^\\x00-\\x1f\\x7f-\\x9f\\u{202a}-\\u{202e}\\u{2066}-\\u{2069}]*",
            lines in "([ a-z\\t]|\\n|\\r\\n)*",
        ) {
            prop_assert!(matches!(escape_controls(&text), Cow::Borrowed(shown) if shown == text));
            prop_assert!(matches!(escape_controls_inline(&text), Cow::Borrowed(shown) if shown == text));
            prop_assert!(matches!(escape_controls(&lines), Cow::Borrowed(shown) if shown == lines));
        }

        #[test]
        fn every_password_in_a_url_is_redacted(
            prefix in "[A-Za-z ,(]{0,12}",
            scheme in "(http|https|webcal|ws)",
            user in "[A-Za-z0-9._~-]{0,8}",
            password in "[A-Za-z0-9._~!$&'()*+,;=:@%-]{1,16}",
            host in "[a-z0-9-]{1,12}(\\.[a-z]{2,5})?(:[0-9]{1,5})?",
            path in "(/[A-Za-z0-9._@-]{0,8}){0,3}",
            suffix in "[A-Za-z ,)]{0,12}",
        ) {
            let text = format!("{prefix} `{scheme}://{user}:{password}@{host}{path}` {suffix}");
            prop_assert_eq!(
                redact_userinfo(&text),
                format!("{prefix} `{scheme}://{REDACTED}@{host}{path}` {suffix}")
            );
        }

        #[test]
        fn text_without_user_info_passes_unchanged(text in "[^@]*") {
            prop_assert!(matches!(redact_userinfo(&text), Cow::Borrowed(shown) if shown == text));
        }
    }
}
