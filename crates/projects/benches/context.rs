//! Benchmark of the context cache's warm path, printed as a median:
//!
//! a project with 1,000 unchanged file sources, all materialized once, is materialized
//! again: each source is fingerprinted and its snapshot header read, nothing is
//! converted. Target: 20 ms or less.
//!
//! Run with `cargo bench -p hearth-projects --bench context`.

// This binary's output is its figures.
#![allow(clippy::print_stdout)]

use std::error::Error;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hearth_fetch::{FetchPolicy, Fetcher};
use hearth_projects::context::{
    ContextCache, ContextSource, MaterializeOptions, Materializer, ProjectRef, SourceStatus,
};
use hearth_projects::convert::ConvertLimits;

type BenchResult<T> = Result<T, Box<dyn Error>>;

const FILES: usize = 1_000;
const ROUNDS: usize = 20;

fn main() -> BenchResult<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(warm_check())
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

async fn warm_check() -> BenchResult<()> {
    let home = tempfile::tempdir()?;
    let folder = home.path().join("project");
    std::fs::create_dir_all(folder.join("notes"))?;
    let mut sources = Vec::with_capacity(FILES);
    for index in 0..FILES {
        let name = format!("notes/note-{index:04}.md");
        std::fs::write(
            folder.join(&name),
            format!(
                "# Note {index}\n\nSome text of note {index}, long enough to be a paragraph.\n"
            ),
        )?;
        sources.push(ContextSource::File { path: name.into() });
    }
    let cache = ContextCache::new(home.path().join("context-cache"));
    let materializer = Materializer::new(
        cache,
        Arc::new(Fetcher::new(FetchPolicy::default())?),
        ConvertLimits::default(),
    );
    let project = ProjectRef {
        id: "bench".to_owned(),
        folder,
    };
    let options = MaterializeOptions::default();

    let started = Instant::now();
    let cold = materializer.materialize(&project, &sources, options).await;
    let cold_time = started.elapsed();
    check(
        &cold
            .entries
            .iter()
            .map(|entry| &entry.status)
            .collect::<Vec<_>>(),
        false,
    )?;

    let mut samples = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        let started = Instant::now();
        let warm = materializer.materialize(&project, &sources, options).await;
        samples.push(started.elapsed());
        check(
            &warm
                .entries
                .iter()
                .map(|entry| &entry.status)
                .collect::<Vec<_>>(),
            true,
        )?;
    }
    println!("context cache, {FILES} file sources:");
    println!(
        "  cold materialize (convert all):   {:>8.1} ms",
        cold_time.as_secs_f64() * 1e3
    );
    println!(
        "  warm check (median of {ROUNDS}):       {:>8.1} ms  (target <= 20 ms)",
        median(samples).as_secs_f64() * 1e3
    );
    Ok(())
}

/// Every status is a ready snapshot with the expected freshness.
fn check(statuses: &[&SourceStatus], expect_fresh: bool) -> BenchResult<()> {
    for status in statuses {
        match status {
            SourceStatus::Ready { fresh, .. } if *fresh == expect_fresh => {}
            other => return Err(format!("unexpected status: {other:?}").into()),
        }
    }
    Ok(())
}
