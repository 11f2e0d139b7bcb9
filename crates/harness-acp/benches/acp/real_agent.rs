//! A real agent, in a child process of its own (this benchmark again), whose mock
//! model server runs in a grandchild: neither one's memory counts as the other's.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};

use hearth_test_support::{MockModelServer, ModelTurn, RealAgent};

use crate::drive::{Driven, Program, turn};
use crate::fan_out::{chunk_text, long_answer};
use crate::measure::own_memory;
use crate::report::{Point, Row};
use crate::{AGENT_VARIABLE, FAN_OUT_CHUNKS, REAL_AGENT, ROLE_VARIABLE};

/// Runs the real agent's part in a child process; its rows.
pub(crate) fn run_in_child() -> Vec<Row> {
    let output = Command::new(std::env::current_exe().unwrap())
        .env(ROLE_VARIABLE, "real-agent")
        .env(AGENT_VARIABLE, REAL_AGENT.id())
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "the {} run failed ({})",
        REAL_AGENT.id(),
        output.status
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

pub(crate) fn agent_from_env() -> RealAgent {
    let id = std::env::var(AGENT_VARIABLE).unwrap();
    RealAgent::from_id(&id).unwrap_or_else(|| panic!("no real agent {id}"))
}

/// The mock model server, in a process of its own so that its memory is not counted
/// as Hearth's: it serves `pong`, then the fan-out answer, in the agent's wire format,
/// and stops when its stdin closes.
pub(crate) struct ModelServer {
    child: std::process::Child,
    url: String,
}

impl ModelServer {
    pub(crate) fn start(agent: RealAgent) -> Self {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .env(ROLE_VARIABLE, "model-server")
            .env(AGENT_VARIABLE, agent.id())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut url = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut url)
            .unwrap();
        Self {
            child,
            url: url.trim().to_owned(),
        }
    }
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        if self.child.wait().is_err() {
            eprintln!("the mock model server could not be waited for");
        }
    }
}

pub(crate) fn model_server_process() {
    let agent = agent_from_env();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let server = MockModelServer::start().await.unwrap();
        let model = agent.model();
        model.push(ModelTurn::text("pong")).push(ModelTurn::Chunks(
            (0..FAN_OUT_CHUNKS).map(chunk_text).collect(),
        ));
        model.install(&server);
        let mut stdout = std::io::stdout();
        writeln!(stdout, "{}", server.url()).unwrap();
        stdout.flush().unwrap();
        tokio::task::spawn_blocking(|| {
            let mut rest = Vec::new();
            // Its end (the driver went away) is all that matters.
            std::io::stdin().read_to_end(&mut rest).ok();
        })
        .await
        .unwrap();
    });
}

pub(crate) fn agent_process() {
    let agent = agent_from_env();
    let model = ModelServer::start(agent);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let rows = runtime.block_on(runs(agent, &model.url));
    drop(runtime);
    drop(model);
    let mut stdout = std::io::stdout();
    for row in rows {
        writeln!(stdout, "{}", serde_json::to_string(&row).unwrap()).unwrap();
    }
}

/// Memory and fan-out with the real agent, against the mock model at `model_url`.
pub(crate) async fn runs(agent: RealAgent, model_url: &str) -> Vec<Row> {
    let home = tempfile::tempdir().unwrap();
    let driven = Driven::start(agent.id(), agent.id(), |work| {
        let launch = agent.prepare(home.path(), model_url, work);
        Program {
            command: launch.command,
            args: launch.args,
            env: launch.env,
        }
    })
    .await;
    let mut rows = vec![driven.memory(Point::Idle, driven.idle, None).await];
    let chat = driven.new_chat().await;
    let answer = turn(driven.host(), &chat, "say ping").await;
    assert!(
        answer.contains("pong"),
        "{} answered {answer:?}",
        agent.id()
    );
    rows.push(driven.memory(Point::Ready, own_memory().now, None).await);
    let prompt = format!("the mock model streams {FAN_OUT_CHUNKS} deltas");
    rows.extend(long_answer(&driven, &chat, &prompt).await);
    driven.stop().await;
    rows
}
