//! Editing a note's YAML front matter as text, one top-level key at a time. A changed
//! key's value is written in the style it had — plain, single- or double-quoted, a flow
//! (`[a, b]`) or block (`- a`) list, a block text (`|`) — with its trailing comment;
//! every other byte (other keys and their order, comments, blank lines) stays as it was.
//! New keys go at the end in Full Calendar's layout.

use serde_yaml_ng::Value;

/// A top-level entry: its key line and the lines that continue it, or a comment line.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Entry {
    key: Option<String>,
    text: String,
}

/// Front-matter YAML split into top-level entries, edited in place.
#[derive(Clone, Debug)]
pub(crate) struct YamlText {
    entries: Vec<Entry>,
    ending: &'static str,
}

/// The key of a line that starts a top-level entry.
fn entry_key(line: &str) -> Option<String> {
    let starts_entry = !line.starts_with([' ', '\t', '-', '#']) && !line.trim().is_empty();
    starts_entry.then(|| {
        line.split(':')
            .next()
            .unwrap_or("")
            .trim()
            .trim_matches(['"', '\''])
            .to_owned()
    })
}

impl YamlText {
    pub fn parse(yaml: &str) -> Self {
        let mut entries: Vec<Entry> = Vec::new();
        for line in yaml.split_inclusive('\n') {
            let key = entry_key(line);
            match (key, entries.last_mut()) {
                (None, Some(last)) if !line.starts_with('#') => last.text.push_str(line),
                (key, _) => entries.push(Entry {
                    key,
                    text: line.to_owned(),
                }),
            }
        }
        Self {
            entries,
            ending: if yaml.contains("\r\n") { "\r\n" } else { "\n" },
        }
    }

    /// Gives `key` the value `value`: in place and in the style it had, or as a new
    /// entry at the end.
    pub fn set(&mut self, key: &str, value: &Value) {
        let ending = self.ending;
        match self
            .entries
            .iter_mut()
            .find(|e| e.key.as_deref() == Some(key))
        {
            Some(entry) => entry.text = restyle(&entry.text, value, ending),
            None => {
                if let Some(last) = self.entries.last_mut()
                    && !last.text.ends_with('\n')
                {
                    last.text.push_str(ending);
                }
                self.entries.push(Entry {
                    key: Some(key.to_owned()),
                    text: render_entry(key, value, ending),
                });
            }
        }
    }

    /// Removes `key` and the lines that continue it.
    pub fn remove(&mut self, key: &str) {
        self.entries.retain(|e| e.key.as_deref() != Some(key));
    }

    pub fn into_string(self) -> String {
        self.entries.into_iter().map(|e| e.text).collect()
    }
}

/// `key: value` as a new entry: lists in flow style, scalars as YAML writes them.
pub(crate) fn render_entry(key: &str, value: &Value, ending: &str) -> String {
    let rendered = match value {
        Value::Sequence(items) => flow(items, Quoting::Plain, ", "),
        other => scalar(other, Quoting::Plain),
    };
    format!("{key}: {rendered}{ending}")
}

/// How a scalar was written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Quoting {
    Plain,
    Single,
    Double,
}

impl Quoting {
    fn of(token: &str) -> Self {
        match token.chars().next() {
            Some('"') => Self::Double,
            Some('\'') => Self::Single,
            _ => Self::Plain,
        }
    }
}

/// How an entry's value was written.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Style {
    /// A scalar on the key line; `trailing` is what follows it (spaces and a comment).
    Inline { quoting: Quoting, trailing: String },
    /// A flow list on the key line.
    Flow {
        items: Quoting,
        separator: String,
        trailing: String,
    },
    /// A block text (`|`, `|-`, `>`…) in the lines below.
    BlockText,
    /// Nothing on the key line (a block list or mapping below, or no value); `trailing`
    /// is a comment after the colon.
    Below { trailing: String },
    /// Anything else (a flow mapping, a quoted text running over several lines).
    Other,
}

/// The end of a quoted scalar starting at `token[0]`, just past its closing quote.
fn quoted_end(token: &str, quote: char) -> Option<usize> {
    let mut chars = token.char_indices().skip(1).peekable();
    while let Some((index, c)) = chars.next() {
        match (quote, c) {
            ('"', '\\') => {
                chars.next();
            }
            ('\'', '\'') if chars.peek().map(|(_, n)| *n) == Some('\'') => {
                chars.next();
            }
            (q, c) if c == q => return Some(index + 1),
            _ => {}
        }
    }
    None
}

/// The end of a flow list starting at `token[0]` (`[`), just past its `]`.
fn flow_end(token: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut position = 0;
    while position < token.len() {
        let rest = &token[position..];
        let c = rest.chars().next()?;
        match c {
            '"' | '\'' => {
                position += quoted_end(rest, c)?;
                continue;
            }
            '[' | '{' => depth += 1,
            ']' | '}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(position + 1);
                }
            }
            _ => {}
        }
        position += c.len_utf8();
    }
    None
}

/// The style of a value written as `after` (what follows the key's colon).
fn style_of(after: &str) -> Style {
    let token = after.trim_start();
    let split = |end: usize| (&token[..end], token[end..].to_owned());
    match token.chars().next() {
        None | Some('#') => Style::Below {
            trailing: token.to_owned(),
        },
        Some('|' | '>') => Style::BlockText,
        Some(quote @ ('"' | '\'')) => match quoted_end(token, quote) {
            Some(end) => Style::Inline {
                quoting: Quoting::of(token),
                trailing: split(end).1,
            },
            None => Style::Other,
        },
        Some('[') => match flow_end(token) {
            Some(end) => {
                let (list, trailing) = split(end);
                let inner = list[1..list.len() - 1].trim_start();
                Style::Flow {
                    items: Quoting::of(inner),
                    separator: if list.contains(", ") || !list.contains(',') {
                        ", ".to_owned()
                    } else {
                        ",".to_owned()
                    },
                    trailing,
                }
            }
            None => Style::Other,
        },
        Some('{') => Style::Other,
        Some(_) => {
            let end = [" #", "\t#"]
                .iter()
                .filter_map(|marker| token.find(marker))
                .min()
                .unwrap_or(token.len());
            let plain = token[..end].trim_end();
            Style::Inline {
                quoting: Quoting::Plain,
                trailing: token[plain.len()..].to_owned(),
            }
        }
    }
}

/// A scalar written with `quoting` when that can hold it, else as YAML writes it.
fn scalar(value: &Value, quoting: Quoting) -> String {
    let Value::String(text) = value else {
        let rendered = serde_yaml_ng::to_string(value)
            .map(|s| s.trim_end().to_owned())
            .unwrap_or_default();
        return match quoting {
            Quoting::Plain => rendered,
            Quoting::Single => format!("'{rendered}'"),
            Quoting::Double => format!("\"{rendered}\""),
        };
    };
    let plain = serde_yaml_ng::to_string(value)
        .map(|s| s.trim_end().to_owned())
        .unwrap_or_default();
    match quoting {
        // On one line, so that a comment or the next key can follow it.
        Quoting::Plain if text.contains(['\n', '\r']) || plain.contains('\n') => {
            double_quoted(text)
        }
        Quoting::Plain => plain,
        Quoting::Single if !text.chars().any(char::is_control) => {
            format!("'{}'", text.replace('\'', "''"))
        }
        Quoting::Single | Quoting::Double => double_quoted(text),
    }
}

fn double_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn flow(items: &[Value], quoting: Quoting, separator: &str) -> String {
    let items: Vec<String> = items
        .iter()
        .map(|item| {
            let written = scalar(item, quoting);
            // Inside `[...]` a plain scalar cannot hold these.
            match item {
                Value::String(text)
                    if quoting == Quoting::Plain
                        && written.contains([',', '[', ']', '{', '}', ':', '#']) =>
                {
                    double_quoted(text)
                }
                _ => written,
            }
        })
        .collect();
    format!("[{}]", items.join(separator))
}

/// The lines of a block list in the layout of the first item of `below` (its indent,
/// dash and quoting); `None` when `below` holds no list item.
fn block_list(items: &[Value], below: &str, ending: &str) -> Option<String> {
    let first = below.lines().find(|l| l.trim_start().starts_with('-'))?;
    let indent = &first[..first.len() - first.trim_start().len()];
    let after_dash = &first.trim_start()[1..];
    let token = after_dash.trim_start();
    let gap = &after_dash[..after_dash.len() - token.len()];
    let gap = if gap.is_empty() { " " } else { gap };
    let quoting = Quoting::of(token);
    Some(
        items
            .iter()
            .map(|item| format!("{indent}-{gap}{}{ending}", scalar(item, quoting)))
            .collect(),
    )
}

/// A block text (`|` style) holding `text`, indented as the old one was.
fn block_text(header: &str, text: &str, below: &str, ending: &str) -> String {
    let indent = below
        .lines()
        .find(|l| !l.trim().is_empty())
        .map_or("  ", |l| &l[..l.len() - l.trim_start().len()]);
    let indicator = if text.ends_with('\n') { "|" } else { "|-" };
    let indicator = if header.starts_with(indicator) && header.len() == indicator.len() {
        header
    } else {
        indicator
    };
    let mut out = format!("{indicator}{ending}");
    for line in text.lines() {
        if line.is_empty() {
            out.push_str(ending);
        } else {
            out.push_str(&format!("{indent}{line}{ending}"));
        }
    }
    out
}

/// The lines below a key that are not list items: comments and blank lines kept after
/// a rewritten list.
fn non_items(below: &str) -> String {
    below
        .split_inclusive('\n')
        .filter(|l| {
            let trimmed = l.trim_start();
            !trimmed.starts_with('-') && (trimmed.trim().is_empty() || trimmed.starts_with('#'))
        })
        .collect()
}

/// A list written as items below its key, with `items` in that style (an empty list
/// as `[]` on the key line); `None` when the items cannot be laid out so.
fn listed_below(
    items: &[Value],
    trailing: &str,
    (head, gap, line_ending): (&str, &str, &str),
    below: &str,
    ending: &str,
) -> Option<String> {
    if items.is_empty() {
        let comment = if trailing.is_empty() {
            String::new()
        } else {
            format!(" {trailing}")
        };
        return Some(format!(
            "{head}{gap}{}{comment}{line_ending}{}",
            flow(items, Quoting::Plain, ", "),
            non_items(below)
        ));
    }
    let list = block_list(items, below, ending)?;
    Some(format!(
        "{head}{}{trailing}{line_ending}{list}{}",
        if trailing.is_empty() { "" } else { gap },
        non_items(below)
    ))
}

/// One `key: value` entry as written: its key line cut into parts, and the lines below.
struct EntryText<'t> {
    /// The key line up to and with its colon.
    head: &'t str,
    /// The space after the colon (one space when there is none).
    gap: &'t str,
    /// What follows the colon.
    after: &'t str,
    /// The key line's ending (the document's when the last line has none but lines
    /// follow).
    line_ending: &'t str,
    /// The lines below the key line.
    below: &'t str,
}

impl<'t> EntryText<'t> {
    /// The parts of `text`, an entry whose key line has a colon.
    fn parse(text: &'t str, ending: &'t str) -> Option<Self> {
        let (key_line, below) = match text.find('\n') {
            Some(end) => text.split_at(end + 1),
            None => (text, ""),
        };
        let line_ending = if key_line.ends_with("\r\n") {
            "\r\n"
        } else if key_line.ends_with('\n') {
            "\n"
        } else {
            ""
        };
        let content = &key_line[..key_line.len() - line_ending.len()];
        let line_ending = if line_ending.is_empty() && !below.is_empty() {
            ending
        } else {
            line_ending
        };
        let colon = content.find(':')?;
        let (head, after) = content.split_at(colon + 1);
        let gap = &after[..after.len() - after.trim_start().len()];
        let gap = if gap.is_empty() { " " } else { gap };
        Some(Self {
            head,
            gap,
            after,
            line_ending,
            below,
        })
    }
}

/// The entry `text` with its value replaced by `value`, written in the entry's style.
fn restyle(text: &str, value: &Value, ending: &str) -> String {
    let Some(EntryText {
        head,
        gap,
        after,
        line_ending,
        below,
    }) = EntryText::parse(text, ending)
    else {
        return text.to_owned();
    };
    let fresh = || {
        let key = head[..head.len() - 1].trim_end();
        let mut out = render_entry(key, value, ending);
        if line_ending.is_empty() {
            out.truncate(out.len() - ending.len());
        }
        out
    };
    let style = style_of(after);
    match (value, style) {
        (
            Value::Sequence(items),
            Style::Flow {
                items: quoting,
                separator,
                trailing,
            },
        ) => {
            format!(
                "{head}{gap}{}{trailing}{line_ending}{below}",
                flow(items, quoting, &separator)
            )
        }
        (Value::Sequence(items), Style::Below { trailing }) => {
            listed_below(items, &trailing, (head, gap, line_ending), below, ending)
                .unwrap_or_else(fresh)
        }
        (Value::String(text), Style::BlockText) => {
            let header = after.trim();
            // Blank lines after the text belong to the layout, not the value.
            let (content, rest) = below.split_at(below.trim_end().len());
            let blank = rest.split_once('\n').map_or("", |(_, blank)| blank);
            format!(
                "{head}{gap}{}{blank}",
                block_text(header, text, content, ending)
            )
        }
        (Value::Sequence(_), _) | (_, Style::Other | Style::BlockText | Style::Below { .. }) => {
            fresh()
        }
        (_, Style::Flow { trailing, .. }) => {
            format!(
                "{head}{gap}{}{trailing}{line_ending}{below}",
                scalar(value, Quoting::Plain)
            )
        }
        (_, Style::Inline { quoting, trailing }) => {
            format!(
                "{head}{gap}{}{trailing}{line_ending}{below}",
                scalar(value, quoting)
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;

    fn edit(yaml: &str, key: &str, value: Value) -> String {
        let mut text = YamlText::parse(yaml);
        text.set(key, &value);
        let out = text.into_string();
        let parsed: serde_yaml_ng::Mapping = serde_yaml_ng::from_str(&out).unwrap();
        assert_eq!(parsed.get(key), Some(&value), "{out}");
        out
    }

    fn string(text: &str) -> Value {
        Value::String(text.into())
    }

    fn list(items: &[&str]) -> Value {
        Value::Sequence(items.iter().map(|i| string(i)).collect())
    }

    #[test]
    fn scalars_keep_their_quotes_and_comments() {
        let yaml = "a: 1\nstartTime: \"09:00\"  # morning\nendTime: '09:45'\ntitle: Plain\nz: 2\n";
        assert_eq!(
            edit(yaml, "startTime", string("10:00")),
            yaml.replace("\"09:00\"", "\"10:00\"")
        );
        assert_eq!(
            edit(yaml, "endTime", string("It's late")),
            yaml.replace("'09:45'", "'It''s late'")
        );
        assert_eq!(
            edit(yaml, "title", string("New: title")),
            yaml.replace("title: Plain", "title: 'New: title'")
        );
        assert_eq!(
            edit(yaml, "title", string("Two\nlines")),
            yaml.replace("title: Plain", "title: \"Two\\nlines\"")
        );
        assert_eq!(edit("t: 'x'\n", "t", string("a\nb")), "t: \"a\\nb\"\n");
        assert_eq!(
            edit("allDay: \"false\" # as text\n", "allDay", string("true")),
            "allDay: \"true\" # as text\n"
        );
    }

    #[test]
    fn lists_keep_their_layout() {
        assert_eq!(
            edit("d: [M, R]\n", "d", list(&["M", "R", "F"])),
            "d: [M, R, F]\n"
        );
        assert_eq!(
            edit("d: ['M','R']  # days\n", "d", list(&["T"])),
            "d: ['T']  # days\n"
        );
        let block = "skipDates:\n  - 2026-03-09\n  # why\nnext: 1\n";
        assert_eq!(
            edit(block, "skipDates", list(&["2026-03-09", "2026-03-16"])),
            "skipDates:\n  - 2026-03-09\n  - 2026-03-16\n  # why\nnext: 1\n"
        );
        assert_eq!(
            edit(block, "skipDates", list(&[])),
            "skipDates: []\n  # why\nnext: 1\n"
        );
        assert_eq!(
            edit("s:\n- \"a\"\n", "s", list(&["a", "b"])),
            "s:\n- \"a\"\n- \"b\"\n"
        );
    }

    #[test]
    fn block_texts_stay_block_texts() {
        let yaml = "rrule: |-\n    DTSTART:20260302T080000Z\n    RRULE:FREQ=WEEKLY\n\nx: 1\n";
        assert_eq!(
            edit(
                yaml,
                "rrule",
                string("DTSTART:20260302T090000Z\nRRULE:FREQ=WEEKLY")
            ),
            yaml.replace("T080000Z", "T090000Z")
        );
    }

    /// An entry in one of the styles notes are written in, and the value it holds.
    fn entry() -> impl Strategy<Value = (String, Value)> {
        let word = "[a-zA-Z0-9 :#'\"-]{0,10}";
        let comment = prop_oneof![Just(String::new()), Just("  # note".to_owned())];
        prop_oneof![
            (word, comment.clone()).prop_map(|(w, c)| {
                let text = format!("'{}'", w.replace('\'', "''"));
                (format!("{text}{c}"), string(&w))
            }),
            ("w[a-z0-9]{0,7}", comment.clone()).prop_map(|(w, c)| (format!("{w}{c}"), string(&w))),
            (proptest::collection::vec("w[a-z0-9]{0,3}", 1..4), comment).prop_map(|(items, c)| {
                let value = Value::Sequence(items.iter().map(|i| string(i)).collect());
                (format!("[{}]{c}", items.join(", ")), value)
            }),
            proptest::collection::vec("w[a-z0-9]{0,3}", 1..4).prop_map(|items| {
                let value = Value::Sequence(items.iter().map(|i| string(i)).collect());
                let lines: String = items.iter().map(|i| format!("\n  - {i}")).collect();
                (lines, value)
            }),
        ]
    }

    fn new_value() -> impl Strategy<Value = Value> {
        prop_oneof![
            "[a-zA-Z0-9 :#'\"\n-]{0,12}".prop_map(|t| string(&t)),
            proptest::collection::vec("[a-zA-Z0-9 :#'\"-]{0,6}", 0..4)
                .prop_map(|items| Value::Sequence(items.iter().map(|i| string(i)).collect())),
        ]
    }

    proptest! {
        #[test]
        fn setting_a_key_changes_its_value_and_no_other_byte(
            entries in proptest::collection::vec(entry(), 1..6),
            chosen in 0usize..6,
            value in new_value(),
        ) {
            let texts: Vec<String> = entries
                .iter()
                .enumerate()
                .map(|(i, (text, _))| {
                    let gap = if text.starts_with('\n') { "" } else { " " };
                    format!("# about k{i}\nk{i}:{gap}{text}\n")
                })
                .collect();
            let chosen = chosen % entries.len();
            let key = format!("k{chosen}");
            let mut yaml = YamlText::parse(&texts.concat());
            yaml.set(&key, &value);
            let out = yaml.into_string();
            let parsed: serde_yaml_ng::Mapping = serde_yaml_ng::from_str(&out)
                .map_err(|e| TestCaseError::fail(format!("{e}:\n{out}")))?;
            prop_assert_eq!(parsed.get(key.as_str()), Some(&value), "{}", out);
            for (i, (_, old)) in entries.iter().enumerate().filter(|(i, _)| *i != chosen) {
                prop_assert_eq!(parsed.get(format!("k{i}").as_str()), Some(old), "{}", out);
            }
            let before = texts[..chosen].concat();
            let after = texts[chosen + 1..].concat();
            prop_assert!(out.starts_with(&format!("{before}# about k{chosen}\n")), "{}", out);
            prop_assert!(out.ends_with(&after), "{}", out);
        }
    }

    #[test]
    fn new_keys_go_last_and_removed_keys_take_their_lines() {
        let yaml = "# note\ntitle: A\nskipDates:\n  - 2026-01-01\n\nz: 1";
        let mut text = YamlText::parse(yaml);
        text.remove("skipDates");
        text.set("location", &string("Here"));
        assert_eq!(
            text.into_string(),
            "# note\ntitle: A\nz: 1\nlocation: Here\n"
        );
        let crlf = "a: 1\r\nb: x\r\n";
        assert_eq!(edit(crlf, "b", string("y")), "a: 1\r\nb: y\r\n");
        assert_eq!(edit(crlf, "c", string("z")), "a: 1\r\nb: x\r\nc: z\r\n");
    }
}
