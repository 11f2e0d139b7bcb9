//! The exact change to a file, as a unified diff of its bytes before and after: what a
//! user approves is what applying writes, line endings included (a `\r` stays at the end
//! of its line, as `diff` shows it).

use std::path::Path;

/// Unchanged lines shown around each change.
const CONTEXT: usize = 3;
/// Past this many differing lines the differing middle is shown removed and added whole:
/// still exact, only not minimal, and bounded in time and memory.
const MAX_EDIT_DISTANCE: usize = 1_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Equal,
    Delete,
    Insert,
}

fn lines(text: Option<&str>) -> Vec<&str> {
    text.map(|t| t.split_inclusive('\n').collect())
        .unwrap_or_default()
}

/// The unified diff of the file at `path` from `before` to `after` (`None`: the file does
/// not exist); empty when they are the same.
pub(crate) fn unified(path: &Path, before: Option<&str>, after: Option<&str>) -> String {
    if before == after {
        return String::new();
    }
    let old = lines(before);
    let new = lines(after);
    let ops = script(&old, &new);
    let name = path.display().to_string();
    let mut out = vec![
        format!("--- {}", if before.is_some() { &name } else { "/dev/null" }),
        format!("+++ {}", if after.is_some() { &name } else { "/dev/null" }),
    ];
    let (mut position, mut i, mut j) = (0, 0, 0);
    for (start, end) in hunks(&ops) {
        while position < start {
            match ops[position] {
                Op::Equal => (i, j) = (i + 1, j + 1),
                Op::Delete => i += 1,
                Op::Insert => j += 1,
            }
            position += 1;
        }
        let old_count = ops[start..end].iter().filter(|o| **o != Op::Insert).count();
        let new_count = ops[start..end].iter().filter(|o| **o != Op::Delete).count();
        let first = |index: usize, count: usize| if count == 0 { index } else { index + 1 };
        out.push(format!(
            "@@ -{},{old_count} +{},{new_count} @@",
            first(i, old_count),
            first(j, new_count)
        ));
        while position < end {
            let (marker, line) = match ops[position] {
                Op::Equal => {
                    (i, j) = (i + 1, j + 1);
                    (' ', old[i - 1])
                }
                Op::Delete => {
                    i += 1;
                    ('-', old[i - 1])
                }
                Op::Insert => {
                    j += 1;
                    ('+', new[j - 1])
                }
            };
            match line.strip_suffix('\n') {
                Some(content) => out.push(format!("{marker}{content}")),
                None => {
                    out.push(format!("{marker}{line}"));
                    out.push("\\ No newline at end of file".to_owned());
                }
            }
            position += 1;
        }
    }
    out.join("\n")
}

/// The edit script from `old` to `new`: common start and end kept, the middle diffed.
fn script(old: &[&str], new: &[&str]) -> Vec<Op> {
    let prefix = old.iter().zip(new).take_while(|(a, b)| a == b).count();
    let suffix = old[prefix..]
        .iter()
        .rev()
        .zip(new[prefix..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    let (old_middle, new_middle) = (
        &old[prefix..old.len() - suffix],
        &new[prefix..new.len() - suffix],
    );
    let mut ops = vec![Op::Equal; prefix];
    match myers(old_middle, new_middle) {
        Some(middle) => ops.extend(middle),
        None => {
            ops.extend(std::iter::repeat_n(Op::Delete, old_middle.len()));
            ops.extend(std::iter::repeat_n(Op::Insert, new_middle.len()));
        }
    }
    ops.extend(std::iter::repeat_n(Op::Equal, suffix));
    slide_down(&mut ops, old, new);
    ops
}

/// Moves each run of insertions (or of deletions) as far down as it goes without
/// changing the result, as `diff` does: a new event then reads `+BEGIN:VEVENT` …
/// `+END:VEVENT` rather than `+END:VEVENT` `+BEGIN:VEVENT` … .
fn slide_down(ops: &mut [Op], old: &[&str], new: &[&str]) {
    let (mut position, mut i, mut j) = (0, 0, 0);
    while position < ops.len() {
        let kind = ops[position];
        if kind == Op::Equal {
            (position, i, j) = (position + 1, i + 1, j + 1);
            continue;
        }
        let mut start = position;
        let mut end = position;
        while end < ops.len() && ops[end] == kind {
            end += 1;
        }
        let length = end - start;
        while end < ops.len() && ops[end] == Op::Equal {
            let movable = match kind {
                Op::Insert => new[j] == new[j + length],
                _ => old[i] == old[i + length],
            };
            if !movable {
                break;
            }
            ops.swap(start, end);
            (start, end, i, j) = (start + 1, end + 1, i + 1, j + 1);
        }
        match kind {
            Op::Insert => j += length,
            _ => i += length,
        }
        position = end;
    }
}

/// A shortest edit script (Myers' algorithm), or `None` past [`MAX_EDIT_DISTANCE`].
fn myers(old: &[&str], new: &[&str]) -> Option<Vec<Op>> {
    let (n, m) = (old.len() as isize, new.len() as isize);
    let limit = (old.len() + new.len()).min(MAX_EDIT_DISTANCE) as isize;
    let offset = limit + 1;
    let index = |k: isize| (k + offset) as usize;
    let mut furthest = vec![0isize; (2 * limit + 3) as usize];
    // `trace[d]`: the furthest reaching x of each diagonal -d..=d before round d.
    let mut trace: Vec<Vec<isize>> = Vec::new();
    let mut reached = None;
    'rounds: for d in 0..=limit {
        trace.push(furthest[index(-d)..=index(d)].to_vec());
        for k in (-d..=d).step_by(2) {
            let mut x = if k == -d || (k != d && furthest[index(k - 1)] < furthest[index(k + 1)]) {
                furthest[index(k + 1)]
            } else {
                furthest[index(k - 1)] + 1
            };
            let mut y = x - k;
            while x < n && y < m && old[x as usize] == new[y as usize] {
                x += 1;
                y += 1;
            }
            furthest[index(k)] = x;
            if x >= n && y >= m {
                reached = Some(d);
                break 'rounds;
            }
        }
    }
    let last = reached?;
    let mut ops = Vec::with_capacity((n + m) as usize);
    let (mut x, mut y) = (n, m);
    for d in (0..=last).rev() {
        let before = &trace[d as usize];
        let at = |k: isize| before[(k + d) as usize];
        let k = x - y;
        let previous = if k == -d || (k != d && at(k - 1) < at(k + 1)) {
            k + 1
        } else {
            k - 1
        };
        let previous_x = if d == 0 { 0 } else { at(previous) };
        let previous_y = previous_x - previous;
        while x > previous_x && y > previous_y {
            ops.push(Op::Equal);
            x -= 1;
            y -= 1;
        }
        if d > 0 {
            if x == previous_x {
                ops.push(Op::Insert);
            } else {
                ops.push(Op::Delete);
            }
        }
        (x, y) = (previous_x, previous_y);
    }
    ops.reverse();
    Some(ops)
}

/// The ranges of `ops` shown: each change with [`CONTEXT`] unchanged lines around it,
/// changes closer than twice that joined.
fn hunks(ops: &[Op]) -> Vec<(usize, usize)> {
    let mut hunks = Vec::new();
    let mut position = 0;
    while position < ops.len() {
        if ops[position] == Op::Equal {
            position += 1;
            continue;
        }
        let start = position.saturating_sub(CONTEXT);
        let mut end = position;
        loop {
            while end < ops.len() && ops[end] != Op::Equal {
                end += 1;
            }
            let mut run = end;
            while run < ops.len() && ops[run] == Op::Equal {
                run += 1;
            }
            if run < ops.len() && run - end <= 2 * CONTEXT {
                end = run;
                continue;
            }
            end = (end + CONTEXT).min(ops.len());
            break;
        }
        hunks.push((start, end));
        position = end;
    }
    hunks
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;

    /// Applies a diff made by [`unified`] to `before`, checking every line it names.
    fn patch(before: Option<&str>, diff: &str) -> Option<String> {
        let old = lines(before);
        let diff_lines: Vec<&str> = diff.split('\n').collect();
        if diff_lines[1] == "+++ /dev/null" {
            return None;
        }
        let mut out = String::new();
        let mut position = 0;
        let mut index = 2;
        while index < diff_lines.len() {
            let header = diff_lines[index];
            let ranges: Vec<usize> = header
                .trim_matches(|c| c == '@' || c == ' ')
                .split([' ', ',', '-', '+'])
                .filter(|p| !p.is_empty())
                .map(|p| p.parse().unwrap())
                .collect();
            let (old_start, old_count, new_count) = (ranges[0], ranges[1], ranges[3]);
            let first = if old_count == 0 {
                old_start
            } else {
                old_start - 1
            };
            while position < first {
                out.push_str(old[position]);
                position += 1;
            }
            index += 1;
            let (mut removed, mut added) = (0, 0);
            while removed < old_count || added < new_count {
                let line = diff_lines[index];
                let mut text = format!("{}\n", &line[1..]);
                if diff_lines.get(index + 1) == Some(&"\\ No newline at end of file") {
                    text.pop();
                    index += 1;
                }
                match &line[..1] {
                    " " => {
                        assert_eq!(old[position], text);
                        out.push_str(&text);
                        position += 1;
                        removed += 1;
                        added += 1;
                    }
                    "-" => {
                        assert_eq!(old[position], text);
                        position += 1;
                        removed += 1;
                    }
                    _ => {
                        out.push_str(&text);
                        added += 1;
                    }
                }
                index += 1;
            }
        }
        while position < old.len() {
            out.push_str(old[position]);
            position += 1;
        }
        Some(out)
    }

    #[test]
    fn shows_changes_with_context_and_line_endings() {
        let before = "a\r\nb\r\nc\r\nd\r\ne\r\nf\r\ng\r\nh\r\ni\r\n";
        let after = "a\r\nb\r\nc\r\nd\r\nE\r\nf\r\ng\r\nh\r\ni\r\nj";
        assert_eq!(
            unified(Path::new("x.ics"), Some(before), Some(after)),
            "--- x.ics\n+++ x.ics\n@@ -2,8 +2,9 @@\n b\r\n c\r\n d\r\n-e\r\n+E\r\n f\r\n g\r\n h\r\n i\r\n+j\n\\ No newline at end of file"
        );
        assert_eq!(
            unified(Path::new("n.md"), None, Some("x\n")),
            "--- /dev/null\n+++ n.md\n@@ -0,0 +1,1 @@\n+x"
        );
        assert_eq!(
            unified(Path::new("n.md"), Some("x\ny\n"), None),
            "--- n.md\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-x\n-y"
        );
        assert_eq!(unified(Path::new("n.md"), Some("x"), Some("x")), "");
    }

    #[test]
    fn a_new_block_reads_from_its_first_line_to_its_last() {
        let before = "X\nBEGIN:VEVENT\nA\nEND:VEVENT\nEND:VCALENDAR\n";
        let after = "Y\nBEGIN:VEVENT\nA\nEND:VEVENT\nBEGIN:VEVENT\nB\nEND:VEVENT\nEND:VCALENDAR\n";
        assert_eq!(
            unified(Path::new("c.ics"), Some(before), Some(after)),
            "--- c.ics\n+++ c.ics\n@@ -1,5 +1,8 @@\n-X\n+Y\n BEGIN:VEVENT\n A\n END:VEVENT\n+BEGIN:VEVENT\n+B\n+END:VEVENT\n END:VCALENDAR"
        );
    }

    #[test]
    fn far_apart_changes_are_separate_hunks() {
        let before: String = (0..30).map(|i| format!("line {i}\n")).collect();
        let after = before
            .replace("line 2\n", "line two\n")
            .replace("line 27\n", "line twenty-seven\n");
        let diff = unified(Path::new("f"), Some(&before), Some(&after));
        assert_eq!(diff.matches("@@ -").count(), 2, "{diff}");
        assert_eq!(patch(Some(&before), &diff).as_deref(), Some(after.as_str()));
    }

    #[test]
    fn a_change_past_the_edit_limit_is_shown_whole_and_exact() {
        let before: String = (0..1500).map(|i| format!("old {i}\n")).collect();
        let after: String = (0..1500).map(|i| format!("new {i}\n")).collect();
        let diff = unified(Path::new("f"), Some(&before), Some(&after));
        assert_eq!(patch(Some(&before), &diff).as_deref(), Some(after.as_str()));
    }

    fn text() -> impl Strategy<Value = Option<String>> {
        let line = prop_oneof!["[ab]{0,2}\n", "[ab]{0,2}\r\n", "[ab]{1,2}"];
        proptest::option::weighted(0.9, proptest::collection::vec(line, 0..30))
            .prop_map(|lines| lines.map(|l| l.concat()))
    }

    proptest! {
        #[test]
        fn the_diff_turns_before_into_after(before in text(), after in text()) {
            let diff = unified(Path::new("f"), before.as_deref(), after.as_deref());
            if before == after {
                prop_assert_eq!(diff, "");
            } else {
                prop_assert_eq!(patch(before.as_deref(), &diff), after);
            }
        }
    }
}
