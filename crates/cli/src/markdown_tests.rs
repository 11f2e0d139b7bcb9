use super::*;
use crate::style::visible_escapes;
use pretty_assertions::assert_eq;

/// Every construct the renderer knows, as a model would write it.
const ANSWER: &str = "# Plan for the week

Some **bold**, some *italic*, ~~struck~~ and `inline code`, with a
[link](https://example.com/docs) and <https://example.com/bare>.

## Lists

- first
- second
  - nested
    - deeper
- third

1. one
2. two
3. three

- [x] done
- [ ] to do

> A quote
> over two lines

| Name | Count | Note |
|:-----|------:|:----:|
| apples | 3 | red |
| kiwis | 12 | green and fuzzy |

```rust
fn main() {
    println!(\"hi\");
}
```

---

![a chart](chart.png)
That is all.
";

fn rendered(text: &str, width: usize, pieces: &[usize]) -> String {
    let mut stream = MarkdownStream::new(width, Depth::Colours256);
    let mut out = String::new();
    let mut rest = text;
    for &size in pieces.iter().cycle() {
        if rest.is_empty() {
            break;
        }
        let mut end = size.min(rest.len());
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        stream.push(&rest[..end], &mut out);
        rest = &rest[end..];
    }
    stream.finish(&mut out);
    out
}

/// Shown text without its (made visible) styles.
fn unstyled(shown: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for c in shown.chars() {
        match c {
            '⟨' => inside = true,
            '⟩' => inside = false,
            _ if !inside => out.push(c),
            _ => {}
        }
    }
    out
}

#[test]
fn every_construct_renders_for_the_terminal() {
    let out = rendered(ANSWER, 80, &[usize::MAX]);
    insta::assert_snapshot!(visible_escapes(&out));
}

#[test]
fn an_answer_split_anywhere_renders_as_the_whole() {
    let whole = rendered(ANSWER, 80, &[usize::MAX]);
    for sizes in [&[1][..], &[2], &[3], &[4], &[5, 1, 9], &[13], &[64]] {
        assert_eq!(rendered(ANSWER, 80, sizes), whole, "deltas of {sizes:?}");
    }
    // Two pieces, cut at every byte: mid-word, mid-line, mid-table, mid-fence.
    for cut in (1..ANSWER.len()).filter(|cut| ANSWER.is_char_boundary(*cut)) {
        let mut stream = MarkdownStream::new(80, Depth::Colours256);
        let mut out = String::new();
        stream.push(&ANSWER[..cut], &mut out);
        stream.push(&ANSWER[cut..], &mut out);
        stream.finish(&mut out);
        assert_eq!(out, whole, "cut at {cut}: {:?}", &ANSWER[..cut]);
    }
}

#[test]
fn lines_print_as_they_complete_and_a_table_when_it_ends() {
    let mut stream = MarkdownStream::new(80, Depth::Colours256);
    let mut out = String::new();
    stream.push("Hello **wor", &mut out);
    assert_eq!(out, "", "half a line waits");
    stream.push("ld**\nnext", &mut out);
    assert_eq!(visible_escapes(&out), "Hello ⟨1⟩world⟨0⟩\n");
    out.clear();
    stream.push(" line\n\n| a | b |\n", &mut out);
    assert_eq!(out, "next line\n", "a row that may head a table waits");
    out.clear();
    stream.push("|---|---|\n| 1 | 2 |\n", &mut out);
    assert_eq!(out, "", "a table waits for its end");
    stream.push("\n", &mut out);
    assert_eq!(
        visible_escapes(&out),
        "\n⟨1⟩a⟨0⟩⟨2⟩ │ ⟨0⟩⟨1⟩b⟨0⟩\n⟨2⟩──┼──⟨0⟩\n1⟨2⟩ │ ⟨0⟩2\n"
    );
    out.clear();
    stream.push("```sh\necho one\n", &mut out);
    assert!(out.contains("echo"), "code prints line by line: {out:?}");
    assert!(!stream.is_idle());
    stream.push("```\n", &mut out);
    assert!(stream.is_idle());
}

#[test]
fn what_the_model_wrote_cannot_reach_the_terminal_raw() {
    let hostile = "# Title \x1b]0;owned\x07\n\nText \x1b[2J and \u{9b}31m\n\n\
        | a\x1b[8m | b |\n|---|---|\n| \x07 | [x](http://h/\x1b[1m) |\n\n\
        ```rust\nlet x = \"\x1b[31m\";\n```\n";
    let out = rendered(hostile, 80, &[3]);
    // `visible_escapes` fails on any escape that is not one of the renderer's styles.
    let shown = visible_escapes(&out);
    assert!(
        !shown.contains('\x07') && !shown.contains('\u{9b}'),
        "{shown}"
    );
    let text = unstyled(&shown);
    assert!(text.contains("Title \\x1b]0;owned\\x07"), "{text}");
    assert!(text.contains("Text \\x1b[2J and \\u{9b}31m"), "{text}");
    assert!(text.contains("let x = \"\\x1b[31m\";"), "{text}");
}

#[test]
fn wide_tables_wrap_their_cells_or_become_records() {
    let table = "| Step | What happens |\n|---|---|\n| 1 | The agent reads the file and proposes a change |\n| 2 | You approve it |\n";
    let squeezed = rendered(table, 30, &[usize::MAX]);
    insta::assert_snapshot!("squeezed_table", visible_escapes(&squeezed));
    for line in squeezed.lines() {
        assert!(visible_width(line) <= 30, "{line:?}");
    }
    let many = "| a | b | c | d | e | f |\n|---|---|---|---|---|---|\n| one | two | three | four | five | six |\n";
    insta::assert_snapshot!(
        "table_as_records",
        visible_escapes(&rendered(many, 20, &[7]))
    );
}

#[test]
fn a_long_answer_is_rendered_in_units() {
    let text: String = (0..500)
        .map(|n| format!("line {n} of a paragraph\n"))
        .collect();
    let out = rendered(&text, 80, &[4]);
    assert_eq!(out.lines().count(), 500);
    assert_eq!(out, rendered(&text, 80, &[usize::MAX]));
}
