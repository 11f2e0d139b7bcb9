//! Claude Code's transcripts: `$CLAUDE_CONFIG_DIR/projects/<folder>/<session id>.jsonl`,
//! one JSON object per line (`type` `user` or `assistant` with the API `message`,
//! `sessionId`, `cwd`, `timestamp`; other types are bookkeeping). A user line whose
//! content is only tool results belongs to the turn before it.

use std::path::Path;

use serde_json::Value;

use crate::jsonl::{content_text, files_under, read_lines, time, tool_summary};
use crate::model::{Agent, Changed, NativeSession, NativeTurn, Scan};

/// Reads every transcript under `root` (the configuration folder).
pub(crate) fn read(root: &Path, changed: Changed<'_>) -> Scan {
    let mut scan = Scan::default();
    for file in files_under(&root.join("projects"), 2, &|name| name.ends_with(".jsonl")) {
        scan.read_file(&file, changed, read_transcript);
    }
    scan
}

/// One transcript; `None` for a file with no exchange (nothing was said yet).
pub(crate) fn read_transcript(file: &Path) -> Result<Option<NativeSession>, String> {
    let lines = read_lines(file)?;
    let mut session: Option<NativeSession> = None;
    let mut title = None;
    for line in &lines {
        let kind = line["type"].as_str().unwrap_or_default();
        if kind == "summary" || kind == "ai-title" {
            title = line["summary"]
                .as_str()
                .or(line["aiTitle"].as_str())
                .map(str::to_owned);
        }
        if !matches!(kind, "user" | "assistant")
            || line["isSidechain"] == true
            || line["isMeta"] == true
        {
            continue;
        }
        let Some(message) = line.get("message") else {
            return Err(format!(
                "a `{kind}` line has no `message`: not the transcript format this Hearth reads"
            ));
        };
        let session = match &mut session {
            Some(session) => session,
            None => session.insert(start(file, line)?),
        };
        if let Some(at) = time(&line["timestamp"]) {
            session.updated_at = at;
        }
        if kind == "user" {
            user_line(session, message, line);
        } else {
            assistant_line(session, message);
        }
    }
    Ok(session
        .filter(|session| !session.turns.is_empty())
        .map(|mut session| {
            session.title = title;
            session
        }))
}

fn start(file: &Path, line: &Value) -> Result<NativeSession, String> {
    let native_id = line["sessionId"]
        .as_str()
        .ok_or("a message line has no `sessionId`: not the transcript format this Hearth reads")?;
    let at = time(&line["timestamp"]).ok_or("a message line has no RFC 3339 `timestamp`")?;
    Ok(NativeSession {
        agent: Agent::Claude,
        native_id: native_id.to_owned(),
        source: file.to_path_buf(),
        folder: line["cwd"].as_str().map(Into::into),
        title: None,
        started_at: at,
        updated_at: at,
        turns: Vec::new(),
    })
}

fn user_line(session: &mut NativeSession, message: &Value, line: &Value) {
    let content = &message["content"];
    let only_results = content
        .as_array()
        .is_some_and(|blocks| blocks.iter().all(|block| block["type"] == "tool_result"));
    if only_results {
        return;
    }
    let text = content_text(content);
    if text.is_empty() {
        return;
    }
    session.turns.push(NativeTurn {
        user: text,
        answer: String::new(),
        tools: Vec::new(),
        at: time(&line["timestamp"]).unwrap_or(session.updated_at),
    });
}

fn assistant_line(session: &mut NativeSession, message: &Value) {
    let Some(turn) = session.turns.last_mut() else {
        return;
    };
    let Some(blocks) = message["content"].as_array() else {
        return;
    };
    for block in blocks {
        match block["type"].as_str() {
            Some("text") => {
                if let Some(text) = block["text"].as_str() {
                    if !turn.answer.is_empty() {
                        turn.answer.push_str("\n\n");
                    }
                    turn.answer.push_str(text);
                }
            }
            Some("tool_use") => {
                let name = block["name"].as_str().unwrap_or("tool");
                turn.tools.push(tool_summary(name, &block["input"]));
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{self, Seen};
    use pretty_assertions::assert_eq;

    #[test]
    fn reads_a_transcript_claude_code_wrote() {
        let scan = read(&fixtures::root(Agent::Claude), &fixtures::all);
        assert_eq!(scan.problems, Vec::new());
        let seen: Vec<Seen> = scan.sessions.iter().map(fixtures::seen).collect();
        assert_eq!(
            seen,
            vec![(
                "16d5267c-db96-495e-8c70-0abbed4981c7".to_owned(),
                Some("/tmp/.tmp7rr7LO/work".into()),
                None,
                vec![(
                    "Write plums into note.txt".to_owned(),
                    "I wrote the note.".to_owned(),
                    vec![r#"Write: {"file_path":"/tmp/.tmp7rr7LO/work/note.txt","content":"plums\n"}"#.to_owned()],
                )],
            )]
        );
    }

    #[test]
    fn a_message_line_without_a_session_id_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("projects/p/s.jsonl");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(
            &file,
            "{\"type\":\"user\",\"message\":{\"content\":\"hi\"}}\n",
        )
        .unwrap();
        let scan = read(dir.path(), &fixtures::all);
        assert_eq!(scan.sessions, Vec::new());
        assert_eq!(scan.problems.len(), 1);
        assert_eq!(scan.problems[0].file, file);
        assert!(
            scan.problems[0].what.contains("no `sessionId`"),
            "{}",
            scan.problems[0]
        );
    }
}
