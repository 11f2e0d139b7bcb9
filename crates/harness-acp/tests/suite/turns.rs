//! What a turn shows: tool calls with their title, kind and result, plans, reasoning,
//! stop reasons, the commands and models the agent offers, a model switch, attachments
//! as the agent accepts them.

use hearth_core::{
    Action, Attachment, ChatUri, PlanStatus, ResponsePart, StopReason, ToolCallStatus, ToolKind,
    UserMessage,
};
use hearth_test_support::TestHost;
use pretty_assertions::assert_eq;

use super::support::{Setup, finish, last_answer, send, session};

#[tokio::test]
async fn tool_calls_plans_and_reasoning_reach_the_turn() {
    let setup = Setup::new();
    let test = TestHost::start(setup.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    for prompt in ["/tool", "/plan", "/think"] {
        let (turn_id, mut subscription) = send(&test.host, &chat, prompt).await;
        let (_, reason) = finish(&mut subscription, &turn_id).await;
        assert_eq!(reason, StopReason::EndTurn, "{prompt}");
    }
    let state = test.host.chat(&chat).await.unwrap();
    let call = state.turns[0]
        .parts
        .iter()
        .find_map(|part| match part {
            ResponsePart::ToolCall(call) => Some(call.clone()),
            _ => None,
        })
        .expect("a tool call");
    assert_eq!(call.title.as_deref(), Some("Look something up"));
    assert_eq!(call.kind, Some(ToolKind::Fetch));
    assert_eq!(call.status, ToolCallStatus::Completed);
    assert_eq!(
        call.result.as_ref().map(|result| result.content.as_str()),
        Some("found it")
    );
    let plan = state.turns[1]
        .parts
        .iter()
        .find_map(|part| match part {
            ResponsePart::Plan { entries } => Some(entries.clone()),
            _ => None,
        })
        .expect("a plan");
    assert_eq!(
        plan.iter().map(|entry| entry.status).collect::<Vec<_>>(),
        vec![
            PlanStatus::Pending,
            PlanStatus::InProgress,
            PlanStatus::Completed
        ]
    );
    assert!(matches!(
        &state.turns[2].parts[0],
        ResponsePart::Reasoning { text } if text == "thinking 1\nthinking 2\n"
    ));
    assert_eq!(state.turns[2].response_text(), "thought it through");
}

#[tokio::test]
async fn stop_reasons_are_the_agents() {
    let setup = Setup::new();
    let test = TestHost::start(setup.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    for (prompt, expected) in [
        ("/refuse", StopReason::Refusal),
        ("/max", StopReason::MaxTokens),
    ] {
        let (turn_id, mut subscription) = send(&test.host, &chat, prompt).await;
        let (_, reason) = finish(&mut subscription, &turn_id).await;
        assert_eq!(reason, expected, "{prompt}");
    }
}

#[tokio::test]
async fn the_agents_commands_and_models_are_shown_and_the_model_can_be_switched() {
    let setup = Setup::new();
    let test = TestHost::start(setup.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    let (turn_id, mut subscription) = send(&test.host, &chat, "hi").await;
    let (envelopes, _) = finish(&mut subscription, &turn_id).await;
    assert!(
        envelopes
            .iter()
            .any(|envelope| matches!(envelope.action, Action::AgentStateChanged { .. }))
    );
    let state = test.host.chat(&chat).await.unwrap();
    let agent = state.agent.expect("the agent's state");
    assert_eq!(
        agent
            .commands
            .iter()
            .map(|command| command.name.as_str())
            .collect::<Vec<_>>(),
        vec!["slow", "settings", "write", "read"]
    );
    let models = agent.models.expect("models");
    assert_eq!(models.current, "test-small");
    assert_eq!(state.summary.model.as_deref(), Some("test-small"));

    let error = test
        .host
        .set_model(&chat, "no-such-model".into())
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("test-small, test-large"),
        "{error}"
    );
    test.host
        .set_model(&chat, "test-large".into())
        .await
        .unwrap();
    test.host.flush().await;
    let state = test.host.chat(&chat).await.unwrap();
    assert_eq!(state.summary.model.as_deref(), Some("test-large"));
    assert_eq!(state.agent.unwrap().models.unwrap().current, "test-large");
}

#[tokio::test]
async fn attachments_are_embedded_when_the_agent_accepts_them() {
    let setup = Setup::new();
    let file = setup.work().join("notes.md");
    std::fs::write(&file, "# Notes\nremember the milk").unwrap();
    let test = TestHost::start(setup.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    let message = UserMessage {
        text: "summarize".into(),
        attachments: vec![Attachment {
            name: "notes.md".into(),
            media_type: "text/markdown".into(),
            uri: file.display().to_string(),
        }],
        context: Vec::new(),
    };
    let (turn_id, mut subscription) = test.host.send_streaming(&chat, message).await.unwrap();
    finish(&mut subscription, &turn_id).await;
    let answer = last_answer(&test.host, &chat).await;
    assert!(answer.contains("remember the milk"), "{answer}");
    assert!(answer.contains("[attachments: 1 resources"), "{answer}");

    // An agent that takes no embedded context gets a link instead.
    let plain = Setup::with_env(&[("HEARTH_TEST_AGENT_CAPS", "load")]);
    let test = TestHost::start(plain.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &plain.work()).await);
    let message = UserMessage {
        text: "summarize".into(),
        attachments: vec![Attachment {
            name: "notes.md".into(),
            media_type: "text/markdown".into(),
            uri: file.display().to_string(),
        }],
        context: Vec::new(),
    };
    let (turn_id, mut subscription) = test.host.send_streaming(&chat, message).await.unwrap();
    finish(&mut subscription, &turn_id).await;
    let answer = last_answer(&test.host, &chat).await;
    assert!(!answer.contains("remember the milk"), "{answer}");
    assert!(answer.contains("[link notes.md"), "{answer}");
}

#[tokio::test]
async fn a_fork_hands_the_copied_history_to_the_agent() {
    let setup = Setup::new();
    let test = TestHost::start(setup.agents()).await;
    let session = session(&test.host, &setup.work()).await;
    let chat = ChatUri::default_for(&session);
    let (first, mut subscription) = send(&test.host, &chat, "the secret word is heron").await;
    finish(&mut subscription, &first).await;
    let (second, mut subscription) = send(&test.host, &chat, "and the number is 7").await;
    finish(&mut subscription, &second).await;
    let fork = test
        .host
        .create_chat(
            &session,
            hearth_core::ChatSeed::Fork {
                source_chat: chat.clone(),
                turn_id: first,
            },
        )
        .await
        .unwrap();
    let (turn_id, mut subscription) = send(&test.host, &fork, "what was the word?").await;
    finish(&mut subscription, &turn_id).await;
    // The test agent echoes its prompt: the fork's first prompt carries the history
    // through the forked turn, and not what came after it.
    let answer = last_answer(&test.host, &fork).await;
    assert!(answer.contains("the secret word is heron"), "{answer}");
    assert!(!answer.contains("the number is 7"), "{answer}");
    assert!(answer.contains("what was the word?"), "{answer}");
    // Only the first prompt carries it.
    let (turn_id, mut subscription) = send(&test.host, &fork, "again").await;
    finish(&mut subscription, &turn_id).await;
    assert_eq!(last_answer(&test.host, &fork).await, "echo: again");
}

#[tokio::test]
async fn what_the_agent_says_outside_a_turn_is_recorded_as_a_turn_of_its_own() {
    let setup = Setup::new();
    let test = TestHost::start(setup.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    let mut subscription = test
        .host
        .subscribe(&hearth_core::ResourceUri::Chat(chat.clone()))
        .await
        .unwrap();
    let turn_id = test
        .host
        .send(&chat, UserMessage::text("/later afterthought"))
        .await
        .unwrap();
    finish(&mut subscription, &turn_id).await;
    // A turn the agent started on its own, with what it said, ended once it went quiet.
    let (ambient, text) = loop {
        let envelope = hearth_test_support::next_envelope(&mut subscription.receiver).await;
        if let Action::TurnStarted { turn } = envelope.action {
            let (envelopes, reason) = finish(&mut subscription, &turn.id).await;
            assert_eq!(reason, StopReason::EndTurn);
            let text: String = envelopes
                .iter()
                .filter_map(|envelope| match &envelope.action {
                    Action::TextDelta { text, .. } => Some(text.as_str()),
                    _ => None,
                })
                .collect();
            break (turn, text);
        }
    };
    assert_eq!(text, "afterthought");
    assert_eq!(ambient.user.text, "");
    test.host.flush().await;
    let stored = test.store.turns(&chat).await.unwrap();
    assert_eq!(stored.len(), 2);
    assert_eq!(stored[1].response_text(), "afterthought");
}

/// A scope seam that gives every turn the same instructions, as a project would.
struct Instructions {
    agents_file: Option<std::path::PathBuf>,
}

impl hearth_core::Scopes for Instructions {
    fn session_directories<'a>(
        &'a self,
        _scope: &'a hearth_core::Scope,
    ) -> futures::future::BoxFuture<
        'a,
        Result<Option<Vec<std::path::PathBuf>>, hearth_core::ScopeUnavailable>,
    > {
        Box::pin(async { Ok(None) })
    }

    fn prepare_turn<'a>(
        &'a self,
        _scope: &'a hearth_core::Scope,
    ) -> futures::future::BoxFuture<'a, Result<hearth_core::ScopeTurn, hearth_core::ScopeUnavailable>>
    {
        let agents_file = self.agents_file.clone();
        Box::pin(async move {
            Ok(hearth_core::ScopeTurn {
                customizations: Some(hearth_core::Customizations {
                    instructions: Some("Cite every source.".into()),
                    enabled_tools: Vec::new(),
                    agents_file,
                }),
            })
        })
    }

    fn first_prompt_context<'a>(
        &'a self,
        _scope: &'a hearth_core::Scope,
    ) -> futures::future::BoxFuture<'a, Option<String>> {
        Box::pin(async { None })
    }
}

async fn first_two_answers(
    setup: &Setup,
    reads_agents_file: bool,
    agents_file: Option<std::path::PathBuf>,
) -> (String, String) {
    let spec = hearth_harness_acp::AgentSpec {
        reads_agents_file,
        ..setup.spec()
    };
    let agents: Vec<std::sync::Arc<dyn hearth_core::Harness>> = vec![std::sync::Arc::new(
        hearth_harness_acp::AcpHarness::new(spec, setup.options()),
    )];
    let config = hearth_host::HostConfig {
        scopes: hearth_host::ScopeSeam(Some(std::sync::Arc::new(Instructions { agents_file }))),
        ..hearth_test_support::test_config()
    };
    let test = TestHost::start_with(agents, config).await;
    let session = session(&test.host, &setup.work()).await;
    let chat = ChatUri::default_for(&session);
    let (first, mut subscription) = send(&test.host, &chat, "hello").await;
    finish(&mut subscription, &first).await;
    let first = last_answer(&test.host, &chat).await;
    let (second, mut subscription) = send(&test.host, &chat, "again").await;
    finish(&mut subscription, &second).await;
    (first, last_answer(&test.host, &chat).await)
}

#[tokio::test]
async fn a_scopes_instructions_come_with_the_first_prompt_unless_the_agent_reads_them() {
    let setup = Setup::new();
    let mirror = setup.work().join("AGENTS.md");
    // An agent that does not read AGENTS.md gets them before its first prompt, once.
    let (first, second) = first_two_answers(&setup, false, Some(mirror.clone())).await;
    assert_eq!(
        first,
        "echo: <project_instructions>\nCite every source.\n</project_instructions>\n\nhello"
    );
    assert_eq!(second, "echo: again");
    // One that reads AGENTS.md, where Hearth mirrored them, is not told twice.
    let (first, _) = first_two_answers(&setup, true, Some(mirror)).await;
    assert_eq!(first, "echo: hello");
    // Without a mirror (the user's own AGENTS.md is there), even that agent gets them.
    let (first, _) = first_two_answers(&setup, true, None).await;
    assert!(first.contains("Cite every source."), "{first}");
}

#[tokio::test]
async fn an_agents_own_compaction_is_shown_in_its_turn_and_hearth_does_not_compact_for_it() {
    let setup = Setup::new();
    let test = TestHost::start(setup.agents()).await;
    let chat = ChatUri::default_for(&session(&test.host, &setup.work()).await);
    let (turn_id, mut subscription) = send(&test.host, &chat, "/compact").await;
    let (_, reason) = finish(&mut subscription, &turn_id).await;
    assert_eq!(reason, StopReason::EndTurn);
    let state = test.host.chat(&chat).await.unwrap();
    assert_eq!(
        state.turns[0].parts,
        vec![
            ResponsePart::Compaction {
                turns: None,
                summary: "The user tried the test agent's commands.".into(),
            },
            ResponsePart::Text {
                text: "compacted".into()
            },
        ]
    );

    let refused = test.host.compact(&chat).await.unwrap_err().to_string();
    assert!(
        refused.contains("its agent manages its own context") && refused.contains("//compact"),
        "{refused}"
    );
}
