use super::*;
use pretty_assertions::assert_eq;

fn decode(body: &str) -> (Vec<StreamEvent>, Option<LlmError>) {
    let mut decoder = stream_decoder(DecodeContext {
        provider: "openai".into(),
        request_id: None,
    });
    let mut out = Vec::new();
    let error = decoder
        .feed(body.as_bytes(), &mut out)
        .and_then(|()| decoder.finish(&mut out))
        .err();
    (out, error)
}

#[test]
fn restarted_indexes_with_new_ids_are_separate_calls() {
    let body = concat!(
        "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"one\",\"arguments\":\"{}\"}}]}}]}\n\n",
        "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"b\",\"function\":{\"name\":\"two\",\"arguments\":{\"x\":1}}}]}}]}\n\n",
        "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
        "data: [DONE]\n\n",
    );
    let (events, error) = decode(body);
    assert_eq!(error, None);
    assert_eq!(
        events,
        vec![
            StreamEvent::ToolCallStarted {
                index: 0,
                id: "a".into(),
                name: "one".into()
            },
            StreamEvent::ToolCallDelta {
                index: 0,
                arguments: "{}".into()
            },
            StreamEvent::ToolCallStarted {
                index: 1,
                id: "b".into(),
                name: "two".into()
            },
            StreamEvent::ToolCallDelta {
                index: 1,
                arguments: "{\"x\":1}".into()
            },
            StreamEvent::ToolCallCompleted(CompletedToolCall {
                index: 0,
                id: "a".into(),
                name: "one".into(),
                arguments: "{}".into()
            }),
            StreamEvent::ToolCallCompleted(CompletedToolCall {
                index: 1,
                id: "b".into(),
                name: "two".into(),
                arguments: "{\"x\":1}".into()
            }),
            StreamEvent::Finished {
                reason: FinishReason::ToolUse
            },
        ]
    );
}

#[test]
fn a_stream_without_finish_is_incomplete() {
    let (events, error) = decode("data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n");
    assert_eq!(events, vec![StreamEvent::TextDelta { text: "Hi".into() }]);
    assert_eq!(
        error,
        Some(LlmError::Incomplete {
            provider: "openai".into()
        })
    );
}

#[test]
fn a_finish_without_done_ends_cleanly() {
    let (events, error) =
        decode("data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"\"}]}\n\n");
    assert_eq!(error, None);
    assert_eq!(
        events,
        vec![
            StreamEvent::TextDelta { text: "Hi".into() },
            StreamEvent::Finished {
                reason: FinishReason::Unspecified
            },
        ]
    );
}
