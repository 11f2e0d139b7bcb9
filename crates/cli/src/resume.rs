//! `hearth resume` and `/resume`: the newest sessions, each with its title, folder,
//! agent and last message, to pick one and go on with it; and the last turns of a chat
//! being continued, shown so the user sees where it left off.

use std::process::ExitCode;

use hearth_core::{ChatUri, SessionSummary, Turn, escape_controls_inline};
use hearth_store::{SessionQuery, Store};

use crate::keyboard::{Keyboard, Setup, Typed};
use crate::toolbox::write_out;
use hearth_app::App;

/// The most characters of a last message shown.
const LAST_MESSAGE_CHARS: usize = 60;

/// `hearth resume` arguments.
#[derive(Debug, clap::Args)]
pub struct ResumeArgs {
    /// How many of the newest sessions to list.
    #[arg(long, default_value_t = 20)]
    limit: u32,
    /// Also print the model's visible reasoning (to stderr) in the chat.
    #[arg(long)]
    show_reasoning: bool,
}

/// One session as the list shows it.
pub(crate) struct Listed {
    pub session: SessionSummary,
    line: String,
}

/// A text cut to `max` characters, on one line.
fn cut(text: &str, max: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= max {
        return escape_controls_inline(&line).into_owned();
    }
    let kept: String = line.chars().take(max - 1).collect();
    format!("{}…", escape_controls_inline(&kept))
}

/// The last thing said in a turn: the answer's text, else the prompt.
fn last_message(turn: &Turn) -> String {
    let answer = turn.response_text();
    if answer.trim().is_empty() {
        format!("› {}", cut(&turn.user.text, LAST_MESSAGE_CHARS))
    } else {
        cut(&answer, LAST_MESSAGE_CHARS)
    }
}

/// A folder as people write it: `~/…` under the home directory.
fn folder(session: &SessionSummary) -> String {
    let Some(directory) = session.working_directories.first() else {
        return "no folder".to_owned();
    };
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    match home.and_then(|home| {
        directory
            .strip_prefix(home)
            .ok()
            .map(|rest| rest.to_path_buf())
    }) {
        Some(rest) if rest.as_os_str().is_empty() => "~".to_owned(),
        Some(rest) => format!("~/{}", escape_controls_inline(&rest.display().to_string())),
        None => escape_controls_inline(&directory.display().to_string()).into_owned(),
    }
}

/// The newest sessions with their lines.
pub(crate) async fn newest(store: &dyn Store, limit: u32) -> anyhow::Result<Vec<Listed>> {
    let page = store
        .list_sessions(&SessionQuery {
            limit: limit.clamp(1, 500),
            ..SessionQuery::default()
        })
        .await?;
    let mut listed = Vec::new();
    for session in page.sessions {
        let last = store
            .turn_page(&ChatUri::default_for(&session.uri), None, 1)
            .await
            .ok()
            .and_then(|page| page.turns.last().map(last_message))
            .unwrap_or_else(|| "(no messages yet)".to_owned());
        let title = session
            .title
            .as_deref()
            .map_or_else(|| "untitled".to_owned(), |title| cut(title, 40));
        let short = crate::names::short_session(store, &session.uri)
            .await
            .unwrap_or_else(|_| session.uri.id().to_string());
        let line = format!(
            "{short}  {title}  ·  {}  ·  {}  ·  {}\n      {last}",
            folder(&session),
            session.harness,
            crate::render::local_time(&session.updated_at),
        );
        listed.push(Listed { session, line });
    }
    Ok(listed)
}

/// The list, numbered.
pub(crate) fn numbered(listed: &[Listed]) -> String {
    let mut out = String::new();
    for (index, item) in listed.iter().enumerate() {
        out.push_str(&format!("[{:>2}] {}\n", index + 1, item.line));
    }
    out
}

/// Asks which session to open; `None` when the user picks none.
#[allow(clippy::print_stderr)]
pub(crate) async fn pick<'a>(
    listed: &'a [Listed],
    keyboard: &mut Keyboard,
) -> Option<&'a SessionSummary> {
    loop {
        eprint!("open which? (number; Enter for none) ");
        let Typed::Line(line) = keyboard.answer().await else {
            return None;
        };
        let line = line.trim();
        if line.is_empty() {
            return None;
        }
        match line.parse::<usize>() {
            Ok(number) if (1..=listed.len()).contains(&number) => {
                return Some(&listed[number - 1].session);
            }
            _ => eprintln!(
                "  `{}` is not one of the numbers",
                escape_controls_inline(line)
            ),
        }
    }
}

/// Runs `hearth resume`: the list, and on a terminal the chat picked from it.
#[allow(clippy::print_stderr)]
pub async fn resume(app: &App, args: ResumeArgs) -> anyhow::Result<ExitCode> {
    let store = app.open_store().await?;
    let listed = newest(store.as_ref(), args.limit).await?;
    if listed.is_empty() {
        eprintln!("hearth: no sessions yet: start one with `hearth chat`");
        return Ok(ExitCode::SUCCESS);
    }
    write_out(&numbered(&listed))?;
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stdin());
    if !terminal {
        eprintln!("hearth: continue one with `hearth chat --session ID`");
        return Ok(ExitCode::SUCCESS);
    }
    let picked = {
        let mut keyboard = Keyboard::start(Setup::Stdin { prompts: true })?;
        pick(&listed, &mut keyboard)
            .await
            .map(|session| session.uri.to_string())
    };
    drop(store);
    match picked {
        Some(session) => {
            crate::chat::chat(
                app,
                crate::chat::ChatArgs::continuing(session, args.show_reasoning),
            )
            .await
        }
        None => Ok(ExitCode::SUCCESS),
    }
}

/// How many of a continued chat's last turns are shown.
const RECENT_TURNS: usize = 3;

/// Shows the last turns of a chat being continued, on a terminal, so the user sees where
/// it left off.
pub(crate) async fn show_recent(host: &hearth_host::Host, chat: &ChatUri) {
    if !std::io::IsTerminal::is_terminal(&std::io::stdout()) {
        return;
    }
    let Ok(state) = host.chat(chat).await else {
        return;
    };
    if let Some(text) = recent_text(&state.turns) {
        let _ignored = crate::toolbox::write_out(&text);
    }
}

/// The last [`RECENT_TURNS`] turns as the chat printed them, under a line saying how
/// many came before; `None` for a chat with no turns.
fn recent_text(turns: &[hearth_core::Turn]) -> Option<String> {
    if turns.is_empty() {
        return None;
    }
    let shown = &turns[turns.len().saturating_sub(RECENT_TURNS)..];
    let mut out = if shown.len() < turns.len() {
        format!("── the last {} of {} turns ──\n", shown.len(), turns.len())
    } else {
        "── earlier in this chat ──\n".to_owned()
    };
    for turn in shown {
        crate::render::turn(turn, &mut out);
    }
    out.push_str("──\n");
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_continued_chat_shows_its_last_three_turns_under_a_count() {
        let turns: Vec<Turn> = (1..=5)
            .map(|n| {
                Turn::started(
                    hearth_core::TurnId::generate(),
                    hearth_core::UserMessage::text(format!("prompt {n}")),
                    hearth_core::now(),
                )
            })
            .collect();
        assert_eq!(recent_text(&[]), None);
        let text = recent_text(&turns).unwrap();
        assert!(
            text.starts_with("── the last 3 of 5 turns ──\n› prompt 3\n"),
            "{text}"
        );
        assert!(
            text.contains("› prompt 5\n") && !text.contains("prompt 2"),
            "{text}"
        );
        let text = recent_text(&turns[..2]).unwrap();
        assert!(
            text.starts_with("── earlier in this chat ──\n› prompt 1\n"),
            "{text}"
        );
    }

    #[test]
    fn long_and_hostile_text_is_cut_to_one_safe_line() {
        assert_eq!(cut("a\nb   c", 10), "a b c");
        assert_eq!(cut(&"x".repeat(70), 10), format!("{}…", "x".repeat(9)));
        assert_eq!(cut("bad\x1b[2J", 20), "bad\\x1b[2J");
    }
}
