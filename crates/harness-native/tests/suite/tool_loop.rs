//! The loop: model → tool calls → results → model, with the exact requests the model
//! server saw; the step limit; arguments that do not fit; retries; failures.

use hearth_core::{
    ChatOrigin, Customizations, Harness, HarnessErrorKind, ProjectId, Scope, Signal, StopReason,
    ToolCallPart, ToolCallPatch, ToolCallStatus, ToolResult, TurnId, Usage, UserMessage,
};
use hearth_llm::{ToolSpec, parse_tool_arguments};
use hearth_test_support::{MockModelServer, MockResponse, OpenAiStream};
use pretty_assertions::assert_eq;
use serde_json::json;

use super::support::{
    MODEL, TestToolbox, ToolCallSeen, assistant, context, conversation, default_chat, messages,
    openai_agent, send, settings, system, tool_names, user,
};

fn lookup_call(id: &str, arguments: &[&str]) -> OpenAiStream {
    arguments
        .iter()
        .fold(
            OpenAiStream::new(MODEL).role().tool_call(0, id, "lookup"),
            |stream, fragment| stream.tool_arguments(0, fragment),
        )
        .finish("tool_calls")
        .usage(100, 10)
        .done()
}

const TASK_LINE: &str = "- task: Hands a self-contained task to a subagent, which works on it in a conversation of its own with the same tools and returns its final answer. Use it for research or multi-step work whose details need not stay in this conversation.";

#[tokio::test]
async fn tool_calls_run_and_their_results_go_back_to_the_model() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        OpenAiStream::new(MODEL)
            .role()
            .reasoning("Need the tide table.")
            .text("Let me check. ")
            .tool_call(0, "call_1", "lookup")
            .tool_arguments(0, "{\"query\":")
            .tool_arguments(0, " \"tides\"}")
            .finish("tool_calls")
            .usage(100, 10)
            .done(),
    );
    server.enqueue(OpenAiStream::text_answer(
        MODEL,
        &["High tide ", "is at 10:00."],
        150,
        8,
    ));
    let (agent, recorder, toolbox) = openai_agent(&server, settings());
    let chat = default_chat(&agent).await;
    let (turn_id, outcome) = send(&agent, &chat, "When is high tide?").await;
    let total = Usage {
        input_tokens: 250,
        output_tokens: 18,
        ..Usage::default()
    };
    assert_eq!(outcome.stop_reason, StopReason::EndTurn);
    assert_eq!(outcome.usage, Some(total.clone()));

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(requests[0].json()["model"], MODEL);
    assert_eq!(
        system(&requests[0]),
        format!(
            "You are Hearth's assistant, an AI agent running in Hearth on the user's own computer. \
             Answer accurately and concisely. Use the tools when they help, and never claim that \
             something was done unless a tool result says so.\n\n\
             # Now\n\
             Today is Tuesday, 3 March 2026 (2026-03-03).\n\
             The time is 10:00 (Europe/Berlin, UTC+01:00).\n\
             The user's time zone is Europe/Berlin; give times in it unless asked otherwise.\n\
             The user reads a 24-hour clock: write times like 15:30.\n\
             Resolve relative dates (\"tomorrow\", \"next Friday\") from today's date.\n\n\
             # Tools\n\
             - lookup: Looks up a fact.\n\
             - create_event: Creates a calendar event. (stages a proposal)\n\
             - wait: Waits for a long time.\n\
             {TASK_LINE}\n\
             Tools marked \"stages a proposal\" never change anything themselves: they stage a \
             proposal that the user approves or rejects in Hearth. Tell the user what awaits \
             their approval, and do not say it is done."
        )
    );
    assert_eq!(conversation(&requests[0]), vec![user("When is high tide?")]);
    assert_eq!(
        requests[0].json()["tools"][0],
        json!({"type": "function", "function": {
            "name": "lookup",
            "description": "Looks up a fact.",
            "parameters": TestToolbox::lookup().parameters,
        }})
    );
    assert_eq!(
        tool_names(&requests[0]),
        vec!["lookup", "create_event", "wait", "task"]
    );
    // The same system prompt, and the history with the call and its result.
    assert_eq!(messages(&requests[1])[0], messages(&requests[0])[0]);
    assert_eq!(
        conversation(&requests[1]),
        vec![
            user("When is high tide?"),
            json!({"role": "assistant", "content": "Let me check. ", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{\"query\":\"tides\"}"}}
            ]}),
            json!({"role": "tool", "tool_call_id": "call_1", "content": "tides: high tide at 10:00"}),
        ]
    );

    let calls = toolbox.calls();
    assert_eq!(calls.len(), 1);
    let ToolCallSeen {
        context,
        name,
        arguments,
    } = &calls[0];
    assert_eq!(
        (name.as_str(), arguments),
        ("lookup", &json!({"query": "tides"}))
    );
    assert_eq!((&context.chat, &context.turn_id), (&chat.chat, &turn_id));
    assert_eq!(
        (context.call_id.as_str(), &context.session),
        ("call_1", &chat.session)
    );

    let signals = recorder.signals(&chat.chat);
    let id = turn_id.clone();
    let expected_prefix = [
        Signal::ReasoningDelta {
            turn_id: id.clone(),
            text: "Need the tide table.".into(),
        },
        Signal::TextDelta {
            turn_id: id.clone(),
            text: "Let me check. ".into(),
        },
        Signal::ToolCallStarted {
            turn_id: id.clone(),
            call: ToolCallPart::new(
                "call_1",
                "lookup",
                json!({"query": "tides"}),
                ToolCallStatus::Running,
            ),
        },
        Signal::Usage {
            turn_id: id.clone(),
            usage: Usage {
                input_tokens: 100,
                output_tokens: 10,
                ..Usage::default()
            },
        },
        Signal::ToolCallUpdated {
            turn_id: id.clone(),
            call_id: "call_1".into(),
            status: ToolCallStatus::Completed,
            result: Some(ToolResult {
                content: "tides: high tide at 10:00".into(),
                is_error: false,
            }),
            patch: ToolCallPatch::default(),
        },
        Signal::TextDelta {
            turn_id: id.clone(),
            text: "High tide ".into(),
        },
        Signal::TextDelta {
            turn_id: id.clone(),
            text: "is at 10:00.".into(),
        },
        Signal::Usage {
            turn_id: id.clone(),
            usage: total,
        },
    ];
    assert_eq!(signals[..expected_prefix.len()], expected_prefix[..]);
    assert!(matches!(
        signals[expected_prefix.len()..],
        [Signal::ProviderDataChanged { .. }]
    ));

    let history = agent.messages(&chat).await.unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(
        history[0].response_text(),
        "Let me check. High tide is at 10:00."
    );
    assert_eq!(history[0].stop_reason, Some(StopReason::EndTurn));
}

#[tokio::test]
async fn the_step_limit_stops_the_loop_and_leaves_the_last_calls_unrun() {
    let server = MockModelServer::start().await.unwrap();
    server.set_fallback(lookup_call("call_x", &["{\"query\": \"again\"}"]));
    let (agent, recorder, toolbox) = openai_agent(&server, settings().with_step_limit(2));
    let chat = default_chat(&agent).await;
    let (turn_id, outcome) = send(&agent, &chat, "loop forever").await;
    assert_eq!(outcome.stop_reason, StopReason::StepLimit);
    assert_eq!(server.requests().len(), 2);
    assert_eq!(toolbox.calls().len(), 1, "only the first step's call runs");
    let updates: Vec<_> = recorder
        .signals(&chat.chat)
        .into_iter()
        .filter_map(|signal| match signal {
            Signal::ToolCallUpdated { status, result, .. } => Some((status, result.unwrap())),
            _ => None,
        })
        .collect();
    assert_eq!(updates.len(), 2);
    assert_eq!(updates[0].0, ToolCallStatus::Completed);
    assert_eq!(updates[1].0, ToolCallStatus::Cancelled);
    assert!(
        updates[1].1.content.contains("limit of 2 model calls"),
        "{:?}",
        updates[1].1
    );
    // The next turn's history answers every call, so the model accepts it.
    server.enqueue(OpenAiStream::text_answer(MODEL, &["ok"], 1, 1));
    let (_, outcome) = send(&agent, &chat, "stop now").await;
    assert_eq!(outcome.stop_reason, StopReason::EndTurn);
    let last = conversation(server.requests().last().unwrap());
    assert_eq!(last.len(), 6);
    assert_eq!(last[4]["role"], "tool");
    assert_eq!(last[5], user("stop now"));
    assert_eq!(agent.messages(&chat).await.unwrap()[0].id, turn_id);
}

#[tokio::test]
async fn arguments_that_do_not_fit_are_answered_with_an_error_instead_of_running_the_tool() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        OpenAiStream::new(MODEL)
            .role()
            .tool_call(0, "bad", "lookup")
            .tool_arguments(0, "{\"q\": 1}")
            .tool_call(1, "truncated", "lookup")
            .tool_arguments(1, "```json\n{'query': 'tid")
            .tool_call(2, "unknown", "teleport")
            .tool_arguments(2, "{}")
            .finish("tool_calls")
            .done(),
    );
    server.enqueue(OpenAiStream::text_answer(MODEL, &["Sorry."], 1, 1));
    let (agent, recorder, toolbox) = openai_agent(&server, settings());
    let chat = default_chat(&agent).await;
    send(&agent, &chat, "tides?").await;

    // The repaired call ran; the invalid one did not; the unknown name went to the
    // toolbox, which answers (and records) it.
    let calls = toolbox.calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].arguments, json!({"query": "tid"}));
    assert_eq!(calls[1].name, "teleport");

    let spec = ToolSpec::new(
        "lookup",
        "Looks up a fact.",
        TestToolbox::lookup().parameters,
    );
    let invalid = parse_tool_arguments(&spec, "{\"q\": 1}")
        .unwrap_err()
        .message;
    assert!(
        invalid.starts_with("The arguments for tool `lookup` are invalid"),
        "{invalid}"
    );
    let unknown = "no tool teleport";
    let requests = server.requests();
    assert_eq!(
        conversation(&requests[1])[1..],
        [
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "bad", "type": "function", "function": {"name": "lookup", "arguments": "{\"q\":1}"}},
                {"id": "truncated", "type": "function", "function": {"name": "lookup", "arguments": "{\"query\":\"tid\"}"}},
                {"id": "unknown", "type": "function", "function": {"name": "teleport", "arguments": "{}"}},
            ]}),
            json!({"role": "tool", "tool_call_id": "bad", "content": invalid}),
            json!({"role": "tool", "tool_call_id": "truncated", "content": "tid: high tide at 10:00"}),
            json!({"role": "tool", "tool_call_id": "unknown", "content": unknown}),
        ]
    );
    let failed: Vec<_> = recorder
        .signals(&chat.chat)
        .into_iter()
        .filter_map(|signal| match signal {
            Signal::ToolCallUpdated {
                call_id, status, ..
            } => Some((call_id, status)),
            _ => None,
        })
        .collect();
    assert_eq!(
        failed,
        vec![
            ("bad".to_owned(), ToolCallStatus::Failed),
            ("truncated".to_owned(), ToolCallStatus::Completed),
            ("unknown".to_owned(), ToolCallStatus::Failed),
        ]
    );
}

#[tokio::test]
async fn retries_show_as_a_notice_and_the_turn_goes_on() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(MockResponse::openai_error(
        503,
        "overloaded",
        "server_error",
    ));
    server.enqueue(OpenAiStream::text_answer(MODEL, &["fine"], 1, 1));
    let (agent, recorder, _) = openai_agent(&server, settings());
    let chat = default_chat(&agent).await;
    let (_, outcome) = send(&agent, &chat, "hi").await;
    assert_eq!(outcome.stop_reason, StopReason::EndTurn);
    assert_eq!(server.requests().len(), 2);
    let notices: Vec<String> = recorder
        .signals(&chat.chat)
        .into_iter()
        .filter_map(|signal| match signal {
            Signal::Error { message, .. } => Some(message),
            _ => None,
        })
        .collect();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].starts_with("mock answered HTTP 503 (server_error): overloaded; retrying in"),
        "{notices:?}"
    );
    assert_eq!(recorder.text(&chat.chat), "fine");
}

#[tokio::test]
async fn a_failed_model_call_fails_the_turn_and_keeps_it_in_the_history() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(MockResponse::openai_error(
        401,
        "Incorrect API key",
        "invalid_request_error",
    ));
    let (agent, _, _) = openai_agent(&server, settings());
    let chat = default_chat(&agent).await;
    let error = agent
        .send(&chat, TurnId::generate(), UserMessage::text("hi"))
        .await
        .unwrap_err();
    assert_eq!(error.kind, HarnessErrorKind::Provider);
    assert_eq!(
        error.message,
        "mock answered HTTP 401 (invalid_request_error): Incorrect API key"
    );
    let history = agent.messages(&chat).await.unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].stop_reason, Some(StopReason::Error));
    server.enqueue(OpenAiStream::text_answer(MODEL, &["hello"], 1, 1));
    send(&agent, &chat, "again").await;
    assert_eq!(
        conversation(&server.requests()[1]),
        vec![user("hi"), user("again")]
    );
}

#[tokio::test]
async fn project_instructions_and_enabled_tools_shape_the_request() {
    let server = MockModelServer::start().await.unwrap();
    server.set_fallback(OpenAiStream::text_answer(MODEL, &["ok"], 1, 1));
    let (agent, _, _) = openai_agent(&server, settings());
    let mut chat = default_chat(&agent).await;
    chat.customizations = Some(Customizations {
        instructions: Some("Answer in French.".into()),
        enabled_tools: vec!["lookup".into()],
        agents_file: None,
    });
    chat.model = Some("chosen-model".into());
    chat.scope = Scope::Project {
        project_id: ProjectId::parse("garden").unwrap(),
    };
    send(&agent, &chat, "bonjour").await;
    let request = &server.requests()[0];
    assert_eq!(request.json()["model"], "chosen-model");
    assert_eq!(tool_names(request), vec!["lookup"]);
    let prompt = system(request);
    assert!(
        prompt.ends_with(
            "\n\n# Project\nThis conversation belongs to the project `garden`. Its \
             instructions:\n\nAnswer in French."
        ),
        "{prompt}"
    );
    assert!(prompt.contains("- lookup: Looks up a fact."), "{prompt}");
    assert!(!prompt.contains("create_event"), "{prompt}");
    assert_eq!(conversation(request), vec![user("bonjour")]);
    let other = context(&chat.chat, ChatOrigin::User);
    send(&agent, &other, "encore").await;
    assert_eq!(
        conversation(&server.requests()[1]),
        vec![user("bonjour"), assistant("ok"), user("encore")]
    );
}

#[tokio::test]
async fn the_model_reads_back_its_answer_and_tool_results_cut_at_the_output_limits() {
    let server = MockModelServer::start().await.unwrap();
    server.enqueue(
        OpenAiStream::new(MODEL)
            .role()
            .text("Let me check. ")
            .tool_call(0, "call_1", "lookup")
            .tool_arguments(0, "{\"query\": \"tides\"}")
            .finish("tool_calls")
            .usage(100, 10)
            .done(),
    );
    server.enqueue(OpenAiStream::text_answer(
        MODEL,
        &["High tide ", "is at 10:00."],
        150,
        8,
    ));
    let limits = hearth_core::OutputLimits {
        answer_bytes: 10,
        tool_result_bytes: 10,
        ..hearth_core::OutputLimits::default()
    };
    let (agent, recorder, _) = openai_agent(&server, settings().with_output_limits(limits));
    let chat = default_chat(&agent).await;
    send(&agent, &chat, "When is high tide?").await;
    // The host is sent everything: it cuts what it shows by itself.
    assert_eq!(
        recorder.text(&chat.chat),
        "Let me check. High tide is at 10:00."
    );
    // What the model reads back is cut as the host shows it.
    let requests = server.requests();
    assert_eq!(
        conversation(&requests[1]),
        vec![
            user("When is high tide?"),
            json!({"role": "assistant", "content": format!("Let me che{}", hearth_core::cut_mark("the answer", &limits)), "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{\"query\":\"tides\"}"}}
            ]}),
            json!({"role": "tool", "tool_call_id": "call_1", "content": "tides: hig\n[truncated by Hearth: 15 bytes more dropped; `tool_result_bytes` under [limits] in config.toml allows more]"}),
        ]
    );
}
