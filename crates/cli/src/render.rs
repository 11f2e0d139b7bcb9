//! Plain-text rendering of sessions, chats and turns for the terminal. Everything an
//! agent, a model or a tool wrote (answers, reasoning, titles, results, plans, errors,
//! permission options) is shown with its control characters escaped
//! ([`hearth_core::escape_controls`]); Hearth's own words are added around it.

use chrono::Local;
use hearth_core::{
    ChatOrigin, ChatSummary, PlanStatus, ResponsePart, Scope, SessionSummary, StopReason,
    Timestamp, ToolCallPart, ToolCallStatus, Turn, escape_controls, escape_controls_inline,
};

use crate::permissions::{agent_label, option_effect};

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
        Some(title) => format!("⚙ {} {status}", escape_controls_inline(title)),
        None => {
            let mut arguments = call.arguments.to_string();
            if arguments.chars().count() > 80 {
                arguments = arguments.chars().take(79).collect::<String>() + "…";
            }
            format!(
                "⚙ {}({}) {status}",
                escape_controls_inline(&call.name),
                escape_controls_inline(&arguments)
            )
        }
    };
    if let Some(result) = &call.result {
        match short_result(&result.content) {
            Some(short) => line.push_str(&format!(" → {short}")),
            None => line.push_str(" →"),
        }
    }
    line
}

/// Results this long or longer are shown under their call, one line each.
const SHORT_RESULT: usize = 100;

/// A tool's result that fits on its call's line (one line of under 100 characters),
/// escaped; `None` when it must be shown in lines of its own ([`result_lines`]).
pub fn short_result(content: &str) -> Option<String> {
    let content = content.trim_end_matches('\n');
    if content.contains('\n') || content.chars().count() >= SHORT_RESULT {
        return None;
    }
    Some(escape_controls_inline(content).into_owned())
}

/// A tool's whole result as indented lines, escaped: at most `limit` lines, then one
/// saying how many more there are and where to read them.
pub fn result_lines(content: &str, limit: Option<usize>) -> Vec<String> {
    let lines: Vec<&str> = content.trim_end_matches('\n').lines().collect();
    let shown = limit.unwrap_or(usize::MAX).min(lines.len());
    let mut out: Vec<String> = lines[..shown]
        .iter()
        .map(|line| format!("    {}", escape_controls_inline(line)))
        .collect();
    if shown < lines.len() {
        out.push(format!(
            "    … {} more lines (`hearth sessions show` prints them all)",
            lines.len() - shown
        ));
    }
    out
}

/// What a call shows of the terminal it runs in: the output (between the fences of
/// the text after the terminal in its content) and, once the command ended, how.
pub fn terminal_output(
    content: &[hearth_core::ToolCallContent],
) -> Option<(String, Option<String>)> {
    let position = content
        .iter()
        .position(|item| matches!(item, hearth_core::ToolCallContent::Terminal { .. }))?;
    let hearth_core::ToolCallContent::Text { text } = content.get(position + 1)? else {
        return None;
    };
    let text = text
        .strip_prefix("(earlier output left out)\n")
        .unwrap_or(text);
    let (fence, rest) = text.split_once('\n')?;
    if fence.len() < 3 || !fence.chars().all(|character| character == '`') {
        return None;
    }
    let (body, after) = if let Some(body) = rest.strip_prefix(fence) {
        ("", body)
    } else {
        rest.split_once(&format!("\n{fence}"))?
    };
    let ended = after.strip_prefix('\n').map(str::to_owned);
    Some((body.to_owned(), ended))
}

/// A terminal's output as indented lines, escaped, then how the command ended.
pub fn terminal_lines(output: &str, ended: Option<&str>) -> Vec<String> {
    let mut lines: Vec<String> = output
        .lines()
        .map(|line| format!("  │ {}", escape_controls_inline(line)))
        .collect();
    if let Some(ended) = ended {
        lines.push(format!("  └ {}", escape_controls_inline(ended)));
    }
    lines
}

/// A tool call: its line, the output of the terminal it ran in, and its whole result
/// when that does not fit on its line.
fn tool_call(call: &ToolCallPart, out: &mut String) {
    push_line(out, &tool_call_line(call));
    if let Some((output, ended)) = terminal_output(&call.content) {
        for line in terminal_lines(&output, ended.as_deref()) {
            push_line(out, &line);
        }
    }
    if let Some(result) = &call.result
        && short_result(&result.content).is_none()
    {
        for line in result_lines(&result.content, None) {
            push_line(out, &line);
        }
    }
}

/// A response part as text lines.
pub fn part(part: &ResponsePart, out: &mut String) {
    match part {
        ResponsePart::Text { text } => {
            out.push_str(&escape_controls(text));
            if !text.ends_with('\n') {
                out.push('\n');
            }
        }
        ResponsePart::Reasoning { text } => {
            for line in text.lines() {
                push_line(out, &format!("  ┆ {}", escape_controls(line)));
            }
        }
        ResponsePart::ToolCall(call) => tool_call(call, out),
        ResponsePart::Plan { entries } => {
            out.push_str("plan:\n");
            for entry in entries {
                let mark = match entry.status {
                    PlanStatus::Pending => "[ ]",
                    PlanStatus::InProgress => "[~]",
                    PlanStatus::Completed => "[x]",
                };
                push_line(
                    out,
                    &format!("  {mark} {}", escape_controls_inline(&entry.content)),
                );
            }
        }
        ResponsePart::Proposal {
            proposal_id,
            summary,
        } => {
            push_line(
                out,
                &format!(
                    "⏳ awaiting approval ({proposal_id}): {}",
                    escape_controls_inline(summary)
                ),
            );
        }
        ResponsePart::PermissionRequest {
            title,
            options,
            outcome,
            ..
        } => {
            // Each choice in Hearth's words first; the agent's label after it.
            let choices: Vec<String> = options
                .iter()
                .map(|option| format!("{} {}", option_effect(option.kind), agent_label(option)))
                .collect();
            let answer = match outcome.as_deref() {
                None => "unanswered".to_owned(),
                Some(chosen) => match options.iter().find(|option| option.id == chosen) {
                    Some(option) => {
                        format!("{} {}", option_effect(option.kind), agent_label(option))
                    }
                    None => escape_controls_inline(chosen).into_owned(),
                },
            };
            push_line(
                out,
                &format!(
                    "? {} [{}] → {answer}",
                    escape_controls_inline(title),
                    choices.join(" / ")
                ),
            );
        }
        ResponsePart::Error { message } => {
            push_line(out, &format!("✗ {}", crate::shown::message(message)));
        }
        ResponsePart::Notice { message } => {
            push_line(out, &format!("ℹ {}", crate::shown::message(message)));
        }
        ResponsePart::Compaction { turns, .. } => push_line(out, &compaction_line(*turns)),
    }
}

/// The line that marks where earlier turns were summarised for the model.
pub fn compaction_line(turns: Option<u32>) -> String {
    match turns {
        Some(1) => "── earlier turns summarised (1 turn) ──".to_owned(),
        Some(turns) => format!("── earlier turns summarised ({turns} turns) ──"),
        None => "── earlier turns summarised ──".to_owned(),
    }
}

/// A whole turn: the prompt, the response, and how it ended.
pub fn turn(turn: &Turn, out: &mut String) {
    for line in turn.user.text.lines() {
        push_line(out, &format!("› {}", escape_controls(line)));
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
        .map(|title| format!(" — {}", escape_controls_inline(title)))
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
            escape_controls_inline(session.title.as_deref().unwrap_or("(untitled)"))
        ),
    );
    let demo = if demo { " (demo)" } else { "" };
    push_line(out, &format!("provider  {}{demo}", session.harness));
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

#[cfg(test)]
mod tests {
    use super::*;
    use hearth_core::{PermissionOption, PermissionOptionKind, PlanEntry, ToolResult};
    use pretty_assertions::assert_eq;

    #[test]
    fn a_long_result_is_shown_whole_or_up_to_a_limit() {
        let content: String = (1..=30).map(|n| format!("line {n}\n")).collect();
        assert_eq!(short_result(&content), None);
        assert_eq!(result_lines(&content, None).len(), 30);
        let limited = result_lines(&content, Some(12));
        assert_eq!(limited.len(), 13);
        assert_eq!(limited[11], "    line 12");
        assert!(limited[12].contains("18 more lines"), "{limited:?}");
        let long_line = "x".repeat(150);
        assert_eq!(short_result(&long_line), None);
        assert_eq!(
            result_lines(&long_line, Some(12)),
            vec![format!("    {long_line}")]
        );
        assert_eq!(short_result("ok\n").as_deref(), Some("ok"));
    }

    #[test]
    fn what_an_agent_wrote_is_shown_escaped() {
        let mut call = ToolCallPart::new(
            "c1",
            "read",
            serde_json::json!({"path": "\u{9b}x"}),
            ToolCallStatus::Completed,
        );
        call.result = Some(ToolResult {
            content: "found \x1b[2Jit\nsecond line".into(),
            is_error: false,
        });
        assert_eq!(
            tool_call_line(&call),
            "⚙ read({\"path\":\"\\u{9b}x\"}) done →"
        );
        let mut out = String::new();
        part(&ResponsePart::ToolCall(call.clone()), &mut out);
        assert_eq!(
            out,
            "⚙ read({\"path\":\"\\u{9b}x\"}) done →\n    found \\x1b[2Jit\n    second line\n"
        );
        call.title = Some("Read\x1b]52;c;b3duZWQ=\x07 a.txt".into());
        call.result = Some(ToolResult {
            content: "found \x1b[2Jit\n".into(),
            is_error: false,
        });
        assert_eq!(
            tool_call_line(&call),
            "⚙ Read\\x1b]52;c;b3duZWQ=\\x07 a.txt done → found \\x1b[2Jit"
        );
        let parts = [
            ResponsePart::Text {
                text: "hi\x1b]0;owned\x07\nthere".into(),
            },
            ResponsePart::Reasoning {
                text: "think\rover\nmore".into(),
            },
            ResponsePart::Plan {
                entries: vec![PlanEntry {
                    content: "step\x1b[8m hidden".into(),
                    status: PlanStatus::Pending,
                }],
            },
            ResponsePart::PermissionRequest {
                request_id: "r1".into(),
                title: "Edit\u{202e} a.txt".into(),
                options: vec![PermissionOption {
                    id: "allow-always".into(),
                    label: "Refuse\x1b[8m".into(),
                    kind: Some(PermissionOptionKind::AllowAlways),
                }],
                tool_call_id: None,
                outcome: Some("allow-always".into()),
            },
            ResponsePart::Error {
                message: "agent said \x07 at http://u:pw@h/".into(),
            },
            ResponsePart::Notice {
                message: "a new session\x1b[2J took over".into(),
            },
            ResponsePart::Compaction {
                turns: Some(12),
                summary: "the summary is not shown".into(),
            },
        ];
        let mut out = String::new();
        for response in &parts {
            part(response, &mut out);
        }
        assert_eq!(
            out,
            "hi\\x1b]0;owned\\x07\nthere\n  ┆ think\\rover\n  ┆ more\nplan:\n  [ ] step\\x1b[8m hidden\n? Edit\\u{202e} a.txt [allow for this chat \"Refuse\\x1b[8m\"] → allow for this chat \"Refuse\\x1b[8m\"\n✗ agent said \\x07 at http://[redacted]@h/\nℹ a new session\\x1b[2J took over\n── earlier turns summarised (12 turns) ──\n"
        );
    }
}
