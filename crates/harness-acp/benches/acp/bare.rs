//! The test agent read by a bare line reader: newline-delimited JSON-RPC written and
//! read by hand, with no ACP SDK, harness or host — the floor under Hearth's figures.

use std::path::Path;
use std::process::Stdio;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

use crate::WAIT;
use crate::measure::monotonic_nanos;

/// The test agent with one session, driven by hand.
pub(crate) struct Bare {
    _child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    session: String,
    next_id: u64,
    _state: tempfile::TempDir,
}

impl Bare {
    /// Starts the agent, initializes it and opens a session.
    pub(crate) async fn start(agent: &Path) -> Self {
        let state = tempfile::tempdir().unwrap();
        let mut child = tokio::process::Command::new(agent)
            .env("HEARTH_TEST_AGENT_STATE", state.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut bare = Self {
            stdin: child.stdin.take().unwrap(),
            lines: BufReader::new(child.stdout.take().unwrap()).lines(),
            _child: child,
            session: String::new(),
            next_id: 1,
            _state: state,
        };
        let id = bare.send("initialize", json!({"protocolVersion": 1})).await;
        bare.answer(id, |_, _| {}).await;
        let cwd = bare._state.path().to_path_buf();
        let id = bare
            .send("session/new", json!({"cwd": cwd, "mcpServers": []}))
            .await;
        let session = bare.answer(id, |_, _| {}).await;
        bare.session = session["sessionId"].as_str().unwrap().to_owned();
        bare
    }

    async fn send(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
        id
    }

    /// Reads until the answer to `id`, handing the text of every agent message chunk
    /// to `chunk` with the monotonic time its line arrived; the answer's result.
    async fn answer(&mut self, id: u64, mut chunk: impl FnMut(&str, u64)) -> Value {
        loop {
            let line = tokio::time::timeout(WAIT, self.lines.next_line())
                .await
                .unwrap_or_else(|_| panic!("no answer to request {id} within {WAIT:?}"))
                .unwrap()
                .unwrap();
            let received = monotonic_nanos();
            let message: Value = serde_json::from_str(&line).unwrap();
            let update = &message["params"]["update"];
            if update["sessionUpdate"] == "agent_message_chunk" {
                chunk(update["content"]["text"].as_str().unwrap(), received);
            } else if message["id"] == id {
                assert!(message["error"].is_null(), "request {id} failed: {message}");
                return message["result"].clone();
            }
        }
    }

    /// Sends a prompt in the session; hands every chunk of the answer to `chunk`.
    pub(crate) async fn prompt(&mut self, text: &str, chunk: impl FnMut(&str, u64)) {
        let params = json!({
            "sessionId": self.session,
            "prompt": [{"type": "text", "text": text}],
        });
        let id = self.send("session/prompt", params).await;
        let answer = self.answer(id, chunk).await;
        assert_eq!(answer["stopReason"], "end_turn", "{text}: {answer}");
    }
}
