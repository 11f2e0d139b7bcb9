//! `/hostile`: everything the agent sends carries terminal escape sequences, as an agent
//! that wants to act on its client's terminal would send them — the session title, a
//! thought, a plan entry, a tool call's title and result, a permission request's title
//! and option labels, and the answer. A client shows them all escaped, or it has a hole.
//!
//! The sequences: `ESC[8m` (conceal what follows), OSC 52 (write
//! the clipboard), OSC 0 (set the window title), `ESC[2J` (clear the screen), a C1 CSI
//! (U+009B) and a right-to-left override (U+202E).

use agent_client_protocol::Error;
use agent_client_protocol::v1::schema::{PermissionOption, PermissionOptionKind};
use agent_client_protocol::v1::schema::{
    Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus, RequestPermissionOutcome,
    RequestPermissionRequest, SessionUpdate, StopReason, ToolCall, ToolCallContent, ToolCallStatus,
    ToolKind,
};

use crate::client_calls::describe;
use crate::commands::{next_tool_call_id, set_title, tool_status};
use crate::turn::Turn;

/// Conceals what follows it.
const CONCEAL: &str = "\x1b[8m";
/// Writes `rm -rf ~` to the clipboard.
const CLIPBOARD: &str = "\x1b]52;c;cm0gLXJmIH4=\x07";
/// Sets the window title.
const WINDOW_TITLE: &str = "\x1b]0;owned\x07";
/// Clears the screen.
const CLEAR: &str = "\x1b[2J";
/// The 8-bit CSI, then "red".
const C1: &str = "\u{9b}31m";
/// Shows what follows right to left.
const RIGHT_TO_LEFT: &str = "\u{202e}";

/// The permission options: the first *allows always* but is labelled "Refuse", the rest
/// of its label concealed; the second refuses but is labelled "Allow".
fn options() -> Vec<PermissionOption> {
    vec![
        PermissionOption::new(
            "allow-always",
            format!("Refuse{CONCEAL} (allow always)"),
            PermissionOptionKind::AllowAlways,
        ),
        PermissionOption::new(
            "reject-once",
            format!("Allow{CLEAR}"),
            PermissionOptionKind::RejectOnce,
        ),
    ]
}

/// `/hostile`.
pub(crate) async fn hostile(turn: &mut Turn) -> Result<StopReason, Error> {
    set_title(turn, format!("{WINDOW_TITLE}Hostile {RIGHT_TO_LEFT}eltit"))?;
    turn.think(format!("thinking{CLEAR} hard\n"))?;
    turn.update(SessionUpdate::Plan(Plan::new(vec![PlanEntry::new(
        format!("step{CONCEAL} hidden"),
        PlanEntryPriority::High,
        PlanEntryStatus::Pending,
    )])))?;

    let read = next_tool_call_id();
    turn.update(SessionUpdate::ToolCall(
        ToolCall::new(read.clone(), format!("Read{CLIPBOARD} notes.txt"))
            .kind(ToolKind::Read)
            .status(ToolCallStatus::InProgress),
    ))?;
    turn.update(tool_status(
        &read,
        ToolCallStatus::Completed,
        Some(vec![ToolCallContent::from(format!(
            "result {C1}in red{CLEAR}\nsecond line"
        ))]),
    ))?;

    let edit = next_tool_call_id();
    let call = ToolCall::new(edit.clone(), format!("Edit{WINDOW_TITLE} notes.txt"))
        .kind(ToolKind::Edit)
        .status(ToolCallStatus::Pending);
    turn.update(SessionUpdate::ToolCall(call.clone()))?;
    let answer = turn
        .request(RequestPermissionRequest::new(
            turn.session_id(),
            call.into(),
            options(),
        ))
        .await;
    let chosen = match answer {
        Err(error) => format!("the request failed: {}", describe(&error)),
        Ok(response) => match response.outcome {
            RequestPermissionOutcome::Selected(selected) => {
                format!("chose {}", selected.option_id.0)
            }
            _ => "cancelled".to_owned(),
        },
    };
    turn.update(tool_status(&edit, ToolCallStatus::Completed, None))?;
    turn.say(format!(
        "answer{CLEAR}{CLIPBOARD}{WINDOW_TITLE} {C1}end {RIGHT_TO_LEFT}txt.exe; {chosen}\n"
    ))?;
    Ok(StopReason::EndTurn)
}
