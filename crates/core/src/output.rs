//! How much of an agent's output one turn keeps, and the marks Hearth leaves where it cut.
//!
//! An agent (a model, an external agent, a script) decides how much it sends; Hearth
//! decides how much it keeps. Per turn: the answer text and the reasoning (each up to
//! [`OutputLimits::answer_bytes`]), the tool calls (how many, how many updates, how large
//! each piece of them, how much all together). What is past a limit is counted and
//! dropped as it arrives, never held, and the turn says so: every cut carries a mark
//! starting with [`TRUNCATED_MARK`], with the limit, the `[limits]` key that raises it
//! and, where it is known, how much was dropped; a closing note (see
//! [`TurnBudget`](crate::TurnBudget)) adds up what a turn dropped.

use serde_json::Value;

/// Default [`OutputLimits::answer_bytes`]: 8 MiB.
pub const DEFAULT_ANSWER_BYTES: usize = 8 * 1024 * 1024;
/// Default [`OutputLimits::tool_calls`].
pub const DEFAULT_TOOL_CALLS: usize = 5_000;
/// Default [`OutputLimits::tool_call_updates`].
pub const DEFAULT_TOOL_CALL_UPDATES: usize = 100_000;
/// Default [`OutputLimits::tool_result_bytes`]: 1 MiB.
pub const DEFAULT_TOOL_RESULT_BYTES: usize = 1024 * 1024;
/// Default [`OutputLimits::tool_output_bytes`]: 64 MiB.
pub const DEFAULT_TOOL_OUTPUT_BYTES: usize = 64 * 1024 * 1024;

/// How every mark of a cut starts, in the text people see and in what is stored.
pub const TRUNCATED_MARK: &str = "[truncated by Hearth";

/// The longest title a tool call keeps (a title is one line for people).
pub const TOOL_TITLE_BYTES: usize = 4096;

/// How much of an agent's output one turn keeps (`[limits]` in `config.toml`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputLimits {
    /// Answer text of one turn, in bytes; its reasoning is counted apart, up to the same.
    pub answer_bytes: usize,
    /// Tool calls of one turn.
    pub tool_calls: usize,
    /// Updates of a turn's tool calls (the one that ends a call always passes).
    pub tool_call_updates: usize,
    /// One piece of a tool call, in bytes: its result, its arguments, its content; and
    /// one plan.
    pub tool_result_bytes: usize,
    /// Everything a turn's tool calls and plans send together, in bytes, every update
    /// counted.
    pub tool_output_bytes: usize,
}

impl Default for OutputLimits {
    fn default() -> Self {
        Self {
            answer_bytes: DEFAULT_ANSWER_BYTES,
            tool_calls: DEFAULT_TOOL_CALLS,
            tool_call_updates: DEFAULT_TOOL_CALL_UPDATES,
            tool_result_bytes: DEFAULT_TOOL_RESULT_BYTES,
            tool_output_bytes: DEFAULT_TOOL_OUTPUT_BYTES,
        }
    }
}

/// Which limit a cut applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputLimit {
    /// [`OutputLimits::answer_bytes`].
    AnswerBytes,
    /// [`OutputLimits::tool_calls`].
    ToolCalls,
    /// [`OutputLimits::tool_call_updates`].
    ToolCallUpdates,
    /// [`OutputLimits::tool_result_bytes`].
    ToolResultBytes,
    /// [`OutputLimits::tool_output_bytes`].
    ToolOutputBytes,
}

impl OutputLimit {
    /// Its key under `[limits]` in `config.toml`.
    pub fn key(self) -> &'static str {
        match self {
            Self::AnswerBytes => "answer_bytes",
            Self::ToolCalls => "tool_calls",
            Self::ToolCallUpdates => "tool_call_updates",
            Self::ToolResultBytes => "tool_result_bytes",
            Self::ToolOutputBytes => "tool_output_bytes",
        }
    }

    /// Its value in `limits`.
    pub fn of(self, limits: &OutputLimits) -> usize {
        match self {
            Self::AnswerBytes => limits.answer_bytes,
            Self::ToolCalls => limits.tool_calls,
            Self::ToolCallUpdates => limits.tool_call_updates,
            Self::ToolResultBytes => limits.tool_result_bytes,
            Self::ToolOutputBytes => limits.tool_output_bytes,
        }
    }

    /// The limit for people: a size or a count, and where to raise it.
    fn shown(self, limits: &OutputLimits) -> String {
        let value = self.of(limits);
        let value = match self {
            Self::ToolCalls | Self::ToolCallUpdates => count(value as u64),
            _ => size(value as u64),
        };
        format!("{value} (`{}` under [limits] in config.toml)", self.key())
    }
}

/// A size for people: `1.0 MB`, `512 KB`, `12 bytes` (powers of 1024).
pub fn size(bytes: u64) -> String {
    const KB: u64 = 1024;
    const MB: u64 = 1024 * KB;
    match bytes {
        bytes if bytes >= MB => format!("{:.1} MB", bytes as f64 / MB as f64),
        bytes if bytes >= KB => format!("{} KB", bytes / KB),
        bytes => format!("{bytes} bytes"),
    }
}

/// A count for people, in groups of three digits: `200,000`.
pub fn count(value: u64) -> String {
    let digits = value.to_string();
    let mut shown = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            shown.push(',');
        }
        shown.push(digit);
    }
    shown
}

/// The mark at the end of answer text or reasoning cut at its limit (what follows is
/// dropped as it comes, so its size is told by the turn's closing note).
pub fn cut_mark(what: &str, limits: &OutputLimits) -> String {
    format!(
        "\n\n{TRUNCATED_MARK}: {what} reached its limit of {}; the rest is dropped]\n",
        OutputLimit::AnswerBytes.shown(limits)
    )
}

/// Appends `delta` to `buffer`, which keeps at most `limit` bytes of text: the part that
/// fits, then `mark()` once, when the text first passes the limit; nothing after that.
/// Returns how many bytes of `delta` were dropped. For records that only need to stay
/// bounded (a harness's own copy of an answer); the host counts with a
/// [`TurnBudget`](crate::TurnBudget).
pub fn append_bounded(
    buffer: &mut String,
    delta: &str,
    limit: usize,
    mark: impl FnOnce() -> String,
) -> usize {
    if buffer.len() > limit {
        // Cut before: the mark is in, and the buffer passed the limit with it.
        return delta.len();
    }
    let room = limit - buffer.len();
    if delta.len() <= room {
        buffer.push_str(delta);
        return 0;
    }
    let end = delta.floor_char_boundary(room);
    buffer.push_str(&delta[..end]);
    buffer.push_str(&mark());
    delta.len() - end
}

/// Cuts `text` to `limit` bytes (at a character boundary) and marks how much was
/// dropped; returns that many bytes (0 when it fit).
pub fn clip_text(text: &mut String, limit: usize, applied: OutputLimit) -> usize {
    if text.len() <= limit {
        return 0;
    }
    let end = text.floor_char_boundary(limit);
    let dropped = text.len() - end;
    text.truncate(end);
    text.push_str(&format!(
        "\n{TRUNCATED_MARK}: {} more dropped; `{}` under [limits] in config.toml allows more]",
        size(dropped as u64),
        applied.key()
    ));
    dropped
}

/// What takes the place of something dropped whole: `what` of `bytes` bytes, past the
/// `applied` limit.
pub fn dropped_mark(
    what: &str,
    bytes: usize,
    applied: OutputLimit,
    limits: &OutputLimits,
) -> String {
    format!(
        "{TRUNCATED_MARK}: {what} of {} dropped; the limit is {}]",
        size(bytes as u64),
        applied.shown(limits)
    )
}

/// The size of a JSON value as written, without writing it anywhere.
pub fn json_size(value: &Value) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    match serde_json::to_writer(&mut counter, value) {
        Ok(()) => counter.0,
        // A value serde_json made cannot fail to write; count it as too large.
        Err(_) => usize::MAX,
    }
}

/// Replaces arguments larger than `limit` bytes (as JSON) with a mark; returns the bytes
/// they take afterwards and the bytes dropped.
pub fn clip_arguments(arguments: &mut Value, limits: &OutputLimits) -> (usize, usize) {
    let bytes = json_size(arguments);
    if bytes <= limits.tool_result_bytes {
        return (bytes, 0);
    }
    *arguments = Value::String(dropped_mark(
        "the arguments",
        bytes,
        OutputLimit::ToolResultBytes,
        limits,
    ));
    (json_size(arguments), bytes)
}

/// What a turn dropped, per kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dropped {
    /// Bytes of answer text past [`OutputLimits::answer_bytes`].
    pub answer_bytes: u64,
    /// Bytes of reasoning past [`OutputLimits::answer_bytes`].
    pub reasoning_bytes: u64,
    /// Tool calls announced past [`OutputLimits::tool_calls`].
    pub tool_calls: u64,
    /// Tool-call updates past [`OutputLimits::tool_call_updates`].
    pub tool_call_updates: u64,
    /// Bytes of tool calls and plans cut: past [`OutputLimits::tool_result_bytes`] in one
    /// piece, or past [`OutputLimits::tool_output_bytes`] in all.
    pub tool_output_bytes: u64,
}

impl Dropped {
    /// Whether nothing was dropped.
    pub fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// The note that ends a turn that dropped anything: what, how much, and which
    /// limits to raise. `None` when nothing was dropped.
    pub fn note(&self, limits: &OutputLimits) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        let mut items = Vec::new();
        let mut keys = Vec::new();
        if self.answer_bytes > 0 {
            items.push(format!("{} of answer text", size(self.answer_bytes)));
            keys.push(OutputLimit::AnswerBytes);
        }
        if self.reasoning_bytes > 0 {
            items.push(format!("{} of reasoning", size(self.reasoning_bytes)));
            if !keys.contains(&OutputLimit::AnswerBytes) {
                keys.push(OutputLimit::AnswerBytes);
            }
        }
        if self.tool_calls > 0 {
            items.push(format!(
                "{} tool call{}",
                count(self.tool_calls),
                plural(self.tool_calls)
            ));
            keys.push(OutputLimit::ToolCalls);
        }
        if self.tool_call_updates > 0 {
            items.push(format!(
                "{} tool-call update{}",
                count(self.tool_call_updates),
                plural(self.tool_call_updates)
            ));
            keys.push(OutputLimit::ToolCallUpdates);
        }
        if self.tool_output_bytes > 0 {
            items.push(format!("{} of tool output", size(self.tool_output_bytes)));
            keys.push(OutputLimit::ToolResultBytes);
            keys.push(OutputLimit::ToolOutputBytes);
        }
        let limits: Vec<String> = keys
            .iter()
            .map(|key| format!("`{}` = {}", key.key(), key.of(limits)))
            .collect();
        Some(format!(
            "\n\n{TRUNCATED_MARK}: this turn passed its output limits, and Hearth dropped {} ({} under [limits] in config.toml)]\n",
            join(&items),
            limits.join(", ")
        ))
    }
}

fn plural(value: u64) -> &'static str {
    if value == 1 { "" } else { "s" }
}

/// `a`, `a and b`, `a, b and c`.
fn join(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn small() -> OutputLimits {
        OutputLimits {
            answer_bytes: 10,
            tool_calls: 2,
            tool_call_updates: 3,
            tool_result_bytes: 8,
            tool_output_bytes: 20,
        }
    }

    #[test]
    fn sizes_and_counts_read_like_people_write_them() {
        assert_eq!(size(12), "12 bytes");
        assert_eq!(size(2048), "2 KB");
        assert_eq!(size(8 * 1024 * 1024), "8.0 MB");
        assert_eq!(count(7), "7");
        assert_eq!(count(1000), "1,000");
        assert_eq!(count(200_000), "200,000");
        assert_eq!(count(12_345_678), "12,345,678");
    }

    #[test]
    fn a_bounded_buffer_keeps_what_fits_marks_the_cut_once_and_drops_the_rest() {
        let mut buffer = String::new();
        let mark = || "[cut]".to_owned();
        assert_eq!(append_bounded(&mut buffer, "hello", 10, mark), 0);
        // "é" is two bytes: the cut falls before it rather than inside it.
        assert_eq!(append_bounded(&mut buffer, "abcd\u{e9}f", 10, mark), 3);
        assert_eq!(buffer, "helloabcd[cut]");
        assert_eq!(append_bounded(&mut buffer, "more", 10, mark), 4);
        assert_eq!(buffer, "helloabcd[cut]");
        // Exactly at the limit: the next text is cut at once.
        let mut exact = String::new();
        assert_eq!(append_bounded(&mut exact, "0123456789", 10, mark), 0);
        assert_eq!(append_bounded(&mut exact, "x", 10, mark), 1);
        assert_eq!(exact, "0123456789[cut]");
    }

    #[test]
    fn clipped_text_says_how_much_was_dropped_and_which_key_allows_more() {
        let mut text = "x".repeat(3000);
        assert_eq!(
            clip_text(&mut text, 1000, OutputLimit::ToolResultBytes),
            2000
        );
        assert!(text.starts_with(&"x".repeat(1000)));
        assert_eq!(
            &text[1000..],
            "\n[truncated by Hearth: 1 KB more dropped; `tool_result_bytes` under [limits] in config.toml allows more]"
        );
        let mut short = "fits".to_owned();
        assert_eq!(clip_text(&mut short, 4, OutputLimit::ToolResultBytes), 0);
        assert_eq!(short, "fits");
    }

    #[test]
    fn large_arguments_are_replaced_by_a_mark() {
        let limits = small();
        let mut arguments = serde_json::json!({"a": 1});
        assert_eq!(clip_arguments(&mut arguments, &limits), (7, 0));
        let mut arguments = serde_json::json!({"path": "a/very/long/path"});
        let (_, dropped) = clip_arguments(&mut arguments, &limits);
        assert_eq!(dropped, 27);
        assert_eq!(
            arguments,
            Value::String(
                "[truncated by Hearth: the arguments of 27 bytes dropped; the limit is 8 bytes (`tool_result_bytes` under [limits] in config.toml)]"
                    .into()
            )
        );
        assert_eq!(json_size(&serde_json::json!("é")), 4);
    }

    #[test]
    fn the_closing_note_adds_up_what_was_dropped() {
        assert_eq!(Dropped::default().note(&small()), None);
        let dropped = Dropped {
            answer_bytes: 200 * 1024 * 1024,
            reasoning_bytes: 0,
            tool_calls: 1,
            tool_call_updates: 100_000,
            tool_output_bytes: 0,
        };
        assert_eq!(
            dropped.note(&OutputLimits::default()).unwrap(),
            "\n\n[truncated by Hearth: this turn passed its output limits, and Hearth dropped 200.0 MB of answer text, 1 tool call and 100,000 tool-call updates (`answer_bytes` = 8388608, `tool_calls` = 5000, `tool_call_updates` = 100000 under [limits] in config.toml)]\n"
        );
        let mark = cut_mark("the answer", &OutputLimits::default());
        assert!(mark.contains("[truncated by Hearth: the answer reached its limit of 8.0 MB (`answer_bytes` under [limits] in config.toml); the rest is dropped]"), "{mark}");
    }
}
