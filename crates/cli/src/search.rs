//! `hearth search`: every turn of every live session that holds the words, newest chat
//! first, each with its session, turn number and the text around the match (highlighted
//! on a terminal); `--rebuild` builds the index again from the stored turns.

use std::process::ExitCode;

use anyhow::Context as _;
use chrono::{NaiveDate, TimeZone as _};
use hearth_core::{HarnessId, Timestamp, escape_controls_inline};
use hearth_store::{SearchHit, SearchQuery};
use serde_json::json;

use crate::style::Paint;
use crate::toolbox::{json_line, write_out};
use hearth_app::App;

/// `hearth search` arguments.
#[derive(Debug, clap::Args)]
pub struct SearchArgs {
    /// The words to find (each of 3 characters or more; any part of a word, any case).
    #[arg(required_unless_present = "rebuild", num_args = 1.., value_name = "WORDS")]
    words: Vec<String>,
    /// Only sessions of this agent or provider (`codex`, `claude`, `openai`, …).
    #[arg(long, value_name = "ID")]
    agent: Option<String>,
    /// Only sessions of this project (its name or id).
    #[arg(long)]
    project: Option<String>,
    /// Only turns from this day on (`2026-11-30`) or this time (RFC 3339).
    #[arg(long, value_name = "WHEN")]
    since: Option<String>,
    /// How many hits.
    #[arg(long, default_value_t = 20)]
    limit: u32,
    /// The page after the one that ended with this cursor.
    #[arg(long)]
    cursor: Option<String>,
    /// One JSON object per hit; the cursor of a next page goes to stderr as
    /// `hearth: more: --cursor CURSOR`.
    #[arg(long)]
    json: bool,
    /// Build the search index again from every stored turn.
    #[arg(long, conflicts_with_all = ["words", "agent", "project", "since", "cursor"])]
    rebuild: bool,
}

/// `--since` as a time: a day (its start in the local zone) or an RFC 3339 time.
fn since(text: &str) -> anyhow::Result<Timestamp> {
    if let Ok(day) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        let start = day.and_hms_opt(0, 0, 0).context("the start of the day")?;
        if let Some(local) = chrono::Local.from_local_datetime(&start).earliest() {
            return Ok(local.with_timezone(&chrono::Utc));
        }
    }
    chrono::DateTime::parse_from_rfc3339(text)
        .map(|time| time.with_timezone(&chrono::Utc))
        .with_context(|| {
            format!("--since {text} is not a day (2026-11-30) or a time (2026-11-30T09:00:00Z)")
        })
}

/// A hit's snippet on one line: matches highlighted on a terminal, «marked» otherwise.
fn snippet(hit: &SearchHit, colour: bool) -> String {
    hit.pieces()
        .into_iter()
        .map(|(text, is_match)| {
            let text = escape_controls_inline(&text.replace(['\n', '\r'], " ")).into_owned();
            match (is_match, colour) {
                (false, _) => text,
                (true, true) => Paint::BOLD_YELLOW.paint(&text),
                (true, false) => format!("«{text}»"),
            }
        })
        .collect()
}

/// Runs `hearth search`.
pub async fn search(app: &App, args: SearchArgs) -> anyhow::Result<ExitCode> {
    let store = app.open_store().await?;
    if args.rebuild {
        let indexed = store.rebuild_search().await?;
        write_out(&format!("Search index rebuilt: {indexed} turns.\n"))?;
        return Ok(ExitCode::SUCCESS);
    }
    let project = match &args.project {
        Some(key) => Some(crate::projects::registry(app).await?.find(key).await?.id),
        None => None,
    };
    let query = SearchQuery {
        text: args.words.join(" "),
        harness: args.agent.as_deref().map(HarnessId::parse).transpose()?,
        project,
        chat: None,
        since: args.since.as_deref().map(since).transpose()?,
        viewer: None,
        cursor: args.cursor.clone(),
        limit: args.limit,
    };
    let page = store.search_turns(&query).await?;
    if args.json {
        for hit in &page.hits {
            json_line(&json!({
                "session": hit.session.to_string(),
                "title": hit.title,
                "chat": hit.chat.to_string(),
                "turnId": hit.turn_id.to_string(),
                "index": hit.index,
                "startedAt": hit.started_at.to_rfc3339(),
                "snippet": hit.pieces().into_iter().map(|(text, is_match)| json!({"text": text, "match": is_match})).collect::<Vec<_>>(),
            }))?;
        }
        if let Some(cursor) = &page.next_cursor {
            crate::shown::more(cursor);
        }
        return Ok(ExitCode::SUCCESS);
    }
    if page.hits.is_empty() {
        write_out("Nothing found.\n")?;
        return Ok(ExitCode::SUCCESS);
    }
    let colour = crate::style::on_stdout();
    for hit in &page.hits {
        let short = crate::names::short_session(store.as_ref(), &hit.session)
            .await
            .unwrap_or_else(|_| hit.session.id().to_string());
        let title = hit.title.as_deref().map_or_else(
            || "untitled".to_owned(),
            |title| escape_controls_inline(title).into_owned(),
        );
        let chat = if hit.chat.is_default() {
            String::new()
        } else {
            format!(" · chat {}", hit.chat.chat_id())
        };
        write_out(&format!(
            "{short}  {title}{chat} · turn {} · {}\n    {}\n",
            hit.index,
            crate::render::local_time(&hit.started_at),
            snippet(hit, colour)
        ))?;
    }
    if let Some(cursor) = &page.next_cursor {
        write_out(&format!("More: --cursor {cursor}\n"))?;
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_takes_a_day_or_a_time() {
        assert_eq!(
            since("2026-11-30T09:00:00Z").unwrap().to_rfc3339(),
            "2026-11-30T09:00:00+00:00"
        );
        assert!(since("2026-11-30").is_ok());
        let error = since("last week").unwrap_err().to_string();
        assert!(error.contains("is not a day"), "{error}");
    }
}
