//! A terminal's output shown in the tool call that runs in it, as it arrives: the agent
//! names the terminal in the call's content, and Hearth (which runs the command) adds
//! the output it has so far as text after it, a few times a second and once more when
//! the command has ended. What the agent reads of the terminal is unchanged.

use std::sync::Arc;
use std::time::Duration;

use hearth_core::{ChatUri, Signal, ToolCallContent, ToolCallPatch, ToolCallStatus, TurnId};

use crate::shared::Shared;

/// How often a running command's new output is shown.
const SHOWN_EVERY: Duration = Duration::from_millis(250);
/// How long after the command ended its last output is waited for.
const LAST_OUTPUT: Duration = Duration::from_millis(100);
/// The most of a terminal's output a call shows (its newest part).
const SHOWN_BYTES: usize = 64 * 1024;

/// The terminals the signals name, as (turn, call, terminal).
pub(crate) fn named(signals: &[Signal]) -> Vec<(TurnId, String, String)> {
    let mut named = Vec::new();
    for signal in signals {
        let (turn_id, call_id, content) = match signal {
            Signal::ToolCallStarted { turn_id, call } => (turn_id, &call.call_id, &call.content),
            Signal::ToolCallUpdated {
                turn_id,
                call_id,
                patch:
                    ToolCallPatch {
                        content: Some(content),
                        ..
                    },
                ..
            } => (turn_id, call_id, content),
            _ => continue,
        };
        for item in content {
            if let ToolCallContent::Terminal { terminal_id } = item {
                named.push((turn_id.clone(), call_id.clone(), terminal_id.clone()));
            }
        }
    }
    named
}

/// Shows the output of `terminal` in `call` until the command ends or the terminal is
/// released (unless the call already shows it).
pub(crate) fn follow(
    shared: &Arc<Shared>,
    chat: &ChatUri,
    turn_id: TurnId,
    call_id: String,
    terminal: String,
) {
    if !shared.terminals.follow(&terminal, &turn_id, &call_id) {
        return;
    }
    let Some(mut exit) = shared.terminals.exit_of(&terminal) else {
        return;
    };
    let shared = Arc::clone(shared);
    let chat = chat.clone();
    tokio::spawn(async move {
        let mut shown = String::new();
        loop {
            let ended = matches!(
                tokio::time::timeout(SHOWN_EVERY, exit.wait_for(Option::is_some)).await,
                Ok(Ok(_))
            );
            if ended {
                tokio::time::sleep(LAST_OUTPUT).await;
            }
            let Some((output, truncated, report)) = shared.terminals.shown(&terminal) else {
                return;
            };
            let text = shown_text(&output, truncated, report.map(|report| report.to_string()));
            // Nothing to show before the first output.
            if text != shown && !(output.is_empty() && report.is_none()) {
                let update = shown_update(&shared, &chat, &turn_id, &call_id, &terminal, &text);
                shared.signal(&chat, vec![update]).await;
                shown = text;
            }
            if ended || report.is_some() {
                return;
            }
        }
    });
}

/// The update that shows `text` as the output of `terminal` in a call.
fn shown_update(
    shared: &Shared,
    chat: &ChatUri,
    turn_id: &TurnId,
    call_id: &str,
    terminal: &str,
    text: &str,
) -> Signal {
    Signal::ToolCallUpdated {
        turn_id: turn_id.clone(),
        call_id: call_id.to_owned(),
        status: shared
            .call_status(chat, call_id)
            .unwrap_or(ToolCallStatus::Running),
        result: None,
        patch: ToolCallPatch {
            content: Some(vec![
                ToolCallContent::Terminal {
                    terminal_id: terminal.to_owned(),
                },
                ToolCallContent::Text {
                    text: text.to_owned(),
                },
            ]),
            ..ToolCallPatch::default()
        },
    }
}

/// Shows a terminal's whole output in the calls that follow it, before it is released.
pub(crate) async fn show_last(shared: &Shared, terminal: &str) {
    let Some((chat, followers)) = shared.terminals.followers(terminal) else {
        return;
    };
    if followers.is_empty() {
        return;
    }
    let Some((output, truncated, report)) = shared.terminals.shown(terminal) else {
        return;
    };
    let text = shown_text(&output, truncated, report.map(|report| report.to_string()));
    let updates = followers
        .iter()
        .map(|(turn_id, call_id)| shown_update(shared, &chat, turn_id, call_id, terminal, &text))
        .collect();
    shared.signal(&chat, updates).await;
}

/// The output as a fenced block (a fence longer than any run of backticks in it), its
/// newest [`SHOWN_BYTES`], and how the command ended once it has.
pub(crate) fn shown_text(output: &str, truncated: bool, ended: Option<String>) -> String {
    let mut start = output.len().saturating_sub(SHOWN_BYTES);
    while !output.is_char_boundary(start) {
        start += 1;
    }
    let tail = &output[start..];
    let longest = tail
        .split(|character| character != '`')
        .map(str::len)
        .max()
        .unwrap_or(0);
    let fence = "`".repeat((longest + 1).max(3));
    let mut text = String::new();
    if truncated || start > 0 {
        text.push_str("(earlier output left out)\n");
    }
    text.push_str(&fence);
    text.push('\n');
    text.push_str(tail);
    if !tail.is_empty() && !tail.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&fence);
    if let Some(ended) = ended {
        text.push_str(&format!("\n{ended}"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn output_is_fenced_beyond_its_own_backticks_and_says_how_it_ended() {
        assert_eq!(shown_text("ok\n", false, None), "```\nok\n```");
        assert_eq!(
            shown_text("a ```` b", false, Some("exit status 0".into())),
            "`````\na ```` b\n`````\nexit status 0"
        );
        let long = "x".repeat(SHOWN_BYTES + 10);
        let text = shown_text(&long, false, None);
        assert!(
            text.starts_with("(earlier output left out)\n```\n"),
            "{}",
            &text[..40]
        );
        assert_eq!(text.matches('x').count(), SHOWN_BYTES);
    }
}
