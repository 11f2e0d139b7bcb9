//! RFC 5545 content lines: unfolding, parsing (`NAME;PARAM=VALUE:value`), text escaping,
//! and writing folded lines. Parsed lines borrow from the source text where they can, so
//! reading a large calendar allocates little.

use std::borrow::Cow;
use std::ops::Range;

/// One logical (unfolded) line of an iCalendar text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawLine<'a> {
    /// The unfolded text, without its line terminator.
    pub text: Cow<'a, str>,
    /// The 1-based number of its first physical line.
    pub line: usize,
    /// The bytes it occupies in the source, folds and terminator included.
    pub span: Range<usize>,
}

/// Iterates the logical lines of an iCalendar text. Accepts CRLF and bare LF; a physical
/// line starting with a space or tab continues the previous one (RFC 5545 §3.1).
pub struct Lines<'a> {
    source: &'a str,
    position: usize,
    line: usize,
}

impl<'a> Lines<'a> {
    pub fn new(source: &'a str) -> Self {
        // A byte-order mark is not part of the first line.
        let position = if source.starts_with('\u{feff}') { 3 } else { 0 };
        Self {
            source,
            position,
            line: 1,
        }
    }

    /// The next physical line from `start`: its content (no terminator) and the offset
    /// just past its terminator.
    fn physical(&self, start: usize) -> (&'a str, usize) {
        let rest = &self.source[start..];
        match rest.find('\n') {
            Some(newline) => {
                let content = &rest[..newline];
                let content = content.strip_suffix('\r').unwrap_or(content);
                (content, start + newline + 1)
            }
            None => (rest.strip_suffix('\r').unwrap_or(rest), self.source.len()),
        }
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = RawLine<'a>;

    fn next(&mut self) -> Option<RawLine<'a>> {
        if self.position >= self.source.len() {
            return None;
        }
        let start = self.position;
        let first_line = self.line;
        let (first, mut end) = self.physical(start);
        self.line += 1;
        let mut text = Cow::Borrowed(first);
        while end < self.source.len() {
            let next = self.source.as_bytes()[end];
            if next != b' ' && next != b'\t' {
                break;
            }
            let (continuation, after) = self.physical(end);
            text.to_mut().push_str(&continuation[1..]);
            end = after;
            self.line += 1;
        }
        self.position = end;
        Some(RawLine {
            text,
            line: first_line,
            span: start..end,
        })
    }
}

/// A property parameter (`TZID=Europe/Berlin`, `MEMBER="a","b"`), values unquoted and
/// RFC 6868 caret escapes decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param<'a> {
    pub name: Cow<'a, str>,
    pub values: Vec<Cow<'a, str>>,
}

impl Param<'_> {
    pub fn into_owned(self) -> Param<'static> {
        Param {
            name: Cow::Owned(self.name.into_owned()),
            values: self
                .values
                .into_iter()
                .map(|v| Cow::Owned(v.into_owned()))
                .collect(),
        }
    }
}

/// One parsed content line. `value` is as written (still escaped).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContentLine<'a> {
    pub name: Cow<'a, str>,
    pub params: Vec<Param<'a>>,
    pub value: Cow<'a, str>,
}

impl<'a> ContentLine<'a> {
    /// A line with no parameters.
    pub fn new(name: impl Into<Cow<'a, str>>, value: impl Into<Cow<'a, str>>) -> Self {
        Self {
            name: name.into(),
            params: Vec::new(),
            value: value.into(),
        }
    }

    /// Adds a parameter.
    pub fn with_param(mut self, name: &'a str, value: impl Into<Cow<'a, str>>) -> Self {
        self.params.push(Param {
            name: Cow::Borrowed(name),
            values: vec![value.into()],
        });
        self
    }

    /// Whether the property has this (case-insensitive) name.
    pub fn is(&self, name: &str) -> bool {
        self.name.eq_ignore_ascii_case(name)
    }

    /// The first value of a parameter, by case-insensitive name.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|p| p.name.eq_ignore_ascii_case(name))
            .and_then(|p| p.values.first())
            .map(|v| v.as_ref())
    }

    pub fn into_owned(self) -> ContentLine<'static> {
        ContentLine {
            name: Cow::Owned(self.name.into_owned()),
            params: self.params.into_iter().map(Param::into_owned).collect(),
            value: Cow::Owned(self.value.into_owned()),
        }
    }

    /// The line as written, unfolded and without terminator.
    pub fn to_unfolded(&self) -> String {
        let mut out = String::with_capacity(self.name.len() + self.value.len() + 16);
        out.push_str(&self.name);
        for param in &self.params {
            out.push(';');
            out.push_str(&param.name);
            out.push('=');
            for (i, value) in param.values.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_param_value(&mut out, value);
            }
        }
        out.push(':');
        out.push_str(&self.value);
        out
    }
}

/// Why a content line could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineError(pub String);

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-'
}

/// Parses one unfolded content line.
pub fn parse_line(text: &str) -> Result<ContentLine<'_>, LineError> {
    let name_end = text
        .find([';', ':'])
        .ok_or_else(|| LineError("no `:` between the property name and its value".into()))?;
    let name = &text[..name_end];
    if name.is_empty() {
        return Err(LineError("the property name is empty".into()));
    }
    if !name.chars().all(is_name_char) {
        return Err(LineError(format!(
            "`{}` is not a property name (letters, digits and `-` only)",
            truncate(name, 40)
        )));
    }
    let mut params = Vec::new();
    let bytes = text.as_bytes();
    let mut position = name_end;
    while bytes.get(position) == Some(&b';') {
        position += 1;
        let rest = &text[position..];
        let equals = rest
            .find(['=', ':', ';'])
            .filter(|&i| rest.as_bytes()[i] == b'=')
            .ok_or_else(|| {
                LineError(format!(
                    "parameter `{}` of {name} has no `=`",
                    truncate(rest.split([':', ';']).next().unwrap_or(rest), 40)
                ))
            })?;
        let param_name = &rest[..equals];
        if param_name.is_empty() || !param_name.chars().all(is_name_char) {
            return Err(LineError(format!(
                "`{}` is not a parameter name",
                truncate(param_name, 40)
            )));
        }
        position += equals + 1;
        let mut values = Vec::new();
        loop {
            if bytes.get(position) == Some(&b'"') {
                let rest = &text[position + 1..];
                let close = rest.find('"').ok_or_else(|| {
                    LineError(format!("parameter {param_name} has an unclosed quote"))
                })?;
                values.push(decode_caret(&rest[..close]));
                position += close + 2;
            } else {
                let rest = &text[position..];
                let end = rest.find([',', ';', ':']).unwrap_or(rest.len());
                values.push(decode_caret(&rest[..end]));
                position += end;
            }
            match bytes.get(position) {
                Some(b',') => position += 1,
                Some(b';') | Some(b':') => break,
                Some(_) => {
                    return Err(LineError(format!(
                        "unexpected text after the quoted value of parameter {param_name}"
                    )));
                }
                None => {
                    return Err(LineError(format!("no `:` after the parameters of {name}")));
                }
            }
        }
        params.push(Param {
            name: Cow::Borrowed(param_name),
            values,
        });
    }
    if bytes.get(position) != Some(&b':') {
        return Err(LineError(format!("no `:` after the parameters of {name}")));
    }
    Ok(ContentLine {
        name: Cow::Borrowed(name),
        params,
        value: Cow::Borrowed(&text[position + 1..]),
    })
}

fn truncate(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((i, _)) => &text[..i],
        None => text,
    }
}

/// Decodes RFC 6868 caret escapes (`^n`, `^'`, `^^`) in a parameter value.
fn decode_caret(value: &str) -> Cow<'_, str> {
    if !value.contains('^') {
        return Cow::Borrowed(value);
    }
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c != '^' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('\'') => out.push('"'),
            Some('^') => out.push('^'),
            Some(other) => {
                out.push('^');
                out.push(other);
            }
            None => out.push('^'),
        }
    }
    Cow::Owned(out)
}

/// Writes a parameter value, quoting and caret-escaping as needed.
fn write_param_value(out: &mut String, value: &str) {
    let needs_quotes = value.contains([':', ';', ',']);
    if needs_quotes {
        out.push('"');
    }
    for c in value.chars() {
        match c {
            '"' => out.push_str("^'"),
            '\n' => out.push_str("^n"),
            '^' => out.push_str("^^"),
            '\r' => {}
            c => out.push(c),
        }
    }
    if needs_quotes {
        out.push('"');
    }
}

/// Escapes a TEXT value (RFC 5545 §3.3.11).
pub fn escape_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => out.push_str("\\\\"),
            ';' => out.push_str("\\;"),
            ',' => out.push_str("\\,"),
            '\n' => out.push_str("\\n"),
            '\r' => {
                if chars.peek() != Some(&'\n') {
                    out.push_str("\\n");
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// Unescapes a TEXT value. Unknown escapes keep the escaped character.
pub fn unescape_text(value: &str) -> Cow<'_, str> {
    if !value.contains('\\') {
        return Cow::Borrowed(value);
    }
    let mut out = String::with_capacity(value.len());
    let mut chars = value.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') | Some('N') => out.push('\n'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    Cow::Owned(out)
}

/// Splits a list value (`CATEGORIES:a,b\,c`) on unescaped commas, unescaping each item.
pub fn split_text_list(value: &str) -> Vec<String> {
    let mut items = Vec::new();
    let mut current = String::new();
    let mut escaped = false;
    for c in value.chars() {
        if escaped {
            current.push('\\');
            current.push(c);
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == ',' {
            items.push(unescape_text(&current).into_owned());
            current.clear();
        } else {
            current.push(c);
        }
    }
    if escaped {
        current.push('\\');
    }
    items.push(unescape_text(&current).into_owned());
    items
        .into_iter()
        .map(|item| item.trim().to_owned())
        .filter(|item| !item.is_empty())
        .collect()
}

/// Splits a comma-separated value list that has no escapes (dates, recurrence ids).
pub fn split_list(value: &str) -> impl Iterator<Item = &str> {
    value.split(',').map(str::trim).filter(|v| !v.is_empty())
}

/// Folds an unfolded line so no physical line exceeds 75 octets, never splitting a
/// UTF-8 character; every physical line ends with `ending`.
pub fn fold(line: &str, ending: &str) -> String {
    const LIMIT: usize = 75;
    let mut out = String::with_capacity(line.len() + line.len() / 70 * 3 + 2);
    let mut width = 0;
    for c in line.chars() {
        let size = c.len_utf8();
        if width + size > LIMIT {
            out.push_str(ending);
            out.push(' ');
            width = 1;
        }
        out.push(c);
        width += size;
    }
    out.push_str(ending);
    out
}

/// A short human-readable excerpt of a line, for messages.
pub fn excerpt(text: &str) -> String {
    let short = truncate(text, 60);
    let mut out = String::with_capacity(short.len() + 3);
    for c in short.chars() {
        if c.is_control() {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    if short.len() < text.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests;
