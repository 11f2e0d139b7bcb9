//! A team server's shared context cache: nodes with separate local caches sharing one
//! object store (object_store's local-file backend over a temporary folder) and one set
//! of shared locks (here an in-process table standing in for PostgreSQL's advisory
//! locks, which hearth-store tests on a real server).
//!
//! Remote sources are served by a wiremock server on 127.0.0.1 that counts requests, so
//! "fetched once" is checked, not assumed. The last test runs the nodes on a real
//! S3-compatible server (moto's, from the test venv that `.ci/install-python-packages`
//! fills), started on 127.0.0.1 by the test; skipped without it unless
//! `HEARTH_REQUIRE_S3=1`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use hearth_fetch::{FetchPolicy, Fetcher};
use hearth_projects::context::{
    ContextCache, ContextError, ContextSource, Manifest, MaterializeOptions, Materializer,
    ProjectRef, SharedCache, SharedLockError, SharedLockGuard, SharedLocks, SourceStatus,
};
use hearth_projects::convert::ConvertLimits;
use hearth_test_support::{BoundedChild, BoundedCommand, PROCESS_WAIT};
use pretty_assertions::assert_eq;
use tempfile::TempDir;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

const PAGE: &str = "<html><head><title>Team Page</title></head><body><article><h1>Team Page</h1>\
<p>The first paragraph of a page that every node of a team server references.</p>\
<p>A second paragraph, so that readability finds an article worth keeping here.</p></article></body></html>";

/// Shared locks of one "database": one async mutex per name, shared by every node.
#[derive(Debug, Default)]
struct TableLocks {
    table: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    taken: Mutex<Vec<String>>,
}

impl SharedLocks for TableLocks {
    fn lock<'a>(
        &'a self,
        name: &'a str,
    ) -> BoxFuture<'a, Result<SharedLockGuard, SharedLockError>> {
        Box::pin(async move {
            let mutex = Arc::clone(
                self.table
                    .lock()
                    .unwrap()
                    .entry(name.to_owned())
                    .or_default(),
            );
            let guard = mutex.lock_owned().await;
            self.taken.lock().unwrap().push(name.to_owned());
            Ok(Box::new(guard) as SharedLockGuard)
        })
    }
}

/// Locks that lock nothing: the control showing what the shared lock prevents.
#[derive(Debug)]
struct NoLocks;

impl SharedLocks for NoLocks {
    fn lock<'a>(
        &'a self,
        _name: &'a str,
    ) -> BoxFuture<'a, Result<SharedLockGuard, SharedLockError>> {
        Box::pin(async { Ok(Box::new(()) as SharedLockGuard) })
    }
}

/// One object store shared by the nodes: a folder (`file://`), or `location`.
struct Team {
    shared: TempDir,
    location: String,
    locks: Arc<dyn SharedLocks>,
}

impl Team {
    fn new(locks: Arc<dyn SharedLocks>) -> Self {
        let shared = tempfile::tempdir().unwrap();
        let location = format!("file://{}", shared.path().display());
        Self {
            shared,
            location,
            locks,
        }
    }

    /// A team sharing the store at `location`.
    fn at(location: String, locks: Arc<dyn SharedLocks>) -> Self {
        Self {
            shared: tempfile::tempdir().unwrap(),
            location,
            locks,
        }
    }

    /// A node: its own data directory and local cache, sharing this team's store.
    fn node(&self) -> Node {
        let home = tempfile::tempdir().unwrap();
        let shared = SharedCache::open(&self.location, Arc::clone(&self.locks)).unwrap();
        let materializer = Materializer::new(
            ContextCache::new(home.path().join("context-cache")),
            fetcher(),
            ConvertLimits::default(),
        )
        .sharing(shared);
        Node { home, materializer }
    }

    /// The shared object at `relative`.
    fn object(&self, relative: &Path) -> PathBuf {
        self.shared.path().join(relative)
    }
}

struct Node {
    home: TempDir,
    materializer: Materializer,
}

impl Node {
    async fn run(&self, sources: &[ContextSource], options: MaterializeOptions) -> Manifest {
        self.materializer
            .materialize(&project(), sources, options)
            .await
    }

    fn markers(&self) -> Vec<PathBuf> {
        files_under(&self.home.path().join("context-cache").join("markers"))
    }
}

/// The project every node serves (one id in the shared database).
fn project() -> ProjectRef {
    ProjectRef {
        id: "team-project".to_owned(),
        folder: std::env::temp_dir(),
    }
}

fn fetcher() -> Arc<Fetcher> {
    let policy = FetchPolicy::default().treat_as_public("127.0.0.1/32".parse().unwrap());
    Arc::new(Fetcher::new(policy).unwrap())
}

fn web(server: &MockServer, route: &str) -> ContextSource {
    ContextSource::Web {
        url: format!("{}{route}", server.uri()),
    }
}

async fn serve_page(server: &MockServer, route: &str, delay: Duration) {
    Mock::given(method("GET"))
        .and(path(route))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_raw(PAGE, "text/html; charset=utf-8")
                .set_delay(delay),
        )
        .mount(server)
        .await;
}

async fn requests(server: &MockServer) -> usize {
    server.received_requests().await.unwrap().len()
}

/// The snapshot path and freshness of the only entry; panics unless it is ready.
fn ready(manifest: &Manifest) -> (PathBuf, bool) {
    assert_eq!(manifest.entries.len(), 1, "{manifest:#?}");
    match &manifest.entries[0].status {
        SourceStatus::Ready {
            snapshot, fresh, ..
        } => (snapshot.clone(), *fresh),
        other => panic!("expected a ready snapshot, got {other:?}"),
    }
}

/// The reason and whether a marker answered, of the only entry; panics unless failed.
fn failed(manifest: &Manifest) -> (String, bool) {
    assert_eq!(manifest.entries.len(), 1, "{manifest:#?}");
    match &manifest.entries[0].status {
        SourceStatus::Failed {
            reason,
            cached_marker,
        } => (reason.clone(), *cached_marker),
        other => panic!("expected a failure, got {other:?}"),
    }
}

fn files_under(root: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(root) else {
        return found;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(files_under(&path));
        } else {
            found.push(path);
        }
    }
    found.sort();
    found
}

/// The snapshot's path relative to its node's cache root (the shared object's key).
fn relative_to_cache(node: &Node, snapshot: &Path) -> PathBuf {
    snapshot
        .strip_prefix(node.home.path().join("context-cache"))
        .unwrap()
        .to_path_buf()
}

#[tokio::test]
async fn two_nodes_materializing_one_url_at_once_fetch_it_once() {
    let server = MockServer::start().await;
    serve_page(&server, "/team", Duration::from_millis(300)).await;
    let locks = Arc::new(TableLocks::default());
    let team = Team::new(locks.clone());
    let (first, second) = (team.node(), team.node());
    let source = [web(&server, "/team")];

    let (one, two) = tokio::join!(
        first.run(&source, MaterializeOptions::default()),
        second.run(&source, MaterializeOptions::default()),
    );

    assert_eq!(requests(&server).await, 1, "exactly one node fetched");
    let (one, one_fresh) = ready(&one);
    let (two, two_fresh) = ready(&two);
    assert!(
        one_fresh != two_fresh,
        "one node converted, the other adopted"
    );
    assert_ne!(one, two, "each node's manifest points into its own cache");
    assert!(one.starts_with(first.home.path()) && two.starts_with(second.home.path()));
    let text = std::fs::read_to_string(&one).unwrap();
    assert!(text.contains("The first paragraph of a page"), "{text}");
    assert_eq!(text, std::fs::read_to_string(&two).unwrap());
    let shared = team.object(&relative_to_cache(&first, &one));
    assert_eq!(text, std::fs::read_to_string(shared).unwrap());
    assert_eq!(
        locks.taken.lock().unwrap().len(),
        2,
        "both nodes took the artifact's shared lock"
    );
}

/// A node's shared locks as a team server takes them: PostgreSQL advisory locks of its
/// own connection to the team's database.
#[derive(Debug)]
struct AdvisoryLocks(hearth_store::PgStore);

impl SharedLocks for AdvisoryLocks {
    fn lock<'a>(
        &'a self,
        name: &'a str,
    ) -> BoxFuture<'a, Result<SharedLockGuard, SharedLockError>> {
        Box::pin(async move {
            let lock = self.0.advisory_lock(name).await?;
            Ok(Box::new(lock) as SharedLockGuard)
        })
    }
}

#[tokio::test]
async fn two_nodes_on_postgresql_advisory_locks_fetch_once() {
    let Some(url) = hearth_test_support::postgres::fresh_database().await else {
        return;
    };
    let server = MockServer::start().await;
    serve_page(&server, "/team", Duration::from_millis(300)).await;
    let shared = tempfile::tempdir().unwrap();
    let location = format!("file://{}", shared.path().display());
    let mut nodes = Vec::new();
    for _ in 0..2 {
        let store = hearth_store::PgStore::connect(&url).await.unwrap();
        nodes.push(Team::at(location.clone(), Arc::new(AdvisoryLocks(store))).node());
    }
    let source = [web(&server, "/team")];

    let (one, two) = tokio::join!(
        nodes[0].run(&source, MaterializeOptions::default()),
        nodes[1].run(&source, MaterializeOptions::default()),
    );

    assert_eq!(requests(&server).await, 1, "exactly one node fetched");
    let (one, one_fresh) = ready(&one);
    let (two, two_fresh) = ready(&two);
    assert!(
        one_fresh != two_fresh,
        "one node converted, the other adopted"
    );
    assert_eq!(
        std::fs::read_to_string(one).unwrap(),
        std::fs::read_to_string(two).unwrap()
    );
}

#[tokio::test]
async fn without_the_shared_lock_two_nodes_would_both_fetch() {
    // The control of the test above: same nodes, locks that lock nothing.
    let server = MockServer::start().await;
    serve_page(&server, "/team", Duration::from_millis(500)).await;
    let team = Team::new(Arc::new(NoLocks));
    let (first, second) = (team.node(), team.node());
    let source = [web(&server, "/team")];

    let (one, two) = tokio::join!(
        first.run(&source, MaterializeOptions::default()),
        second.run(&source, MaterializeOptions::default()),
    );

    assert_eq!(ready(&one).1, false);
    assert_eq!(ready(&two).1, false);
    assert_eq!(requests(&server).await, 2, "each node fetched");
}

#[tokio::test]
async fn a_node_with_an_empty_cache_takes_another_nodes_snapshot_without_fetching() {
    let server = MockServer::start().await;
    serve_page(&server, "/team", Duration::ZERO).await;
    let team = Team::new(Arc::new(TableLocks::default()));
    let (first, second) = (team.node(), team.node());
    let source = [web(&server, "/team")];

    let (made, converted) = ready(&first.run(&source, MaterializeOptions::default()).await);
    assert!(!converted, "the first node converts");
    let (taken, fresh) = ready(&second.run(&source, MaterializeOptions::default()).await);

    assert!(fresh, "the second node converts nothing");
    assert_eq!(requests(&server).await, 1);
    assert!(taken.starts_with(second.home.path()));
    assert_eq!(
        std::fs::read_to_string(&made).unwrap(),
        std::fs::read_to_string(&taken).unwrap()
    );
    // From now on the second node's own copy answers, even with the shared one gone.
    std::fs::remove_file(team.object(&relative_to_cache(&second, &taken))).unwrap();
    let (again, fresh) = ready(&second.run(&source, MaterializeOptions::default()).await);
    assert_eq!((again, fresh), (taken, true));
    assert_eq!(requests(&server).await, 1);
}

#[tokio::test]
async fn a_failure_one_node_remembers_is_honoured_by_the_other() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/broken"))
        .respond_with(ResponseTemplate::new(500))
        .mount(&server)
        .await;
    let team = Team::new(Arc::new(TableLocks::default()));
    let (first, second) = (team.node(), team.node());
    let source = [web(&server, "/broken")];

    let (reason, remembered) = failed(&first.run(&source, MaterializeOptions::default()).await);
    assert!(!remembered);
    assert!(reason.contains("500"), "{reason}");
    assert_eq!(requests(&server).await, 1);

    let other = failed(&second.run(&source, MaterializeOptions::default()).await);
    assert_eq!(
        other,
        (reason.clone(), true),
        "the stored error, nothing fetched"
    );
    assert_eq!(requests(&server).await, 1);
    assert_eq!(
        second.markers().len(),
        1,
        "the marker was copied to the node"
    );

    // A retry on the second node fetches again and shares the new failure.
    let retry = MaterializeOptions { retry_failed: true };
    assert_eq!(failed(&second.run(&source, retry).await), (reason, false));
    assert_eq!(requests(&server).await, 2);
}

#[tokio::test]
async fn a_success_clears_the_shared_failure_marker() {
    let server = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/flaky"))
        .respond_with(ResponseTemplate::new(500))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    serve_page(&server, "/flaky", Duration::ZERO).await;
    let team = Team::new(Arc::new(TableLocks::default()));
    let (first, second) = (team.node(), team.node());
    let source = [web(&server, "/flaky")];

    failed(&first.run(&source, MaterializeOptions::default()).await);
    let retry = MaterializeOptions { retry_failed: true };
    assert!(!ready(&first.run(&source, retry).await).1);
    assert_eq!(
        files_under(&team.shared.path().join("markers")),
        Vec::<PathBuf>::new()
    );

    let (_, fresh) = ready(&second.run(&source, MaterializeOptions::default()).await);
    assert!(
        fresh,
        "the second node takes the snapshot, not the old failure"
    );
    assert_eq!(requests(&server).await, 2);
}

#[tokio::test]
async fn a_garbage_or_foreign_shared_object_is_converted_again_never_served() {
    let server = MockServer::start().await;
    serve_page(&server, "/team", Duration::ZERO).await;
    serve_page(&server, "/other", Duration::ZERO).await;
    let team = Team::new(Arc::new(TableLocks::default()));
    let first = team.node();
    let source = [web(&server, "/team")];
    let (made, _) = ready(&first.run(&source, MaterializeOptions::default()).await);
    let object = team.object(&relative_to_cache(&first, &made));

    // This source's own header over a body that is not text.
    let mut broken = std::fs::read(&object).unwrap();
    broken.extend_from_slice(b"\xff\xfe\x00 not text");
    // Garbage bytes, a well-formed snapshot of another source, then the broken body,
    // under the key.
    let (other, _) = ready(
        &first
            .run(&[web(&server, "/other")], MaterializeOptions::default())
            .await,
    );
    let foreign = std::fs::read(&other).unwrap();
    for (round, bad) in [b"\xff\xfe not a snapshot \x00".to_vec(), foreign, broken]
        .into_iter()
        .enumerate()
    {
        std::fs::write(&object, &bad).unwrap();
        let node = team.node();
        let (snapshot, fresh) = ready(&node.run(&source, MaterializeOptions::default()).await);
        assert!(!fresh, "round {round}: converted again");
        let text = std::fs::read(&snapshot).unwrap();
        assert_ne!(text, bad, "round {round}: the bad object was not served");
        assert!(
            String::from_utf8(text.clone())
                .unwrap()
                .contains("Team Page")
        );
        assert_eq!(
            std::fs::read(&object).unwrap(),
            text,
            "round {round}: repaired"
        );
    }
    assert_eq!(requests(&server).await, 5);
}

#[tokio::test]
async fn a_changed_file_is_converted_once_and_the_new_version_reaches_every_node() {
    let team = Team::new(Arc::new(TableLocks::default()));
    let (first, second) = (team.node(), team.node());
    let folder = tempfile::tempdir().unwrap();
    let notes = folder.path().join("notes.md");
    std::fs::write(&notes, "# Notes\n\nthe first version\n").unwrap();
    let source = [ContextSource::File {
        path: notes.clone(),
    }];
    let (made, converted) = ready(&first.run(&source, MaterializeOptions::default()).await);
    assert!(!converted);
    assert!(ready(&second.run(&source, MaterializeOptions::default()).await).1);

    // The file changes (another size): the shared copy is stale, never adopted.
    std::fs::write(&notes, "# Notes\n\nthe second, longer version\n").unwrap();
    let (taken, fresh) = ready(&second.run(&source, MaterializeOptions::default()).await);
    assert!(!fresh, "the second node converts the new version");
    assert!(
        std::fs::read_to_string(&taken)
            .unwrap()
            .contains("the second, longer version")
    );

    // The first node's copy is stale now; it takes the new one from the shared store.
    let (again, fresh) = ready(&first.run(&source, MaterializeOptions::default()).await);
    assert_eq!((&again, fresh), (&made, true));
    assert_eq!(
        std::fs::read_to_string(&again).unwrap(),
        std::fs::read_to_string(&taken).unwrap()
    );
}

#[tokio::test]
async fn a_shared_location_that_cannot_be_used_says_what_to_write() {
    let locks: Arc<dyn SharedLocks> = Arc::new(NoLocks);
    for url in [
        "ftp://bucket/prefix",
        "s3:///prefix",
        "file://elsewhere/srv/context",
        "not a url",
    ] {
        let error = SharedCache::open(url, Arc::clone(&locks)).unwrap_err();
        assert!(
            matches!(error, ContextError::SharedLocation { .. }),
            "{url}: {error:?}"
        );
        let message = error.to_string();
        assert!(message.contains(url), "{message}");
        assert!(message.contains("s3://bucket/prefix"), "{message}");
        assert!(message.contains("file:///"), "{message}");
    }
}

const S3_CHILD: &str = "suite::shared_cache::child_nodes_share_through_s3";
const S3_LOCATION: &str = "HEARTH_S3_TEST_LOCATION";
const S3_PAGE: &str = "HEARTH_S3_TEST_PAGE";
const S3_BUCKET: &str = "team-bucket";

/// The venv's python with moto's S3 server; required when `HEARTH_REQUIRE_S3=1`.
fn moto_python() -> Option<PathBuf> {
    hearth_test_support::venv_python("moto.server", "HEARTH_REQUIRE_S3")
}

/// moto's S3 server on a free loopback port; stopped when dropped.
struct Moto {
    child: std::process::Child,
    endpoint: String,
}

impl Moto {
    /// Starts the server and makes the team's bucket, waiting (with a deadline) until
    /// the server answers.
    fn start(python: &Path) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = std::process::Command::new(python)
            .args([
                "-m",
                "moto.server",
                "-H",
                "127.0.0.1",
                "-p",
                &port.to_string(),
            ])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let moto = Self {
            child,
            endpoint: format!("http://127.0.0.1:{port}"),
        };
        let create = format!(
            "import urllib.request; urllib.request.urlopen(urllib.request.Request('{}/{S3_BUCKET}', method='PUT'), timeout=5)",
            moto.endpoint
        );
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let made = std::process::Command::new(python)
                .args(["-c", &create])
                .stdin(std::process::Stdio::null())
                .output_within(PROCESS_WAIT);
            if made.status.success() {
                return moto;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "moto's server never answered: {}",
                String::from_utf8_lossy(&made.stderr)
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Moto {
    #[allow(
        clippy::print_stderr,
        reason = "a server left running is said on stderr"
    )]
    fn drop(&mut self) {
        if let Err(error) = self.child.kill() {
            eprintln!("could not stop moto's server: {error}");
        }
        if let Err(error) = self.child.wait() {
            eprintln!("could not reap moto's server: {error}");
        }
    }
}

#[tokio::test]
async fn nodes_share_a_context_cache_on_an_s3_compatible_server() {
    let Some(python) = moto_python() else {
        return;
    };
    let moto = tokio::task::spawn_blocking(move || Moto::start(&python))
        .await
        .unwrap();
    let server = MockServer::start().await;
    serve_page(&server, "/team", Duration::from_millis(300)).await;
    // The nodes read the S3 settings from the standard AWS_* variables, as a server
    // does: they run in a child process given them.
    let child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([S3_CHILD, "--exact", "--ignored", "--nocapture"])
        .env("AWS_ENDPOINT", &moto.endpoint)
        .env("AWS_ALLOW_HTTP", "true")
        .env("AWS_ACCESS_KEY_ID", "team-key")
        .env("AWS_SECRET_ACCESS_KEY", "team-secret")
        .env("AWS_REGION", "us-east-1")
        .env(S3_LOCATION, format!("s3://{S3_BUCKET}/hearth/context"))
        .env(S3_PAGE, format!("{}/team", server.uri()))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let output = tokio::task::spawn_blocking(move || child.wait_with_output_within(PROCESS_WAIT))
        .await
        .unwrap();

    let report = format!(
        "{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "the nodes failed:\n{report}");
    assert!(
        report.contains("1 passed"),
        "the nodes did not run:\n{report}"
    );
    assert_eq!(requests(&server).await, 1, "the team fetched the page once");
    drop(moto);
}

#[tokio::test]
#[ignore = "run by nodes_share_a_context_cache_on_an_s3_compatible_server in a child process"]
async fn child_nodes_share_through_s3() {
    let team = Team::at(
        std::env::var(S3_LOCATION).unwrap(),
        Arc::new(TableLocks::default()),
    );
    let source = [ContextSource::Web {
        url: std::env::var(S3_PAGE).unwrap(),
    }];
    let (first, second) = (team.node(), team.node());
    let (one, two) = tokio::join!(
        first.run(&source, MaterializeOptions::default()),
        second.run(&source, MaterializeOptions::default()),
    );
    let (one, one_fresh) = ready(&one);
    let (two, two_fresh) = ready(&two);
    assert!(
        one_fresh != two_fresh,
        "one node converted, the other adopted"
    );
    let text = std::fs::read_to_string(&one).unwrap();
    assert!(text.contains("The first paragraph of a page"), "{text}");
    assert_eq!(text, std::fs::read_to_string(&two).unwrap());
    // A third node with an empty cache takes the snapshot from S3.
    let third = team.node();
    let (three, fresh) = ready(&third.run(&source, MaterializeOptions::default()).await);
    assert!(fresh, "the third node converts nothing");
    assert_eq!(text, std::fs::read_to_string(&three).unwrap());
}
