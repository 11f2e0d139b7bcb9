//! Users of a team server: made, found by id or name, removed with their tokens,
//! memberships and grants; names checked and kept unique; an OpenID identity always
//! logging in as one user, even from two nodes at once; and a viewer seeing, listing and
//! searching only their own sessions and their teams', never another's or no one's.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use hearth_core::{
    ChatUri, Owner, ProjectId, Provenance, SessionUri, StopReason, Turn, TurnId, UserMessage,
};
use hearth_store::{
    Membership, PgStore, ProjectRecord, Registration, Role, SearchQuery, SessionQuery, SqliteStore,
    Store, StoreError, UserStore,
};
use pretty_assertions::assert_eq;
use sqlx::Connection;

use super::fixtures::{Backend, at, new_session, on_every_backend, two_nodes};

on_every_backend!(
    users_are_found_by_id_or_name_listed_and_removed_with_what_is_theirs,
    user_names_are_checked_and_a_taken_name_is_a_conflict,
    an_identity_logs_in_as_one_user_and_new_names_take_a_free_suffix,
    tokens_find_their_user_by_digest_and_are_revoked,
    teams_and_grants_keep_one_role_each_and_go_with_their_user,
    a_viewer_lists_their_own_and_their_teams_sessions_once_each_over_pages,
    a_viewer_finds_only_the_turns_of_sessions_they_may_see,
    a_sessions_owner_is_kept_through_create_discovery_and_its_archive,
    sharing_a_session_with_a_team_shows_it_to_the_teams_members,
    projects_keep_their_owners,
);

fn digest(seed: char) -> String {
    seed.to_string().repeat(64)
}

/// A session of `provider` owned by `owner`, last updated at minute `minute`.
async fn owned(
    store: &dyn Backend,
    provider: &str,
    owner: Option<Owner>,
    minute: i64,
) -> SessionUri {
    let mut session = new_session(provider, None, at(minute));
    session.summary.owner = owner;
    store.create_session(&session).await.unwrap();
    session.summary.uri
}

fn shared(user: &str, team: &str) -> Option<Owner> {
    Some(Owner {
        user: user.to_owned(),
        team: Some(team.to_owned()),
    })
}

async fn users_are_found_by_id_or_name_listed_and_removed_with_what_is_theirs(
    store: Arc<dyn Backend>,
) {
    let bob = store.create_user("bob").await.unwrap();
    let alice = store.create_user("Alice").await.unwrap();
    assert!(
        alice.id.starts_with("u-") && alice.id.len() == 18,
        "{}",
        alice.id
    );
    assert_eq!((alice.issuer.clone(), alice.subject.clone()), (None, None));
    assert_eq!(store.user(&alice.id).await.unwrap(), Some(alice.clone()));
    assert_eq!(store.user("alice").await.unwrap(), Some(alice.clone()));
    assert_eq!(store.user("ALICE").await.unwrap(), Some(alice.clone()));
    assert_eq!(store.user("carol").await.unwrap(), None);
    assert_eq!(
        store.users().await.unwrap(),
        vec![alice.clone(), bob.clone()]
    );

    // What alice owns stays when she goes; her tokens, teams and grants go.
    let session = owned(&*store, "codex", Some(Owner::user(&alice.id)), 1).await;
    store
        .add_token("alice", &digest('a'), "laptop")
        .await
        .unwrap();
    store
        .join_team(&alice.id, "owls", Role::Member)
        .await
        .unwrap();
    store
        .grant("calendar:work", &alice.id, Role::Approver)
        .await
        .unwrap();
    assert!(store.remove_user("alice").await.unwrap());
    assert!(!store.remove_user(&alice.id).await.unwrap());
    assert_eq!(store.user(&alice.id).await.unwrap(), None);
    assert_eq!(store.user_by_token(&digest('a')).await.unwrap(), None);
    assert_eq!(store.users().await.unwrap(), vec![bob]);
    let kept = store.session(&session).await.unwrap().unwrap();
    assert_eq!(kept.owner, Some(Owner::user(&alice.id)));
    // Gone users are not found by the methods that need one.
    let error = store.memberships(&alice.id).await.unwrap_err();
    assert!(
        matches!(error, StoreError::NotFound { what: "user", .. }),
        "{error:?}"
    );
    // Her name is free again, for a new user with a new id.
    let again = store.create_user("alice").await.unwrap();
    assert_ne!(again.id, alice.id);
    assert_eq!(store.memberships("alice").await.unwrap(), vec![]);
    assert_eq!(store.roles("calendar:work", "alice").await.unwrap(), vec![]);
}

async fn user_names_are_checked_and_a_taken_name_is_a_conflict(store: Arc<dyn Backend>) {
    for bad in [
        "",
        "al ice",
        "zoë",
        "a/b",
        &"x".repeat(65),
        "u-0123456789ABCDEF",
    ] {
        let error = store.create_user(bad).await.unwrap_err();
        assert!(
            matches!(error, StoreError::InvalidQuery(_)),
            "{bad}: {error:?}"
        );
        assert!(error.to_string().contains(&format!("`{bad}`")), "{error}");
    }
    store.create_user(&"x".repeat(64)).await.unwrap();
    store.create_user("a.b_c-9").await.unwrap();
    store.create_user("alice").await.unwrap();
    for taken in ["alice", "ALICE"] {
        let error = store.create_user(taken).await.unwrap_err();
        assert!(matches!(error, StoreError::Conflict(_)), "{error:?}");
        assert!(error.to_string().contains("already exists"), "{error}");
    }
    assert_eq!(store.users().await.unwrap().len(), 3);
    let error = store
        .join_team("alice", "bad team", Role::Member)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("team name"), "{error}");
}

async fn an_identity_logs_in_as_one_user_and_new_names_take_a_free_suffix(store: Arc<dyn Backend>) {
    let issuer = "https://login.example.org";
    let first = store
        .user_for_identity(issuer, "sub-1", "Alice Smith")
        .await
        .unwrap();
    assert_eq!(first.name, "Alice-Smith");
    assert_eq!(first.issuer.as_deref(), Some(issuer));
    assert_eq!(first.subject.as_deref(), Some("sub-1"));
    // The same identity under another name is the same user, name unchanged.
    let again = store
        .user_for_identity(issuer, "sub-1", "Someone Else")
        .await
        .unwrap();
    assert_eq!(again, first);
    // Another identity with a taken name (in any case) gets the first free suffix.
    store.create_user("alice-smith-2").await.unwrap();
    let second = store
        .user_for_identity(issuer, "sub-2", "alice smith")
        .await
        .unwrap();
    assert_eq!(second.name, "alice-smith-3");
    // The same subject of another issuer is another identity.
    let other = store
        .user_for_identity("https://other.example.org", "sub-1", "日本")
        .await
        .unwrap();
    assert_eq!(other.name, "user");
    assert_ne!(other.id, first.id);
    assert_eq!(store.users().await.unwrap().len(), 4);
}

async fn tokens_find_their_user_by_digest_and_are_revoked(store: Arc<dyn Backend>) {
    let alice = store.create_user("alice").await.unwrap();
    let bob = store.create_user("bob").await.unwrap();
    store
        .add_token(&alice.id, &digest('a'), "laptop")
        .await
        .unwrap();
    store
        .add_token("alice", &digest('b'), "phone")
        .await
        .unwrap();
    store.add_token("bob", &digest('c'), "ci").await.unwrap();
    assert_eq!(
        store.user_by_token(&digest('a')).await.unwrap(),
        Some(alice.clone())
    );
    // A digest in capitals is the same digest.
    assert_eq!(
        store.user_by_token(&digest('B')).await.unwrap(),
        Some(alice.clone())
    );
    assert_eq!(store.user_by_token(&digest('d')).await.unwrap(), None);
    assert_eq!(store.user_by_token("not a digest").await.unwrap(), None);
    // A token itself is refused, and a digest is kept for one user only.
    let error = store
        .add_token("bob", "hearth_token_secret", "x")
        .await
        .unwrap_err();
    assert!(error.to_string().contains("SHA-256"), "{error}");
    let error = store.add_token("bob", &digest('a'), "x").await.unwrap_err();
    assert!(matches!(error, StoreError::Conflict(_)), "{error:?}");
    let error = store
        .add_token("carol", &digest('e'), "x")
        .await
        .unwrap_err();
    assert!(matches!(error, StoreError::NotFound { .. }), "{error:?}");

    assert_eq!(store.revoke_tokens("alice").await.unwrap(), 2);
    assert_eq!(store.revoke_tokens("alice").await.unwrap(), 0);
    assert_eq!(store.user_by_token(&digest('a')).await.unwrap(), None);
    assert_eq!(store.user_by_token(&digest('c')).await.unwrap(), Some(bob));
}

async fn teams_and_grants_keep_one_role_each_and_go_with_their_user(store: Arc<dyn Backend>) {
    let alice = store.create_user("alice").await.unwrap();
    let bob = store.create_user("bob").await.unwrap();
    store
        .join_team("alice", "owls", Role::Member)
        .await
        .unwrap();
    store
        .join_team("alice", "herons", Role::Member)
        .await
        .unwrap();
    // Joining again replaces the role.
    store
        .join_team(&alice.id, "owls", Role::Approver)
        .await
        .unwrap();
    store.join_team("bob", "owls", Role::Member).await.unwrap();
    let membership = |team: &str, role| Membership {
        team: team.to_owned(),
        role,
    };
    assert_eq!(
        store.memberships("alice").await.unwrap(),
        vec![
            membership("herons", Role::Member),
            membership("owls", Role::Approver)
        ]
    );
    assert!(store.leave_team("alice", "herons").await.unwrap());
    assert!(!store.leave_team("alice", "herons").await.unwrap());
    assert_eq!(
        store.memberships("alice").await.unwrap(),
        vec![membership("owls", Role::Approver)]
    );

    store
        .grant("project:p1", "alice", Role::Member)
        .await
        .unwrap();
    store
        .grant("project:p1", "alice", Role::Approver)
        .await
        .unwrap();
    store
        .grant("project:p1", "alice", Role::Approver)
        .await
        .unwrap();
    store
        .grant("calendar:work", "bob", Role::Approver)
        .await
        .unwrap();
    assert_eq!(
        store.roles("project:p1", "alice").await.unwrap(),
        vec![Role::Member, Role::Approver]
    );
    assert_eq!(store.roles("project:p1", "bob").await.unwrap(), vec![]);
    assert!(
        store
            .revoke_grant("project:p1", "alice", Role::Member)
            .await
            .unwrap()
    );
    assert!(
        !store
            .revoke_grant("project:p1", "alice", Role::Member)
            .await
            .unwrap()
    );
    assert_eq!(
        store.roles("project:p1", &alice.id).await.unwrap(),
        vec![Role::Approver]
    );
    assert!(store.grant("", "alice", Role::Member).await.is_err());

    assert!(store.remove_user(&bob.id).await.unwrap());
    let again = store.create_user("bob").await.unwrap();
    assert_eq!(
        store.roles("calendar:work", &again.id).await.unwrap(),
        vec![]
    );
    assert_eq!(store.memberships("bob").await.unwrap(), vec![]);
}

/// Every session a query lists, page after page, in order.
async fn listed(store: &dyn Backend, query: SessionQuery) -> Vec<SessionUri> {
    let mut query = query;
    let mut uris = Vec::new();
    loop {
        let page = store.list_sessions(&query).await.unwrap();
        uris.extend(page.sessions.into_iter().map(|session| session.uri));
        match page.next_cursor {
            Some(cursor) => query.cursor = Some(cursor),
            None => return uris,
        }
    }
}

async fn a_viewer_lists_their_own_and_their_teams_sessions_once_each_over_pages(
    store: Arc<dyn Backend>,
) {
    let alice = store.create_user("alice").await.unwrap().id;
    let bob = store.create_user("bob").await.unwrap().id;
    store.join_team(&alice, "owls", Role::Member).await.unwrap();
    store.join_team(&bob, "owls", Role::Member).await.unwrap();
    // Newest first: what alice may see, interleaved with what she may not.
    let mut visible = Vec::new();
    let mut minute = 100;
    for round in 0..4 {
        let provider = if round % 2 == 0 { "codex" } else { "claude" };
        let mine = owned(&*store, provider, Some(Owner::user(&alice)), minute).await;
        owned(&*store, provider, Some(Owner::user(&bob)), minute - 1).await;
        let teams = owned(&*store, provider, shared(&bob, "owls"), minute - 2).await;
        owned(&*store, provider, shared(&bob, "herons"), minute - 3).await;
        owned(&*store, provider, None, minute - 4).await;
        visible.extend([mine, teams]);
        minute -= 10;
    }
    let everything = listed(&*store, SessionQuery::default()).await;
    assert_eq!(everything.len(), 20);

    let viewer = |user: &str| SessionQuery {
        viewer: Some(user.to_owned()),
        limit: 3,
        ..SessionQuery::default()
    };
    assert_eq!(listed(&*store, viewer(&alice)).await, visible);
    let distinct: HashSet<_> = listed(&*store, viewer(&alice)).await.into_iter().collect();
    assert_eq!(distinct.len(), 8);
    // Bob sees his own, private or shared with any team.
    assert_eq!(listed(&*store, viewer(&bob)).await.len(), 12);
    assert_eq!(listed(&*store, viewer("u-0000000000000000")).await, vec![]);

    // With every other filter at once, the values stay bound to their conditions.
    let narrowed = SessionQuery {
        provider: Some(hearth_core::HarnessId::parse("claude").unwrap()),
        provenance: Some(Provenance::Hearth),
        title_contains: Some("SESSION".into()),
        pinned: Some(false),
        archived: Some(false),
        ..viewer(&alice)
    };
    let claude: Vec<SessionUri> = visible
        .iter()
        .filter(|uri| uri.harness().as_str() == "claude")
        .cloned()
        .collect();
    assert_eq!(claude.len(), 4);
    assert_eq!(listed(&*store, narrowed).await, claude);

    // Leaving the team hides its sessions.
    store.leave_team(&alice, "owls").await.unwrap();
    assert_eq!(listed(&*store, viewer(&alice)).await.len(), 4);
}

async fn say(store: &dyn Backend, session: &SessionUri, prompt: &str, minute: i64) -> String {
    let chat = ChatUri::default_for(session);
    let id = TurnId::generate();
    let mut turn = Turn::started(id.clone(), UserMessage::text(prompt), at(minute));
    store.insert_turn(&chat, &turn).await.unwrap();
    turn.push_text("noted");
    turn.end(StopReason::EndTurn);
    store.save_turn(&chat, &turn).await.unwrap();
    id.to_string()
}

async fn a_viewer_finds_only_the_turns_of_sessions_they_may_see(store: Arc<dyn Backend>) {
    let alice = store.create_user("alice").await.unwrap().id;
    let bob = store.create_user("bob").await.unwrap().id;
    store.join_team(&alice, "owls", Role::Member).await.unwrap();
    let mine = owned(&*store, "codex", Some(Owner::user(&alice)), 1).await;
    let teams = owned(&*store, "codex", shared(&bob, "owls"), 1).await;
    let bobs = owned(&*store, "claude", Some(Owner::user(&bob)), 1).await;
    let no_ones = owned(&*store, "claude", None, 1).await;
    let mut expected = HashSet::new();
    for minute in 1..=3 {
        expected.insert(say(&*store, &mine, &format!("budget {minute}"), minute).await);
        expected.insert(say(&*store, &teams, &format!("budget {minute}"), minute).await);
        say(&*store, &bobs, &format!("budget {minute}"), minute).await;
        say(&*store, &no_ones, &format!("budget {minute}"), minute).await;
    }
    let mut query = SearchQuery {
        text: "budget".into(),
        viewer: Some(alice.clone()),
        limit: 2,
        ..SearchQuery::default()
    };
    let mut found = Vec::new();
    loop {
        let page = store.search_turns(&query).await.unwrap();
        found.extend(page.hits.iter().map(|hit| hit.turn_id.to_string()));
        match page.next_cursor {
            Some(cursor) => query.cursor = Some(cursor),
            None => break,
        }
    }
    assert_eq!(found.len(), 6, "{found:?}");
    assert_eq!(found.into_iter().collect::<HashSet<_>>(), expected);
    // With a harness filter beside the viewer.
    let codex_only = SearchQuery {
        text: "budget".into(),
        harness: Some(hearth_core::HarnessId::parse("claude").unwrap()),
        viewer: Some(alice.clone()),
        limit: 50,
        ..SearchQuery::default()
    };
    assert_eq!(store.search_turns(&codex_only).await.unwrap().hits, vec![]);
    let everyone = SearchQuery {
        text: "budget".into(),
        limit: 50,
        ..SearchQuery::default()
    };
    assert_eq!(store.search_turns(&everyone).await.unwrap().hits.len(), 12);
}

async fn a_sessions_owner_is_kept_through_create_discovery_and_its_archive(
    store: Arc<dyn Backend>,
) {
    let mut made = new_session("codex", None, at(1));
    made.summary.owner = shared("u-00000000000000aa", "owls");
    store.create_session(&made).await.unwrap();
    let read = store.session(&made.summary.uri).await.unwrap().unwrap();
    assert_eq!(read, made.summary);

    let mut found = new_session("claude", None, at(2));
    found.summary.provenance = Provenance::External;
    found.summary.owner = Some(Owner::user("u-00000000000000bb"));
    assert_eq!(
        store.register_discovered(&found).await.unwrap(),
        Registration::Added
    );
    let listed = store.list_sessions(&SessionQuery::default()).await.unwrap();
    let owners: HashMap<SessionUri, Option<Owner>> = listed
        .sessions
        .into_iter()
        .map(|session| (session.uri, session.owner))
        .collect();
    assert_eq!(owners[&found.summary.uri], found.summary.owner);
    assert_eq!(owners[&made.summary.uri], made.summary.owner);

    // A fork is a new session made with its parent's owner.
    let mut fork = new_session("codex", None, at(3));
    fork.summary.owner = read.owner.clone();
    store.create_session(&fork).await.unwrap();
    let forked = store.session(&fork.summary.uri).await.unwrap().unwrap();
    assert_eq!(forked.owner, made.summary.owner);

    // The archive carries the owner into another database.
    let archive = store.archive_session(&made.summary.uri).await.unwrap();
    let other = SqliteStore::open_in_memory().await.unwrap();
    other.import_archive(&mut archive.as_bytes()).await.unwrap();
    let imported = other.session(&made.summary.uri).await.unwrap().unwrap();
    assert_eq!(imported.owner, made.summary.owner);
}

async fn sharing_a_session_with_a_team_shows_it_to_the_teams_members(store: Arc<dyn Backend>) {
    let alice = store.create_user("alice").await.unwrap().id;
    let bob = store.create_user("bob").await.unwrap().id;
    store.join_team(&bob, "owls", Role::Member).await.unwrap();
    let session = owned(&*store, "codex", Some(Owner::user(&alice)), 1).await;
    let as_bob = SessionQuery {
        viewer: Some(bob.clone()),
        ..SessionQuery::default()
    };
    assert_eq!(listed(&*store, as_bob.clone()).await, vec![]);

    let summary = store
        .share_session(&session, Some("owls"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(summary.owner, shared(&alice, "owls"));
    assert_eq!(
        store.session(&session).await.unwrap().unwrap().owner,
        summary.owner
    );
    assert_eq!(listed(&*store, as_bob.clone()).await, vec![session.clone()]);

    let summary = store.share_session(&session, None).await.unwrap().unwrap();
    assert_eq!(summary.owner, Some(Owner::user(&alice)));
    assert_eq!(listed(&*store, as_bob).await, vec![]);

    // No such session; a session of no one; a team name that is not one.
    let missing = super::fixtures::session_uri("codex");
    assert_eq!(
        store.share_session(&missing, Some("owls")).await.unwrap(),
        None
    );
    let no_ones = owned(&*store, "codex", None, 2).await;
    let error = store
        .share_session(&no_ones, Some("owls"))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("belongs to no user"), "{error}");
    assert!(store.share_session(&session, Some("a b")).await.is_err());
}

async fn projects_keep_their_owners(store: Arc<dyn Backend>) {
    let project = |id: &str| ProjectRecord {
        id: ProjectId::parse(id).unwrap(),
        folder: format!("/work/{id}").into(),
        name: id.to_owned(),
        created_at: at(0),
        updated_at: at(0),
        trusted_digest: None,
    };
    for id in ["owls", "herons", "larks"] {
        store.insert_project(&project(id)).await.unwrap();
    }
    let owls = ProjectId::parse("owls").unwrap();
    let herons = ProjectId::parse("herons").unwrap();
    assert!(store.project_owners().await.unwrap().is_empty());
    let alice = Owner::user("u-00000000000000aa");
    let team = shared("u-00000000000000bb", "birds").unwrap();
    assert!(store.set_project_owner(&owls, Some(&alice)).await.unwrap());
    assert!(store.set_project_owner(&herons, Some(&team)).await.unwrap());
    let missing = ProjectId::parse("nope").unwrap();
    assert!(
        !store
            .set_project_owner(&missing, Some(&alice))
            .await
            .unwrap()
    );
    assert_eq!(
        store.project_owners().await.unwrap(),
        HashMap::from([(owls.clone(), alice.clone()), (herons.clone(), team)])
    );
    assert!(store.set_project_owner(&herons, None).await.unwrap());
    assert_eq!(
        store.project_owners().await.unwrap(),
        HashMap::from([(owls, alice)])
    );
}

#[tokio::test]
async fn two_nodes_logging_one_identity_in_at_once_make_one_user() {
    let Some((first, second)) = two_nodes().await else {
        return;
    };
    let (first, second) = (Arc::new(first), Arc::new(second));
    for round in 0..8 {
        let subject = format!("subject-{round}");
        let logins = (0..6).map(|index| {
            let node: Arc<PgStore> = if index % 2 == 0 {
                first.clone()
            } else {
                second.clone()
            };
            let subject = subject.clone();
            tokio::spawn(async move {
                node.user_for_identity("https://login.example.org", &subject, "Alice")
                    .await
            })
        });
        let users: Vec<_> = futures::future::join_all(logins)
            .await
            .into_iter()
            .map(|joined| joined.unwrap().unwrap())
            .collect();
        let ids: HashSet<&str> = users.iter().map(|user| user.id.as_str()).collect();
        assert_eq!(ids.len(), 1, "round {round}: {users:?}");
    }
    // Eight identities, eight users, each named after Alice once.
    let names: HashSet<String> = first
        .users()
        .await
        .unwrap()
        .into_iter()
        .map(|user| user.name)
        .collect();
    assert_eq!(names.len(), 8);
    assert!(
        names.contains("Alice") && names.contains("Alice-8"),
        "{names:?}"
    );
}

#[tokio::test]
async fn a_database_of_schema_13_migrates_to_users_keeping_its_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hearth.db");
    {
        let options = sqlx::sqlite::SqliteConnectOptions::new()
            .filename(&path)
            .create_if_missing(true);
        let mut connection = sqlx::SqliteConnection::connect_with(&options)
            .await
            .unwrap();
        for migration in SQLITE_MIGRATIONS_TO_13 {
            sqlx::raw_sql(migration)
                .execute(&mut connection)
                .await
                .unwrap();
        }
        sqlx::raw_sql(
            "PRAGMA user_version = 13;
             INSERT INTO sessions (id, uri, provider, provenance, source, started_at, updated_at)
                 VALUES (1, 'hearth-session:replay/old', 'replay', 'hearth', 'cli', 1700000000000, 1700000000000);
             INSERT INTO projects (id, folder, name, created_at, updated_at)
                 VALUES ('owls', '/work/owls', 'owls', 1700000000000, 1700000000000);",
        )
        .execute(&mut connection)
        .await
        .unwrap();
        connection.close().await.unwrap();
    }
    let store = SqliteStore::open(&path).await.unwrap();
    let old = SessionUri::parse("hearth-session:replay/old").unwrap();
    let session = store.session(&old).await.unwrap().unwrap();
    assert_eq!(session.owner, None);
    assert!(store.project_owners().await.unwrap().is_empty());
    // Unowned, it is no viewer's; the new tables are there.
    let alice = store.create_user("alice").await.unwrap();
    let as_alice = SessionQuery {
        viewer: Some(alice.id),
        ..SessionQuery::default()
    };
    assert_eq!(
        store.list_sessions(&as_alice).await.unwrap().sessions,
        vec![]
    );
    assert_eq!(
        store
            .list_sessions(&SessionQuery::default())
            .await
            .unwrap()
            .sessions,
        vec![session]
    );
}

#[tokio::test]
async fn a_postgres_database_of_schema_13_migrates_to_users_keeping_its_sessions() {
    let Some(url) = hearth_test_support::postgres::fresh_database().await else {
        return;
    };
    {
        let mut connection = sqlx::PgConnection::connect(&url).await.unwrap();
        sqlx::raw_sql(
            "CREATE TABLE hearth_schema (version BIGINT NOT NULL);
             INSERT INTO hearth_schema (version) VALUES (13);",
        )
        .execute(&mut connection)
        .await
        .unwrap();
        for migration in POSTGRES_MIGRATIONS_TO_13 {
            sqlx::raw_sql(migration)
                .execute(&mut connection)
                .await
                .unwrap();
        }
        sqlx::raw_sql(
            "INSERT INTO sessions (uri, provider, provenance, source, started_at, updated_at)
                 VALUES ('hearth-session:replay/old', 'replay', 'hearth', 'cli', 1700000000000, 1700000000000);",
        )
        .execute(&mut connection)
        .await
        .unwrap();
        connection.close().await.unwrap();
    }
    let store = PgStore::connect(&url).await.unwrap();
    let old = SessionUri::parse("hearth-session:replay/old").unwrap();
    let session = store.session(&old).await.unwrap().unwrap();
    assert_eq!(session.owner, None);
    let alice = store.create_user("alice").await.unwrap();
    assert_eq!(store.user("alice").await.unwrap(), Some(alice));
}

const SQLITE_MIGRATIONS_TO_13: [&str; 13] = [
    include_str!("../../migrations/sqlite/0001_init.sql"),
    include_str!("../../migrations/sqlite/0002_tools.sql"),
    include_str!("../../migrations/sqlite/0003_turn_bodies.sql"),
    include_str!("../../migrations/sqlite/0004_working_directories.sql"),
    include_str!("../../migrations/sqlite/0005_audit_keys.sql"),
    include_str!("../../migrations/sqlite/0006_chat_leases.sql"),
    include_str!("../../migrations/sqlite/0007_erase_on_delete.sql"),
    include_str!("../../migrations/sqlite/0008_projects.sql"),
    include_str!("../../migrations/sqlite/0009_chat_queue.sql"),
    include_str!("../../migrations/sqlite/0010_project_trust.sql"),
    include_str!("../../migrations/sqlite/0011_turn_search.sql"),
    include_str!("../../migrations/sqlite/0012_trash.sql"),
    include_str!("../../migrations/sqlite/0013_session_marks.sql"),
];

const POSTGRES_MIGRATIONS_TO_13: [&str; 13] = [
    include_str!("../../migrations/postgres/0001_init.sql"),
    include_str!("../../migrations/postgres/0002_tools.sql"),
    include_str!("../../migrations/postgres/0003_turn_bodies.sql"),
    include_str!("../../migrations/postgres/0004_working_directories.sql"),
    include_str!("../../migrations/postgres/0005_audit_keys.sql"),
    include_str!("../../migrations/postgres/0006_chat_leases.sql"),
    include_str!("../../migrations/postgres/0007_erase_on_delete.sql"),
    include_str!("../../migrations/postgres/0008_projects.sql"),
    include_str!("../../migrations/postgres/0009_chat_queue.sql"),
    include_str!("../../migrations/postgres/0010_project_trust.sql"),
    include_str!("../../migrations/postgres/0011_turn_search.sql"),
    include_str!("../../migrations/postgres/0012_trash.sql"),
    include_str!("../../migrations/postgres/0013_session_marks.sql"),
];
