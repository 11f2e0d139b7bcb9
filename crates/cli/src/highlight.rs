//! Syntax highlighting of code blocks in answers, by the language their fence names
//! (syntect's bundled grammars and themes, with its pure-Rust regex engine). The
//! grammars are loaded the first time a code block appears, not at start.

use std::sync::OnceLock;

use syntect::easy::HighlightLines;
use syntect::highlighting::{Color, FontStyle, Theme, ThemeSet};
use syntect::parsing::{SyntaxReference, SyntaxSet};

/// The theme: readable on the dark backgrounds most terminals have.
const THEME: &str = "base16-ocean.dark";

struct Loaded {
    syntaxes: SyntaxSet,
    theme: Theme,
}

static LOADED: OnceLock<Option<Loaded>> = OnceLock::new();

fn loaded() -> Option<&'static Loaded> {
    LOADED
        .get_or_init(|| {
            let syntaxes = SyntaxSet::load_defaults_newlines();
            let mut themes = ThemeSet::load_defaults();
            let theme = themes.themes.remove(THEME)?;
            Some(Loaded { syntaxes, theme })
        })
        .as_ref()
}

/// How colours are written: 24-bit where the terminal says it has them
/// (`COLORTERM=truecolor`), else the nearest of the 256 colours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Depth {
    TrueColour,
    Colours256,
}

impl Depth {
    pub(crate) fn of_terminal() -> Self {
        match std::env::var("COLORTERM").as_deref() {
            Ok("truecolor" | "24bit") => Self::TrueColour,
            _ => Self::Colours256,
        }
    }
}

/// Highlights one code block line by line, as its lines arrive.
pub(crate) struct CodeHighlighter {
    lines: HighlightLines<'static>,
    syntaxes: &'static SyntaxSet,
    /// The theme's own text colour, left to the terminal's.
    foreground: Option<Color>,
    depth: Depth,
}

impl CodeHighlighter {
    /// A highlighter for the language a fence names (`rust`, `py`, `sh`, …), or `None`
    /// when no grammar knows it.
    pub(crate) fn new(language: &str, depth: Depth) -> Option<Self> {
        let language = language.trim();
        if language.is_empty() {
            return None;
        }
        let loaded = loaded()?;
        let syntax: &SyntaxReference =
            loaded.syntaxes.find_syntax_by_token(language).or_else(|| {
                loaded
                    .syntaxes
                    .find_syntax_by_token(&language.to_ascii_lowercase())
            })?;
        Some(Self {
            lines: HighlightLines::new(syntax, &loaded.theme),
            syntaxes: &loaded.syntaxes,
            foreground: loaded.theme.settings.foreground,
            depth,
        })
    }

    /// One line of code (without its line end, its controls already escaped),
    /// coloured; as it is when the grammar fails on it.
    pub(crate) fn line(&mut self, line: &str, out: &mut String) {
        let with_end = format!("{line}\n");
        let Ok(pieces) = self.lines.highlight_line(&with_end, self.syntaxes) else {
            out.push_str(line);
            return;
        };
        for (style, piece) in pieces {
            let piece = piece.strip_suffix('\n').unwrap_or(piece);
            if piece.is_empty() {
                continue;
            }
            let mut codes = Vec::new();
            if style.font_style.contains(FontStyle::BOLD) {
                codes.push("1".to_owned());
            }
            if style.font_style.contains(FontStyle::ITALIC) {
                codes.push("3".to_owned());
            }
            if Some(style.foreground) != self.foreground {
                codes.push(self.colour(style.foreground));
            }
            if codes.is_empty() {
                out.push_str(piece);
            } else {
                out.push_str(&format!("\x1b[{}m{piece}\x1b[0m", codes.join(";")));
            }
        }
    }

    fn colour(&self, colour: Color) -> String {
        match self.depth {
            Depth::TrueColour => format!("38;2;{};{};{}", colour.r, colour.g, colour.b),
            Depth::Colours256 => format!("38;5;{}", nearest_256(colour)),
        }
    }
}

/// The nearest colour of the 6×6×6 cube or the grey ramp of the 256-colour palette.
fn nearest_256(colour: Color) -> u8 {
    const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    let level = |value: u8| -> usize {
        LEVELS
            .iter()
            .enumerate()
            .min_by_key(|(_, level)| (i32::from(**level) - i32::from(value)).abs())
            .map_or(0, |(index, _)| index)
    };
    let (r, g, b) = (level(colour.r), level(colour.g), level(colour.b));
    let cube = (LEVELS[r], LEVELS[g], LEVELS[b]);
    let grey_level = (u32::from(colour.r) + u32::from(colour.g) + u32::from(colour.b)) / 3;
    let grey_index = (grey_level.saturating_sub(3) / 10).min(23);
    let grey = 8 + grey_index * 10;
    let distance = |(x, y, z): (u32, u32, u32)| {
        let d = |a: u32, b: u8| (i64::from(a) - i64::from(b)).pow(2);
        d(x, colour.r) + d(y, colour.g) + d(z, colour.b)
    };
    let cube_distance = distance((cube.0.into(), cube.1.into(), cube.2.into()));
    let grey_distance = distance((grey, grey, grey));
    if grey_distance < cube_distance {
        // 232..=255; grey_index is at most 23.
        232 + u8::try_from(grey_index).unwrap_or(23)
    } else {
        // 16 + 36r + 6g + b, each at most 5: at most 231.
        u8::try_from(16 + 36 * r + 6 * g + b).unwrap_or(231)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn code_is_coloured_by_its_language_and_unknown_languages_are_not() {
        let mut rust = CodeHighlighter::new("rust", Depth::Colours256).unwrap();
        let mut out = String::new();
        rust.line("fn main() {}", &mut out);
        assert!(out.contains("\x1b[38;5;"), "{out:?}");
        assert_eq!(crate::style::visible_width(&out), "fn main() {}".len());
        assert!(CodeHighlighter::new("no-such-language", Depth::TrueColour).is_none());
        assert!(CodeHighlighter::new("", Depth::TrueColour).is_none());
    }

    #[test]
    fn colours_map_to_the_nearest_of_256() {
        assert_eq!(
            nearest_256(Color {
                r: 255,
                g: 0,
                b: 0,
                a: 255
            }),
            196
        );
        assert_eq!(
            nearest_256(Color {
                r: 128,
                g: 128,
                b: 128,
                a: 255
            }),
            244
        );
        assert_eq!(
            nearest_256(Color {
                r: 0,
                g: 0,
                b: 0,
                a: 255
            }),
            16
        );
    }
}
