//! OpenCode's database: `$XDG_DATA_HOME/opencode/opencode.db` (SQLite, read from a
//! private copy), tables `session` (id, directory, title, times in milliseconds), `message`
//! (`data` JSON with `role`) and `part` (`data` JSON: `text`, `tool` with its `state`).
//! Earlier versions kept JSON files under `storage/`, which this Hearth does not read (it
//! reports them).

use std::path::Path;

use serde_json::Value;
use sqlx::{Row as _, SqliteConnection};

use crate::jsonl::{millis, tool_summary};
use crate::model::{Agent, Changed, NativeSession, NativeTurn, Scan};
use crate::snapshot::Snapshot;

/// The database's file name.
const DATABASE: &str = "opencode.db";

/// Reads every session of the database under `root` (`$XDG_DATA_HOME/opencode`).
pub(crate) async fn read(root: &Path, changed: Changed<'_>) -> Scan {
    let mut scan = Scan::default();
    let database = root.join(DATABASE);
    if !database.is_file() {
        if root.join("storage/session").is_dir() {
            scan.problem(root.join("storage"), "sessions kept as files under storage/ (an OpenCode before its database): not read by this Hearth; opening them once in a current OpenCode moves them into opencode.db");
        }
        return scan;
    }
    let wal = root.join(format!("{DATABASE}-wal"));
    let wal_changed = wal.is_file() && changed(&wal);
    if !changed(&database) && !wal_changed {
        scan.unchanged.push(database);
        return scan;
    }
    scan.files.push(database.clone());
    if wal.is_file() {
        scan.files.push(wal);
    }
    match sessions(&database).await {
        Ok(sessions) => scan.sessions = sessions,
        Err(what) => scan.problem(&database, what),
    }
    scan
}

async fn sessions(database: &Path) -> Result<Vec<NativeSession>, String> {
    let snapshot = Snapshot::take(database)?;
    let mut connection = snapshot.connect().await?;
    let unexpected = |error: sqlx::Error| {
        format!(
            "not the database shape this Hearth reads (session: id, directory, title, time_created, time_updated): {error}"
        )
    };
    let rows = sqlx::query("SELECT id, directory, title, time_created, time_updated FROM session WHERE parent_id IS NULL ORDER BY time_created")
        .fetch_all(&mut connection)
        .await
        .map_err(unexpected)?;
    let mut sessions = Vec::new();
    for row in rows {
        let id: String = row.try_get("id").map_err(unexpected)?;
        let created: i64 = row.try_get("time_created").map_err(unexpected)?;
        let updated: i64 = row.try_get("time_updated").map_err(unexpected)?;
        let started_at = millis(created).ok_or("a session's `time_created` is not a time")?;
        let mut session = NativeSession {
            agent: Agent::OpenCode,
            native_id: id.clone(),
            source: database.to_path_buf(),
            folder: row
                .try_get::<Option<String>, _>("directory")
                .map_err(unexpected)?
                .map(Into::into),
            title: row.try_get("title").map_err(unexpected)?,
            started_at,
            updated_at: millis(updated).unwrap_or(started_at),
            turns: Vec::new(),
        };
        session.turns = turns(&mut connection, &id).await?;
        if !session.turns.is_empty() {
            sessions.push(session);
        }
    }
    Ok(sessions)
}

/// A session's exchanges: each user message starts one; the assistant's text and tool
/// parts go to the last.
async fn turns(
    connection: &mut SqliteConnection,
    session: &str,
) -> Result<Vec<NativeTurn>, String> {
    let rows = sqlx::query(
        "SELECT message.id AS message_id, message.data AS message, message.time_created AS at, part.data AS part
         FROM message JOIN part ON part.message_id = message.id
         WHERE message.session_id = ? ORDER BY message.time_created, message.id, part.id",
    )
    .bind(session)
    .fetch_all(&mut *connection)
    .await
    .map_err(|error| format!("not the message and part tables this Hearth reads: {error}"))?;
    let mut turns: Vec<NativeTurn> = Vec::new();
    let mut current_message = String::new();
    for row in rows {
        let message: String = row.try_get("message").map_err(|error| error.to_string())?;
        let part: String = row.try_get("part").map_err(|error| error.to_string())?;
        let at: i64 = row.try_get("at").map_err(|error| error.to_string())?;
        let message: Value = serde_json::from_str(&message)
            .map_err(|error| format!("a message's data is not JSON ({error})"))?;
        let part: Value = serde_json::from_str(&part)
            .map_err(|error| format!("a part's data is not JSON ({error})"))?;
        let message_id: String = row
            .try_get("message_id")
            .map_err(|error| error.to_string())?;
        let role = message["role"].as_str().unwrap_or_default();
        if role == "user" && current_message != message_id {
            current_message = message_id;
            let at = millis(at).ok_or("a message's `time_created` is not a time")?;
            turns.push(NativeTurn {
                user: String::new(),
                answer: String::new(),
                tools: Vec::new(),
                at,
            });
        }
        let Some(turn) = turns.last_mut() else {
            continue;
        };
        take_part(turn, role, &part);
    }
    Ok(turns)
}

fn take_part(turn: &mut NativeTurn, role: &str, part: &Value) {
    match (role, part["type"].as_str()) {
        ("user", Some("text")) if part["synthetic"] != true => {
            append(&mut turn.user, part["text"].as_str())
        }
        ("assistant", Some("text")) => append(&mut turn.answer, part["text"].as_str()),
        ("assistant", Some("tool")) => {
            let name = part["tool"].as_str().unwrap_or("tool");
            turn.tools.push(tool_summary(name, &part["state"]["input"]));
        }
        _ => {}
    }
}

fn append(text: &mut String, more: Option<&str>) {
    let Some(more) = more.filter(|more| !more.is_empty()) else {
        return;
    };
    if !text.is_empty() {
        text.push_str("\n\n");
    }
    text.push_str(more);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{self, Seen};
    use pretty_assertions::assert_eq;

    #[tokio::test]
    async fn reads_the_database_opencode_wrote() {
        let scan = read(&fixtures::root(Agent::OpenCode), &fixtures::all).await;
        assert_eq!(scan.problems, Vec::new());
        let seen: Vec<Seen> = scan.sessions.iter().map(fixtures::seen).collect();
        assert_eq!(
            seen,
            vec![(
                "ses_db950c4ccffezIAYyJH9hUclkv".to_owned(),
                Some("/tmp/.tmpPxAxX1/work".into()),
                Some("Hearth test session".to_owned()),
                vec![(
                    "\"Write plums into note.txt\"".to_owned(),
                    String::new(),
                    vec![r#"write: {"filePath":"/tmp/.tmpPxAxX1/work/note.txt","content":"plums\n"}"#.to_owned()],
                )],
            )]
        );
    }

    #[tokio::test]
    async fn a_database_of_another_shape_and_the_old_file_store_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("storage/session")).unwrap();
        let scan = read(dir.path(), &fixtures::all).await;
        assert!(scan.problems[0].what.contains("storage/"), "{scan:?}");
        std::fs::write(dir.path().join(DATABASE), b"").unwrap();
        let scan = read(dir.path(), &fixtures::all).await;
        assert_eq!(scan.problems.len(), 1, "{scan:?}");
        assert!(
            scan.problems[0].what.contains("not the database shape"),
            "{}",
            scan.problems[0]
        );
    }
}
