//! GitHub Copilot CLI's session state: `$COPILOT_HOME/session-state/<id>/events.jsonl`,
//! one event per line (`{type, data, id, timestamp}`): `session.start` (id, folder),
//! `user.message`, `assistant.message` (content and `toolRequests`); `workspace.yaml`
//! beside it holds the session's name.

use std::path::Path;

use serde_json::Value;

use crate::jsonl::{files_under, read_lines, time, tool_summary};
use crate::model::{Agent, Changed, NativeSession, NativeTurn, Scan};

/// Reads every session under `root` (`COPILOT_HOME`).
pub(crate) fn read(root: &Path, changed: Changed<'_>) -> Scan {
    let mut scan = Scan::default();
    for file in files_under(&root.join("session-state"), 2, &|name| {
        name == "events.jsonl"
    }) {
        scan.read_file(&file, changed, read_events);
    }
    scan
}

/// The `name:` of a session's `workspace.yaml`, if it has one.
fn workspace_name(folder: &Path) -> Option<String> {
    let text = std::fs::read_to_string(folder.join("workspace.yaml")).ok()?;
    let name = text
        .lines()
        .find_map(|line| line.strip_prefix("name:"))?
        .trim();
    let name = name.trim_matches('"');
    (!name.is_empty()).then(|| name.to_owned())
}

/// One session's events; `None` when nothing was said yet.
pub(crate) fn read_events(file: &Path) -> Result<Option<NativeSession>, String> {
    let lines = read_lines(file)?;
    let Some(first) = lines.first() else {
        return Ok(None);
    };
    if first["type"] != "session.start" {
        return Err(format!(
            "its first event is not `session.start` (found {}): an event format this Hearth does not read",
            first["type"]
        ));
    }
    let data = &first["data"];
    let native_id = data["sessionId"]
        .as_str()
        .ok_or("its `session.start` has no `sessionId`")?;
    let started_at = time(&data["startTime"])
        .or_else(|| time(&first["timestamp"]))
        .ok_or("its `session.start` has no RFC 3339 `startTime`")?;
    let mut session = NativeSession {
        agent: Agent::Copilot,
        native_id: native_id.to_owned(),
        source: file.to_path_buf(),
        folder: data["context"]["cwd"].as_str().map(Into::into),
        title: file.parent().and_then(workspace_name),
        started_at,
        updated_at: started_at,
        turns: Vec::new(),
    };
    for event in &lines[1..] {
        if let Some(at) = time(&event["timestamp"]) {
            session.updated_at = at;
        }
        take_event(&mut session, event);
    }
    Ok((!session.turns.is_empty()).then_some(session))
}

fn take_event(session: &mut NativeSession, event: &Value) {
    let data = &event["data"];
    match event["type"].as_str() {
        Some("user.message") => session.turns.push(NativeTurn {
            user: data["content"].as_str().unwrap_or_default().to_owned(),
            answer: String::new(),
            tools: Vec::new(),
            at: time(&event["timestamp"]).unwrap_or(session.updated_at),
        }),
        Some("assistant.message") => {
            let Some(turn) = session.turns.last_mut() else {
                return;
            };
            if let Some(text) = data["content"].as_str().filter(|text| !text.is_empty()) {
                if !turn.answer.is_empty() {
                    turn.answer.push_str("\n\n");
                }
                turn.answer.push_str(text);
            }
            for request in data["toolRequests"].as_array().into_iter().flatten() {
                let name = request["name"].as_str().unwrap_or("tool");
                turn.tools.push(tool_summary(name, &request["arguments"]));
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
    fn reads_the_events_copilot_wrote() {
        let scan = read(&fixtures::root(Agent::Copilot), &fixtures::all);
        assert_eq!(scan.problems, Vec::new());
        let seen: Vec<Seen> = scan.sessions.iter().map(fixtures::seen).collect();
        assert_eq!(
            seen,
            vec![(
                "5be1dadc-e579-486f-aa21-d21564f027a0".to_owned(),
                Some("/tmp/.tmpYhdXEX/work".into()),
                Some("Write plums into note.txt".to_owned()),
                vec![(
                    "Write plums into note.txt".to_owned(),
                    "I wrote the note.".to_owned(),
                    vec![
                        r#"create: {"path":"/tmp/.tmpYhdXEX/work/note.txt","file_text":"plums\n"}"#
                            .to_owned()
                    ],
                )],
            )]
        );
    }

    #[test]
    fn events_of_another_shape_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("session-state/x/events.jsonl");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "{\"kind\":\"start\"}\n").unwrap();
        let scan = read(dir.path(), &fixtures::all);
        assert_eq!(scan.problems.len(), 1, "{scan:?}");
        assert!(
            scan.problems[0].what.contains("not `session.start`"),
            "{}",
            scan.problems[0]
        );
    }
}
