//! Cold conversion figures, printed as medians:
//!
//! - a generated 100-page PDF through `convert_file`, and through `pdftotext`
//!   (poppler-utils) when it is installed;
//! - a generated ~5 MB HTML page through `convert_file`, and through `pandoc`
//!   (HTML → GitHub Markdown) when it is installed.
//!
//! Every run converts the file from disk afresh; the external tools' figures include
//! starting their process, as a user of them would pay it. Run with
//! `cargo bench -p hearth-projects --bench convert`.

// This binary's output is its figures.
#![allow(clippy::print_stdout)]

use std::error::Error;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use hearth_projects::convert::{ConvertLimits, convert_file};

type BenchResult<T> = Result<T, Box<dyn Error>>;

const PDF_PAGES: usize = 100;
const HTML_BYTES: usize = 5 * 1024 * 1024;
const ROUNDS: usize = 5;

fn main() -> BenchResult<()> {
    let dir = tempfile::TempDir::new()?;
    let pdf_path = dir.path().join("report.pdf");
    std::fs::write(&pdf_path, pdf(PDF_PAGES))?;
    let html_path = dir.path().join("page.html");
    std::fs::write(&html_path, page(HTML_BYTES))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;

    let pdf_size = std::fs::metadata(&pdf_path)?.len();
    println!("PDF, {PDF_PAGES} pages, {pdf_size} bytes:");
    let ours = measure_ours(&runtime, &pdf_path)?;
    compare(ours, "pdftotext", || {
        let mut command = Command::new("pdftotext");
        command.arg(&pdf_path).arg("-");
        command
    });

    let html_size = std::fs::metadata(&html_path)?.len();
    println!("HTML, {html_size} bytes:");
    let ours = measure_ours(&runtime, &html_path)?;
    compare(ours, "pandoc", || {
        let mut command = Command::new("pandoc");
        command
            .args(["--from", "html", "--to", "gfm"])
            .arg(&html_path);
        command
    });
    Ok(())
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

fn measure_ours(runtime: &tokio::runtime::Runtime, path: &Path) -> BenchResult<Duration> {
    let limits = ConvertLimits::default();
    let mut samples = Vec::new();
    let mut output_bytes = 0;
    for _ in 0..ROUNDS {
        let started = Instant::now();
        let converted = runtime.block_on(convert_file(path, &limits))?;
        samples.push(started.elapsed());
        output_bytes = converted.markdown.len();
    }
    let ours = median(samples);
    println!(
        "  hearth convert_file: {ours:>10.1?} median of {ROUNDS} ({output_bytes} bytes of Markdown)"
    );
    Ok(ours)
}

/// Times the external `tool` on the same file and prints the ratio, or says the tool is
/// not installed.
fn compare(ours: Duration, tool: &str, command: impl Fn() -> Command) {
    let installed = Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok();
    if !installed {
        println!("  {tool} not installed");
        return;
    }
    let mut samples = Vec::new();
    for _ in 0..ROUNDS {
        let started = Instant::now();
        let status = command()
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let elapsed = started.elapsed();
        match status {
            Ok(status) if status.success() => samples.push(elapsed),
            Ok(status) => {
                println!("  {tool} failed ({status})");
                return;
            }
            Err(error) => {
                println!("  {tool} could not run ({error})");
                return;
            }
        }
    }
    let theirs = median(samples);
    println!("  {tool:<20} {theirs:>10.1?} median of {ROUNDS}");
    println!(
        "  ratio hearth / {tool}: {:.2}",
        ours.as_secs_f64() / theirs.as_secs_f64().max(f64::EPSILON)
    );
}

/// A PDF of `pages` pages of 40 lines of Helvetica text each, with a correct
/// cross-reference table (the tests' writer, without the font encoding options).
fn pdf(pages: usize) -> Vec<u8> {
    let first_page_id = 4;
    let kids: Vec<String> = (0..pages)
        .map(|index| format!("{} 0 R", first_page_id + 2 * index))
        .collect();
    let mut objects: Vec<Vec<u8>> = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        format!(
            "<< /Type /Pages /Count {pages} /Kids [{}] >>",
            kids.join(" ")
        )
        .into_bytes(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
            .to_vec(),
    ];
    for page in 0..pages {
        objects.push(
            format!(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] \
                 /Resources << /Font << /F1 3 0 R >> >> /Contents {} 0 R >>",
                first_page_id + 2 * page + 1
            )
            .into_bytes(),
        );
        let mut stream = String::from("BT /F1 10 Tf 12 TL 54 750 Td");
        for line in 0..40 {
            stream.push_str(&format!(
                " (Page {} line {line}: local-first software keeps data on the user's machine.) Tj T*",
                page + 1
            ));
        }
        stream.push_str(" ET");
        objects.push(
            format!(
                "<< /Length {} >>\nstream\n{stream}\nendstream",
                stream.len()
            )
            .into_bytes(),
        );
    }
    let mut out = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (index, object) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", index + 1).as_bytes());
        out.extend_from_slice(object);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for offset in offsets {
        out.extend_from_slice(format!("{offset:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

/// A page of about `target` bytes: a long article between navigation, scripts, styles
/// and a footer.
fn page(target: usize) -> String {
    let mut html = String::from(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>A long read</title>\
         <style>body { font-family: serif }</style><script>window.queue = [];</script></head>\
         <body><nav><a href=\"/\">Home</a> <a href=\"/news\">News</a></nav><main><article>\
         <h1>A long read</h1>",
    );
    let mut section = 0;
    while html.len() < target {
        section += 1;
        html.push_str(&format!(
            "<section><h2>Section {section}</h2>\
             <p>Local-first software keeps the user's data on the user's own machine, \
             <a href=\"/notes/{section}\">synchronises</a> when a network is there, and keeps \
             <em>working</em> when it is not — Grüße aus 東京.</p>\
             <ul><li>First point of section {section}</li><li>Second point, with \
             <code>inline code</code></li><li>Third point</li></ul>\
             <table><tr><th>Key</th><th>Value</th></tr><tr><td>section</td><td>{section}</td></tr></table>\
             </section>"
        ));
    }
    html.push_str("</article></main><footer>Copyright</footer></body></html>");
    html
}
