//! Colours on the terminal: whether stdout and stderr get them (`--color auto|always|never`,
//! `NO_COLOR`), and the few styles Hearth's own words wear there (tool calls, errors,
//! notices, the usage line, diffs). Text an agent wrote is escaped before it is styled
//! ([`hearth_core::escape_controls`]), so the only escape sequences on the terminal are
//! the ones made here and in [`crate::markdown`].

use std::io::IsTerminal as _;
use std::sync::OnceLock;

/// When to colour output (`--color`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ColourChoice {
    // (Plain comments: clap would show doc comments as a long list in `--help`.)
    // On a terminal, unless `NO_COLOR` is set.
    #[default]
    Auto,
    // Always, even into a file or a pipe.
    Always,
    Never,
}

static CHOICE: OnceLock<ColourChoice> = OnceLock::new();

/// Records the `--color` choice, once, before anything is printed.
pub(crate) fn choose(choice: ColourChoice) {
    if CHOICE.set(choice).is_err() {
        tracing::debug!("the colour choice was made already");
    }
}

/// Whether `NO_COLOR` asks for no colour (set to anything but the empty string,
/// <https://no-color.org>).
fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|value| !value.is_empty())
}

fn colour(is_terminal: bool) -> bool {
    match CHOICE.get().copied().unwrap_or_default() {
        ColourChoice::Always => true,
        ColourChoice::Never => false,
        ColourChoice::Auto => is_terminal && !no_color(),
    }
}

/// Whether stdout gets colours (and answers are rendered from Markdown).
pub(crate) fn on_stdout() -> bool {
    colour(std::io::stdout().is_terminal())
}

/// Whether stderr gets colours.
pub(crate) fn on_stderr() -> bool {
    colour(std::io::stderr().is_terminal())
}

/// An SGR style: the parameters between `ESC [` and `m`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Paint(pub &'static str);

impl Paint {
    pub(crate) const BOLD: Self = Self("1");
    pub(crate) const DIM: Self = Self("2");
    pub(crate) const RED: Self = Self("31");
    pub(crate) const GREEN: Self = Self("32");
    pub(crate) const YELLOW: Self = Self("33");
    pub(crate) const MAGENTA: Self = Self("35");
    pub(crate) const CYAN: Self = Self("36");
    pub(crate) const BOLD_RED: Self = Self("1;31");
    pub(crate) const BOLD_YELLOW: Self = Self("1;33");

    /// `text` in this style, reset after it.
    pub(crate) fn paint(self, text: &str) -> String {
        if self.0.is_empty() || text.is_empty() {
            return text.to_owned();
        }
        format!("\x1b[{}m{text}\x1b[0m", self.0)
    }

    /// `text` in this style when `on`, else as it is.
    pub(crate) fn paint_if(self, on: bool, text: &str) -> String {
        if on {
            self.paint(text)
        } else {
            text.to_owned()
        }
    }
}

/// How wide `text` shows on a terminal: its characters' columns, the escape sequences
/// made here not counted.
pub(crate) fn visible_width(text: &str) -> usize {
    let mut width = 0;
    let mut rest = text;
    while let Some(start) = rest.find('\x1b') {
        width += unicode_width::UnicodeWidthStr::width(&rest[..start]);
        rest = &rest[start..];
        // An SGR sequence (`ESC [ … m`); anything else is counted as it stands.
        match rest.find('m') {
            Some(end) if rest.starts_with("\x1b[") => rest = &rest[end + 1..],
            _ => {
                width += 1;
                rest = &rest[1..];
            }
        }
    }
    width + unicode_width::UnicodeWidthStr::width(rest)
}

/// The lines of a unified diff (`+`/`-`/`@@` lines, with `---`/`+++` headers), coloured:
/// additions green, removals red, hunk headers cyan, file headers bold.
pub(crate) fn diff_line(line: &str) -> String {
    if line.starts_with("+++") || line.starts_with("---") {
        Paint::BOLD.paint(line)
    } else if line.starts_with('+') {
        Paint::GREEN.paint(line)
    } else if line.starts_with('-') {
        Paint::RED.paint(line)
    } else if line.starts_with("@@") {
        Paint::CYAN.paint(line)
    } else {
        line.to_owned()
    }
}

/// A whole diff coloured line by line (see [`diff_line`]), its line ends kept.
pub(crate) fn diff(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 4);
    for line in text.split_inclusive('\n') {
        let (body, end) = match line.strip_suffix('\n') {
            Some(body) => (body, "\n"),
            None => (line, ""),
        };
        out.push_str(&diff_line(body));
        out.push_str(end);
    }
    out
}

/// Escape sequences made visible (`\x1b[32m` → `⟨32⟩`, a reset `⟨0⟩`), for snapshots.
#[cfg(test)]
pub(crate) fn visible_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("\x1b[") {
        out.push_str(&rest[..start]);
        rest = &rest[start + 2..];
        match rest.find('m') {
            Some(end) => {
                out.push('⟨');
                out.push_str(&rest[..end]);
                out.push('⟩');
                rest = &rest[end + 1..];
            }
            None => out.push_str("\\x1b["),
        }
    }
    out.push_str(rest);
    assert!(!out.contains('\x1b'), "an escape that is not SGR: {out:?}");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn widths_leave_out_styles_and_count_wide_characters() {
        assert_eq!(visible_width(&Paint::BOLD.paint("abc")), 3);
        assert_eq!(visible_width("日本"), 4);
        assert_eq!(visible_width("a\x1b[1;31mb\x1b[0mc"), 3);
        assert_eq!(Paint::RED.paint(""), "");
    }

    #[test]
    fn diffs_are_green_for_added_and_red_for_removed() {
        let diff = "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n same";
        insta::assert_snapshot!(visible_escapes(&super::diff(diff)), @r"
        ⟨1⟩--- a/x⟨0⟩
        ⟨1⟩+++ b/x⟨0⟩
        ⟨36⟩@@ -1 +1 @@⟨0⟩
        ⟨31⟩-old⟨0⟩
        ⟨32⟩+new⟨0⟩
         same
        ");
    }
}
