//! Output far past what a client should keep, sent as fast as the client reads it:
//! `/big-answer` (answer text), `/tool-updates` (updates of tool calls) and `/big-result`
//! (one tool call's result). What they send does not join the session's history (a
//! note of its size does), so the agent's own files stay small.

use agent_client_protocol::Error;
use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, SessionUpdate, StopReason, TextContent, ToolCall, ToolCallContent,
    ToolCallStatus, ToolKind,
};
use serde_json::json;

use crate::commands::{next_tool_call_id, tool_status};
use crate::turn::Turn;

/// The text `/big-answer` and `/big-result` repeat: 64 bytes, one line.
const LINE: &str = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ+\n";

/// `bytes` of text made of [`LINE`] (the last line cut short).
pub(crate) fn text_of(bytes: usize) -> String {
    let mut text = LINE.repeat(bytes / LINE.len() + 1);
    text.truncate(bytes);
    text
}

/// `/big-answer BYTES [CHUNK]`: BYTES of answer text in chunks of CHUNK bytes, then
/// `answer done`.
pub(crate) fn big_answer(turn: &mut Turn, bytes: usize, chunk: usize) -> Result<StopReason, Error> {
    let block = text_of(chunk);
    let mut sent = 0;
    while sent < bytes {
        let size = chunk.min(bytes - sent);
        let text = if size == chunk {
            block.clone()
        } else {
            block[..size].to_owned()
        };
        turn.update(SessionUpdate::AgentMessageChunk(ContentChunk::new(
            ContentBlock::Text(TextContent::new(text)),
        )))?;
        sent += size;
    }
    turn.update(SessionUpdate::AgentMessageChunk(ContentChunk::new(
        ContentBlock::Text(TextContent::new("answer done")),
    )))?;
    turn.note(format!("[big answer of {bytes} bytes] answer done"));
    Ok(StopReason::EndTurn)
}

/// `/tool-updates N [CALLS]`: CALLS tool calls (`execute`, in progress), N updates of
/// them in turn (each a line of output, `update I of call C`), then each completed with
/// `done C`; then `tool updates done`.
pub(crate) fn tool_updates(turn: &mut Turn, updates: u32, calls: u32) -> Result<StopReason, Error> {
    let ids: Vec<_> = (0..calls).map(|_| next_tool_call_id()).collect();
    for (index, id) in ids.iter().enumerate() {
        turn.update(SessionUpdate::ToolCall(
            ToolCall::new(id.clone(), format!("Build part {index}"))
                .kind(ToolKind::Execute)
                .status(ToolCallStatus::InProgress)
                .raw_input(json!({ "command": "make", "part": index })),
        ))?;
    }
    for update in 0..updates {
        let call = update % calls;
        turn.update(tool_status(
            &ids[call as usize],
            ToolCallStatus::InProgress,
            Some(vec![ToolCallContent::from(format!(
                "update {update} of call {call}\n"
            ))]),
        ))?;
    }
    for (index, id) in ids.iter().enumerate() {
        turn.update(tool_status(
            id,
            ToolCallStatus::Completed,
            Some(vec![ToolCallContent::from(format!("done {index}"))]),
        ))?;
    }
    turn.say("tool updates done")?;
    Ok(StopReason::EndTurn)
}

/// `/big-result BYTES`: one `read` tool call completed with BYTES of text; then
/// `big result sent`.
pub(crate) fn big_result(turn: &mut Turn, bytes: usize) -> Result<StopReason, Error> {
    let id = next_tool_call_id();
    turn.update(SessionUpdate::ToolCall(
        ToolCall::new(id.clone(), "Read a large file")
            .kind(ToolKind::Read)
            .status(ToolCallStatus::InProgress),
    ))?;
    turn.update(tool_status(
        &id,
        ToolCallStatus::Completed,
        Some(vec![ToolCallContent::from(text_of(bytes))]),
    ))?;
    turn.say("big result sent")?;
    Ok(StopReason::EndTurn)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_have_the_size_asked_for() {
        assert_eq!(text_of(0), "");
        assert_eq!(text_of(3), "012");
        assert_eq!(text_of(130).len(), 130);
        assert!(text_of(130).starts_with(LINE));
    }
}
