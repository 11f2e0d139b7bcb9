//! The component tree of an iCalendar text (`BEGIN:X` … `END:X`), with the byte span and
//! line of every component and property, so writers can splice the original text and
//! leave everything they do not change byte for byte as it was.
//!
//! Parsing never fails: a malformed line, a stray `END` or a component that is never
//! closed becomes a [`Issue`] with its line number, and the rest is read.

use std::ops::Range;

use crate::contentline::{ContentLine, Lines, RawLine, excerpt, parse_line};

/// Components nest at most this deep; deeper `BEGIN`s are reported and skipped.
const MAX_DEPTH: usize = 32;

/// A property of a component.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Property<'a> {
    pub content: ContentLine<'a>,
    pub line: usize,
    pub span: Range<usize>,
}

/// A component and what it contains, in source order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Component<'a> {
    /// Upper-case name (`VEVENT`).
    pub name: String,
    /// Line of its `BEGIN`.
    pub line: usize,
    /// From the start of `BEGIN` to the end of `END` (terminator included).
    pub span: Range<usize>,
    /// Where its `END` line starts (`span.end` when it was never closed).
    pub end_line_start: usize,
    /// Whether an `END` closed it.
    pub closed: bool,
    pub properties: Vec<Property<'a>>,
    pub children: Vec<Component<'a>>,
}

impl<'a> Component<'a> {
    /// The first property with this name.
    pub fn property(&self, name: &str) -> Option<&Property<'a>> {
        self.properties.iter().find(|p| p.content.is(name))
    }

    /// Every property with this name.
    pub fn properties_named<'s>(
        &'s self,
        name: &'s str,
    ) -> impl Iterator<Item = &'s Property<'a>> + 's {
        self.properties.iter().filter(move |p| p.content.is(name))
    }

    /// The raw value of the first property with this name.
    pub fn value(&self, name: &str) -> Option<&str> {
        self.property(name).map(|p| p.content.value.as_ref())
    }
}

/// A problem found while reading the tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Issue {
    pub line: usize,
    pub message: String,
}

/// The top-level components of a text and the issues found.
#[derive(Debug, Default)]
pub struct Tree<'a> {
    pub components: Vec<Component<'a>>,
    pub issues: Vec<Issue>,
    /// The line ending the text uses (`"\r\n"` unless it uses bare LF).
    pub line_ending: &'static str,
}

/// Reads the component tree of an iCalendar text.
pub fn parse_tree(source: &str) -> Tree<'_> {
    let mut builder = Builder {
        tree: Tree {
            line_ending: detect_line_ending(source),
            ..Tree::default()
        },
        stack: Vec::new(),
        skipped_depth: 0,
    };
    for raw in Lines::new(source) {
        if raw.text.trim().is_empty() {
            continue;
        }
        let parsed = match raw.text {
            std::borrow::Cow::Borrowed(text) => parse_line(text),
            std::borrow::Cow::Owned(ref text) => parse_line(text).map(ContentLine::into_owned),
        };
        match parsed {
            Ok(content) if content.is("BEGIN") => builder.begin(&content, &raw),
            Ok(content) if content.is("END") => builder.end(&content, &raw),
            Ok(content) => builder.property(content, &raw),
            Err(error) => builder.issue(
                raw.line,
                format!(
                    "malformed line `{}`: {}; the line is kept as it is and ignored",
                    excerpt(&raw.text),
                    error.0
                ),
            ),
        }
    }
    builder.finish(source.len())
}

/// The tree as it is read: the components still open, innermost last.
struct Builder<'a> {
    tree: Tree<'a>,
    stack: Vec<Component<'a>>,
    /// BEGINs skipped for depth: their matching ENDs are skipped too.
    skipped_depth: usize,
}

impl<'a> Builder<'a> {
    fn issue(&mut self, line: usize, message: String) {
        self.tree.issues.push(Issue { line, message });
    }

    fn begin(&mut self, content: &ContentLine<'_>, raw: &RawLine<'_>) {
        if self.skipped_depth > 0 || self.stack.len() >= MAX_DEPTH {
            if self.skipped_depth == 0 {
                self.issue(
                    raw.line,
                    format!(
                        "components nest deeper than {MAX_DEPTH} levels; BEGIN:{} and its content are ignored",
                        excerpt(&content.value)
                    ),
                );
            }
            self.skipped_depth += 1;
            return;
        }
        let name = content.value.trim().to_ascii_uppercase();
        close_unended_siblings(
            &name,
            raw.line,
            raw.span.start,
            &mut self.stack,
            &mut self.tree,
        );
        self.stack.push(Component {
            name,
            line: raw.line,
            span: raw.span.start..raw.span.end,
            end_line_start: raw.span.end,
            ..Component::default()
        });
    }

    /// Closes the component an `END` names, and any opened inside it and left open; an
    /// `END` that matches nothing open is reported and ignored.
    fn end(&mut self, content: &ContentLine<'_>, raw: &RawLine<'_>) {
        if self.skipped_depth > 0 {
            self.skipped_depth -= 1;
            return;
        }
        let (line, name) = (raw.line, content.value.trim().to_ascii_uppercase());
        let Some(position) = self.stack.iter().rposition(|c| c.name == name) else {
            let message = match self.stack.last() {
                Some(open) if open.name != "VCALENDAR" => format!(
                    "END:{name} has no matching BEGIN; ignored (BEGIN:{} at line {} stays open until its END or the next item)",
                    open.name, open.line
                ),
                _ => format!("END:{name} has no matching BEGIN; ignored"),
            };
            self.issue(line, message);
            return;
        };
        while self.stack.len() > position + 1 {
            if let Some(mut unclosed) = self.stack.pop() {
                let message = format!(
                    "BEGIN:{} is not closed before END:{name} at line {line}",
                    unclosed.name
                );
                self.issue(unclosed.line, message);
                unclosed.span.end = raw.span.start;
                unclosed.end_line_start = raw.span.start;
                attach(&mut self.stack, &mut self.tree.components, unclosed);
            }
        }
        if let Some(mut component) = self.stack.pop() {
            component.span.end = raw.span.end;
            component.end_line_start = raw.span.start;
            component.closed = true;
            attach(&mut self.stack, &mut self.tree.components, component);
        }
    }

    fn property(&mut self, content: ContentLine<'a>, raw: &RawLine<'_>) {
        if self.skipped_depth > 0 {
            return;
        }
        match self.stack.last_mut() {
            Some(current) => current.properties.push(Property {
                content,
                line: raw.line,
                span: raw.span.clone(),
            }),
            None => self.issue(
                raw.line,
                format!("`{}` is outside any component; ignored", excerpt(&raw.text)),
            ),
        }
    }

    /// The tree, with the components never closed ending at the end of the text.
    fn finish(mut self, end: usize) -> Tree<'a> {
        while let Some(mut unclosed) = self.stack.pop() {
            let message = format!(
                "BEGIN:{} is never closed (is the file cut short?)",
                unclosed.name
            );
            self.issue(unclosed.line, message);
            unclosed.span.end = end;
            unclosed.end_line_start = end;
            attach(&mut self.stack, &mut self.tree.components, unclosed);
        }
        self.tree
    }
}

/// Components that sit side by side in a VCALENDAR and never inside one another.
const CALENDAR_ITEMS: [&str; 6] = [
    "VEVENT",
    "VTODO",
    "VJOURNAL",
    "VFREEBUSY",
    "VTIMEZONE",
    "VAVAILABILITY",
];

/// Recovery from a lost or misspelled `END` (`END:VTOOD`): a `BEGIN` of a calendar item
/// while another item is still open ends the open one there, as other readers do, so
/// the items after it are read as their own instead of vanishing inside it.
fn close_unended_siblings<'a>(
    name: &str,
    line: usize,
    at: usize,
    stack: &mut Vec<Component<'a>>,
    tree: &mut Tree<'a>,
) {
    if !CALENDAR_ITEMS.contains(&name) {
        return;
    }
    let Some(open) = stack
        .iter()
        .position(|c| CALENDAR_ITEMS.contains(&c.name.as_str()))
    else {
        return;
    };
    while stack.len() > open {
        if let Some(mut unclosed) = stack.pop() {
            if stack.len() == open {
                tree.issues.push(Issue {
                    line: unclosed.line,
                    message: format!(
                        "BEGIN:{} has no END:{} before BEGIN:{name} at line {line}; it is read as ending there, and the {name} at line {line} and everything after it are read as usual",
                        unclosed.name, unclosed.name
                    ),
                });
            }
            unclosed.span.end = at;
            unclosed.end_line_start = at;
            attach(stack, &mut tree.components, unclosed);
        }
    }
}

fn attach<'a>(stack: &mut [Component<'a>], top: &mut Vec<Component<'a>>, component: Component<'a>) {
    match stack.last_mut() {
        Some(parent) => parent.children.push(component),
        None => top.push(component),
    }
}

fn detect_line_ending(source: &str) -> &'static str {
    match source.find('\n') {
        Some(i) if i > 0 && source.as_bytes()[i - 1] == b'\r' => "\r\n",
        Some(_) => "\n",
        None => "\r\n",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn builds_the_tree_with_spans() {
        let source = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:1\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nEND:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n";
        let tree = parse_tree(source);
        assert_eq!(tree.issues, vec![]);
        assert_eq!(tree.line_ending, "\r\n");
        let calendar = &tree.components[0];
        assert_eq!(calendar.name, "VCALENDAR");
        assert!(calendar.closed);
        assert_eq!(calendar.span, 0..source.len());
        let event = &calendar.children[0];
        assert_eq!(
            &source[event.span.clone()],
            "BEGIN:VEVENT\r\nUID:1\r\nBEGIN:VALARM\r\nACTION:DISPLAY\r\nEND:VALARM\r\nEND:VEVENT\r\n"
        );
        assert_eq!(event.value("uid"), Some("1"));
        assert_eq!(event.children[0].name, "VALARM");
        assert_eq!(&source[calendar.end_line_start..], "END:VCALENDAR\r\n");
    }

    #[test]
    fn reports_malformed_lines_and_keeps_reading() {
        let source = "BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:1\nthis is junk\nSUMMARY:ok\nEND:VEVENT\nEND:VCALENDAR\n";
        let tree = parse_tree(source);
        assert_eq!(tree.issues.len(), 1);
        assert_eq!(tree.issues[0].line, 4);
        assert!(tree.issues[0].message.contains("this is junk"));
        assert_eq!(tree.components[0].children[0].value("SUMMARY"), Some("ok"));
    }

    #[test]
    fn recovers_from_missing_and_stray_ends() {
        let source = "BEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:1\nBEGIN:VEVENT\nUID:2\nEND:VEVENT\nEND:VTODO\nEND:VCALENDAR\nBEGIN:VCALENDAR\nBEGIN:VEVENT\nUID:3\n";
        let tree = parse_tree(source);
        let lines: Vec<_> = tree.issues.iter().map(|i| i.line).collect();
        // The first VEVENT has no END: the second BEGIN:VEVENT ends it; END:VTODO is
        // stray; the second calendar and its event are cut short.
        assert_eq!(lines, vec![2, 7, 10, 9]);
        assert_eq!(tree.components.len(), 2);
        let uids: Vec<_> = tree.components[0]
            .children
            .iter()
            .map(|c| c.value("UID"))
            .collect();
        assert_eq!(uids, [Some("1"), Some("2")]);
        assert!(!tree.components[1].closed);
        assert_eq!(tree.components[1].children[0].value("UID"), Some("3"));
    }

    #[test]
    fn a_misspelled_end_does_not_swallow_the_items_after_it() {
        let source = "BEGIN:VCALENDAR\nBEGIN:VTODO\nUID:t\nBEGIN:VALARM\nACTION:DISPLAY\nEND:VALARM\nEND:VTOOD\nBEGIN:VEVENT\nUID:a\nEND:VEVENT\nBEGIN:VEVENT\nUID:b\nEND:VEVENT\nEND:VCALENDAR\n";
        let tree = parse_tree(source);
        let calendar = &tree.components[0];
        assert!(calendar.closed);
        let children: Vec<_> = calendar
            .children
            .iter()
            .map(|c| (c.name.as_str(), c.value("UID"), c.closed))
            .collect();
        assert_eq!(
            children,
            [
                ("VTODO", Some("t"), false),
                ("VEVENT", Some("a"), true),
                ("VEVENT", Some("b"), true)
            ]
        );
        assert_eq!(calendar.children[0].children[0].name, "VALARM");
        assert_eq!(
            &source[calendar.children[0].span.clone()],
            "BEGIN:VTODO\nUID:t\nBEGIN:VALARM\nACTION:DISPLAY\nEND:VALARM\nEND:VTOOD\n"
        );
        let messages: Vec<_> = tree
            .issues
            .iter()
            .map(|i| (i.line, i.message.as_str()))
            .collect();
        assert_eq!(
            messages,
            [
                (
                    7,
                    "END:VTOOD has no matching BEGIN; ignored (BEGIN:VTODO at line 2 stays open until its END or the next item)"
                ),
                (
                    2,
                    "BEGIN:VTODO has no END:VTODO before BEGIN:VEVENT at line 8; it is read as ending there, and the VEVENT at line 8 and everything after it are read as usual"
                ),
            ]
        );
    }

    #[test]
    fn limits_nesting_depth() {
        let mut source = String::new();
        for _ in 0..100 {
            source.push_str("BEGIN:X\n");
        }
        for _ in 0..100 {
            source.push_str("END:X\n");
        }
        let tree = parse_tree(&source);
        assert_eq!(tree.issues.len(), 1);
        assert_eq!(tree.components.len(), 1);
        assert!(tree.components[0].closed);
    }
}
