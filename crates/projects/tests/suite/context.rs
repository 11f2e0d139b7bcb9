//! The shared context cache and materialization on a real filesystem.
//!
//! Remote sources are served by a wiremock server on 127.0.0.1, reached through a
//! guarded fetcher whose test-only policy treats loopback as public. Each test counts
//! the requests the server received (`expect`), so "fetched once" is checked, not
//! assumed.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hearth_fetch::{FetchPolicy, Fetcher};
use hearth_projects::context::{
    CacheState, Confinement, ContextCache, ContextError, ContextSource, GcReport, KnownFailure,
    Manifest, ManifestEntry, MaterializeOptions, Materializer, Progress, ProjectRef, SourceStatus,
    signature,
};
use hearth_projects::convert::ConvertLimits;
use hearth_test_support::{BoundedChild, PROCESS_WAIT};
use pretty_assertions::assert_eq;
use tempfile::TempDir;
use wiremock::matchers::{method, path, query_param};
use wiremock::{Mock, MockServer, ResponseTemplate};

const PAGE: &str = "<html><head><title>Shared Page</title></head><body><article><h1>Shared Page</h1>\
<p>The first paragraph of a page that two projects both reference as context.</p>\
<p>A second paragraph, so that readability finds an article worth keeping here.</p></article></body></html>";

/// A data directory with a cache, and a place for projects.
struct Fixture {
    home: TempDir,
    materializer: Materializer,
}

impl Fixture {
    fn new() -> Self {
        let home = tempfile::tempdir().unwrap();
        let cache = ContextCache::new(home.path().join("context-cache"));
        let materializer = Materializer::new(cache, fetcher(), ConvertLimits::default());
        Self { home, materializer }
    }

    fn cache_root(&self) -> PathBuf {
        self.home.path().join("context-cache")
    }

    /// A project folder `name` (created) with id `name`.
    fn project(&self, name: &str) -> ProjectRef {
        let folder = self.home.path().join("projects").join(name);
        std::fs::create_dir_all(&folder).unwrap();
        ProjectRef {
            id: name.to_owned(),
            folder,
        }
    }

    async fn run(&self, project: &ProjectRef, sources: &[ContextSource]) -> Manifest {
        self.materializer
            .materialize(project, sources, MaterializeOptions::default())
            .await
    }

    async fn retry(&self, project: &ProjectRef, sources: &[ContextSource]) -> Manifest {
        let options = MaterializeOptions { retry_failed: true };
        self.materializer
            .materialize(project, sources, options)
            .await
    }

    /// The project's failure marker for its first source, as the cache reports it.
    async fn failure(
        &self,
        project: &ProjectRef,
        sources: &[ContextSource],
    ) -> Option<KnownFailure> {
        let status = self.materializer.cache().status(project, sources).await;
        status[0].failure.clone()
    }

    /// Names of the files in a cache folder.
    fn listing(&self, folder: &str) -> Vec<String> {
        let Ok(reader) = std::fs::read_dir(self.cache_root().join(folder)) else {
            return Vec::new();
        };
        let mut names: Vec<String> = reader
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }
}

fn fetcher() -> Arc<Fetcher> {
    let policy = FetchPolicy::default().treat_as_public("127.0.0.1/32".parse().unwrap());
    Arc::new(Fetcher::new(policy).unwrap())
}

fn web(url: String) -> ContextSource {
    ContextSource::Web { url }
}

fn file(path: impl Into<PathBuf>) -> ContextSource {
    ContextSource::File { path: path.into() }
}

async fn serve_page(server: &MockServer, route: &str, expected: u64) {
    Mock::given(method("GET"))
        .and(path(route))
        .respond_with(ResponseTemplate::new(200).set_body_raw(PAGE, "text/html; charset=utf-8"))
        .expect(expected)
        .mount(server)
        .await;
}

/// The single entry's status.
fn only_status(manifest: &Manifest) -> SourceStatus {
    assert_eq!(manifest.entries.len(), 1, "{manifest:#?}");
    manifest.entries[0].status.clone()
}

/// The snapshot path and freshness of a ready status; panics otherwise.
fn ready(status: &SourceStatus) -> (PathBuf, bool) {
    match status {
        SourceStatus::Ready {
            snapshot, fresh, ..
        } => (snapshot.clone(), *fresh),
        other => panic!("expected a ready snapshot, got {other:?}"),
    }
}

fn failed(status: &SourceStatus) -> (String, bool) {
    match status {
        SourceStatus::Failed {
            reason,
            cached_marker,
        } => (reason.clone(), *cached_marker),
        other => panic!("expected a failure, got {other:?}"),
    }
}

/// Counts conversions (ready statuses that were not already cached).
#[derive(Default)]
struct Conversions(Mutex<Vec<String>>);

impl Progress for Conversions {
    fn started(&self, _source: &ContextSource) {}

    fn finished(&self, source: &ContextSource, status: &SourceStatus) {
        if let SourceStatus::Ready { fresh: false, .. } = status {
            self.0.lock().unwrap().push(source.to_string());
        }
    }
}

#[tokio::test]
async fn two_projects_sharing_a_url_fetch_it_once() {
    let server = MockServer::start().await;
    serve_page(&server, "/shared", 1).await;
    let fixture = Fixture::new();
    let source = web(format!("{}/shared", server.uri()));

    let first = fixture
        .run(&fixture.project("alpha"), std::slice::from_ref(&source))
        .await;
    let second = fixture.run(&fixture.project("beta"), &[source]).await;

    let (snapshot, fresh) = ready(&only_status(&first));
    assert!(!fresh, "the first project converts");
    assert_eq!(ready(&only_status(&second)), (snapshot.clone(), true));
    assert!(snapshot.starts_with(fixture.cache_root().join("remotes")));
    assert_eq!(fixture.listing("remotes").len(), 1);
    let text = std::fs::read_to_string(&snapshot).unwrap();
    assert!(text.starts_with("---\nhearth_snapshot: 1\n"), "{text}");
    assert!(text.contains("title: \"Shared Page\""), "{text}");
    assert!(text.contains("The first paragraph of a page"), "{text}");
    server.verify().await;
}

#[tokio::test]
async fn two_projects_sharing_files_convert_each_once() {
    let fixture = Fixture::new();
    let shared = fixture.home.path().join("projects/shared");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::write(shared.join("notes.md"), "# Notes\n\nShared notes.\n").unwrap();
    std::fs::write(shared.join("page.html"), PAGE).unwrap();
    let alpha = fixture.project("alpha");
    let beta = fixture.project("beta");
    // One project names the files by absolute path, the other relative to its folder.
    let absolute = [
        file(shared.join("notes.md")),
        file(shared.join("page.html")),
    ];
    let relative = [file("../shared/notes.md"), file("../shared/./page.html")];

    let conversions = Conversions::default();
    let options = MaterializeOptions::default();
    let first = fixture
        .materializer
        .materialize_with_progress(&alpha, &absolute, options, &conversions)
        .await;
    let before: Vec<String> = fixture
        .listing("files")
        .iter()
        .map(|name| std::fs::read_to_string(fixture.cache_root().join("files").join(name)).unwrap())
        .collect();
    let second = fixture
        .materializer
        .materialize_with_progress(&beta, &relative, options, &conversions)
        .await;

    assert_eq!(
        conversions.0.lock().unwrap().len(),
        2,
        "two files, each converted once"
    );
    for (first, second) in first.entries.iter().zip(&second.entries) {
        let (snapshot, fresh) = ready(&first.status);
        assert!(!fresh);
        assert_eq!(ready(&second.status), (snapshot, true));
    }
    let after: Vec<String> = fixture
        .listing("files")
        .iter()
        .map(|name| std::fs::read_to_string(fixture.cache_root().join("files").join(name)).unwrap())
        .collect();
    assert_eq!(after.len(), 2);
    assert_eq!(before, after, "the second project rewrote nothing");
}

#[tokio::test]
async fn concurrent_cold_materialization_fetches_once() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/slow"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(PAGE, "text/html")
                .set_delay(Duration::from_millis(300)),
        )
        .expect(1)
        .mount(&server)
        .await;
    let fixture = Fixture::new();
    let source = web(format!("{}/slow", server.uri()));
    let (alpha, beta) = (fixture.project("alpha"), fixture.project("beta"));

    let (first, second) = tokio::join!(
        fixture.run(&alpha, std::slice::from_ref(&source)),
        fixture.run(&beta, std::slice::from_ref(&source)),
    );

    let (snapshot, first_fresh) = ready(&only_status(&first));
    let (same, second_fresh) = ready(&only_status(&second));
    assert_eq!(snapshot, same);
    assert!(
        first_fresh != second_fresh,
        "exactly one of the two converted"
    );
    server.verify().await;
}

const CHILD: &str = "suite::context::child_materializes_shared_url";
const CHILD_CACHE: &str = "HEARTH_CONTEXT_TEST_CACHE";
const CHILD_URL: &str = "HEARTH_CONTEXT_TEST_URL";
const CHILD_RESULT: &str = "HEARTH_CONTEXT_TEST_RESULT";

#[tokio::test]
async fn two_processes_cold_materializing_one_url_fetch_it_once() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/cross-process"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(PAGE, "text/html")
                .set_delay(Duration::from_millis(1500)),
        )
        .expect(1)
        .mount(&server)
        .await;
    let fixture = Fixture::new();
    let url = format!("{}/cross-process", server.uri());
    let result_file = fixture.home.path().join("child-result");
    let child = Command::new(std::env::current_exe().unwrap())
        .args([CHILD, "--exact", "--ignored", "--nocapture"])
        .env(CHILD_CACHE, fixture.cache_root())
        .env(CHILD_URL, &url)
        .env(CHILD_RESULT, &result_file)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();

    let mine = fixture.run(&fixture.project("parent"), &[web(url)]).await;
    let output = tokio::task::spawn_blocking(move || child.wait_with_output_within(PROCESS_WAIT))
        .await
        .unwrap();

    let report = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "child failed:\n{report}");
    assert!(report.contains("1 passed"), "child did not run:\n{report}");
    let (_, parent_fresh) = ready(&only_status(&mine));
    let child_fresh: bool = std::fs::read_to_string(&result_file)
        .unwrap()
        .parse()
        .unwrap();
    assert!(parent_fresh != child_fresh, "exactly one process converted");
    assert_eq!(fixture.listing("remotes").len(), 1);
    server.verify().await;
}

#[tokio::test]
#[ignore = "run by two_processes_cold_materializing_one_url_fetch_it_once in a child process"]
async fn child_materializes_shared_url() {
    let cache = ContextCache::new(std::env::var(CHILD_CACHE).unwrap().into());
    let url = std::env::var(CHILD_URL).unwrap();
    let folder = tempfile::tempdir().unwrap();
    let project = ProjectRef {
        id: "child".to_owned(),
        folder: folder.path().to_path_buf(),
    };
    let materializer = Materializer::new(cache, fetcher(), ConvertLimits::default());
    let manifest = materializer
        .materialize(&project, &[web(url)], MaterializeOptions::default())
        .await;
    let (_, fresh) = ready(&only_status(&manifest));
    std::fs::write(std::env::var(CHILD_RESULT).unwrap(), fresh.to_string()).unwrap();
}

#[tokio::test]
async fn a_failed_source_is_skipped_until_retried() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/broken"))
        .respond_with(ResponseTemplate::new(500))
        .expect(2)
        .mount(&server)
        .await;
    let fixture = Fixture::new();
    let project = fixture.project("alpha");
    let sources = [web(format!("{}/broken", server.uri()))];

    let (reason, cached) = failed(&only_status(&fixture.run(&project, &sources).await));
    assert!(!cached);
    assert!(reason.contains("500"), "{reason}");
    assert_eq!(
        fixture.listing("markers").len(),
        1,
        "one project's marker bucket"
    );

    let again = failed(&only_status(&fixture.run(&project, &sources).await));
    assert_eq!(
        again,
        (reason.clone(), true),
        "the stored error, nothing fetched"
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 1);

    let retried = failed(&only_status(&fixture.retry(&project, &sources).await));
    assert_eq!(retried, (reason, false));
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
    server.verify().await;
}

#[tokio::test]
async fn a_file_marker_is_bypassed_once_the_file_changes() {
    let fixture = Fixture::new();
    let project = fixture.project("alpha");
    let broken = project.folder.join("broken.pdf");
    std::fs::write(&broken, "this is not a PDF").unwrap();
    let sources = [file("broken.pdf")];

    assert!(!failed(&only_status(&fixture.run(&project, &sources).await)).1);
    assert!(
        failed(&only_status(&fixture.run(&project, &sources).await)).1,
        "skipped by its marker"
    );

    std::fs::write(&broken, "still not a PDF, but a different one").unwrap();
    assert!(
        !failed(&only_status(&fixture.run(&project, &sources).await)).1,
        "converted again"
    );
}

#[tokio::test]
async fn another_projects_success_clears_a_stale_marker() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/flaky"))
        .respond_with(ResponseTemplate::new(503))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    serve_page(&server, "/flaky", 1).await;
    let fixture = Fixture::new();
    let (alpha, beta) = (fixture.project("alpha"), fixture.project("beta"));
    let sources = [web(format!("{}/flaky", server.uri()))];

    failed(&only_status(&fixture.run(&alpha, &sources).await));
    let failure = fixture.failure(&alpha, &sources).await;
    assert!(failure.is_some_and(|failure| failure.current));

    let (snapshot, fresh) = ready(&only_status(&fixture.run(&beta, &sources).await));
    assert!(!fresh);
    // Alpha's next automatic run uses the shared snapshot and drops its marker.
    assert_eq!(
        ready(&only_status(&fixture.run(&alpha, &sources).await)),
        (snapshot, true)
    );
    assert_eq!(fixture.failure(&alpha, &sources).await, None);
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn a_changed_file_is_converted_again_an_unchanged_one_is_not() {
    let fixture = Fixture::new();
    let project = fixture.project("alpha");
    let notes = project.folder.join("notes.md");
    std::fs::write(&notes, "# First\n\nversion one\n").unwrap();
    let sources = [file("notes.md")];

    let (snapshot, fresh) = ready(&only_status(&fixture.run(&project, &sources).await));
    assert!(!fresh);
    assert_eq!(
        ready(&only_status(&fixture.run(&project, &sources).await)),
        (snapshot.clone(), true)
    );

    std::fs::write(&notes, "# Second\n\nversion two, longer\n").unwrap();
    assert_eq!(
        ready(&only_status(&fixture.run(&project, &sources).await)),
        (snapshot.clone(), false)
    );
    let text = std::fs::read_to_string(&snapshot).unwrap();
    assert!(
        text.contains("version two") && !text.contains("version one"),
        "{text}"
    );
    assert_eq!(
        fixture.listing("files").len(),
        1,
        "overwritten in place, no orphan"
    );
}

#[tokio::test]
async fn a_symlink_at_a_snapshot_path_is_refused() {
    let server = MockServer::start().await;
    serve_page(&server, "/page", 0).await;
    let fixture = Fixture::new();
    let project = fixture.project("alpha");
    let sources = [web(format!("{}/page", server.uri()))];
    let status = fixture
        .materializer
        .cache()
        .status(&project, &sources)
        .await;
    let CacheState::Missing { snapshot } = &status[0].state else {
        panic!("expected no snapshot yet: {status:?}");
    };
    let outside = fixture.home.path().join("outside.md");
    std::fs::write(&outside, "outside the cache").unwrap();
    std::fs::create_dir_all(snapshot.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&outside, snapshot).unwrap();

    let (reason, cached) = failed(&only_status(&fixture.run(&project, &sources).await));

    assert!(!cached);
    assert!(reason.contains("rule no-symlink"), "{reason}");
    assert_eq!(
        std::fs::read_to_string(&outside).unwrap(),
        "outside the cache"
    );
    assert!(
        std::fs::symlink_metadata(snapshot)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        fixture.listing("markers"),
        Vec::<String>::new(),
        "not the source's fault"
    );
    server.verify().await;
}

#[tokio::test]
async fn a_symlinked_cache_folder_is_refused() {
    let fixture = Fixture::new();
    let project = fixture.project("alpha");
    std::fs::write(project.folder.join("notes.md"), "# Notes\n").unwrap();
    let outside = fixture.home.path().join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(fixture.cache_root()).unwrap();
    std::os::unix::fs::symlink(&outside, fixture.cache_root().join("files")).unwrap();

    let (reason, _) = failed(&only_status(
        &fixture.run(&project, &[file("notes.md")]).await,
    ));

    assert!(reason.contains("rule no-symlink"), "{reason}");
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        0,
        "nothing written outside"
    );
}

#[tokio::test]
async fn a_symlinked_lock_folder_is_refused_and_nothing_is_written_through_it() {
    let fixture = Fixture::new();
    let project = fixture.project("alpha");
    std::fs::write(project.folder.join("notes.md"), "# Notes\n").unwrap();
    let outside = fixture.home.path().join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(fixture.cache_root()).unwrap();
    std::os::unix::fs::symlink(&outside, fixture.cache_root().join("locks")).unwrap();

    let (reason, cached) = failed(&only_status(
        &fixture.run(&project, &[file("notes.md")]).await,
    ));

    assert!(!cached);
    assert!(reason.contains("rule no-symlink"), "{reason}");
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        0,
        "no lock file created outside"
    );
    assert_eq!(
        fixture.listing("files"),
        Vec::<String>::new(),
        "nothing converted without its lock"
    );
}

#[tokio::test]
async fn a_marker_folder_swapped_for_a_symlink_is_not_followed() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/broken"))
        .respond_with(ResponseTemplate::new(500))
        .expect(2)
        .mount(&server)
        .await;
    let fixture = Fixture::new();
    let project = fixture.project("alpha");
    let sources = [web(format!("{}/broken", server.uri()))];
    failed(&only_status(&fixture.run(&project, &sources).await));
    let buckets = fixture.listing("markers");
    assert_eq!(
        buckets.len(),
        1,
        "the failure left the project's marker bucket"
    );
    // The project's bucket is replaced by a link to a folder outside the cache.
    let bucket = fixture.cache_root().join("markers").join(&buckets[0]);
    std::fs::remove_dir_all(&bucket).unwrap();
    let outside = fixture.home.path().join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, &bucket).unwrap();

    let (reason, cached) = failed(&only_status(&fixture.retry(&project, &sources).await));

    assert!(!cached);
    assert!(reason.contains("500"), "the source's own failure: {reason}");
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        0,
        "no marker written through the link"
    );
    assert!(std::fs::symlink_metadata(&bucket).unwrap().is_symlink());
    server.verify().await;
}

#[test]
fn internal_paths_stay_inside_the_root() {
    let cache = ContextCache::new(PathBuf::from("/data/context-cache"));
    let rule = |relative: &str| match cache.resolve_within(Path::new(relative)) {
        Err(ContextError::Confined { rule, .. }) => rule,
        other => panic!("expected a refusal of {relative}, got {other:?}"),
    };
    assert_eq!(rule("../hearth.db"), Confinement::NoParent);
    assert_eq!(rule("files/../../token"), Confinement::NoParent);
    assert_eq!(rule("/etc/passwd"), Confinement::Relative);
    // Control: a plain relative path is accepted.
    assert_eq!(
        cache.resolve_within(Path::new("files/file-0.md")).unwrap(),
        PathBuf::from("/data/context-cache/files/file-0.md")
    );
}

#[cfg(unix)]
#[tokio::test]
async fn the_cache_is_private_to_its_owner() {
    use std::os::unix::fs::PermissionsExt;
    let fixture = Fixture::new();
    let project = fixture.project("alpha");
    std::fs::write(project.folder.join("notes.md"), "# Notes\n").unwrap();
    let (snapshot, _) = ready(&only_status(
        &fixture.run(&project, &[file("notes.md")]).await,
    ));
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&fixture.cache_root()), 0o700);
    assert_eq!(mode(snapshot.parent().unwrap()), 0o700);
    assert_eq!(mode(&snapshot), 0o600);
}

#[tokio::test]
async fn the_block_lists_ready_failed_and_folder_sources() {
    let server = MockServer::start().await;
    serve_page(&server, "/page", 1).await;
    let fixture = Fixture::new();
    let project = fixture.project("alpha");
    let shared = fixture.home.path().join("shared-notes");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::create_dir_all(project.folder.join("inside")).unwrap();
    std::fs::create_dir_all(project.folder.join("docs")).unwrap();
    std::fs::write(project.folder.join("docs/a.md"), "# Alpha doc\n").unwrap();
    std::fs::write(project.folder.join("docs/b.txt"), "plain text\n").unwrap();
    let url = format!("{}/page", server.uri());
    let sources = [
        web(url.clone()),
        file("missing.pdf"),
        ContextSource::Folder {
            path: shared.clone(),
        },
        ContextSource::Folder {
            path: "inside".into(),
        },
        ContextSource::Glob {
            pattern: "docs/*".to_owned(),
        },
    ];

    let manifest = fixture.run(&project, &sources).await;

    let snapshot = |index: usize| {
        ready(&manifest.entries[index].status)
            .0
            .display()
            .to_string()
    };
    let folder = project.folder.display();
    let expected = format!(
        "<project_context>\n\
         This project has context sources. Ready sources were converted to Markdown snapshots: read a snapshot with your file tools when it is relevant. Folders are yours to search.\n\
         - web {url} | ready | {} | Shared Page\n\
         - file missing.pdf | failed | not found: {folder}/missing.pdf\n\
         - folder {} | folder | {}\n\
         - folder inside | folder | {folder}/inside\n\
         - glob docs/* | 2 matching files\n\
         - file {folder}/docs/a.md | ready | {} | Alpha doc\n\
         - file {folder}/docs/b.txt | ready | {}\n\
         </project_context>\n",
        snapshot(0),
        shared.display(),
        shared.display(),
        snapshot(5),
        snapshot(6),
    );
    assert_eq!(manifest.render(), expected);
    assert_eq!(manifest.additional_directories, vec![shared]);
    assert_eq!(manifest.signature, signature(&sources));
    assert_eq!(
        manifest.snapshot_directories(),
        vec![
            fixture.cache_root().join("remotes"),
            fixture.cache_root().join("files")
        ]
    );
    assert_eq!(fixture.run(&project, &[]).await.render(), "");
}

const WATCH_PAGE: &str = r#"<html><head><title>Video - YouTube</title></head><body>
<script>var ytInitialPlayerResponse = {"playabilityStatus":{"status":"OK"},"videoDetails":{"videoId":"VIDEO_ID","title":"How Hearths Work","author":"Fire Channel","shortDescription":"All about hearths.\nSecond line {with braces}."},"captions":{"playerCaptionsTracklistRenderer":{"captionTracks":[{"baseUrl":"CAPTIONS_BASE/api/timedtext?v=VIDEO_ID&lang=de","languageCode":"de"},{"baseUrl":"CAPTIONS_BASE/api/timedtext?v=VIDEO_ID&lang=en","languageCode":"en"}]}}};var other = {};</script>
</body></html>"#;

const CAPTIONS: &str = r#"<?xml version="1.0" encoding="utf-8" ?><transcript><text start="0" dur="2.5">Welcome to the fire.</text><text start="65.2" dur="3">It&amp;#39;s warm &amp;amp; bright.</text></transcript>"#;

#[tokio::test]
async fn a_youtube_video_becomes_title_description_and_transcript() {
    let server = MockServer::start().await;
    let page = WATCH_PAGE.replace("CAPTIONS_BASE", &server.uri());
    Mock::given(method("GET"))
        .and(path("/watch"))
        .and(query_param("v", "VIDEO_ID"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(page, "text/html"))
        .expect(1)
        .mount(&server)
        .await;
    Mock::given(method("GET"))
        .and(path("/api/timedtext"))
        .and(query_param("lang", "en"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(CAPTIONS, "text/xml"))
        .expect(1)
        .mount(&server)
        .await;
    let fixture = Fixture::new();
    let materializer = fixture.materializer.clone().with_youtube_base(server.uri());
    let source = ContextSource::Youtube {
        url: "https://www.youtube.com/watch?v=VIDEO_ID".to_owned(),
    };

    let manifest = materializer
        .materialize(
            &fixture.project("alpha"),
            &[source],
            MaterializeOptions::default(),
        )
        .await;

    let (snapshot, _) = ready(&only_status(&manifest));
    assert!(
        snapshot
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("youtube-")
    );
    let text = std::fs::read_to_string(&snapshot).unwrap();
    let body = text.split("---\n\n").nth(1).unwrap();
    assert_eq!(
        body,
        "# How Hearths Work\n\nVideo: https://www.youtube.com/watch?v=VIDEO_ID\nChannel: Fire Channel\n\n\
         ## Description\n\nAll about hearths.\nSecond line {with braces}.\n\n\
         ## Transcript\n\n[0:00] Welcome to the fire.\n[1:05] It's warm & bright.\n"
    );
    server.verify().await;
}

#[tokio::test]
async fn a_youtube_video_without_captions_keeps_title_and_description() {
    let server = MockServer::start().await;
    let page = r#"<script>var ytInitialPlayerResponse = {"videoDetails":{"title":"Silent Film","shortDescription":"No words."}};</script>"#;
    Mock::given(method("GET"))
        .and(path("/watch"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(page, "text/html"))
        .expect(1)
        .mount(&server)
        .await;
    let fixture = Fixture::new();
    let materializer = fixture.materializer.clone().with_youtube_base(server.uri());
    let source = ContextSource::Youtube {
        url: "https://youtu.be/abc123".to_owned(),
    };

    let manifest = materializer
        .materialize(
            &fixture.project("alpha"),
            &[source],
            MaterializeOptions::default(),
        )
        .await;

    let text = std::fs::read_to_string(ready(&only_status(&manifest)).0).unwrap();
    assert!(text.contains("# Silent Film"), "{text}");
    assert!(text.contains("No words."), "{text}");
    assert!(text.contains("_This video has no captions"), "{text}");
    server.verify().await;
}

#[tokio::test]
async fn gc_removes_only_unreferenced_snapshots() {
    let server = MockServer::start().await;
    serve_page(&server, "/kept", 1).await;
    serve_page(&server, "/dropped", 1).await;
    let fixture = Fixture::new();
    let project = fixture.project("alpha");
    let kept = web(format!("{}/kept", server.uri()));
    let dropped = web(format!("{}/dropped", server.uri()));
    let manifest = fixture.run(&project, &[kept.clone(), dropped]).await;
    let kept_snapshot = ready(&manifest.entries[0].status).0;
    let dropped_snapshot = ready(&manifest.entries[1].status).0;
    let dropped_bytes = std::fs::metadata(&dropped_snapshot).unwrap().len();

    let report = fixture.materializer.cache().gc(&[kept]).await.unwrap();

    assert_eq!(
        report,
        GcReport {
            removed: 1,
            kept: 1,
            bytes_freed: dropped_bytes,
            markers_removed: 0,
        }
    );
    assert!(kept_snapshot.exists());
    assert!(!dropped_snapshot.exists());
    server.verify().await;
}

#[tokio::test]
async fn clear_empties_the_cache_but_not_its_parent() {
    let fixture = Fixture::new();
    let project = fixture.project("alpha");
    std::fs::write(project.folder.join("notes.md"), "# Notes\n").unwrap();
    std::fs::write(project.folder.join("bad.pdf"), "not a pdf").unwrap();
    let sibling = fixture.home.path().join("hearth.db");
    std::fs::write(&sibling, "database").unwrap();
    let manifest = fixture
        .run(&project, &[file("notes.md"), file("bad.pdf")])
        .await;
    assert_eq!(manifest.entries.len(), 2);
    assert!(!fixture.listing("files").is_empty() && !fixture.listing("markers").is_empty());

    fixture.materializer.cache().clear().await.unwrap();

    assert!(fixture.cache_root().is_dir());
    assert_eq!(std::fs::read_dir(fixture.cache_root()).unwrap().count(), 0);
    assert_eq!(std::fs::read_to_string(&sibling).unwrap(), "database");
    // The cache works again after a clear.
    let again = fixture.run(&project, &[file("notes.md")]).await;
    assert!(!ready(&only_status(&again)).1);
}

#[tokio::test]
async fn a_missing_file_and_an_empty_glob_fail_with_their_reasons() {
    let fixture = Fixture::new();
    let project = fixture.project("alpha");
    let sources = [
        file("nowhere.docx"),
        ContextSource::Glob {
            pattern: "*.pdf".to_owned(),
        },
    ];

    let manifest = fixture.run(&project, &sources).await;

    let folder = project.folder.display();
    assert_eq!(
        manifest.entries,
        vec![
            ManifestEntry {
                source: sources[0].clone(),
                status: SourceStatus::Failed {
                    reason: format!("not found: {folder}/nowhere.docx"),
                    cached_marker: false,
                },
            },
            ManifestEntry {
                source: sources[1].clone(),
                status: SourceStatus::Failed {
                    reason: "no files match \"*.pdf\"".to_owned(),
                    cached_marker: false,
                },
            },
        ]
    );
    assert_eq!(fixture.listing("markers"), Vec::<String>::new());
}

#[test]
fn materializing_can_run_on_any_runtime_thread() {
    fn assert_send<T: Send>(value: T) -> T {
        value
    }
    let fixture = Fixture::new();
    let project = fixture.project("alpha");
    let future = assert_send(fixture.materializer.materialize(
        &project,
        &[],
        MaterializeOptions::default(),
    ));
    drop(future);
    let cache = fixture.materializer.cache();
    drop(assert_send(cache.status(&project, &[])));
    drop(assert_send(cache.gc(&[])));
    drop(assert_send(cache.clear()));
}
