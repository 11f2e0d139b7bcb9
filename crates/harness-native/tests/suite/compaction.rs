//! Compaction: a long chat in a small context window never fails a turn; earlier turns
//! are summarised and sent instead, their raw turns kept; the provider's context-length
//! refusal leads to a compaction and one retry, and a second refusal fails the turn in
//! words that say what to do; `/compact` summarises on demand.

use hearth_core::{ChatContext, Harness, HarnessEvent, ResponsePart, Signal, TurnId, UserMessage};
use hearth_llm::ContextWindows;
use hearth_test_support::model_server::windowed::{
    WINDOWED_SUMMARY, counted_tokens, is_summary_request,
};
use hearth_test_support::{MockModelServer, MockResponse, OpenAiStream, RecordedRequest, WAIT};
use pretty_assertions::assert_eq;

use super::support::{
    MODEL, Recorder, agent_with, anthropic_client, default_chat, openai_agent, send, settings,
};

const WINDOW: u64 = 4_000;

/// The compactions the agent showed, as (turns covered, summary).
fn compactions(recorder: &Recorder, context: &ChatContext) -> Vec<(Option<u32>, String)> {
    recorder
        .signals(&context.chat)
        .into_iter()
        .filter_map(|signal| match signal {
            Signal::Compacted { turns, summary, .. } => Some((turns, summary)),
            _ => None,
        })
        .collect()
}

/// The requests of the chat's turns (not its summaries).
fn turn_requests(server: &MockModelServer) -> Vec<RecordedRequest> {
    server
        .requests()
        .into_iter()
        .filter(|request| !is_summary_request(request))
        .collect()
}

/// A prompt of about 60 tokens with a word of its own.
fn prompt(n: usize) -> String {
    format!(
        "Question {n}: what should I know about topic marker{n:03}? Please keep it short, \
         I am working through a long numbered list and only need the gist of each."
    )
}

#[tokio::test]
async fn a_long_chat_in_a_small_window_runs_200_turns_without_a_failed_turn() {
    let server = MockModelServer::start().await.unwrap();
    server.set_responder(hearth_test_support::WindowedModel::openai(WINDOW).responder());
    let settings = settings().with_context_windows(ContextWindows::uniform(WINDOW as u32));
    let (agent, recorder, _toolbox) = openai_agent(&server, settings);
    let context = default_chat(&agent).await;
    for n in 1..=200 {
        let (_, outcome) = send(&agent, &context, &prompt(n)).await;
        assert_eq!(
            outcome.stop_reason,
            hearth_core::StopReason::EndTurn,
            "turn {n}"
        );
    }

    let shown = compactions(&recorder, &context);
    assert!(shown.len() >= 5, "only {} compactions", shown.len());
    assert!(shown.iter().all(|(_, summary)| summary == WINDOWED_SUMMARY));
    // Each compaction covers more turns than the one before.
    let covered: Vec<u32> = shown.iter().map(|(turns, _)| turns.unwrap()).collect();
    assert!(
        covered.windows(2).all(|pair| pair[0] < pair[1]),
        "{covered:?}"
    );

    // Every raw turn is still the chat's, with its words.
    let turns = agent.messages(&context).await.unwrap();
    assert_eq!(turns.len(), 200);
    for (n, turn) in turns.iter().enumerate() {
        assert_eq!(turn.user.text, prompt(n + 1));
    }
    // The turns a compaction happened in show it.
    let marked = turns
        .iter()
        .filter(|turn| matches!(turn.parts.first(), Some(ResponsePart::Compaction { .. })))
        .count();
    assert_eq!(marked, shown.len());

    // The model's latest request fits its window, and sends the summary instead of the
    // early turns.
    let requests = turn_requests(&server);
    let last = requests.last().unwrap();
    assert_eq!(requests.len(), 200, "no request was refused and sent again");
    assert!(counted_tokens(last) <= WINDOW, "{}", counted_tokens(last));
    let body = String::from_utf8(last.body.clone()).unwrap();
    assert!(body.contains(WINDOWED_SUMMARY));
    assert!(!body.contains("marker001"));
    assert!(body.contains("marker200"));
}

#[tokio::test]
async fn a_model_with_a_smaller_window_than_configured_refuses_and_every_turn_still_ends() {
    let server = MockModelServer::start().await.unwrap();
    server.set_responder(hearth_test_support::WindowedModel::openai(WINDOW).responder());
    // Hearth believes the window is half again as large: only the model's refusals
    // tell it otherwise.
    let settings = settings().with_context_windows(ContextWindows::uniform(6_000));
    let (agent, recorder, _toolbox) = openai_agent(&server, settings);
    let context = default_chat(&agent).await;
    for n in 1..=100 {
        let (_, outcome) = send(&agent, &context, &prompt(n)).await;
        assert_eq!(
            outcome.stop_reason,
            hearth_core::StopReason::EndTurn,
            "turn {n}"
        );
    }
    let requests = turn_requests(&server);
    let refused = requests
        .iter()
        .filter(|request| counted_tokens(request) > WINDOW)
        .count();
    assert!(refused > 0, "the model never refused a request");
    assert_eq!(compactions(&recorder, &context).len(), refused);
    assert_eq!(requests.len(), 100 + refused);
}

#[tokio::test]
async fn an_anthropic_chat_in_a_small_window_is_compacted_too() {
    let server = MockModelServer::start().await.unwrap();
    server.set_responder(hearth_test_support::WindowedModel::anthropic(WINDOW).responder());
    let settings = settings().with_context_windows(ContextWindows::uniform(WINDOW as u32));
    let toolbox = std::sync::Arc::new(super::support::TestToolbox::default());
    let (agent, recorder) = agent_with("claude", anthropic_client(&server), toolbox, settings);
    let context = default_chat(&agent).await;
    for n in 1..=60 {
        let (_, outcome) = send(&agent, &context, &prompt(n)).await;
        assert_eq!(
            outcome.stop_reason,
            hearth_core::StopReason::EndTurn,
            "turn {n}"
        );
    }
    assert!(!compactions(&recorder, &context).is_empty());
    let last = turn_requests(&server).pop().unwrap();
    assert!(counted_tokens(&last) <= WINDOW);
}

/// A chat of `turns` short turns against a queue-driven server.
async fn chat_with_turns(
    server: &MockModelServer,
    window: u32,
    turns: usize,
) -> (
    std::sync::Arc<hearth_harness_native::NativeHarness>,
    Recorder,
    ChatContext,
) {
    let settings = settings().with_context_windows(ContextWindows::uniform(window));
    let (agent, recorder, _toolbox) = openai_agent(server, settings);
    let context = default_chat(&agent).await;
    for n in 1..=turns {
        server.enqueue(OpenAiStream::text_answer(MODEL, &["answer"], 10, 1));
        send(&agent, &context, &format!("earlier {n}")).await;
    }
    (agent, recorder, context)
}

fn context_length_error() -> MockResponse {
    MockResponse::json(
        400,
        &hearth_test_support::model_server::openai_error_body(
            "This model's maximum context length is 4000 tokens. However, your messages resulted in 9000 tokens.",
            "invalid_request_error",
            Some("context_length_exceeded"),
        ),
    )
}

#[tokio::test]
async fn a_context_length_error_leads_to_a_compaction_and_one_retry() {
    let server = MockModelServer::start().await.unwrap();
    let (agent, recorder, context) = chat_with_turns(&server, 100_000, 3).await;
    server.enqueue(context_length_error());
    server.enqueue(OpenAiStream::text_answer(MODEL, &["the summary"], 10, 3));
    server.enqueue(OpenAiStream::text_answer(MODEL, &["fits now"], 10, 2));
    let (_, outcome) = send(&agent, &context, "next").await;
    assert_eq!(outcome.stop_reason, hearth_core::StopReason::EndTurn);
    assert_eq!(
        recorder.text(&context.chat).rsplit("answer").next(),
        Some("fits now")
    );
    assert_eq!(
        compactions(&recorder, &context),
        vec![(Some(3), "the summary".to_owned())]
    );

    let requests = server.requests();
    let summary_request = &requests[4];
    assert!(is_summary_request(summary_request));
    let asked = summary_request.json()["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    for n in 1..=3 {
        assert!(asked.contains(&format!("User: earlier {n}")), "{asked}");
    }
    // The retry sends the summary, then the new prompt.
    let retried = requests[5].json()["messages"].as_array().unwrap().clone();
    assert_eq!(retried.len(), 3, "{retried:?}");
    assert!(
        retried[1]["content"]
            .as_str()
            .unwrap()
            .contains("the summary")
    );
    assert_eq!(retried[2]["content"], "next");
    assert_eq!(requests.len(), 6);
}

#[tokio::test]
async fn a_second_context_length_error_fails_the_turn_saying_what_to_do() {
    let server = MockModelServer::start().await.unwrap();
    let (agent, _recorder, context) = chat_with_turns(&server, 100_000, 2).await;
    server.enqueue(context_length_error());
    server.enqueue(OpenAiStream::text_answer(MODEL, &["the summary"], 10, 3));
    server.enqueue(context_length_error());
    let error = tokio::time::timeout(
        WAIT,
        agent.send(&context, TurnId::generate(), UserMessage::text("next")),
    )
    .await
    .unwrap()
    .unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("maximum context length is 4000"),
        "{message}"
    );
    assert!(
        message.contains("even after Hearth summarised the earlier turns and tried once more"),
        "{message}"
    );
    assert!(
        message.contains("`context_window` for provider `mock`"),
        "{message}"
    );
    // One retry, not more.
    assert_eq!(server.requests().len(), 2 + 3);
}

#[tokio::test]
async fn a_refusal_with_nothing_to_summarise_fails_at_once() {
    let server = MockModelServer::start().await.unwrap();
    let (agent, _recorder, context) = chat_with_turns(&server, 100_000, 0).await;
    server.enqueue(context_length_error());
    let error = tokio::time::timeout(
        WAIT,
        agent.send(&context, TurnId::generate(), UserMessage::text("huge")),
    )
    .await
    .unwrap()
    .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("no earlier turns left to summarise"),
        "{error}"
    );
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn compact_on_demand_summarises_every_turn_and_the_next_turn_sends_the_summary() {
    let server = MockModelServer::start().await.unwrap();
    let (agent, recorder, context) = chat_with_turns(&server, 100_000, 2).await;
    server.enqueue(OpenAiStream::text_answer(MODEL, &["both turns"], 10, 3));
    let compacted = agent.compact(&context).await.unwrap();
    assert_eq!((compacted.turns, compacted.summarised), (2, 2));
    assert_eq!(compacted.summary, "both turns");
    // The host is handed the new conversation.
    let blobs = recorder
        .events()
        .into_iter()
        .filter(|event| {
            matches!(
                event,
                HarnessEvent::Progress {
                    signal: Signal::ProviderDataChanged { .. },
                    ..
                }
            )
        })
        .count();
    assert_eq!(blobs, 3);

    // Nothing new: no model call.
    let again = agent.compact(&context).await.unwrap();
    assert_eq!((again.turns, again.summarised), (2, 0));
    assert_eq!(server.requests().len(), 3);

    server.enqueue(OpenAiStream::text_answer(MODEL, &["ok"], 10, 1));
    send(&agent, &context, "third").await;
    let sent = server.requests().last().unwrap().json()["messages"].clone();
    assert_eq!(sent.as_array().unwrap().len(), 3, "{sent}");
    assert!(sent[1]["content"].as_str().unwrap().contains("both turns"));
    // The turns are all still there.
    assert_eq!(agent.messages(&context).await.unwrap().len(), 3);
}

#[tokio::test]
async fn the_window_a_providers_model_listing_gives_is_used() {
    let server = MockModelServer::start().await.unwrap();
    let model = hearth_test_support::WindowedModel::openai(WINDOW);
    server.set_responder(std::sync::Arc::new(move |request: &RecordedRequest| {
        if request.method == "GET" && request.path.ends_with("/models") {
            return Some(MockResponse::json(
                200,
                &serde_json::json!({"object": "list", "data": [
                    {"id": MODEL, "object": "model", "owned_by": "vllm", "max_model_len": WINDOW},
                ]}),
            ));
        }
        model.answer(request)
    }));
    // No model and no window configured: both come from the listing.
    let agent = std::sync::Arc::new(hearth_harness_native::NativeHarness::new(
        hearth_core::HarnessId::parse("mock").unwrap(),
        super::support::openai_client(&server),
        None,
        std::sync::Arc::new(hearth_harness_native::NoTools),
        settings(),
    ));
    let recorder = Recorder::default();
    agent.attach(recorder.sink());
    let context = default_chat(&agent).await;
    for n in 1..=60 {
        let (_, outcome) = send(&agent, &context, &prompt(n)).await;
        assert_eq!(
            outcome.stop_reason,
            hearth_core::StopReason::EndTurn,
            "turn {n}"
        );
    }
    assert!(!compactions(&recorder, &context).is_empty());
    let requests = turn_requests(&server);
    assert!(
        requests
            .iter()
            .all(|request| counted_tokens(request) <= WINDOW)
    );
}
