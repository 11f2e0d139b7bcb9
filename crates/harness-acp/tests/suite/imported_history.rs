//! A session a real agent had outside Hearth (run in its own non-interactive mode —
//! `claude -p`, `gemini -p`, `opencode run`, `copilot -p` — or, for Codex, installed only
//! as `codex-acp`, through a bare ACP client), imported from the agent's own store and
//! opened in Hearth: its history is shown, and the next prompt goes on with its context
//! — through the agent's own session when it can reopen it (`session/load`), else
//! through a new session whose first prompt carries the imported turns.

use std::sync::Arc;

use hearth_core::{ChatUri, HarnessId, SessionSummary, StopReason};
use hearth_harness_acp::ImportedConversations;
use hearth_history::{Agent, ImportOptions, ImportSource};
use hearth_store::SessionQuery;
use hearth_test_support::TestHost;
use hearth_test_support::real_agents::{ModelTurn, RealAgent};
use pretty_assertions::assert_eq;

use super::real_agents::{Bench, ask, error_of, last_turn, no_answer};

/// How the imported session goes on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Continuation {
    /// The agent reopens its own session.
    Reopened,
    /// The agent's record of it is deleted before it is opened: a new session gets the
    /// imported turns.
    SeededAfterLoss,
    /// The agent refuses to reopen it by itself: a new session gets the imported turns.
    SeededAfterRefusal,
}

const EARLIER: &str = "Remember the word marmalade";

/// The agent's store, found where the agent keeps it.
fn import_options(bench: &Bench, id: &str) -> ImportOptions {
    let kind = Agent::from_id(id).unwrap();
    let location =
        hearth_history::locate(kind, &|name| bench.launch.var(name).map(str::to_owned)).unwrap();
    ImportOptions {
        sources: vec![ImportSource {
            location,
            provider: HarnessId::parse(id).unwrap(),
            peers: Vec::new(),
        }],
        record: bench.data.path().join("history-imports.json"),
    }
}

/// Imports the agent's store into the host's; returns the one session it held.
async fn import_the_session(bench: &Bench, test: &TestHost, id: &str) -> SessionSummary {
    let options = import_options(bench, id);
    let reports = hearth_history::import(test.store.as_ref(), &ImportedConversations, &options)
        .await
        .unwrap();
    assert_eq!(
        (reports[0].imported, reports[0].errors.clone()),
        (1, Vec::new()),
        "{id}: {reports:?}"
    );
    let page = test
        .store
        .list_sessions(&SessionQuery::default())
        .await
        .unwrap();
    page.sessions.into_iter().next().unwrap()
}

async fn goes_on_with_its_context(agent: RealAgent, continuation: Continuation) {
    if agent.locate_or_skip().is_none() {
        return;
    }
    let id = agent.id();
    let bench = Bench::new(agent).await;
    bench.model.push(ModelTurn::text("Noted."));
    agent
        .run_outside(&bench.launch, &bench.work(), EARLIER, None)
        .await;
    let test = TestHost::start(vec![Arc::new(bench.harness())]).await;
    let session = import_the_session(&bench, &test, id).await;
    if continuation == Continuation::SeededAfterLoss {
        std::fs::remove_file(session.source.trim_start_matches("import ")).unwrap();
    }
    let chat = ChatUri::default_for(&session.uri);
    let state = test.host.chat(&chat).await.unwrap();
    let shown: Vec<&str> = state
        .turns
        .iter()
        .map(|turn| turn.user.text.as_str())
        .collect();
    assert!(
        shown.len() == 1 && shown[0].contains(EARLIER),
        "{id}: {shown:?}"
    );

    bench.model.push(ModelTurn::text("It was marmalade."));
    let ran = ask(&test.host, &chat, "Which word was it?", no_answer).await;
    let turn = last_turn(&test.host, &chat).await;
    assert_eq!(ran.reason, StopReason::EndTurn, "{id}: {}", error_of(&turn));
    assert!(
        ran.streamed().contains("It was marmalade."),
        "{id}: {}",
        ran.streamed()
    );
    let request = bench.last_model_request();
    assert!(
        request.contains(EARLIER),
        "{id}: the model did not get the earlier turn: {request}"
    );
    assert!(request.contains("Which word was it?"), "{id}");
    // Hearth's transcript of earlier turns goes only to a new session.
    assert_eq!(
        request.contains("<conversation_so_far>"),
        continuation != Continuation::Reopened,
        "{id}: {continuation:?}: {:?}",
        turn.parts
    );
    test.host.shutdown().await;

    nothing_is_imported_twice(&bench, &test, id).await;
}

/// Imported again (every file read again), after the agent saved what Hearth's turn
/// added: the session Hearth went on in is Hearth's, not a second import.
async fn nothing_is_imported_twice(bench: &Bench, test: &TestHost, id: &str) {
    std::fs::remove_file(bench.data.path().join("history-imports.json")).unwrap();
    let reports = hearth_history::import(
        test.store.as_ref(),
        &ImportedConversations,
        &import_options(bench, id),
    )
    .await
    .unwrap();
    assert_eq!(
        (reports[0].imported, reports[0].errors.clone()),
        (0, Vec::new()),
        "{id}: {reports:?}"
    );
    let sessions = test
        .store
        .list_sessions(&SessionQuery::default())
        .await
        .unwrap()
        .sessions;
    assert_eq!(sessions.len(), 1, "{id}: {sessions:#?}");
}

#[tokio::test]
async fn an_imported_claude_session_goes_on_in_its_own_session() {
    goes_on_with_its_context(RealAgent::ClaudeAgent, Continuation::Reopened).await;
}

#[tokio::test]
async fn an_imported_claude_session_whose_transcript_is_gone_goes_on_seeded() {
    goes_on_with_its_context(RealAgent::ClaudeAgent, Continuation::SeededAfterLoss).await;
}

#[tokio::test]
async fn an_imported_codex_session_goes_on_in_its_own_session() {
    goes_on_with_its_context(RealAgent::Codex, Continuation::Reopened).await;
}

/// Gemini CLI 0.61.0 in ACP mode does not find the sessions its headless mode (`-p`)
/// wrote: it answers their `session/load` with "No previous sessions found for this
/// project." So the imported session goes on in a new one that gets its turns.
#[tokio::test]
async fn an_imported_gemini_session_goes_on_seeded_with_its_turns() {
    goes_on_with_its_context(RealAgent::Gemini, Continuation::SeededAfterRefusal).await;
}

#[tokio::test]
async fn an_imported_opencode_session_goes_on_in_its_own_session() {
    goes_on_with_its_context(RealAgent::OpenCode, Continuation::Reopened).await;
}

#[tokio::test]
async fn an_imported_copilot_session_goes_on_in_its_own_session() {
    goes_on_with_its_context(RealAgent::Copilot, Continuation::Reopened).await;
}
