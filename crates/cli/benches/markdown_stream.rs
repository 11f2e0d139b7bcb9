//! How fast an answer is rendered from Markdown at a terminal: a 10,000-line answer
//! (headings, paragraphs, lists, tables, highlighted code) arriving in ~4-character
//! deltas, as a model streams it. Prints the throughput in tokens/s (one delta counted
//! as one token) and the worst and 99th-percentile time one delta takes, the first
//! code block (which loads the grammars) counted apart. Target: keeping up with a
//! 2,000 token/s stream, i.e. well under 500 µs a delta.
//!
//! `cargo bench -p hearth-cli --bench markdown_stream`

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    dead_code,
    unused_imports
)]

use std::time::{Duration, Instant};

#[path = "../src/highlight.rs"]
mod highlight;
#[path = "../src/markdown.rs"]
mod markdown;
#[path = "../src/style.rs"]
mod style;

const LINES: usize = 10_000;
const DELTA: usize = 4;

/// A long answer of the kinds of blocks models write, `LINES` lines long.
fn answer() -> String {
    let mut lines: Vec<String> = Vec::with_capacity(LINES + 20);
    let mut section = 0;
    while lines.len() < LINES {
        section += 1;
        lines.push(format!("## Section {section}: what changed"));
        lines.push(String::new());
        for n in 0..4 {
            lines.push(format!(
                "Line {n} of a paragraph with **bold**, *emphasis*, `code` and a [link](https://example.com/{section}/{n})."
            ));
        }
        lines.push(String::new());
        for n in 0..4 {
            lines.push(format!("- item {n} of the list"));
            lines.push(format!("  - a nested point about {n}"));
        }
        lines.push(String::new());
        lines.push("| Name | Count | Note |".into());
        lines.push("|------|------:|------|".into());
        for n in 0..5 {
            lines.push(format!("| row {n} | {} | a short note |", n * section));
        }
        lines.push(String::new());
        lines.push("```rust".into());
        for n in 0..8 {
            lines.push(format!(
                "    let value_{n} = compute({n}, \"text\"); // why"
            ));
        }
        lines.push("```".into());
        lines.push(String::new());
    }
    lines.truncate(LINES);
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

fn deltas(text: &str) -> Vec<&str> {
    let mut out = Vec::with_capacity(text.len() / DELTA + 1);
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + DELTA).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        out.push(&text[start..end]);
        start = end;
    }
    out
}

fn main() {
    let text = answer();
    let deltas = deltas(&text);
    let first_fence = text.find("```").unwrap_or(0);
    for round in 0..3 {
        let mut stream = markdown::MarkdownStream::new(100, highlight::Depth::TrueColour);
        let mut out = String::new();
        let mut times = Vec::with_capacity(deltas.len());
        let mut first_code = Duration::ZERO;
        let mut offset = 0;
        let started = Instant::now();
        for delta in &deltas {
            let before = Instant::now();
            stream.push(delta, &mut out);
            let took = before.elapsed();
            // The delta that opens the first code block loads the grammars once.
            if offset <= first_fence + 8 && offset + delta.len() > first_fence {
                first_code = first_code.max(took);
            } else {
                times.push(took);
            }
            offset += delta.len();
            if out.len() > 1 << 20 {
                out.clear();
            }
        }
        stream.finish(&mut out);
        let total = started.elapsed();
        times.sort();
        let worst = times.last().copied().unwrap_or_default();
        let p99 = times[times.len() * 99 / 100];
        println!(
            "round {round}: {} lines, {} deltas in {:.1} ms: {:.0} tokens/s; per delta: worst {:.0} µs, p99 {:.1} µs, median {:.1} µs; the delta loading the grammars {:.1} ms",
            LINES,
            deltas.len(),
            total.as_secs_f64() * 1e3,
            deltas.len() as f64 / total.as_secs_f64(),
            worst.as_secs_f64() * 1e6,
            p99.as_secs_f64() * 1e6,
            times[times.len() / 2].as_secs_f64() * 1e6,
            first_code.as_secs_f64() * 1e3,
        );
    }
}
