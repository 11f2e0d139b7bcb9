//! Gemini CLI's chats: `~/.gemini/tmp/<project>/chats/session-*.jsonl` (a header line
//! with `sessionId` and `startTime`, then messages — `{id, timestamp, type: user|gemini,
//! content, toolCalls}` — and `{"$set": {…}}` updates of the header or the whole message
//! list), or in earlier versions `session-*.json`, one object with `messages`. The
//! project's folder is in `tmp/<project>/.project_root`.

use std::path::Path;

use serde_json::{Map, Value};

use crate::jsonl::{content_text, files_under, read_lines, time, tool_summary};
use crate::model::{Agent, Changed, NativeSession, NativeTurn, Scan};

/// What Gemini CLI puts before the user's first message; not the user's words.
const SESSION_CONTEXT: &str = "<session_context>";

/// Reads every chat under `root` (`~/.gemini`).
pub(crate) fn read(root: &Path, changed: Changed<'_>) -> Scan {
    let mut scan = Scan::default();
    let chats = files_under(&root.join("tmp"), 3, &|name| {
        name.starts_with("session-") && (name.ends_with(".jsonl") || name.ends_with(".json"))
    });
    for file in chats {
        if file
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|name| name == "chats")
        {
            scan.read_file(&file, changed, read_chat);
        }
    }
    scan
}

/// The header and the messages of a chat file, in either format.
fn header_and_messages(file: &Path) -> Result<(Map<String, Value>, Vec<Value>), String> {
    if file
        .extension()
        .is_some_and(|extension| extension == "json")
    {
        let text =
            std::fs::read_to_string(file).map_err(|error| format!("cannot read it: {error}"))?;
        let mut value: Value =
            serde_json::from_str(&text).map_err(|error| format!("not JSON ({error})"))?;
        let messages = value["messages"].take();
        let Value::Object(header) = value else {
            return Err("not a JSON object".into());
        };
        return Ok((header, messages.as_array().cloned().unwrap_or_default()));
    }
    let mut lines = read_lines(file)?.into_iter();
    let Some(Value::Object(mut header)) = lines.next() else {
        return Ok((Map::new(), Vec::new()));
    };
    let mut messages: Vec<Value> = Vec::new();
    for line in lines {
        if let Some(Value::Object(set)) = line.get("$set") {
            for (key, value) in set {
                if key == "messages" {
                    messages = value.as_array().cloned().unwrap_or_default();
                } else {
                    header.insert(key.clone(), value.clone());
                }
            }
        } else if let Some(position) = messages
            .iter()
            .position(|message| message["id"] == line["id"])
        {
            messages[position] = line;
        } else {
            messages.push(line);
        }
    }
    Ok((header, messages))
}

/// One chat; `None` when nobody said anything yet.
pub(crate) fn read_chat(file: &Path) -> Result<Option<NativeSession>, String> {
    let (header, messages) = header_and_messages(file)?;
    if header.is_empty() && messages.is_empty() {
        return Ok(None);
    }
    let native_id = header
        .get("sessionId")
        .and_then(Value::as_str)
        .ok_or("no `sessionId` in its header: not a chat format this Hearth reads")?;
    let started_at = header
        .get("startTime")
        .and_then(time)
        .ok_or("no RFC 3339 `startTime` in its header")?;
    let folder = file
        .parent()
        .and_then(Path::parent)
        .and_then(|project| std::fs::read_to_string(project.join(".project_root")).ok())
        .map(|root| root.trim().into());
    let mut session = NativeSession {
        agent: Agent::Gemini,
        native_id: native_id.to_owned(),
        source: file.to_path_buf(),
        folder,
        title: header
            .get("summary")
            .and_then(Value::as_str)
            .map(str::to_owned),
        started_at,
        updated_at: header
            .get("lastUpdated")
            .and_then(time)
            .unwrap_or(started_at),
        turns: Vec::new(),
    };
    for message in &messages {
        take_message(&mut session, message);
    }
    Ok((!session.turns.is_empty()).then_some(session))
}

fn take_message(session: &mut NativeSession, message: &Value) {
    match message["type"].as_str() {
        Some("user") => {
            let text = content_text(&message["content"]);
            if text.is_empty() || text.starts_with(SESSION_CONTEXT) {
                return;
            }
            session.turns.push(NativeTurn {
                user: text,
                answer: String::new(),
                tools: Vec::new(),
                at: time(&message["timestamp"]).unwrap_or(session.started_at),
            });
        }
        Some("gemini") => {
            let Some(turn) = session.turns.last_mut() else {
                return;
            };
            let text = content_text(&message["content"]);
            if !text.is_empty() {
                if !turn.answer.is_empty() {
                    turn.answer.push_str("\n\n");
                }
                turn.answer.push_str(&text);
            }
            for call in message["toolCalls"].as_array().into_iter().flatten() {
                let name = call["name"].as_str().unwrap_or("tool");
                turn.tools.push(tool_summary(name, &call["args"]));
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

    #[test]
    fn reads_a_chat_gemini_cli_wrote() {
        let scan = read(&fixtures::root(Agent::Gemini), &fixtures::all);
        assert_eq!(scan.problems, Vec::new());
        let seen: Vec<Seen> = scan.sessions.iter().map(fixtures::seen).collect();
        assert_eq!(
            seen,
            vec![(
                "63d28250-7076-40ab-afcf-cd367c9a0246".to_owned(),
                Some("/tmp/.tmpe3DseM/work".into()),
                None,
                vec![(
                    "Write plums into note.txt".to_owned(),
                    "I wrote the note.".to_owned(),
                    vec![r#"write_file: {"file_path":"/tmp/.tmpe3DseM/work/note.txt","content":"plums\n"}"#.to_owned()],
                )],
            )]
        );
    }

    #[test]
    fn a_chat_without_a_session_id_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("tmp/p/chats/session-1.json");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "{\"messages\": []}").unwrap();
        let scan = read(dir.path(), &fixtures::all);
        assert_eq!(scan.problems.len(), 1, "{scan:?}");
        assert!(
            scan.problems[0].what.contains("no `sessionId`"),
            "{}",
            scan.problems[0]
        );
    }
}
