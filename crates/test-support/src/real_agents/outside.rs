//! Running a real agent outside Hearth, the way its users do without an editor: its
//! own non-interactive mode (`claude -p`, `gemini -p`, `opencode run`, `copilot -p`), or
//! for an agent installed only as an ACP server (`codex-acp`, which has no `codex exec`)
//! a bare ACP client that prompts it once. Each leaves the session in the agent's own
//! store under its isolated home.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{ChildStdin, ChildStdout};

use super::{AgentLaunch, RealAgent};

/// Bound on one run outside Hearth.
const RUN: Duration = Duration::from_secs(120);

impl RealAgent {
    /// The arguments of the agent's own non-interactive mode for one prompt, continuing
    /// the session `continuing` when given; `None` for an agent installed only as an ACP
    /// server (Codex: run it with [`acp_prompt`]).
    pub fn print_args(self, prompt: &str, continuing: Option<&str>) -> Option<Vec<String>> {
        let entry = |path: &str| {
            RealAgent::agents_dir()
                .join(path)
                .to_string_lossy()
                .into_owned()
        };
        let mut args: Vec<String> = match self {
            // Both adapters run Claude Code: its CLI ships in the SDK they depend on.
            RealAgent::ClaudeAgent | RealAgent::ClaudeCode => {
                vec![entry(
                    "claude/node_modules/@anthropic-ai/claude-agent-sdk/cli.js",
                )]
            }
            RealAgent::Gemini => vec![entry(
                "gemini/node_modules/@google/gemini-cli/bundle/gemini.js",
            )],
            RealAgent::OpenCode => vec!["run".into()],
            RealAgent::Copilot => Vec::new(),
            RealAgent::Codex => return None,
        };
        if let Some(session) = continuing {
            args.extend(match self {
                RealAgent::OpenCode => ["--session".to_owned(), session.to_owned()],
                _ => ["--resume".to_owned(), session.to_owned()],
            });
        }
        if self != RealAgent::OpenCode {
            args.push("-p".into());
        }
        args.push(prompt.to_owned());
        Some(args)
    }

    /// Runs one prompt through the agent outside Hearth (see the module's docs) in
    /// `workdir`; returns what it printed (or the session id, for an ACP run). Panics
    /// with the agent's output when it fails or takes longer than two minutes.
    pub async fn run_outside(
        self,
        launch: &AgentLaunch,
        workdir: &Path,
        prompt: &str,
        continuing: Option<&str>,
    ) -> String {
        let Some(args) = self.print_args(prompt, continuing) else {
            return acp_prompt(launch, workdir, continuing, prompt).await;
        };
        let command_path = match self {
            RealAgent::ClaudeAgent | RealAgent::ClaudeCode | RealAgent::Gemini => {
                super::setup::find_program("node")
            }
            _ => launch.command.clone(),
        };
        let mut command = AgentLaunch {
            command: command_path,
            args,
            env: launch.env.clone(),
        }
        .tokio_command(workdir);
        command.stdin(Stdio::null());
        let output = tokio::time::timeout(RUN, command.output())
            .await
            .unwrap_or_else(|_| panic!("{}: a run outside Hearth took over {RUN:?}", self.id()))
            .unwrap_or_else(|error| panic!("{}: cannot start: {error}", self.id()));
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(
            output.status.success(),
            "{}: {:?}\nstdout: {stdout}\nstderr: {}",
            self.id(),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
        stdout
    }
}

async fn request(
    stdin: &mut ChildStdin,
    lines: &mut Lines<BufReader<ChildStdout>>,
    id: u64,
    method: &str,
    params: Value,
) -> Value {
    let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    stdin
        .write_all(format!("{message}\n").as_bytes())
        .await
        .unwrap();
    loop {
        let line = lines
            .next_line()
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("the agent stopped before answering {method}"));
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if message["id"] == id && message.get("method").is_none() {
            assert!(message.get("error").is_none(), "{method}: {message}");
            return message["result"].clone();
        }
    }
}

/// One prompt through an agent's ACP mode, by a bare client outside Hearth: initialize,
/// `session/new` (or `session/load` of `continuing`), `session/prompt`; the agent is
/// stopped after. Returns the session id.
pub async fn acp_prompt(
    launch: &AgentLaunch,
    workdir: &Path,
    continuing: Option<&str>,
    prompt: &str,
) -> String {
    let mut child = launch.tokio_command(workdir).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let run = async {
        let capabilities = json!({"protocolVersion": 1, "clientCapabilities": {}});
        request(&mut stdin, &mut lines, 1, "initialize", capabilities).await;
        let session = match continuing {
            Some(session) => {
                let params = json!({"sessionId": session, "cwd": workdir, "mcpServers": []});
                request(&mut stdin, &mut lines, 2, "session/load", params).await;
                session.to_owned()
            }
            None => {
                let params = json!({"cwd": workdir, "mcpServers": []});
                let created = request(&mut stdin, &mut lines, 2, "session/new", params).await;
                created["sessionId"].as_str().unwrap().to_owned()
            }
        };
        let params = json!({"sessionId": session, "prompt": [{"type": "text", "text": prompt}]});
        request(&mut stdin, &mut lines, 3, "session/prompt", params).await;
        session
    };
    let session = tokio::time::timeout(RUN, run)
        .await
        .expect("an ACP prompt outside Hearth");
    // codex-acp outlives a closed stdin: end its process group.
    if let Some(group) = child
        .id()
        .and_then(|id| rustix::process::Pid::from_raw(id as i32))
    {
        rustix::process::kill_process_group(group, rustix::process::Signal::KILL)
            .unwrap_or_else(|error| panic!("cannot end the agent's process group: {error}"));
    }
    child.wait().await.unwrap();
    session
}
