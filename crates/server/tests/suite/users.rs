//! A team server's users (`hearth serve --users`): each reaches what is theirs, their
//! teams' and the calendars granted them, and nothing of anyone else's — through every
//! method of the protocol, and through the root's envelopes.

use std::path::Path;

use hearth_core::{ChatUri, Scope, SessionUri, ToolCallContext, Toolbox, TurnId};
use hearth_protocol::{self as wire, ClientMethod, ErrorKind};
use hearth_server::{Client, Notifications, Secret};
use hearth_store::{ProposalStore, Role, UserStore};
use serde_json::{Value, json};
use tempfile::TempDir;

use super::support::{Setup, TestServer, next_envelope, send, until_completed};

/// Words only Alice's things hold: finding one in Bob's answers is a leak.
const SECRET: &str = "aliceplan";
const CALENDAR: &str = "alicecal";

pub(super) struct Team {
    _dir: TempDir,
    pub server: TestServer,
    alice: Client,
    pub alice_token: Secret,
    pub bob_token: Secret,
    pub alice_id: String,
    session: String,
    chat: String,
    turn: String,
    pub proposal: String,
    payload_hash: String,
}

pub(super) async fn token_for(server: &TestServer, user: &str) -> Secret {
    let token = Secret::generate().unwrap();
    server
        .host
        .sqlite()
        .add_token(
            user,
            &hearth_fs::sha256_hex(token.expose().as_bytes()),
            "test",
        )
        .await
        .unwrap();
    token
}

async fn connect(server: &TestServer, token: &Secret) -> (Client, Notifications) {
    let (client, notifications) = Client::connect(&server.url, token).await.unwrap();
    client.initialize("test").await.unwrap();
    (client, notifications)
}

fn calendar_config(dir: &Path) -> String {
    std::fs::write(
        dir.join("alice.ics"),
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nEND:VCALENDAR\r\n",
    )
    .unwrap();
    format!(
        "[defaults]\ntime_zone = \"UTC\"\n\n[calendars.{CALENDAR}]\nkind = \"ics\"\npath = {:?}\ndefault = true\n",
        dir.join("alice.ics").display().to_string()
    )
}

/// Alice, with a session holding a turn and a staged calendar change; Bob, with nothing.
pub(super) async fn team() -> Team {
    let dir = TempDir::new().unwrap();
    let config =
        hearth_config::Config::parse(&calendar_config(dir.path()), &dir.path().join("c.toml"))
            .unwrap();
    let calendars = hearth_calendar::Calendars::from_config(
        &config.calendars,
        hearth_calendar::CalendarOptions::new(dir.path().join("data"), chrono_tz::UTC),
    );
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let server = TestServer::start_with(Setup {
        approvals: true,
        calendars: Some(calendars),
        config,
        users: true,
        lend_tools: true,
        paths: Some(hearth_config::Paths::resolve(Some(&home), None).unwrap()),
        ..Setup::default()
    })
    .await;
    let store = server.host.sqlite();
    let alice = store.create_user("alice").await.unwrap();
    let bob = store.create_user("bob").await.unwrap();
    store
        .grant(&format!("calendar:{CALENDAR}"), &alice.id, Role::Approver)
        .await
        .unwrap();
    let alice_token = token_for(&server, &alice.id).await;
    let bob_token = token_for(&server, &bob.id).await;
    let (client, mut notifications) = connect(&server, &alice_token).await;
    let session = super::support::create_session(&client).await;
    // Outside projects, her agent works in her own folder on the server.
    let folder = home.join("users").join(&alice.id);
    assert_eq!(
        session.summary.working_directories,
        vec![folder.display().to_string()]
    );
    assert!(folder.is_dir());
    let chat = session.chats[0].summary.uri.clone();
    subscribe(&client, &chat).await;
    let turn = send(&client, &chat, &format!("the {SECRET} for Friday")).await;
    let chat_uri: ChatUri = chat.parse().unwrap();
    server.fake.wait_for_send(&chat_uri).await;
    server.fake.finish_ok(&chat_uri);
    until_completed(&mut notifications, &turn).await;
    let (proposal, payload_hash) = stage(&server, &session.summary.uri, &chat).await;
    Team {
        _dir: dir,
        server,
        alice: client,
        alice_token,
        bob_token,
        alice_id: alice.id,
        session: session.summary.uri,
        chat,
        turn,
        proposal,
        payload_hash,
    }
}

async fn subscribe(client: &Client, resource: &str) -> wire::SubscribeResponse {
    client
        .call::<wire::Subscribe>(&wire::SubscribeParams {
            resource: resource.to_owned(),
            last_seq: None,
            turn_limit: None,
        })
        .await
        .unwrap()
}

/// A calendar change staged from Alice's chat, as her agent would; its id and hash.
async fn stage(server: &TestServer, session: &str, chat: &str) -> (String, String) {
    let session: SessionUri = session.parse().unwrap();
    let context = ToolCallContext {
        chat: chat.parse::<ChatUri>().unwrap(),
        session,
        turn_id: TurnId::generate(),
        call_id: "call-1".into(),
        scope: Scope::Global,
        working_directories: Vec::new(),
    };
    let outcome = server
        .tools
        .as_ref()
        .unwrap()
        .call(
            &context,
            "event_create",
            json!({"title": format!("{SECRET} dentist"), "start": "2026-12-02T14:00"}),
        )
        .await;
    assert!(!outcome.is_error, "{}", outcome.content);
    let proposal = outcome.proposal.expect("a staged proposal");
    let record = server
        .host
        .sqlite()
        .proposal(&proposal.id)
        .await
        .unwrap()
        .expect("the staged proposal is kept");
    (proposal.id.to_string(), record.payload_hash)
}

/// One JSON-RPC request over `POST /rpc` with `token`; the response's `result` or
/// `error`.
pub(super) async fn post(
    server: &TestServer,
    token: &Secret,
    method: &str,
    params: Value,
) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let (status, response) = server
        .http(
            "POST /rpc HTTP/1.1",
            &[
                format!("Authorization: Bearer {}", token.expose()),
                "Content-Type: application/json".to_owned(),
            ],
            &body,
        )
        .await;
    assert_eq!(status, 200, "{method}: {response}");
    let body = response.split("\r\n\r\n").nth(1).unwrap_or_default();
    serde_json::from_str(body).unwrap_or_else(|_| panic!("{method}: not JSON: {response}"))
}

/// What Bob asks of each method, naming Alice's things where it takes any.
fn bobs_request(team: &Team, method: ClientMethod) -> Value {
    let session = team.session.as_str();
    let chat = team.chat.as_str();
    match method {
        ClientMethod::Initialize
        | ClientMethod::SessionList
        | ClientMethod::ProposalList
        | ClientMethod::PermissionList
        | ClientMethod::PermissionGrants
        | ClientMethod::ProviderList
        | ClientMethod::ProviderTest
        | ClientMethod::AuditList
        | ClientMethod::AuditVerify
        | ClientMethod::ProjectList
        | ClientMethod::CalendarList
        | ClientMethod::TrashList
        | ClientMethod::TrashEmpty => json!({}),
        ClientMethod::SessionCreate => json!({"workingDirectories": ["/"]}),
        ClientMethod::SessionDispose => json!({"session": session}),
        ClientMethod::SessionFork => json!({"session": session, "turnId": team.turn}),
        ClientMethod::SessionRename => json!({"session": session, "title": "taken"}),
        ClientMethod::SessionMark => json!({"session": session, "pinned": true}),
        ClientMethod::SessionShare => json!({"session": session, "team": "bobs"}),
        ClientMethod::SessionExport => json!({"sessionId": session, "format": "markdown"}),
        ClientMethod::ChatCreate => json!({"session": session}),
        ClientMethod::ChatDispose
        | ClientMethod::ChatAbort
        | ClientMethod::ChatCompact
        | ClientMethod::ChatResolve
        | ClientMethod::ChatTurns => json!({"chat": chat}),
        ClientMethod::ChatSend | ClientMethod::ChatQueue => {
            json!({"chat": chat, "message": {"text": "mine now"}})
        }
        ClientMethod::ChatSetModel => json!({"chat": chat, "model": "other"}),
        ClientMethod::ChatSetMode => json!({"chat": chat, "mode": "other"}),
        ClientMethod::ChatSetDraft => json!({"chat": chat, "draft": "mine"}),
        ClientMethod::ChatSetQueue => json!({"chat": chat, "messages": []}),
        ClientMethod::Subscribe | ClientMethod::Unsubscribe => json!({"resource": chat}),
        ClientMethod::ProposalApprove => {
            json!({"proposalId": team.proposal, "payloadHash": team.payload_hash})
        }
        ClientMethod::ProposalReject => json!({"proposalId": team.proposal}),
        ClientMethod::PermissionRespond => {
            json!({"chat": chat, "requestId": "r", "optionId": "allow"})
        }
        ClientMethod::PermissionRevokeGrant => json!({"grant": "g"}),
        ClientMethod::HarnessStart => json!({"harness": "fake"}),
        ClientMethod::ProviderAdd => json!({"id": "mine", "baseUrl": "http://127.0.0.1:9"}),
        ClientMethod::ProviderRemove => json!({"id": "fake"}),
        ClientMethod::AgentConnect => json!({"agent": "fake", "env": {"X_KEY": "x"}}),
        ClientMethod::AgentDisconnect => json!({"agent": "fake"}),
        ClientMethod::ProjectGet
        | ClientMethod::ProjectTrust
        | ClientMethod::ProjectDelete
        | ClientMethod::ProjectContext
        | ClientMethod::ProjectUpdate => json!({"project": "0190a4a2-aaaa-7000-8000-000000000001"}),
        ClientMethod::ProjectRename => {
            json!({"project": "0190a4a2-aaaa-7000-8000-000000000001", "name": "x"})
        }
        ClientMethod::ProjectCreate => json!({"folder": "/"}),
        ClientMethod::ProjectAddSource => {
            json!({"project": "0190a4a2-aaaa-7000-8000-000000000001", "source": "/etc"})
        }
        ClientMethod::ProjectRemoveSource | ClientMethod::ProjectRetrySource => {
            json!({"project": "0190a4a2-aaaa-7000-8000-000000000001", "source": "s"})
        }
        ClientMethod::ProjectRelink => {
            json!({"project": "0190a4a2-aaaa-7000-8000-000000000001", "folder": "/"})
        }
        ClientMethod::CalendarEvents => json!({
            "from": "2026-11-30T00:00:00Z",
            "to": "2026-12-07T00:00:00Z",
            "calendars": [CALENDAR],
        }),
        ClientMethod::SearchQuery => json!({"query": SECRET}),
        ClientMethod::AttachmentUpload => {
            json!({"name": "a.txt", "mediaType": "text/plain", "data": "aGk="})
        }
        ClientMethod::TrashRestore => json!({"kind": "session", "id": session}),
    }
}

/// Whether an answer names anything of Alice's that the request did not name itself
/// (an error may say which of the ids Bob sent it does not know).
fn leaks_beyond(team: &Team, request: &Value, answer: &Value) -> bool {
    let asked = request.to_string();
    let text = answer.to_string();
    secrets(team)
        .iter()
        .any(|secret| text.contains(secret) && !asked.contains(secret))
}

/// Whether an answer names anything of Alice's.
fn leaks(team: &Team, answer: &Value) -> bool {
    let text = answer.to_string();
    secrets(team).iter().any(|secret| text.contains(secret))
}

fn secrets(team: &Team) -> [&str; 6] {
    [
        team.session.as_str(),
        team.chat.as_str(),
        team.turn.as_str(),
        team.proposal.as_str(),
        SECRET,
        CALENDAR,
    ]
}

fn error_kind(answer: &Value) -> Option<String> {
    answer
        .pointer("/error/data/kind")
        .and_then(Value::as_str)
        .map(str::to_owned)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_reaches_nothing_of_anothers_through_any_method() {
    let team = team().await;
    // Alice reaches her own: the checks below can fail.
    let hers = post(
        &team.server,
        &team.alice_token,
        "search/query",
        json!({"query": SECRET}),
    )
    .await;
    assert!(leaks(&team, &hers), "Alice finds her own turn: {hers}");
    let hers = post(&team.server, &team.alice_token, "proposal/list", json!({})).await;
    assert!(hers.to_string().contains(&team.proposal), "{hers}");
    let hers = post(&team.server, &team.alice_token, "calendar/list", json!({})).await;
    assert!(hers.to_string().contains(CALENDAR), "{hers}");

    let mut refused = Vec::new();
    for &method in ClientMethod::ALL {
        let request = bobs_request(&team, method);
        let answer = post(
            &team.server,
            &team.bob_token,
            method.name(),
            request.clone(),
        )
        .await;
        assert!(
            !leaks_beyond(&team, &request, &answer),
            "`{}` showed Bob something of Alice's: {answer}",
            method.name()
        );
        if let Some(kind) = error_kind(&answer) {
            refused.push((method.name(), kind));
        }
    }
    // What names Alice's things is not found; what is the operator's is forbidden.
    for (method, expected) in [
        ("session/dispose", "notFound"),
        ("session/rename", "notFound"),
        ("chat/send", "notFound"),
        ("chat/resolve", "notFound"),
        ("proposal/approve", "notFound"),
        ("session/export", "notFound"),
        ("session/share", "notFound"),
        ("session/create", "forbidden"),
        ("provider/add", "invalidParams"),
        ("audit/verify", "forbidden"),
        ("trash/empty", "forbidden"),
        ("harness/start", "forbidden"),
    ] {
        assert!(
            refused.contains(&(method, expected.to_owned())),
            "`{method}` should be refused as {expected}: {refused:?}"
        );
    }

    // Nothing of Alice's changed: her session, its turn, its title, her proposal.
    let resolved = team
        .alice
        .call::<wire::ChatResolve>(&wire::ChatParams {
            chat: team.chat.clone(),
        })
        .await
        .unwrap();
    assert_eq!(resolved.chat.turns.len(), 1, "Bob sent nothing to her chat");
    assert_eq!(resolved.chat.draft, None);
    let list = team
        .alice
        .call::<wire::SessionList>(&wire::SessionListParams::default())
        .await
        .unwrap();
    assert_eq!(list.sessions.len(), 1);
    assert_eq!(list.sessions[0].uri, team.session);
    assert_eq!(
        list.sessions[0].owner.as_deref(),
        Some(team.alice_id.as_str())
    );
    assert!(!list.sessions[0].pinned);
    let proposals = post(&team.server, &team.alice_token, "proposal/list", json!({})).await;
    assert!(
        proposals.to_string().contains("\"pending\""),
        "the proposal is still pending: {proposals}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_calendar_approver_decides_and_the_audit_log_names_them() {
    let team = team().await;
    let approved = post(
        &team.server,
        &team.alice_token,
        "proposal/approve",
        json!({"proposalId": team.proposal, "payloadHash": team.payload_hash}),
    )
    .await;
    assert!(approved.get("error").is_none(), "{approved}");
    let audit = post(&team.server, &team.alice_token, "audit/list", json!({})).await;
    let actor = format!("user:{}", team.alice_id);
    let entries = audit["result"]["entries"].as_array().unwrap();
    assert!(!entries.is_empty(), "{audit}");
    assert!(
        entries.iter().all(|entry| entry["actor"] == actor.as_str()),
        "Alice reads only her own entries, each naming her: {audit}"
    );
    // The operator reads the whole log, Alice's decision among it.
    let all = post(&team.server, &team.server.token, "audit/list", json!({})).await;
    assert!(all.to_string().contains(&actor), "{all}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_member_without_the_approver_role_cannot_decide_a_shared_sessions_calendar_change() {
    let team = team().await;
    let store = team.server.host.sqlite();
    let carol = store.create_user("carol").await.unwrap();
    store
        .join_team(&carol.id, "design", Role::Member)
        .await
        .unwrap();
    store
        .share_session(&team.session.parse().unwrap(), Some("design"))
        .await
        .unwrap()
        .expect("the session exists");
    let carol_token = token_for(&team.server, &carol.id).await;
    // Shared with her team: she sees it, its turns and its proposal.
    let resolved = post(
        &team.server,
        &carol_token,
        "chat/resolve",
        json!({"chat": team.chat}),
    )
    .await;
    assert!(resolved.to_string().contains(SECRET), "{resolved}");
    // Deciding a calendar change needs the approver role on that calendar.
    let approved = post(
        &team.server,
        &carol_token,
        "proposal/approve",
        json!({"proposalId": team.proposal, "payloadHash": team.payload_hash}),
    )
    .await;
    assert_eq!(
        error_kind(&approved).as_deref(),
        Some("forbidden"),
        "{approved}"
    );
    store
        .grant(&format!("calendar:{CALENDAR}"), &carol.id, Role::Approver)
        .await
        .unwrap();
    let approved = post(
        &team.server,
        &carol_token,
        "proposal/approve",
        json!({"proposalId": team.proposal, "payloadHash": team.payload_hash}),
    )
    .await;
    assert!(approved.get("error").is_none(), "{approved}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_users_root_subscription_hears_of_their_sessions_only_numbered_without_gaps() {
    let team = team().await;
    let (bob, mut bobs) = connect(&team.server, &team.bob_token).await;
    let wire::SubscribeResponse::Snapshot { snapshot } = subscribe(&bob, "hearth-root:").await
    else {
        panic!("a fresh subscription gets a snapshot");
    };
    // Alice's new session and Bob's, in that order: Bob hears only of his.
    super::support::create_session(&team.alice).await;
    let his = super::support::create_session(&bob).await;
    let envelope = next_envelope(&mut bobs).await;
    assert_eq!(envelope.seq, snapshot.seq + 1, "no gap where Alice's was");
    match &envelope.action {
        wire::Action::SessionAdded { summary } => assert_eq!(summary.uri, his.summary.uri),
        other => panic!("expected Bob's session, got {other:?}"),
    }
    // Bob cannot follow Alice's chat.
    let refused = bob
        .call::<wire::Subscribe>(&wire::SubscribeParams {
            resource: team.chat.clone(),
            last_seq: None,
            turn_limit: None,
        })
        .await
        .unwrap_err();
    match refused {
        hearth_server::ServerError::Rpc(error) => {
            assert_eq!(error.data.map(|data| data.kind), Some(ErrorKind::NotFound));
        }
        other => panic!("expected a refusal, got {other}"),
    }
    // Alice's turn goes on unseen by Bob: the next thing he hears is his own rename.
    send(&team.alice, &team.chat, "more").await;
    bob.call::<wire::SessionRename>(&wire::SessionRenameParams {
        session: his.summary.uri.clone(),
        title: "Bob's".into(),
    })
    .await
    .unwrap();
    let envelope = next_envelope(&mut bobs).await;
    assert_eq!(envelope.seq, snapshot.seq + 2);
    match &envelope.action {
        wire::Action::SessionUpdated { summary } => {
            assert_eq!(summary.uri, his.summary.uri);
        }
        other => panic!("expected Bob's rename, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_users_token_opens_no_operator_login() {
    let team = team().await;
    for (line, body) in [
        ("POST /auth/code HTTP/1.1", "{}"),
        ("POST /auth/revoke HTTP/1.1", "{}"),
    ] {
        let (status, response) = team
            .server
            .http(
                line,
                &[
                    format!("Authorization: Bearer {}", team.bob_token.expose()),
                    "Content-Type: application/json".to_owned(),
                    "Accept: application/json, text/event-stream".to_owned(),
                ],
                body,
            )
            .await;
        assert_eq!(status, 403, "{line}: {response}");
    }
    // A token no one holds is refused outright; the operator's still works.
    let stranger = Secret::generate().unwrap();
    let (status, _) = team
        .server
        .http(
            "POST /rpc HTTP/1.1",
            &[
                format!("Authorization: Bearer {}", stranger.expose()),
                "Content-Type: application/json".to_owned(),
            ],
            r#"{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}"#,
        )
        .await;
    assert_eq!(status, 401);
    let all = post(&team.server, &team.server.token, "session/list", json!({})).await;
    assert!(all.to_string().contains(&team.session), "{all}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_shares_their_session_with_their_team_whose_members_hear_of_it() {
    let team = team().await;
    let store = team.server.host.sqlite();
    store
        .join_team(&team.alice_id, "design", Role::Member)
        .await
        .unwrap();
    let carol = store.create_user("carol").await.unwrap();
    store
        .join_team(&carol.id, "design", Role::Member)
        .await
        .unwrap();
    let carol_token = token_for(&team.server, &carol.id).await;
    let (as_carol, mut carols) = connect(&team.server, &carol_token).await;
    let wire::SubscribeResponse::Snapshot { snapshot } = subscribe(&as_carol, "hearth-root:").await
    else {
        panic!("a fresh subscription gets a snapshot");
    };
    // Alice's teams only; her session only.
    let elsewhere = post(
        &team.server,
        &team.alice_token,
        "session/share",
        json!({"session": team.session, "team": "sales"}),
    )
    .await;
    assert_eq!(
        error_kind(&elsewhere).as_deref(),
        Some("forbidden"),
        "{elsewhere}"
    );
    let shared = post(
        &team.server,
        &team.alice_token,
        "session/share",
        json!({"session": team.session, "team": "design"}),
    )
    .await;
    assert_eq!(shared["result"]["summary"]["team"], "design", "{shared}");
    // Carol's view of the root gains the session, numbered next.
    let envelope = next_envelope(&mut carols).await;
    assert_eq!(envelope.seq, snapshot.seq + 1);
    match &envelope.action {
        wire::Action::SessionAdded { summary } => assert_eq!(summary.uri, team.session),
        other => panic!("expected Alice's session to appear, got {other:?}"),
    }
    let hers = post(&team.server, &carol_token, "session/list", json!({})).await;
    assert!(hers.to_string().contains(&team.session), "{hers}");
    // Carol may use it, not share it on.
    let reshared = post(
        &team.server,
        &carol_token,
        "session/share",
        json!({"session": team.session}),
    )
    .await;
    assert_eq!(
        error_kind(&reshared).as_deref(),
        Some("forbidden"),
        "{reshared}"
    );
    // Unshared, it leaves her view.
    post(
        &team.server,
        &team.alice_token,
        "session/share",
        json!({"session": team.session}),
    )
    .await;
    let envelope = next_envelope(&mut carols).await;
    assert_eq!(envelope.seq, snapshot.seq + 2);
    assert!(
        matches!(&envelope.action, wire::Action::SessionRemoved { session } if *session == team.session),
        "{envelope:?}"
    );
    let gone = post(
        &team.server,
        &carol_token,
        "chat/resolve",
        json!({"chat": team.chat}),
    )
    .await;
    assert_eq!(error_kind(&gone).as_deref(), Some("notFound"), "{gone}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_user_finds_their_deleted_session_in_their_trash_and_brings_it_back() {
    let team = team().await;
    let disposed = post(
        &team.server,
        &team.alice_token,
        "session/dispose",
        json!({"session": team.session}),
    )
    .await;
    assert_eq!(disposed["result"]["trashed"], true, "{disposed}");
    // Bob's trash holds nothing of hers, and he cannot bring it back.
    let bobs = post(&team.server, &team.bob_token, "trash/list", json!({})).await;
    assert!(!leaks(&team, &bobs), "{bobs}");
    let taken = post(
        &team.server,
        &team.bob_token,
        "trash/restore",
        json!({"kind": "session", "id": team.session}),
    )
    .await;
    assert_eq!(error_kind(&taken).as_deref(), Some("notFound"), "{taken}");
    // The operator sees everyone's trash; Alice sees hers and restores it.
    let all = post(&team.server, &team.server.token, "trash/list", json!({})).await;
    assert!(all.to_string().contains(&team.session), "{all}");
    let hers = post(&team.server, &team.alice_token, "trash/list", json!({})).await;
    assert!(hers.to_string().contains(&team.session), "{hers}");
    let restored = post(
        &team.server,
        &team.alice_token,
        "trash/restore",
        json!({"kind": "session", "id": team.session}),
    )
    .await;
    assert!(restored.get("error").is_none(), "{restored}");
    let listed = post(&team.server, &team.alice_token, "session/list", json!({})).await;
    assert!(listed.to_string().contains(&team.session), "{listed}");
    // Emptying the trash stays the operator's.
    let emptied = post(&team.server, &team.alice_token, "trash/empty", json!({})).await;
    assert_eq!(
        error_kind(&emptied).as_deref(),
        Some("forbidden"),
        "{emptied}"
    );
}
