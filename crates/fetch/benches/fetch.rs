//! Benchmarks of hearth-fetch, printed as medians:
//!
//! - HTML → Markdown (readability extraction + conversion) on a ~1 MB page;
//! - the guarded fetcher's overhead against a plain reqwest GET, both over a kept-alive
//!   connection to a small HTTP server on 127.0.0.1.
//!
//! Run with `cargo bench -p hearth-fetch`.

// This binary's output is its figures.
#![allow(clippy::print_stdout)]

use std::error::Error;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hearth_fetch::{ContentTypes, FetchPolicy, FetchRequest, Fetcher, StaticResolver};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

type BenchResult<T> = Result<T, Box<dyn Error>>;

const HTML_ROUNDS: usize = 15;
const FETCH_ROUNDS: usize = 20;
const FETCHES_PER_ROUND: usize = 100;

fn main() -> BenchResult<()> {
    html_to_markdown()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(fetch_overhead())
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

/// A page of about `target` bytes: a long article between navigation, scripts, styles,
/// SVG icons and a footer, like a real news or documentation page.
fn page(target: usize) -> String {
    let mut html = String::from(
        "<!doctype html><html><head><title>A long read</title>\
         <style>body { font-family: serif } .ad { display: none }</style>\
         <script>window.analytics = { queue: [] };</script></head><body>\
         <nav><ul><li><a href=\"/\">Home</a></li><li><a href=\"/news\">News</a></li></ul></nav>\
         <main><article><h1>A long read</h1>",
    );
    let mut section = 0;
    while html.len() < target {
        section += 1;
        html.push_str(&format!(
            "<section><h2>Section {section}</h2>\
             <p>Local-first software keeps the user's data on the user's own machine, \
             <a href=\"/notes/{section}\">synchronises</a> when a network is there, and \
             keeps <em>working</em> when it is not. This paragraph repeats so the page \
             reaches its target size with realistic text density.</p>\
             <ul><li>First point of section {section}</li><li>Second point, with \
             <code>inline code</code></li><li>Third point</li></ul>\
             <table><tr><th>Key</th><th>Value</th></tr><tr><td>section</td>\
             <td>{section}</td></tr></table>\
             <svg viewBox=\"0 0 10 10\"><path d=\"M0 0L10 10\"/></svg>\
             <script>window.analytics.queue.push({section});</script>\
             <!-- section {section} ends --></section>"
        ));
    }
    html.push_str("</article></main><footer>Footer links</footer></body></html>");
    html
}

fn html_to_markdown() -> BenchResult<()> {
    let html = page(1024 * 1024);
    let mut samples = Vec::with_capacity(HTML_ROUNDS);
    let mut markdown_length = 0;
    for _ in 0..HTML_ROUNDS {
        let started = Instant::now();
        let document = hearth_fetch::convert_html(&html, Some("https://example.com/long-read"));
        samples.push(started.elapsed());
        markdown_length = document.markdown.len();
    }
    let median = median(samples);
    let megabytes = html.len() as f64 / (1024.0 * 1024.0);
    println!(
        "html_to_markdown: {:.2} MB page -> {} KB Markdown: median {:.1} ms ({:.1} MB/s) over {HTML_ROUNDS} runs",
        megabytes,
        markdown_length / 1024,
        median.as_secs_f64() * 1000.0,
        megabytes / median.as_secs_f64(),
    );
    Ok(())
}

/// A minimal keep-alive HTTP/1.1 server answering every request with a small body.
async fn serve(listener: TcpListener) {
    const RESPONSE: &[u8] =
        b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n\r\nhello, hearth";
    loop {
        let Ok((mut socket, _)) = listener.accept().await else {
            return;
        };
        tokio::spawn(async move {
            let mut buffer = Vec::with_capacity(4096);
            let mut chunk = [0_u8; 4096];
            loop {
                let Ok(read) = socket.read(&mut chunk).await else {
                    return;
                };
                if read == 0 {
                    return;
                }
                buffer.extend_from_slice(&chunk[..read]);
                while let Some(end) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
                    buffer.drain(..end + 4);
                    if socket.write_all(RESPONSE).await.is_err() {
                        return;
                    }
                }
            }
        });
    }
}

async fn fetch_overhead() -> BenchResult<()> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let port = listener.local_addr()?.port();
    tokio::spawn(serve(listener));

    let literal_url = format!("http://127.0.0.1:{port}/resource");
    let named_url = format!("http://site.test:{port}/resource");
    let plain = reqwest::Client::new();
    let policy = FetchPolicy::default().treat_as_public("127.0.0.1/32".parse()?);
    let resolver = StaticResolver::new().with("site.test", ["127.0.0.1".parse()?]);
    let guarded = Fetcher::with_resolver(policy, Arc::new(resolver))?;
    let literal = FetchRequest::new(literal_url.as_str(), ContentTypes::any());
    let named = FetchRequest::new(named_url.as_str(), ContentTypes::any());

    // Warm up: connections, TLS-free pools, allocator.
    for _ in 0..FETCHES_PER_ROUND {
        plain.get(&literal_url).send().await?.bytes().await?;
        guarded.fetch(&literal).await?;
        guarded.fetch(&named).await?;
    }

    let mut plain_samples = Vec::new();
    let mut literal_samples = Vec::new();
    let mut named_samples = Vec::new();
    // Interleaved rounds so drift on a shared machine hits all three alike.
    for _ in 0..FETCH_ROUNDS {
        for _ in 0..FETCHES_PER_ROUND {
            let started = Instant::now();
            plain.get(&literal_url).send().await?.bytes().await?;
            plain_samples.push(started.elapsed());
        }
        for _ in 0..FETCHES_PER_ROUND {
            let started = Instant::now();
            guarded.fetch(&literal).await?;
            literal_samples.push(started.elapsed());
        }
        for _ in 0..FETCHES_PER_ROUND {
            let started = Instant::now();
            guarded.fetch(&named).await?;
            named_samples.push(started.elapsed());
        }
    }
    let count = plain_samples.len();
    let plain = median(plain_samples);
    let literal = median(literal_samples);
    let named = median(named_samples);
    let micros = |duration: Duration| duration.as_secs_f64() * 1e6;
    println!("fetch (loopback, kept-alive, {count} GETs each, medians):");
    println!("  plain reqwest GET:            {:>8.1} µs", micros(plain));
    println!(
        "  guarded fetch, literal host:  {:>8.1} µs  (overhead {:+.1} µs)",
        micros(literal),
        micros(literal) - micros(plain)
    );
    println!(
        "  guarded fetch, resolved name: {:>8.1} µs  (overhead {:+.1} µs)",
        micros(named),
        micros(named) - micros(plain)
    );
    Ok(())
}
