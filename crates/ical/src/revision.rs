//! Revisions of one event. A file may hold several copies of the same event (same UID,
//! or same UID and RECURRENCE-ID) — an export appended to an older one, a sync that
//! wrote an update beside the original. RFC 5545 §3.8.7.4: the copy with the higher
//! `SEQUENCE` is the current revision; between equal sequences, the later `DTSTAMP`,
//! then the later `LAST-MODIFIED`. Between copies equal in all three, the first in the
//! file stands. Loading shows the current revision, import copies it, and edits go to
//! it.

use std::cmp::Ordering;

use chrono::NaiveDateTime;

use crate::component::Component;
use crate::time::parse_date_time;

/// What orders the copies of one event.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Revision {
    /// `SEQUENCE` (0 when absent or unreadable, as RFC 5545 says).
    pub sequence: i64,
    /// `DTSTAMP`.
    pub stamp: Option<NaiveDateTime>,
    /// `LAST-MODIFIED`.
    pub modified: Option<NaiveDateTime>,
}

impl Revision {
    /// The revision a VEVENT says it is.
    pub fn of(component: &Component<'_>) -> Self {
        let time = |name: &str| {
            component
                .value(name)
                .and_then(|v| parse_date_time(v.trim()))
                .map(|(time, _)| time)
        };
        Self {
            sequence: component
                .value("SEQUENCE")
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0),
            stamp: time("DTSTAMP"),
            modified: time("LAST-MODIFIED"),
        }
    }

    /// Why one copy is newer than another, for warnings.
    pub fn why_newer(&self, older: &Revision) -> String {
        match self.sequence.cmp(&older.sequence) {
            Ordering::Greater => format!(
                "SEQUENCE {} is higher than {}",
                self.sequence, older.sequence
            ),
            _ if self.stamp != older.stamp => {
                format!("same SEQUENCE {}, later DTSTAMP", self.sequence)
            }
            _ => format!("same SEQUENCE {}, later LAST-MODIFIED", self.sequence),
        }
    }
}

/// The copies in the order loading ranks them: the current revision first, the others
/// after it in file order.
pub fn current_first<'c, 'a>(copies: &[&'c Component<'a>]) -> Vec<&'c Component<'a>> {
    let mut current = 0;
    for (position, copy) in copies.iter().enumerate().skip(1) {
        if Revision::of(copy) > Revision::of(copies[current]) {
            current = position;
        }
    }
    let mut ordered = Vec::with_capacity(copies.len());
    if let Some(first) = copies.get(current) {
        ordered.push(*first);
    }
    ordered.extend(
        copies
            .iter()
            .enumerate()
            .filter(|(position, _)| *position != current)
            .map(|(_, copy)| *copy),
    );
    ordered
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::component::parse_tree;
    use pretty_assertions::assert_eq;

    fn lines_in_rank(source: &str) -> Vec<usize> {
        let tree = parse_tree(source);
        let copies: Vec<&Component<'_>> = tree.components[0].children.iter().collect();
        current_first(&copies).iter().map(|c| c.line).collect()
    }

    #[test]
    fn sequence_then_dtstamp_then_last_modified_then_file_order() {
        let copy = |sequence: &str, stamp: &str, modified: &str| {
            format!(
                "BEGIN:VEVENT\nUID:1\n{sequence}DTSTAMP:{stamp}\nLAST-MODIFIED:{modified}\nEND:VEVENT\n"
            )
        };
        let calendar =
            |copies: &[String]| format!("BEGIN:VCALENDAR\n{}END:VCALENDAR\n", copies.concat());
        let a = copy("SEQUENCE:1\n", "20260101T000000Z", "20260101T000000Z");
        let b = copy("SEQUENCE:2\n", "20250101T000000Z", "20250101T000000Z");
        assert_eq!(lines_in_rank(&calendar(&[a.clone(), b.clone()])), [8, 2]);
        assert_eq!(lines_in_rank(&calendar(&[b, a])), [2, 8]);
        // No SEQUENCE is SEQUENCE 0; then the later DTSTAMP wins.
        let early = copy("", "20260101T000000Z", "20260301T000000Z");
        let late = copy("SEQUENCE:0\n", "20260102T000000Z", "20260101T000000Z");
        assert_eq!(
            lines_in_rank(&calendar(&[late.clone(), early.clone()])),
            [2, 8]
        );
        assert_eq!(lines_in_rank(&calendar(&[early, late])), [7, 2]);
        // Same DTSTAMP: the later LAST-MODIFIED; all equal: the first copy.
        let older = copy("", "20260101T000000Z", "20260101T000000Z");
        let newer = copy("", "20260101T000000Z", "20260105T000000Z");
        assert_eq!(lines_in_rank(&calendar(&[older.clone(), newer])), [7, 2]);
        assert_eq!(lines_in_rank(&calendar(&[older.clone(), older])), [2, 7]);
    }
}
