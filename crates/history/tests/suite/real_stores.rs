//! The stores the real agents write (installed by `.ci/install-acp-agents`, run outside
//! Hearth against the mock model server in their own non-interactive mode — `claude -p`,
//! `gemini -p`, `opencode run`, `copilot -p` — and Codex, installed only as `codex-acp`,
//! through a bare ACP client), imported into a real Hearth store:
//!
//! 1. every session appears once, with its provenance (agent, native id, source file,
//!    folder) and its turns;
//! 2. a second import adds nothing;
//! 3. a turn added to a session in the agent's store is added on the next import;
//! 4. a session deleted in Hearth is not imported again, even with every file read
//!    again;
//! 5. the agent's store is byte for byte what it was before each import.
//!
//! An agent that is not installed is skipped with the reason, unless
//! `HEARTH_REQUIRE_ACP_AGENTS=1`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use hearth_core::{ChatUri, HarnessData, HarnessId, Provenance, SessionUri, Turn};
use hearth_history::{
    Agent, AgentReport, ConversationData, ImportOptions, ImportSource, NativeSession,
};
use hearth_store::{SessionQuery, SqliteStore, Store};
use hearth_test_support::MockModelServer;
use hearth_test_support::real_agents::{AgentLaunch, ModelTurn, RealAgent};
use pretty_assertions::assert_eq;
use sha2::Digest as _;
use tempfile::TempDir;

/// Provider data as a test harness keeps it: the native id and the number of turns.
struct Counted;

impl ConversationData for Counted {
    fn imported(
        &self,
        _: &ChatUri,
        session: &NativeSession,
        turns: &[Turn],
    ) -> Result<HarnessData, String> {
        Ok(
            HarnessData::encode(
                &serde_json::json!({"id": session.native_id, "turns": turns.len()}),
            )
            .unwrap(),
        )
    }

    fn with_turns(
        &self,
        _: &ChatUri,
        data: &HarnessData,
        turns: &[Turn],
    ) -> Result<HarnessData, String> {
        let mut value: serde_json::Value = data.decode().unwrap();
        value["turns"] = (value["turns"].as_u64().unwrap() + turns.len() as u64).into();
        Ok(HarnessData::encode(&value).unwrap())
    }
}

/// Every file under `root` with the SHA-256 of its bytes.
fn hashes(root: &Path) -> BTreeMap<PathBuf, String> {
    let mut found = BTreeMap::new();
    let mut folders = vec![root.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                folders.push(path);
            } else if entry.file_type().unwrap().is_file() {
                let digest = sha2::Sha256::digest(std::fs::read(&path).unwrap());
                found.insert(
                    path,
                    digest
                        .iter()
                        .map(|byte| format!("{byte:02x}"))
                        .collect::<String>(),
                );
            }
        }
    }
    found
}

struct Bench {
    agent: RealAgent,
    model: hearth_test_support::ScriptedModel,
    _server: MockModelServer,
    home: TempDir,
    workdir: PathBuf,
    launch: AgentLaunch,
    _data: TempDir,
    store: Arc<SqliteStore>,
    options: ImportOptions,
}

impl Bench {
    async fn new(agent: RealAgent) -> Self {
        let server = MockModelServer::start().await.unwrap();
        let model = agent.model();
        model.install(&server);
        let home = tempfile::tempdir().unwrap();
        let workdir = home.path().join("work");
        std::fs::create_dir_all(&workdir).unwrap();
        let launch = agent.prepare(home.path(), &server.url(), &workdir);
        let data = tempfile::tempdir().unwrap();
        let store = Arc::new(
            SqliteStore::open(&data.path().join("hearth.db"))
                .await
                .unwrap(),
        );
        let kind = Agent::from_id(agent.id()).unwrap();
        let location =
            hearth_history::locate(kind, &|name| launch.var(name).map(str::to_owned)).unwrap();
        let options = ImportOptions {
            sources: vec![ImportSource {
                location,
                provider: HarnessId::parse(agent.id()).unwrap(),
                peers: Vec::new(),
            }],
            record: data.path().join("history-imports.json"),
        };
        Self {
            agent,
            model,
            _server: server,
            home,
            workdir,
            launch,
            _data: data,
            store,
            options,
        }
    }

    /// A prompt outside Hearth, answered with `answer`.
    async fn outside(&self, prompt: &str, answer: &str, continuing: Option<&str>) {
        self.model.push(ModelTurn::text(answer));
        let printed = self
            .agent
            .run_outside(&self.launch, &self.workdir, prompt, continuing)
            .await;
        eprintln!("{}: {prompt:?} → {}", self.agent.id(), printed.trim());
    }

    /// Imports, checking that the agent's store is unchanged by it.
    async fn import(&self) -> AgentReport {
        let before = hashes(self.home.path());
        let mut reports = hearth_history::import(self.store.as_ref(), &Counted, &self.options)
            .await
            .unwrap();
        assert_eq!(
            hashes(self.home.path()),
            before,
            "{}: the import changed the agent's store",
            self.agent.id()
        );
        assert_eq!(reports.len(), 1);
        let report = reports.remove(0);
        assert_eq!(report.errors, Vec::<String>::new(), "{}", self.agent.id());
        report
    }

    /// Hearth's sessions of the agent, each with its turns' (prompt, answer).
    async fn sessions(&self) -> Vec<(hearth_core::SessionSummary, Vec<(String, String)>)> {
        let page = self
            .store
            .list_sessions(&SessionQuery::default())
            .await
            .unwrap();
        let mut sessions = Vec::new();
        for summary in page.sessions {
            let turns = self
                .store
                .turns(&ChatUri::default_for(&summary.uri))
                .await
                .unwrap();
            let turns = turns
                .iter()
                .map(|turn| (turn.user.text.clone(), turn.response_text()))
                .collect();
            sessions.push((summary, turns));
        }
        sessions.sort_by_key(|(summary, _)| summary.started_at);
        sessions
    }
}

fn counts(report: &AgentReport) -> [u64; 4] {
    [
        report.found,
        report.imported,
        report.updated,
        report.skipped,
    ]
}

/// The prompt as the agent stored it: OpenCode's `run` keeps the message quoted.
fn stored_prompt(agent: RealAgent, prompt: &str) -> String {
    match agent {
        RealAgent::OpenCode => format!("\"{prompt}\""),
        _ => prompt.to_owned(),
    }
}

/// 1. Each session once, with provenance and turns; returns their URIs, oldest first.
async fn each_session_once(bench: &Bench) -> (SessionUri, SessionUri) {
    let (agent, id) = (bench.agent, bench.agent.id());
    assert_eq!(
        counts(&bench.import().await),
        [2, 2, 0, 0],
        "{id}: first import"
    );
    let sessions = bench.sessions().await;
    let turns: Vec<_> = sessions.iter().map(|(_, turns)| turns.clone()).collect();
    let turn = |prompt: &str, answer: &str| vec![(stored_prompt(agent, prompt), answer.to_owned())];
    assert_eq!(
        turns,
        vec![
            turn("Tell me about apples", "Apples are red."),
            turn("Tell me about pears", "Pears are green."),
        ],
        "{id}"
    );
    for (summary, _) in &sessions {
        assert_eq!(summary.provenance, Provenance::External, "{id}");
        assert_eq!(summary.harness.as_str(), id);
        let source = summary
            .source
            .strip_prefix("import ")
            .unwrap_or_else(|| panic!("{id}: {}", summary.source));
        let source = Path::new(source);
        assert!(
            source.starts_with(bench.home.path()) && source.is_file(),
            "{id}: {}",
            source.display()
        );
        assert_eq!(
            summary.working_directories,
            vec![bench.workdir.clone()],
            "{id}"
        );
    }
    (sessions[0].0.uri.clone(), sessions[1].0.uri.clone())
}

/// 3. A turn added in the agent's store is added to the session.
async fn a_new_turn_is_added(bench: &Bench, session: &SessionUri) {
    let (agent, id) = (bench.agent, bench.agent.id());
    let native = session.to_string().rsplit('/').next().unwrap().to_owned();
    bench
        .outside("And their seeds?", "Pear seeds are small.", Some(&native))
        .await;
    assert_eq!(
        counts(&bench.import().await),
        [2, 0, 1, 1],
        "{id}: after a new turn"
    );
    let sessions = bench.sessions().await;
    assert_eq!(sessions.len(), 2, "{id}: {sessions:?}");
    let expected = (
        stored_prompt(agent, "And their seeds?"),
        "Pear seeds are small.".to_owned(),
    );
    assert_eq!(sessions[1].1.last(), Some(&expected), "{id}");
    assert_eq!(sessions[1].1.len(), 2, "{id}");
}

/// 4. Deleted in Hearth: never imported again, even when every file is read again.
async fn a_deleted_session_stays_deleted(bench: &Bench, deleted: &SessionUri, kept: &SessionUri) {
    let id = bench.agent.id();
    assert!(bench.store.delete_session(deleted).await.unwrap());
    std::fs::remove_file(&bench.options.record).unwrap();
    assert_eq!(
        counts(&bench.import().await),
        [2, 0, 0, 2],
        "{id}: after a deletion"
    );
    let uris: Vec<SessionUri> = bench
        .sessions()
        .await
        .into_iter()
        .map(|(summary, _)| summary.uri)
        .collect();
    assert_eq!(uris, vec![kept.clone()], "{id}");
}

async fn scenario(agent: RealAgent) {
    if agent.locate_or_skip().is_none() {
        return;
    }
    let bench = Bench::new(agent).await;
    bench
        .outside("Tell me about apples", "Apples are red.", None)
        .await;
    bench
        .outside("Tell me about pears", "Pears are green.", None)
        .await;
    let (apples, pears) = each_session_once(&bench).await;
    // 2. Nothing new: nothing added.
    assert_eq!(
        counts(&bench.import().await),
        [2, 0, 0, 2],
        "{}: second import",
        agent.id()
    );
    a_new_turn_is_added(&bench, &pears).await;
    a_deleted_session_stays_deleted(&bench, &apples, &pears).await;
}

#[tokio::test]
async fn claude_code_print_mode_sessions_are_imported() {
    scenario(RealAgent::ClaudeAgent).await;
}

#[tokio::test]
async fn codex_acp_sessions_are_imported() {
    scenario(RealAgent::Codex).await;
}

#[tokio::test]
async fn gemini_print_mode_sessions_are_imported() {
    scenario(RealAgent::Gemini).await;
}

#[tokio::test]
async fn opencode_run_sessions_are_imported() {
    scenario(RealAgent::OpenCode).await;
}

#[tokio::test]
async fn copilot_print_mode_sessions_are_imported() {
    scenario(RealAgent::Copilot).await;
}
