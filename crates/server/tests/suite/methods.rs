//! The methods the streaming tests do not reach: peer chats, forks, drafts, models,
//! disposal, permission answers and the provider checks — each through the real router.

use hearth_config::Config;
use hearth_core::{ChatUri, PermissionOption, PermissionOptionKind, Signal, TurnId};
use hearth_protocol::{
    self as wire, ChatCreate, ChatCreateParams, ChatDispose, ChatParams, ChatResolve, ChatSeed,
    ChatSetDraft, ChatSetDraftParams, ChatSetMode, ChatSetModeParams, ChatSetModel,
    ChatSetModelParams, ErrorKind, PermissionList, PermissionListParams, PermissionRespond,
    PermissionRespondParams, ProviderList, ProviderListParams, ProviderTest, ProviderTestOutcome,
    ProviderTestParams, SessionDispose, SessionDisposeParams, SessionFork, SessionForkParams,
    SessionList, SessionListParams, Subscribe, SubscribeParams,
};
use hearth_server::{Client, ServerError};
use hearth_test_support::{Call, MockModelServer, MockResponse};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{Setup, TestServer, create_session, next_envelope, send, until_completed};

fn rpc_error(error: ServerError) -> wire::RpcError {
    match error {
        ServerError::Rpc(error) => error,
        other => panic!("expected an error response, got {other}"),
    }
}

/// A session whose default chat has one finished turn: (session, chat, turn).
async fn session_with_a_turn(server: &TestServer, client: &Client) -> (String, String, String) {
    let session = create_session(client).await;
    let chat = session.chats[0].summary.uri.clone();
    let turn_id = send(client, &chat, "hello").await;
    let chat_uri = ChatUri::parse(&chat).unwrap();
    server.fake.wait_for_send(&chat_uri).await;
    server.fake.finish_ok(&chat_uri);
    // The turn is finished once the chat resolves without a running turn.
    let deadline = tokio::time::Instant::now() + super::support::WAIT;
    loop {
        let resolved = client
            .call::<ChatResolve>(&ChatParams { chat: chat.clone() })
            .await
            .unwrap();
        if resolved
            .chat
            .turns
            .iter()
            .all(|turn| turn.stop_reason.is_some())
        {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the turn in {chat} never finished"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    (session.summary.uri, chat, turn_id)
}

#[tokio::test]
async fn peer_chats_are_created_forked_drafted_and_disposed() {
    let server = TestServer::start().await;
    let (client, _notifications) = server.client().await;
    let (session, chat, turn_id) = session_with_a_turn(&server, &client).await;

    let fresh = client
        .call::<ChatCreate>(&ChatCreateParams {
            session: session.clone(),
            seed: ChatSeed::Fresh,
        })
        .await
        .unwrap()
        .chat;
    assert_eq!(fresh.origin, wire::ChatOrigin::User);
    let fork = client
        .call::<ChatCreate>(&ChatCreateParams {
            session: session.clone(),
            seed: ChatSeed::Fork {
                source_chat: chat.clone(),
                turn_id: turn_id.clone(),
            },
        })
        .await
        .unwrap()
        .chat;
    assert_eq!(
        fork.origin,
        wire::ChatOrigin::Fork {
            source_chat: chat.clone(),
            turn_id: turn_id.clone()
        }
    );
    let forked = client
        .call::<ChatResolve>(&ChatParams {
            chat: fork.uri.clone(),
        })
        .await
        .unwrap();
    assert_eq!(forked.chat.turns.len(), 1, "the fork copies the turn");
    assert_eq!(forked.chat.turns[0].user.text, "hello");

    client
        .call::<ChatSetModel>(&ChatSetModelParams {
            chat: fresh.uri.clone(),
            model: "bigger-model".into(),
        })
        .await
        .unwrap();
    let fresh_uri = ChatUri::parse(&fresh.uri).unwrap();
    assert!(
        server
            .fake
            .calls()
            .contains(&Call::SetModel(fresh_uri.clone(), "bigger-model".into())),
        "{:?}",
        server.fake.calls()
    );

    client
        .call::<ChatSetDraft>(&ChatSetDraftParams {
            chat: fresh.uri.clone(),
            draft: Some("half a thought".into()),
        })
        .await
        .unwrap();
    let drafted = client
        .call::<ChatResolve>(&ChatParams {
            chat: fresh.uri.clone(),
        })
        .await
        .unwrap();
    assert_eq!(drafted.chat.draft.as_deref(), Some("half a thought"));

    client
        .call::<ChatDispose>(&ChatParams {
            chat: fresh.uri.clone(),
        })
        .await
        .unwrap();
    assert!(server.fake.calls().contains(&Call::Dispose(fresh_uri)));
    let gone = client
        .call::<ChatResolve>(&ChatParams { chat: fresh.uri })
        .await
        .unwrap_err();
    assert_eq!(rpc_error(gone).kind(), ErrorKind::NotFound);
    let subscribed = client
        .call::<Subscribe>(&SubscribeParams {
            resource: session,
            last_seq: None,
            turn_limit: None,
        })
        .await
        .unwrap();
    let wire::SubscribeResponse::Snapshot { snapshot } = subscribed else {
        panic!("expected a snapshot")
    };
    let wire::ResourceState::Session(state) = snapshot.state else {
        panic!("not a session")
    };
    let chats: Vec<&str> = state
        .chats
        .iter()
        .map(|listing| listing.summary.uri.as_str())
        .collect();
    assert_eq!(chats, [chat.as_str(), fork.uri.as_str()]);
}

/// `chat/setMode` reaches the chat's harness with the mode asked for; a chat URI that
/// does not parse is refused as invalid params, naming the field.
#[tokio::test]
async fn a_mode_switch_reaches_the_harness() {
    let server = TestServer::start().await;
    let (client, _notifications) = server.client().await;
    let session = create_session(&client).await;
    let chat = session.chats[0].summary.uri.clone();
    client
        .call::<ChatSetMode>(&ChatSetModeParams {
            chat: chat.clone(),
            mode: "code".into(),
        })
        .await
        .unwrap();
    assert!(
        server.fake.calls().contains(&Call::SetMode(
            ChatUri::parse(&chat).unwrap(),
            "code".into()
        )),
        "{:?}",
        server.fake.calls()
    );
    let error = rpc_error(
        client
            .call::<ChatSetMode>(&ChatSetModeParams {
                chat: "not a chat".into(),
                mode: "code".into(),
            })
            .await
            .unwrap_err(),
    );
    assert_eq!(error.kind(), ErrorKind::InvalidParams, "{error:?}");
    assert!(error.message.contains("chat"), "{}", error.message);
}

#[tokio::test]
async fn sessions_are_forked_at_a_turn_and_disposed() {
    let server = TestServer::start().await;
    let (client, _notifications) = server.client().await;
    let (session, _chat, turn_id) = session_with_a_turn(&server, &client).await;

    let forked = client
        .call::<SessionFork>(&SessionForkParams {
            session: session.clone(),
            turn_id,
        })
        .await
        .unwrap()
        .session;
    assert_ne!(forked.summary.uri, session);
    let default_chat = forked.chats[0].summary.uri.clone();
    let copied = client
        .call::<ChatResolve>(&ChatParams { chat: default_chat })
        .await
        .unwrap();
    assert_eq!(copied.chat.turns.len(), 1);
    assert_eq!(copied.chat.turns[0].user.text, "hello");

    client
        .call::<SessionDispose>(&SessionDisposeParams {
            session: session.clone(),
        })
        .await
        .unwrap();
    let listed = client
        .call::<SessionList>(&SessionListParams::default())
        .await
        .unwrap();
    let uris: Vec<&str> = listed.sessions.iter().map(|s| s.uri.as_str()).collect();
    assert_eq!(uris, [forked.summary.uri.as_str()]);
    let again = client
        .call::<SessionDispose>(&SessionDisposeParams { session })
        .await
        .unwrap_err();
    assert_eq!(rpc_error(again).kind(), ErrorKind::Gone);
}

#[tokio::test]
async fn a_permission_answer_reaches_the_harness_and_is_folded_in() {
    let server = TestServer::start().await;
    let (client, mut notifications) = server.client().await;
    let session = create_session(&client).await;
    let chat = session.chats[0].summary.uri.clone();
    client
        .call::<Subscribe>(&SubscribeParams {
            resource: chat.clone(),
            last_seq: None,
            turn_limit: None,
        })
        .await
        .unwrap();
    let turn_id = send(&client, &chat, "delete the old files").await;
    let chat_uri = ChatUri::parse(&chat).unwrap();
    server.fake.wait_for_send(&chat_uri).await;
    server
        .fake
        .progress(
            &chat_uri,
            Signal::PermissionRequested {
                turn_id: TurnId::parse(&turn_id).unwrap(),
                request_id: "perm-1".into(),
                title: "Delete 3 files?".into(),
                options: vec![
                    PermissionOption {
                        id: "allow".into(),
                        label: "Allow".into(),
                        kind: Some(PermissionOptionKind::AllowOnce),
                    },
                    PermissionOption {
                        id: "deny".into(),
                        label: "Deny".into(),
                        kind: Some(PermissionOptionKind::RejectOnce),
                    },
                ],
                tool_call_id: None,
            },
        )
        .await;
    loop {
        let envelope = next_envelope(&mut notifications).await;
        if matches!(
            envelope.action,
            wire::Action::PartAdded {
                part: wire::ResponsePart::PermissionRequest { .. },
                ..
            }
        ) {
            break;
        }
    }
    let listed = client
        .call::<PermissionList>(&PermissionListParams {})
        .await
        .unwrap();
    assert_eq!(listed.permissions.len(), 1, "{listed:?}");
    assert_eq!(listed.permissions[0].chat, chat);
    assert_eq!(listed.permissions[0].request_id, "perm-1");
    assert_eq!(
        listed.permissions[0].options[1].kind,
        Some(wire::PermissionOptionKind::RejectOnce)
    );
    let answer = |request: &str, option: &str| PermissionRespondParams {
        chat: chat.clone(),
        request_id: request.into(),
        option_id: option.into(),
        by_policy: false,
    };
    let unknown_option = client
        .call::<PermissionRespond>(&answer("perm-1", "always"))
        .await
        .unwrap_err();
    let unknown_option = rpc_error(unknown_option);
    assert_eq!(unknown_option.kind(), ErrorKind::InvalidParams);
    assert!(
        unknown_option.message.contains("allow, deny"),
        "{unknown_option:?}"
    );
    let unknown_request = client
        .call::<PermissionRespond>(&answer("perm-9", "allow"))
        .await
        .unwrap_err();
    assert_eq!(rpc_error(unknown_request).kind(), ErrorKind::NotFound);

    client
        .call::<PermissionRespond>(&answer("perm-1", "deny"))
        .await
        .unwrap();
    assert!(server.fake.calls().contains(&Call::RespondPermission(
        chat_uri.clone(),
        "perm-1".into(),
        "deny".into()
    )));
    server.fake.finish_ok(&chat_uri);
    let envelopes = until_completed(&mut notifications, &turn_id).await;
    assert!(
        envelopes.iter().any(|envelope| matches!(
            &envelope.action,
            wire::Action::PermissionResolved { request_id, outcome, .. }
                if request_id == "perm-1" && outcome == "deny"
        )),
        "{envelopes:?}"
    );
    let answered_twice = client
        .call::<PermissionRespond>(&answer("perm-1", "allow"))
        .await
        .unwrap_err();
    assert_eq!(rpc_error(answered_twice).kind(), ErrorKind::NotFound);
    let listed = client
        .call::<PermissionList>(&PermissionListParams {})
        .await
        .unwrap();
    assert!(listed.permissions.is_empty(), "{listed:?}");
}

#[tokio::test]
async fn providers_are_listed_and_tested_without_their_keys() {
    let models = MockModelServer::start().await.unwrap();
    models.set_fallback(MockResponse::json(
        200,
        &json!({"object": "list", "data": [{"id": "local-model", "object": "model"}]}),
    ));
    let config = Config::parse(
        &format!(
            "[providers.lab]\nkind = \"openai\"\nbase_url = \"{}/v1\"\napi_key = \"sk-lab-secret-4242\"\ndefault_model = \"local-model\"\n",
            models.url()
        ),
        std::path::Path::new("config.toml"),
    )
    .unwrap();
    let server = TestServer::start_with(Setup {
        config,
        ..Setup::default()
    })
    .await;
    let (client, _notifications) = server.client().await;

    let listed = client
        .call::<ProviderList>(&ProviderListParams {})
        .await
        .unwrap();
    let lab = listed
        .providers
        .iter()
        .find(|provider| provider.id == "lab")
        .unwrap_or_else(|| panic!("lab missing from {listed:?}"));
    assert_eq!(lab.protocol, "openai");
    assert_eq!(lab.base_url, format!("{}/v1", models.url()));
    assert_eq!(lab.default_model.as_deref(), Some("local-model"));

    assert!(
        !format!("{listed:?}").contains("sk-lab-secret-4242"),
        "{listed:?}"
    );

    // The check lists the models, then asks the default model for one token.
    models.enqueue_for(
        "/v1/chat/completions",
        hearth_test_support::OpenAiStream::text_answer("local-model", &["p"], 1, 1),
    );
    let tested = client
        .call::<ProviderTest>(&ProviderTestParams {
            provider: Some("lab".into()),
        })
        .await
        .unwrap();
    assert_eq!(tested.results.len(), 1);
    assert_eq!(tested.results[0].provider, "lab");
    match &tested.results[0].outcome {
        ProviderTestOutcome::Ok { models, .. } => assert_eq!(models, &["local-model"]),
        other => panic!("expected the check to pass, got {other:?}"),
    }
    assert!(!format!("{tested:?}").contains("sk-lab-secret-4242"));
    let asked = models.requests();
    let check = asked
        .iter()
        .find(|request| request.path.ends_with("/models"))
        .expect("the check asked the server");
    assert_eq!(
        check.header("authorization"),
        Some("Bearer sk-lab-secret-4242")
    );

    let unknown = client
        .call::<ProviderTest>(&ProviderTestParams {
            provider: Some("nope".into()),
        })
        .await
        .unwrap_err();
    assert_eq!(rpc_error(unknown).kind(), ErrorKind::NotFound);
}

#[tokio::test]
async fn compacting_a_chat_whose_agent_manages_its_own_context_is_refused_saying_so() {
    let server = TestServer::start().await;
    let (client, _notifications) = server.client().await;
    let (_session, chat, _turn) = session_with_a_turn(&server, &client).await;
    let refused = rpc_error(
        client
            .call::<wire::ChatCompact>(&ChatParams { chat: chat.clone() })
            .await
            .unwrap_err(),
    );
    assert_eq!(refused.kind(), ErrorKind::Unsupported, "{refused:?}");
    assert!(
        refused.message.contains(&chat) && refused.message.contains("//compact"),
        "{}",
        refused.message
    );
    let bad = rpc_error(
        client
            .call::<wire::ChatCompact>(&ChatParams {
                chat: "not a chat".into(),
            })
            .await
            .unwrap_err(),
    );
    assert_eq!(bad.kind(), ErrorKind::InvalidParams, "{bad:?}");
}
