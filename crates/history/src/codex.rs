//! Codex's store, `$CODEX_HOME`: each session a rollout file
//! (`sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl`: `{timestamp, type, payload}` lines,
//! the first a `session_meta`), and in current versions a thread index, the `threads`
//! table of `state_<n>.sqlite` (id, rollout path, folder, title, archived), read here for
//! titles and for rollouts kept outside `sessions/`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;
use sqlx::Row as _;

use crate::jsonl::{files_under, read_lines, time, tool_summary};
use crate::model::{Agent, Changed, NativeSession, NativeTurn, Scan};
use crate::snapshot::Snapshot;

/// What the thread index says of a thread.
#[derive(Clone, Debug, Default)]
struct Thread {
    title: Option<String>,
    rollout: Option<PathBuf>,
}

/// Reads every rollout under `root` (`CODEX_HOME`), titled from the thread index.
pub(crate) async fn read(root: &Path, changed: Changed<'_>) -> Scan {
    let mut scan = Scan::default();
    let threads = match state_database(root) {
        Some(database) => match threads(&database).await {
            Ok(threads) => threads,
            Err(what) => {
                scan.problem(&database, what);
                BTreeMap::new()
            }
        },
        None => BTreeMap::new(),
    };
    let mut rollouts = files_under(&root.join("sessions"), 4, &|name| {
        name.starts_with("rollout-") && name.ends_with(".jsonl")
    });
    // Rollouts the index keeps elsewhere (archived ones), each session once: a rollout
    // is named after its session.
    for (id, thread) in &threads {
        let suffix = format!("-{id}.jsonl");
        let listed = rollouts
            .iter()
            .any(|file| file.to_string_lossy().ends_with(&suffix));
        if let Some(rollout) = &thread.rollout
            && !listed
            && rollout.is_file()
        {
            rollouts.push(rollout.clone());
        }
    }
    for file in rollouts {
        scan.read_file(&file, changed, |file| {
            let mut session = read_rollout(file)?;
            if let Some(session) = &mut session
                && let Some(thread) = threads.get(&session.native_id)
            {
                session.title.clone_from(&thread.title);
            }
            Ok(session)
        });
    }
    scan
}

/// The newest `state_<n>.sqlite` of `root`, if any.
fn state_database(root: &Path) -> Option<PathBuf> {
    files_under(root, 1, &|name| {
        name.starts_with("state_") && name.ends_with(".sqlite")
    })
    .into_iter()
    .max_by_key(|file| {
        file.file_stem().and_then(|stem| {
            stem.to_string_lossy()
                .strip_prefix("state_")?
                .parse::<u32>()
                .ok()
        })
    })
}

/// The threads of the index, by id, read from a copy.
async fn threads(database: &Path) -> Result<BTreeMap<String, Thread>, String> {
    let snapshot = Snapshot::take(database)?;
    let mut connection = snapshot.connect().await?;
    let rows = sqlx::query("SELECT id, rollout_path, title FROM threads")
        .fetch_all(&mut connection)
        .await
        .map_err(|error| format!("no `threads` table of the shape this Hearth reads (id, rollout_path, title): {error}"))?;
    let mut threads = BTreeMap::new();
    for row in rows {
        let id: String = row.try_get("id").map_err(|error| error.to_string())?;
        let rollout: Option<String> = row.try_get("rollout_path").unwrap_or_default();
        let title: Option<String> = row.try_get("title").unwrap_or_default();
        threads.insert(
            id,
            Thread {
                title: title.filter(|title| !title.is_empty()),
                rollout: rollout.map(PathBuf::from),
            },
        );
    }
    Ok(threads)
}

/// One rollout file; `None` when it holds no exchange yet.
pub(crate) fn read_rollout(file: &Path) -> Result<Option<NativeSession>, String> {
    let lines = read_lines(file)?;
    let Some(first) = lines.first() else {
        return Ok(None);
    };
    if first["type"] != "session_meta" {
        return Err(format!(
            "its first line is not a `session_meta` record (found type {}): a rollout format this Hearth does not read",
            first["type"]
        ));
    }
    let meta = &first["payload"];
    let native_id = meta["id"]
        .as_str()
        .ok_or("its `session_meta` has no `id`")?;
    let started_at = time(&meta["timestamp"])
        .or_else(|| time(&first["timestamp"]))
        .ok_or("its `session_meta` has no RFC 3339 `timestamp`")?;
    let mut session = NativeSession {
        agent: Agent::Codex,
        native_id: native_id.to_owned(),
        source: file.to_path_buf(),
        folder: meta["cwd"].as_str().map(Into::into),
        title: None,
        started_at,
        updated_at: started_at,
        turns: Vec::new(),
    };
    for line in &lines[1..] {
        if let Some(at) = time(&line["timestamp"]) {
            session.updated_at = at;
        }
        record(&mut session, line);
    }
    Ok((!session.turns.is_empty()).then_some(session))
}

/// Takes what a rollout line adds: a user message starts a turn, an agent message and
/// tool calls go to the last one.
fn record(session: &mut NativeSession, line: &Value) {
    let payload = &line["payload"];
    let kind = payload["type"].as_str().unwrap_or_default();
    match (line["type"].as_str().unwrap_or_default(), kind) {
        ("event_msg", "user_message") => session.turns.push(NativeTurn {
            user: payload["message"].as_str().unwrap_or_default().to_owned(),
            answer: String::new(),
            tools: Vec::new(),
            at: time(&line["timestamp"]).unwrap_or(session.updated_at),
        }),
        ("event_msg", "agent_message") => {
            if let (Some(turn), Some(text)) =
                (session.turns.last_mut(), payload["message"].as_str())
            {
                if !turn.answer.is_empty() {
                    turn.answer.push_str("\n\n");
                }
                turn.answer.push_str(text);
            }
        }
        ("response_item", "function_call" | "custom_tool_call" | "local_shell_call") => {
            if let Some(turn) = session.turns.last_mut() {
                let name = payload["name"].as_str().unwrap_or(kind);
                let arguments = payload
                    .get("arguments")
                    .or(payload.get("input"))
                    .or(payload.get("action"));
                turn.tools
                    .push(tool_summary(name, arguments.unwrap_or(&Value::Null)));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{self, Seen};
    use pretty_assertions::assert_eq;

    #[tokio::test]
    async fn reads_a_rollout_codex_wrote_titled_from_its_thread_index() {
        let scan = read(&fixtures::root(Agent::Codex), &fixtures::all).await;
        assert_eq!(scan.problems, Vec::new());
        let seen: Vec<Seen> = scan.sessions.iter().map(fixtures::seen).collect();
        assert_eq!(
            seen,
            vec![(
                "01a246af-5522-71d2-8c0d-c9d057be5d88".to_owned(),
                Some("/tmp/.tmpv5bXKn/work".into()),
                Some("Write plums into note.txt".to_owned()),
                vec![(
                    "Write plums into note.txt".to_owned(),
                    "I wrote the note.".to_owned(),
                    Vec::new(),
                )],
            )]
        );
    }

    #[tokio::test]
    async fn a_rollout_of_another_shape_is_reported_and_unchanged_files_are_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("sessions/2025/01/02/rollout-x.jsonl");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "{\"record_type\":\"state\"}\n").unwrap();
        let scan = read(dir.path(), &fixtures::all).await;
        assert_eq!(scan.problems.len(), 1, "{scan:?}");
        assert!(
            scan.problems[0].what.contains("not a `session_meta`"),
            "{}",
            scan.problems[0]
        );
        let scan = read(dir.path(), &|_| false).await;
        assert_eq!((scan.problems.len(), scan.unchanged), (0, vec![file]));
    }
}
