//! Chats: fork and side chat, restore from the blob, release, dispose, model, metadata.

use hearth_core::{
    ChatId, ChatOrigin, ChatSeed, ChatUri, CreateChatRequest, Harness, HarnessData,
    HarnessErrorKind, Signal, TurnId,
};
use hearth_harness_replay::{ReplayHarness, Scenario};
use pretty_assertions::assert_eq;

use super::support::{attach, context, default_chat, harness, send};

const THREE: &str = r#"
name: three
turns:
  - steps:
      - text: one
  - steps:
      - text: two
  - steps:
      - text: three
"#;

fn peer_of(chat: &ChatUri) -> ChatUri {
    ChatUri::peer(chat.session_ref(), ChatId::generate())
}

#[tokio::test]
async fn a_fork_copies_the_history_through_a_turn_and_goes_on_alone() {
    let (agent, recorder) = harness(THREE, 0.0);
    let source = default_chat(&agent).await;
    let (first, _) = send(&agent, &source, "a").await;
    let (second, _) = send(&agent, &source, "b").await;
    send(&agent, &source, "c").await;

    let seed = ChatSeed::Fork {
        source_chat: source.chat.clone(),
        turn_id: second.clone(),
    };
    let fork = context(
        &peer_of(&source.chat),
        ChatOrigin::Fork {
            source_chat: source.chat.clone(),
            turn_id: second.clone(),
        },
    );
    let conversation = agent
        .create_chat(&fork, CreateChatRequest { seed, title: None })
        .await
        .unwrap();
    assert!(!conversation.provider_data.as_bytes().is_empty());
    let source_history = agent.messages(&source).await.unwrap();
    assert_eq!(
        agent.messages(&fork).await.unwrap(),
        source_history[..2].to_vec()
    );
    let ids: Vec<TurnId> = agent
        .messages(&fork)
        .await
        .unwrap()
        .into_iter()
        .map(|turn| turn.id)
        .collect();
    assert_eq!(ids, vec![first, second]);

    // The fork has two turns, so its next unconditional turn is the third.
    recorder.clear();
    send(&agent, &fork, "d").await;
    assert_eq!(recorder.text(&fork.chat), "three");
    assert_eq!(agent.metadata(&fork).await.unwrap().turn_count, 3);
    assert_eq!(agent.metadata(&source).await.unwrap().turn_count, 3);
}

#[tokio::test]
async fn forking_at_an_unknown_turn_names_it() {
    let (agent, _recorder) = harness(THREE, 0.0);
    let source = default_chat(&agent).await;
    send(&agent, &source, "a").await;
    let missing = TurnId::generate();
    for seed in [
        ChatSeed::Fork {
            source_chat: source.chat.clone(),
            turn_id: missing.clone(),
        },
        ChatSeed::SideChat {
            source_chat: source.chat.clone(),
            turn_id: missing.clone(),
        },
    ] {
        let target = context(&peer_of(&source.chat), ChatOrigin::User);
        let error = agent
            .create_chat(&target, CreateChatRequest { seed, title: None })
            .await
            .unwrap_err();
        assert_eq!(error.kind, HarnessErrorKind::InvalidInput);
        assert!(error.message.contains(missing.as_str()), "{error}");
        assert!(
            agent.messages(&target).await.is_err(),
            "a failed fork left a chat"
        );
    }
    let unknown_source = peer_of(&source.chat);
    let error = agent
        .create_chat(
            &context(&peer_of(&source.chat), ChatOrigin::User),
            CreateChatRequest {
                seed: ChatSeed::Fork {
                    source_chat: unknown_source.clone(),
                    turn_id: missing,
                },
                title: None,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind, HarnessErrorKind::NotFound);
    assert!(
        error.message.contains(&unknown_source.to_string()),
        "{error}"
    );
}

#[tokio::test]
async fn a_side_chat_sees_the_context_but_shows_no_history() {
    let (agent, recorder) = harness(THREE, 0.0);
    let source = default_chat(&agent).await;
    let (first, _) = send(&agent, &source, "a").await;
    send(&agent, &source, "b").await;
    let side = context(
        &peer_of(&source.chat),
        ChatOrigin::SideChat {
            source_chat: source.chat.clone(),
            turn_id: first.clone(),
        },
    );
    let conversation = agent
        .create_chat(
            &side,
            CreateChatRequest {
                seed: ChatSeed::SideChat {
                    source_chat: source.chat.clone(),
                    turn_id: first.clone(),
                },
                title: None,
            },
        )
        .await
        .unwrap();
    assert!(agent.messages(&side).await.unwrap().is_empty());
    assert_eq!(agent.metadata(&side).await.unwrap().turn_count, 0);
    let blob: serde_json::Value = conversation.provider_data.decode().unwrap();
    let hidden = blob["context"].as_array().expect("hidden context");
    assert_eq!(hidden.len(), 1);
    assert_eq!(hidden[0]["id"], first.as_str());

    // Its own history starts empty, so it plays the first unconditional turn.
    recorder.clear();
    send(&agent, &side, "what did they say?").await;
    assert_eq!(recorder.text(&side.chat), "one");
    assert_eq!(agent.messages(&side).await.unwrap().len(), 1);
    assert_eq!(agent.messages(&source).await.unwrap().len(), 2);
}

#[tokio::test]
async fn a_chat_comes_back_from_its_blob_in_a_new_harness() {
    let (agent, recorder) = harness(THREE, 0.0);
    let chat = default_chat(&agent).await;
    send(&agent, &chat, "a").await;
    send(&agent, &chat, "b").await;
    agent.set_model(&chat, "bigger".into()).await.unwrap();
    let blob = recorder.last_blob(&chat.chat);
    let history = agent.messages(&chat).await.unwrap();
    let metadata = agent.metadata(&chat).await.unwrap();
    assert_eq!(metadata.model.as_deref(), Some("bigger"));
    assert_eq!(metadata.title.as_deref(), Some("a"));

    let scenario = Scenario::from_yaml(THREE, "test.yaml").unwrap();
    let (restarted, recorder) = attach(ReplayHarness::new(scenario).with_delay_scale(0.0));
    assert!(restarted.messages(&chat).await.is_err());
    let replacement = restarted.materialize_chat(&chat, Some(blob)).await.unwrap();
    assert_eq!(replacement, None);
    assert_eq!(restarted.messages(&chat).await.unwrap(), history);
    assert_eq!(restarted.metadata(&chat).await.unwrap(), metadata);
    send(&restarted, &chat, "c").await;
    assert_eq!(recorder.text(&chat.chat), "three");
}

#[tokio::test]
async fn missing_or_garbled_blobs_are_clear_errors() {
    let (agent, _recorder) = harness(THREE, 0.0);
    let chat = context(
        &peer_of(&ChatUri::default_for(&super::support::session())),
        ChatOrigin::User,
    );
    let error = agent.materialize_chat(&chat, None).await.unwrap_err();
    assert_eq!(error.kind, HarnessErrorKind::NotFound);
    assert!(error.message.contains("no stored provider data"), "{error}");
    for garbage in [
        b"".to_vec(),
        b"\xff\xfe".to_vec(),
        b"{\"format\": 1}".to_vec(),
        b"[1, 2]".to_vec(),
    ] {
        let error = agent
            .materialize_chat(&chat, Some(HarnessData::from_bytes(garbage)))
            .await
            .unwrap_err();
        assert_eq!(error.kind, HarnessErrorKind::InvalidInput, "{error}");
        assert!(error.message.contains(&chat.chat.to_string()), "{error}");
    }
    assert!(agent.messages(&chat).await.is_err());
}

#[tokio::test]
async fn a_live_chat_without_a_stored_blob_gives_its_own_back() {
    let (agent, _recorder) = harness(THREE, 0.0);
    let chat = default_chat(&agent).await;
    send(&agent, &chat, "a").await;
    let recovered = agent.materialize_chat(&chat, None).await.unwrap();
    let blob: serde_json::Value = recovered.expect("a blob").decode().unwrap();
    assert_eq!(blob["history"].as_array().map(Vec::len), Some(1));
}

#[tokio::test]
async fn release_drops_live_state_and_materialize_brings_it_back() {
    let (agent, recorder) = harness(THREE, 0.0);
    let chat = default_chat(&agent).await;
    send(&agent, &chat, "a").await;
    let blob = recorder.last_blob(&chat.chat);
    let history = agent.messages(&chat).await.unwrap();
    agent.release_chat(&chat).await.unwrap();
    let error = agent.messages(&chat).await.unwrap_err();
    assert_eq!(error.kind, HarnessErrorKind::NotFound);
    agent.materialize_chat(&chat, Some(blob)).await.unwrap();
    assert_eq!(agent.messages(&chat).await.unwrap(), history);
}

#[tokio::test]
async fn a_disposed_chat_is_forgotten() {
    let (agent, _recorder) = harness(THREE, 0.0);
    let chat = default_chat(&agent).await;
    send(&agent, &chat, "a").await;
    agent.dispose_chat(&chat).await.unwrap();
    assert_eq!(
        agent.messages(&chat).await.unwrap_err().kind,
        HarnessErrorKind::NotFound
    );
    assert_eq!(
        agent.metadata(&chat).await.unwrap_err().kind,
        HarnessErrorKind::NotFound
    );
    assert_eq!(
        agent.set_model(&chat, "x".into()).await.unwrap_err().kind,
        HarnessErrorKind::NotFound
    );
    let error = agent
        .send(
            &chat,
            TurnId::generate(),
            hearth_core::UserMessage::text("b"),
        )
        .await
        .unwrap_err();
    assert_eq!(error.kind, HarnessErrorKind::NotFound);
    assert!(error.message.contains(&chat.chat.to_string()), "{error}");
    // Disposing again is harmless.
    agent.dispose_chat(&chat).await.unwrap();
}

#[tokio::test]
async fn set_model_is_recorded_in_the_blob() {
    let (agent, recorder) = harness(THREE, 0.0);
    let chat = default_chat(&agent).await;
    assert_eq!(
        agent.metadata(&chat).await.unwrap().model.as_deref(),
        Some("three")
    );
    agent
        .set_model(&chat, "scripted-large".into())
        .await
        .unwrap();
    let signals = recorder.signals(&chat.chat);
    assert!(matches!(
        signals.last(),
        Some(Signal::ProviderDataChanged { .. })
    ));
    let blob: serde_json::Value = recorder.last_blob(&chat.chat).decode().unwrap();
    assert_eq!(blob["model"], "scripted-large");
}

#[tokio::test]
async fn a_chat_not_held_is_refused_in_the_replay_harness_words() {
    let (agent, _recorder) = harness(THREE, 0.0);
    let chat = default_chat(&agent).await;
    agent.dispose_chat(&chat).await.unwrap();
    let refusals = [
        agent.messages(&chat).await.map(drop),
        agent.metadata(&chat).await.map(drop),
        agent.set_model(&chat, "x".into()).await,
        agent.abort(&chat).await,
        agent
            .send(
                &chat,
                TurnId::generate(),
                hearth_core::UserMessage::text("b"),
            )
            .await
            .map(drop),
    ];
    for refusal in refusals {
        let error = refusal.unwrap_err();
        assert_eq!(error.kind, HarnessErrorKind::NotFound);
        assert_eq!(
            error.message,
            format!(
                "chat `{}` is not open in the replay harness (it was disposed or released, or \
                 never created here); materialize it from its stored provider data first",
                chat.chat
            )
        );
    }
}

#[tokio::test]
async fn the_stored_blob_leads_with_its_layout_version() {
    let (agent, _recorder) = harness(THREE, 0.0);
    let chat = default_chat(&agent).await;
    let blob = agent.materialize_chat(&chat, None).await.unwrap().unwrap();
    let text = String::from_utf8(blob.into_bytes()).unwrap();
    assert!(
        text.starts_with(r#"{"format":1,"scenario":"three","#),
        "{text}"
    );
    assert_eq!(text.matches("\"format\"").count(), 1, "{text}");
}
