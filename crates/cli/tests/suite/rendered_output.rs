//! What an answer looks like: rendered from Markdown and coloured on a terminal, exactly
//! as the model wrote it into a pipe, with `--color never` or with `NO_COLOR`.

use std::process::Stdio;

use hearth_test_support::{BoundedCommand, PROCESS_WAIT};

use super::support::Hearth;
use super::terminal_support::on_a_terminal;

/// The answer the scenario streams word by word.
const ANSWER: &str = "# Shopping\n\nBuy **milk** and `eggs`.\n\n| Item | Count |\n|---|--:|\n| milk | 2 |\n\n```rust\nfn main() {}\n```\n";

fn scenario(hearth: &Hearth) -> String {
    let mut text = String::from("name: markdown\nturns:\n  - steps:\n      - text: |\n");
    for line in ANSWER.lines() {
        text.push_str("          ");
        text.push_str(line);
        text.push('\n');
    }
    text.push_str("        stream: words\n");
    hearth
        .write("markdown.yaml", &text)
        .to_str()
        .unwrap()
        .to_owned()
}

#[test]
fn piped_output_is_the_answer_as_written() {
    let hearth = Hearth::new();
    let scenario = scenario(&hearth);
    let stdout = hearth.ok(&["run", "--scenario", &scenario, "list"]);
    assert_eq!(stdout, ANSWER);
    let stdout = hearth.ok(&["run", "--color", "never", "--scenario", &scenario, "list"]);
    assert_eq!(stdout, ANSWER);
}

#[test]
fn a_terminal_shows_the_answer_rendered_and_never_when_asked_not_to() {
    let hearth = Hearth::new();
    let scenario = scenario(&hearth);
    let mut run = hearth.command();
    run.args(["run", "--scenario", &scenario, "list"]);
    let output = on_a_terminal(&run)
        .stdin(Stdio::null())
        .output_within(PROCESS_WAIT);
    let shown = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{shown}");
    // The heading bold and underlined, without its `#`; strong text bold; inline code
    // coloured without backticks; the table aligned under a rule; the code highlighted.
    assert!(shown.contains("\x1b[1;4mShopping\x1b[0m"), "{shown:?}");
    assert!(!shown.contains("# Shopping"), "{shown:?}");
    assert!(
        shown.contains("Buy \x1b[1mmilk\x1b[0m and \x1b[36meggs\x1b[0m."),
        "{shown:?}"
    );
    assert!(shown.contains("──┼──"), "{shown:?}");
    assert!(shown.contains("milk\x1b[2m │ \x1b[0m    2"), "{shown:?}");
    assert!(shown.contains("\x1b[38;"), "highlighted code: {shown:?}");
    // Off: the answer as written (the terminal turns line feeds into CR LF).
    for off in [&["--color", "never"][..], &[]] {
        let mut run = hearth.command();
        run.args(off).args(["run", "--scenario", &scenario, "list"]);
        if off.is_empty() {
            run.env("NO_COLOR", "1");
        }
        let output = on_a_terminal(&run)
            .stdin(Stdio::null())
            .output_within(PROCESS_WAIT);
        let shown = String::from_utf8_lossy(&output.stdout).replace("\r\n", "\n");
        assert!(shown.contains(ANSWER), "{off:?}: {shown:?}");
        assert!(!shown.contains("\x1b["), "{off:?}: {shown:?}");
    }
}
