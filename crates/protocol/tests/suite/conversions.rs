use hearth_core::{
    self as core, ChatOrigin, ChatSummary, ChatUri, PermissionOption, PlanEntry, PlanStatus,
    ProposalId, ResponsePart, SessionUri, StopReason, ToolCallPart, ToolCallStatus, ToolResult,
    Turn, TurnId, Usage, UserMessage, now,
};
use hearth_protocol as wire;
use pretty_assertions::assert_eq;
use serde_json::json;

fn chat_summary(chat: &ChatUri) -> ChatSummary {
    ChatSummary {
        uri: chat.clone(),
        origin: ChatOrigin::Fork {
            source_chat: chat.clone(),
            turn_id: TurnId::parse("t0").unwrap(),
        },
        title: Some("Plans".into()),
        model: None,
        created_at: now(),
        updated_at: now(),
    }
}

fn every_action(chat: &ChatUri) -> Vec<core::Action> {
    let turn_id = TurnId::parse("t1").unwrap();
    let mut turn = Turn::started(turn_id.clone(), UserMessage::text("hello"), now());
    turn.parts.push(ResponsePart::Text { text: "x".into() });
    vec![
        core::Action::ChatAdded {
            chat: chat_summary(chat),
        },
        core::Action::ChatActivity {
            chat: chat.clone(),
            running: true,
        },
        core::Action::TurnStarted { turn },
        core::Action::TextDelta {
            turn_id: turn_id.clone(),
            text: "Hel".into(),
        },
        core::Action::ReasoningDelta {
            turn_id: turn_id.clone(),
            text: "hmm".into(),
        },
        core::Action::ToolCallStarted {
            turn_id: turn_id.clone(),
            call: ToolCallPart {
                call_id: "c1".into(),
                name: "web_fetch".into(),
                arguments: json!({"url": "https://example.org"}),
                status: ToolCallStatus::Running,
                result: None,
                title: Some("Fetch example.org".into()),
                kind: Some(core::ToolKind::Fetch),
                locations: vec![core::ToolLocation {
                    path: "/work/a.txt".into(),
                    line: Some(3),
                }],
                content: vec![
                    core::ToolCallContent::Text { text: "t".into() },
                    core::ToolCallContent::Diff {
                        path: "/work/a.txt".into(),
                        old_text: None,
                        new_text: "new".into(),
                    },
                    core::ToolCallContent::Terminal {
                        terminal_id: "term-1".into(),
                    },
                ],
            },
        },
        core::Action::ToolCallUpdated {
            turn_id: turn_id.clone(),
            call_id: "c1".into(),
            status: ToolCallStatus::Completed,
            result: Some(ToolResult {
                content: "ok".into(),
                is_error: false,
            }),
            patch: core::ToolCallPatch {
                title: Some("Fetched".into()),
                kind: Some(core::ToolKind::Read),
                locations: Some(Vec::new()),
                content: Some(vec![core::ToolCallContent::Diff {
                    path: "/work/b.txt".into(),
                    old_text: Some("old".into()),
                    new_text: "new".into(),
                }]),
                arguments: Some(json!({"url": "https://example.com"})),
            },
        },
        core::Action::AgentStateChanged {
            state: core::AgentChatState {
                commands: vec![core::AvailableCommand {
                    name: "review".into(),
                    description: "Review the change".into(),
                    input_hint: Some("what to review".into()),
                }],
                modes: Some(core::ChoiceState {
                    current: "ask".into(),
                    choices: vec![core::Choice {
                        id: "ask".into(),
                        name: "Ask".into(),
                        description: None,
                    }],
                }),
                models: None,
            },
        },
        core::Action::PlanUpdated {
            turn_id: turn_id.clone(),
            entries: vec![PlanEntry {
                content: "do it".into(),
                status: PlanStatus::InProgress,
            }],
        },
        core::Action::PartAdded {
            turn_id: turn_id.clone(),
            part: ResponsePart::Proposal {
                proposal_id: ProposalId::parse("p1").unwrap(),
                summary: "Create event".into(),
            },
        },
        core::Action::PartAdded {
            turn_id: turn_id.clone(),
            part: ResponsePart::PermissionRequest {
                request_id: "r1".into(),
                title: "Run it?".into(),
                options: vec![
                    PermissionOption {
                        id: "yes".into(),
                        label: "Yes".into(),
                        kind: Some(core::PermissionOptionKind::AllowOnce),
                    },
                    PermissionOption {
                        id: "never".into(),
                        label: "Never".into(),
                        kind: Some(core::PermissionOptionKind::RejectAlways),
                    },
                ],
                outcome: None,
                tool_call_id: Some("c1".into()),
            },
        },
        core::Action::PermissionResolved {
            turn_id: turn_id.clone(),
            request_id: "r1".into(),
            outcome: "yes".into(),
        },
        core::Action::UsageUpdated {
            turn_id: turn_id.clone(),
            usage: Usage {
                input_tokens: 3,
                output_tokens: 4,
                context_used: Some(1234),
                context_size: Some(200_000),
                cost: core::Cost::new(0.01, "USD"),
                ..Usage::default()
            },
        },
        core::Action::TurnCompleted {
            turn_id,
            stop_reason: StopReason::Other("weird".into()),
            usage: None,
            completed_at: now(),
        },
        core::Action::DraftChanged {
            draft: Some("next".into()),
        },
        core::Action::ChatRemoved { chat: chat.clone() },
    ]
}

/// Every action survives domain → wire → JSON → wire → domain unchanged.
#[test]
fn envelopes_round_trip_through_the_wire() {
    let session = SessionUri::parse("hearth-session:replay/s1").unwrap();
    let chat = ChatUri::default_for(&session);
    for (index, action) in every_action(&chat).into_iter().enumerate() {
        let envelope = core::Envelope {
            seq: index as u64 + 1,
            resource: core::ResourceUri::Chat(chat.clone()),
            action,
        };
        let text = serde_json::to_string(&wire::Envelope::from(envelope.clone())).unwrap();
        let back: wire::Envelope = serde_json::from_str(&text).unwrap();
        assert_eq!(core::Envelope::try_from(back).unwrap(), envelope, "{text}");
    }
}

#[test]
fn wire_json_is_camel_case_and_tagged_on_type() {
    let turn_id = TurnId::parse("t1").unwrap();
    let action = core::Action::TurnCompleted {
        turn_id,
        stop_reason: StopReason::EndTurn,
        usage: Some(Usage {
            input_tokens: 1,
            output_tokens: 2,
            ..Usage::default()
        }),
        completed_at: "2026-01-02T03:04:05.678Z".parse().unwrap(),
    };
    assert_eq!(
        serde_json::to_value(wire::Action::from(action)).unwrap(),
        json!({
            "type": "turnCompleted",
            "turnId": "t1",
            "stopReason": "endTurn",
            "usage": {"inputTokens": 1, "outputTokens": 2, "cachedInputTokens": 0, "reasoningTokens": 0},
            "completedAt": "2026-01-02T03:04:05.678Z"
        })
    );
    let other = serde_json::to_value(wire::StopReason::Other("pause_turn".into())).unwrap();
    assert_eq!(other, json!("pause_turn"));
    let parsed: wire::StopReason = serde_json::from_value(json!("maxTokens")).unwrap();
    assert_eq!(parsed, wire::StopReason::MaxTokens);
}

#[test]
fn a_malformed_uri_names_its_field() {
    let envelope = wire::Envelope {
        seq: 1,
        resource: "hearth-chat:replay/s/default".into(),
        action: wire::Action::ChatActivity {
            chat: "not a uri".into(),
            running: false,
        },
    };
    let error = core::Envelope::try_from(envelope).unwrap_err();
    assert!(error.to_string().starts_with("`chat`: "), "{error}");
}

#[test]
fn snapshots_fold_envelopes_like_the_host() {
    let session = SessionUri::parse("hearth-session:replay/s1").unwrap();
    let chat = ChatUri::default_for(&session);
    let state = core::ChatState {
        summary: chat_summary(&chat),
        turns: Vec::new(),
        draft: None,
        queued: Vec::new(),
        agent: None,
    };
    let snapshot = core::Snapshot {
        resource: core::ResourceUri::Chat(chat.clone()),
        seq: 0,
        state: core::ResourceState::Chat(state),
    };
    let wired: wire::Snapshot = serde_json::from_str(
        &serde_json::to_string(&wire::Snapshot::from(snapshot.clone())).unwrap(),
    )
    .unwrap();
    let mut mirror = core::Mirror::new(core::Snapshot::try_from(wired).unwrap());
    let mut expected = core::Mirror::new(snapshot);
    for (index, action) in every_action(&chat).into_iter().enumerate() {
        let envelope = core::Envelope {
            seq: index as u64 + 1,
            resource: core::ResourceUri::Chat(chat.clone()),
            action,
        };
        expected.apply(&envelope).unwrap();
        let wired = wire::Envelope::from(envelope);
        mirror
            .apply(&core::Envelope::try_from(wired).unwrap())
            .unwrap();
    }
    assert_eq!(mirror, expected);
}

/// The harness was called `provider` on the wire before: a client still sending the old
/// names is understood, one still reading them finds them, and a client reading an older
/// server's answer gets the harness from the old name.
#[test]
fn the_harness_is_read_under_its_old_name_and_still_sent_under_it() {
    let create: wire::SessionCreateParams =
        serde_json::from_value(json!({ "provider": "replay" })).unwrap();
    assert_eq!(create.harness.as_deref(), Some("replay"));
    let list: wire::SessionListParams =
        serde_json::from_value(json!({ "provider": "codex" })).unwrap();
    assert_eq!(list.harness.as_deref(), Some("codex"));
    let start: wire::HarnessStartParams =
        serde_json::from_value(json!({ "provider": "gemini" })).unwrap();
    assert_eq!(start.harness, "gemini");
    let new: wire::SessionCreateParams =
        serde_json::from_value(json!({ "harness": "claude" })).unwrap();
    assert_eq!(new.harness.as_deref(), Some("claude"));

    let session = SessionUri::parse("hearth-session:replay/s1").unwrap();
    let summary = core::SessionSummary {
        uri: session,
        harness: core::HarnessId::parse("replay").unwrap(),
        title: None,
        provenance: core::Provenance::Hearth,
        source: "cli".into(),
        scope: core::Scope::Global,
        model: None,
        working_directories: Vec::new(),
        started_at: now(),
        updated_at: now(),
        pinned: false,
        archived: false,
        owner: None,
    };
    let sent = serde_json::to_value(wire::SessionSummary::from(summary.clone())).unwrap();
    assert_eq!(sent["harness"], "replay");
    assert_eq!(sent["provider"], "replay");
    let read: wire::SessionSummary = serde_json::from_value(sent.clone()).unwrap();
    assert_eq!(read.harness_id(), "replay");
    let mut older = sent;
    older.as_object_mut().unwrap().remove("harness");
    let read: wire::SessionSummary = serde_json::from_value(older).unwrap();
    assert_eq!(read.harness_id(), "replay");
    assert_eq!(core::SessionSummary::try_from(read).unwrap(), summary);

    let info: wire::InitializeResponse = serde_json::from_value(json!({
        "serverInfo": { "name": "hearth", "version": "0.1.0" },
        "protocolVersion": wire::PROTOCOL_VERSION,
        "harnesses": [],
        "defaultProvider": "replay",
        "features": { "proposals": false, "audit": false, "mcp": false }
    }))
    .unwrap();
    assert_eq!(info.default_harness, None);
    assert_eq!(info.default_provider.as_deref(), Some("replay"));
    let both = serde_json::to_value(wire::InitializeResponse {
        default_harness: Some("codex".into()),
        default_provider: Some("codex".into()),
        ..info
    })
    .unwrap();
    assert_eq!(both["defaultHarness"], "codex");
    assert_eq!(both["defaultProvider"], "codex");
    let read: wire::InitializeResponse = serde_json::from_value(both).unwrap();
    assert_eq!(read.default_harness.as_deref(), Some("codex"));
}
