//! Plain-text rendering of sessions, chats and turns for the terminal.

use chrono::Local;
use hearth_core::{
    ChatOrigin, ChatSummary, PlanStatus, ResponsePart, Scope, SessionSummary, StopReason,
    Timestamp, ToolCallPart, ToolCallStatus, Turn,
};

/// Appends a line.
fn push_line(out: &mut String, text: &str) {
    out.push_str(text);
    out.push('\n');
}

/// A timestamp in local time, to the minute.
pub fn local_time(time: &Timestamp) -> String {
    time.with_timezone(&Local)
        .format("%Y-%m-%d %H:%M")
        .to_string()
}

/// A marker for how a turn ended, empty for a normal end.
pub fn stop_marker(reason: Option<&StopReason>) -> Option<String> {
    match reason {
        None | Some(StopReason::Incomplete) => Some("[incomplete]".into()),
        Some(StopReason::EndTurn) => None,
        Some(StopReason::Aborted) => Some("[aborted]".into()),
        Some(StopReason::Error) => Some("[failed]".into()),
        Some(StopReason::MaxTokens) => Some("[stopped: output token limit]".into()),
        Some(StopReason::StepLimit) => Some("[stopped: step limit]".into()),
        Some(StopReason::Refusal) => Some("[refused]".into()),
        Some(StopReason::Other(other)) => Some(format!("[stopped: {other}]")),
    }
}

/// One line about a tool call.
pub fn tool_call_line(call: &ToolCallPart) -> String {
    let status = match call.status {
        ToolCallStatus::Pending => "pending",
        ToolCallStatus::Running => "running",
        ToolCallStatus::Completed => "done",
        ToolCallStatus::Failed => "failed",
        ToolCallStatus::Cancelled => "cancelled",
    };
    let mut line = match &call.title {
        // External agents give their calls a title for people.
        Some(title) => format!("⚙ {title} {status}"),
        None => {
            let mut arguments = call.arguments.to_string();
            if arguments.chars().count() > 80 {
                arguments = arguments.chars().take(79).collect::<String>() + "…";
            }
            format!("⚙ {}({arguments}) {status}", call.name)
        }
    };
    if let Some(result) = &call.result {
        let first = result.content.lines().next().unwrap_or_default();
        let first: String = first.chars().take(100).collect();
        line.push_str(&format!(" → {first}"));
    }
    line
}

/// A response part as text lines.
pub fn part(part: &ResponsePart, out: &mut String) {
    match part {
        ResponsePart::Text { text } => {
            out.push_str(text);
            if !text.ends_with('\n') {
                out.push('\n');
            }
        }
        ResponsePart::Reasoning { text } => {
            for line in text.lines() {
                push_line(out, &format!("  ┆ {line}"));
            }
        }
        ResponsePart::ToolCall(call) => {
            push_line(out, &tool_call_line(call));
        }
        ResponsePart::Plan { entries } => {
            out.push_str("plan:\n");
            for entry in entries {
                let mark = match entry.status {
                    PlanStatus::Pending => "[ ]",
                    PlanStatus::InProgress => "[~]",
                    PlanStatus::Completed => "[x]",
                };
                push_line(out, &format!("  {mark} {}", entry.content));
            }
        }
        ResponsePart::Proposal {
            proposal_id,
            summary,
        } => {
            push_line(
                out,
                &format!("⏳ awaiting approval ({proposal_id}): {summary}"),
            );
        }
        ResponsePart::PermissionRequest {
            title,
            options,
            outcome,
            ..
        } => {
            let choices: Vec<&str> = options.iter().map(|option| option.label.as_str()).collect();
            let answer = outcome.as_deref().unwrap_or("unanswered");
            push_line(
                out,
                &format!("? {title} [{}] → {answer}", choices.join(" / ")),
            );
        }
        ResponsePart::Error { message } => {
            push_line(out, &format!("✗ {message}"));
        }
    }
}

/// A whole turn: the prompt, the response, and how it ended.
pub fn turn(turn: &Turn, out: &mut String) {
    for line in turn.user.text.lines() {
        push_line(out, &format!("› {line}"));
    }
    for response in &turn.parts {
        part(response, out);
    }
    if let Some(marker) = stop_marker(turn.stop_reason.as_ref()) {
        push_line(out, &marker);
    }
}

/// How a chat came to exist, for headings.
pub fn origin(origin: &ChatOrigin) -> String {
    match origin {
        ChatOrigin::User => "chat".into(),
        ChatOrigin::Fork {
            source_chat,
            turn_id,
        } => format!("fork of {source_chat} at turn {turn_id}"),
        ChatOrigin::SideChat {
            source_chat,
            turn_id,
        } => format!("side chat of {source_chat} at turn {turn_id}"),
        ChatOrigin::Tool {
            parent_chat,
            tool_call_id,
        } => {
            format!("subagent of {parent_chat} (tool call {tool_call_id})")
        }
    }
}

/// A heading line for a chat.
pub fn chat_heading(chat: &ChatSummary) -> String {
    let kind = if chat.uri.is_default() {
        "default chat".to_owned()
    } else {
        origin(&chat.origin)
    };
    let title = chat
        .title
        .as_deref()
        .map(|title| format!(" — {title}"))
        .unwrap_or_default();
    format!("── {kind}{title}  [{}]", chat.uri)
}

/// The header of `sessions show`.
pub fn session_header(session: &SessionSummary, demo: bool, out: &mut String) {
    let scope = match &session.scope {
        Scope::Global => "global".to_owned(),
        Scope::Project { project_id } => format!("project {project_id}"),
    };
    push_line(out, &format!("session   {}", session.uri));
    push_line(
        out,
        &format!(
            "title     {}",
            session.title.as_deref().unwrap_or("(untitled)")
        ),
    );
    let demo = if demo { " (demo)" } else { "" };
    push_line(out, &format!("provider  {}{demo}", session.provider));
    push_line(out, &format!("scope     {scope}"));
    let external = match session.provenance {
        hearth_core::Provenance::Hearth => "",
        hearth_core::Provenance::External => " (discovered)",
    };
    push_line(
        out,
        &format!("started   {}{external}", local_time(&session.started_at)),
    );
    push_line(
        out,
        &format!("updated   {}", local_time(&session.updated_at)),
    );
}
