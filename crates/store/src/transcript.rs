//! A session as Markdown, for reading: its title, agent, folder and times, then every
//! chat's turns — the prompt (with the files attached named), the answer, reasoning,
//! plans, tool calls with their arguments and results, proposals, permission requests
//! and errors. Not for reading back: the JSON Lines archive (`archive`) is the lossless
//! form.

use hearth_core::{
    ChatOrigin, ResponsePart, SessionSummary, SessionUri, StopReason, ToolCallPart, Turn,
};

use crate::error::{StoreError, StoreResult};
use crate::store::{ChatRecord, Store};

/// Appends a line.
fn put(out: &mut String, line: std::fmt::Arguments<'_>) {
    out.push_str(&line.to_string());
    out.push('\n');
}

/// A fence long enough for `text`: one backtick more than its longest run.
fn fence(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    "`".repeat((longest + 1).max(3))
}

fn block(out: &mut String, language: &str, text: &str) {
    let fence = fence(text);
    put(
        out,
        format_args!("{fence}{language}\n{}\n{fence}\n", text.trim_end()),
    );
}

/// Text quoted line by line (`> `), so headings and rules in it stay its own.
fn quoted(text: &str) -> String {
    text.lines()
        .map(|line| format!("> {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn header(out: &mut String, session: &SessionSummary) {
    let title = session.title.as_deref().unwrap_or("Untitled session");
    put(out, format_args!("# {}\n", title.replace('\n', " ")));
    put(out, format_args!("- Session: `{}`", session.uri));
    put(out, format_args!("- Agent: {}", session.harness));
    if let Some(model) = &session.model {
        put(out, format_args!("- Model: {model}"));
    }
    if let Some(folder) = session.working_directories.first() {
        put(out, format_args!("- Folder: {}", folder.display()));
    }
    if let Some(project) = session.scope.project_id() {
        put(out, format_args!("- Project: {project}"));
    }
    put(
        out,
        format_args!("- Started: {}", session.started_at.to_rfc3339()),
    );
    put(
        out,
        format_args!("- Updated: {}\n", session.updated_at.to_rfc3339()),
    );
}

fn chat_heading(out: &mut String, chat: &ChatRecord) {
    let origin = match &chat.summary.origin {
        ChatOrigin::User => "chat".to_owned(),
        ChatOrigin::Fork { turn_id, .. } => format!("fork at turn `{turn_id}`"),
        ChatOrigin::SideChat { turn_id, .. } => format!("side chat at turn `{turn_id}`"),
        ChatOrigin::Tool { tool_call_id, .. } => format!("chat of tool call `{tool_call_id}`"),
    };
    let title = chat.summary.title.as_deref().unwrap_or("");
    put(
        out,
        format_args!(
            "## {} ({origin}) {title}\n",
            if chat.summary.uri.is_default() {
                "Main chat"
            } else {
                "Chat"
            }
        ),
    );
}

fn tool_call(out: &mut String, call: &ToolCallPart) {
    let title = call.title.as_deref().unwrap_or(&call.name);
    put(
        out,
        format_args!(
            "**Tool call** `{}` — {title} ({})\n",
            call.name,
            serde_json::to_value(call.status)
                .ok()
                .and_then(|status| status.as_str().map(str::to_owned))
                .unwrap_or_default()
        ),
    );
    if !call.arguments.is_null() {
        let arguments = serde_json::to_string_pretty(&call.arguments).unwrap_or_default();
        block(out, "json", &arguments);
    }
    if let Some(result) = &call.result {
        let label = if result.is_error { "Error" } else { "Result" };
        put(out, format_args!("{label}:\n"));
        block(out, "", &result.content);
    }
}

fn part(out: &mut String, part: &ResponsePart) {
    match part {
        ResponsePart::Text { text } => {
            put(out, format_args!("{}\n", text.trim_end()));
        }
        ResponsePart::Reasoning { text } => {
            put(out, format_args!("*Reasoning:*\n\n{}\n", quoted(text)));
        }
        ResponsePart::ToolCall(call) => tool_call(out, call),
        ResponsePart::Plan { entries } => {
            put(out, format_args!("**Plan**\n"));
            for entry in entries {
                put(
                    out,
                    format_args!("- {}", serde_json::to_string(entry).unwrap_or_default()),
                );
            }
            out.push('\n');
        }
        ResponsePart::Proposal {
            proposal_id,
            summary,
        } => {
            put(
                out,
                format_args!("**Proposed change** `{proposal_id}`: {summary}\n"),
            );
        }
        ResponsePart::PermissionRequest { title, outcome, .. } => {
            let answer = outcome.as_deref().unwrap_or("not answered");
            put(
                out,
                format_args!("**Permission asked**: {title} — {answer}\n"),
            );
        }
        ResponsePart::Notice { message } => {
            put(out, format_args!("*Note from Hearth: {message}*\n"));
        }
        ResponsePart::Error { message } => {
            put(out, format_args!("**Error**: {message}\n"));
        }
        ResponsePart::Compaction { turns, summary } => {
            let count = turns.map_or_else(String::new, |turns| format!(" ({turns} turns)"));
            put(
                out,
                format_args!(
                    "*Earlier turns summarised{count}:*\n\n{}\n",
                    quoted(summary)
                ),
            );
        }
    }
}

fn turn(out: &mut String, index: usize, turn: &Turn) {
    put(
        out,
        format_args!("### Turn {index} · {}\n", turn.started_at.to_rfc3339()),
    );
    put(
        out,
        format_args!("**You:**\n\n{}\n", quoted(&turn.user.text)),
    );
    for attachment in &turn.user.attachments {
        put(
            out,
            format_args!(
                "- Attached: {} ({})",
                attachment.name, attachment.media_type
            ),
        );
    }
    if !turn.user.attachments.is_empty() {
        out.push('\n');
    }
    put(out, format_args!("**Answer:**\n"));
    for piece in &turn.parts {
        part(out, piece);
    }
    match &turn.stop_reason {
        None => {
            put(out, format_args!("*[incomplete]*\n"));
        }
        Some(StopReason::EndTurn) => {}
        Some(reason) => {
            put(out, format_args!("*[ended: {}]*\n", reason.label()));
        }
    }
}

/// A live session as Markdown.
pub async fn session_markdown(store: &dyn Store, uri: &SessionUri) -> StoreResult<String> {
    let session = store
        .session(uri)
        .await?
        .ok_or_else(|| StoreError::NotFound {
            what: "session",
            key: uri.to_string(),
        })?;
    let mut out = String::new();
    header(&mut out, &session);
    for chat in store.chats(uri).await? {
        chat_heading(&mut out, &chat);
        for (index, one) in store.turns(&chat.summary.uri).await?.iter().enumerate() {
            turn(&mut out, index + 1, one);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fence_is_longer_than_any_run_of_backticks_inside() {
        assert_eq!(fence("plain"), "```");
        assert_eq!(fence("a ```` b"), "`````");
    }
}
