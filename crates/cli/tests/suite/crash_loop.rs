//! The crash loop: `kill -9` at pseudo-random points of streaming turns on one session,
//! over and over — the `hearth run` process itself, or the `hearth serve` in the middle
//! — then the database must pass `PRAGMA integrity_check`, every turn whose run was
//! acknowledged (its `started` line printed) must be stored with its prompt intact and an
//! answer that is a prefix of the scripted one, and the next turn must run normally.
//!
//! The points come from a fixed seed per test, so a failure names its round and seed and
//! replays the same way. Each point is an amount of streamed answer text to wait for (0
//! is "just acknowledged"); a few rounds instead kill after a short pseudo-random delay,
//! which may land before the acknowledgement (while the database opens or a previous
//! crash is recovered) — such a turn may or may not be stored, and either is fine.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hearth_server::{read_record, server_file};
use serde_json::Value;
use sqlx::ConnectOptions;
use sqlx::sqlite::SqliteConnectOptions;

use super::support::Hearth;

/// Kills per test.
const ROUNDS: usize = 32;
/// Pieces of the scripted answer, streamed `STEP_DELAY_MS` apart.
const PIECES: usize = 60;
const STEP_DELAY_MS: u64 = 6;
/// One round in this many kills after a delay instead of after streamed text.
const DELAY_KILL_ONE_IN: u64 = 8;
/// The longest such delay.
const DELAY_KILL_MAX_MS: u64 = 120;
/// How long any one wait may take.
const WAIT: Duration = Duration::from_secs(30);

/// A small deterministic generator (SplitMix64): the same seed, the same kill points.
struct Points(u64);

impl Points {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..bound`.
    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound
    }
}

/// Where a round kills.
#[derive(Clone, Copy, Debug)]
enum KillPoint {
    /// Once this much answer text streamed (after the acknowledgement).
    AfterText(usize),
    /// This long after the client started, acknowledged or not.
    AfterDelay(Duration),
}

impl KillPoint {
    fn choose(points: &mut Points, round: usize, answer: &str) -> Self {
        // The first round creates the session, so it always waits for the acknowledgement.
        if round > 0 && points.below(DELAY_KILL_ONE_IN) == 0 {
            KillPoint::AfterDelay(Duration::from_millis(points.below(DELAY_KILL_MAX_MS)))
        } else {
            KillPoint::AfterText(points.below(answer.len() as u64) as usize)
        }
    }
}

/// One piece of the scripted answer.
fn piece(number: usize) -> String {
    format!("piece {number:02} of the answer, streamed slowly. ")
}

/// The scripted answer: pieces of text with a few bytes each, so a turn streams for
/// several checkpoint intervals and crosses the checkpoint byte threshold.
fn answer() -> String {
    (0..PIECES).map(piece).collect()
}

/// A scenario whose one turn streams the answer piece by piece.
fn scenario(hearth: &Hearth) -> PathBuf {
    let mut yaml = String::from("name: crash-loop\nturns:\n  - steps:\n");
    for number in 0..PIECES {
        yaml.push_str(&format!(
            "      - text: {:?}\n        delay_ms: {STEP_DELAY_MS}\n",
            piece(number)
        ));
    }
    hearth.write("crash-loop.yaml", &yaml)
}

/// A spawned `hearth` whose stdout lines arrive on a channel and whose stderr is kept.
struct Process {
    child: Child,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
}

impl Process {
    fn spawn(mut command: std::process::Command) -> Self {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().unwrap();
        let kept = Arc::clone(&stderr);
        std::thread::spawn(move || {
            let mut buffer = [0_u8; 4096];
            while let Ok(count) = pipe.read(&mut buffer) {
                if count == 0 {
                    break;
                }
                kept.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buffer[..count]));
            }
        });
        Self {
            child,
            lines,
            stderr,
        }
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// The next stdout line; `None` once stdout closed. Fails after `deadline`.
    fn next_line(&mut self, deadline: Instant, what: &str) -> Option<String> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(left) {
            Ok(line) => Some(line),
            Err(RecvTimeoutError::Disconnected) => None,
            Err(RecvTimeoutError::Timeout) => {
                panic!(
                    "{what}: no output within {WAIT:?}; stderr:\n{}",
                    self.stderr()
                )
            }
        }
    }

    fn kill(&mut self) {
        self.child.kill().unwrap();
        self.wait(&format!("process {} after kill -9", self.child.id()));
    }

    /// Waits for the process to end, failing after [`WAIT`].
    fn wait(&mut self, what: &str) -> ExitStatus {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "{what}: still running after {WAIT:?}; stderr:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            self.child.kill().ok();
            self.child.wait().ok();
        }
    }
}

/// What one `hearth run --json` showed before it ended or was killed.
#[derive(Debug, Default)]
struct Seen {
    /// The `started` line's session and turn id: the turn was acknowledged.
    started: Option<(String, String)>,
    /// Answer text streamed.
    text: String,
    /// The stop reason of `turn_completed`, when the turn ended while watched.
    stop_reason: Option<String>,
}

impl Seen {
    /// Folds in one `--json` line.
    fn line(&mut self, line: &str) {
        let value: Value = serde_json::from_str(line)
            .unwrap_or_else(|error| panic!("not a JSON line ({error}): {line}"));
        if value["type"] == "started" {
            self.started = Some((
                value["session"].as_str().unwrap().to_owned(),
                value["turnId"].as_str().unwrap().to_owned(),
            ));
            return;
        }
        match value["action"]["type"].as_str() {
            Some("text_delta") => self
                .text
                .push_str(value["action"]["text"].as_str().unwrap()),
            Some("turn_completed") => {
                self.stop_reason = reason_text(&value["action"]["stopReason"]);
            }
            _ => {}
        }
    }
}

/// Reads a run's output until `point`; returns what it saw. `victim` is killed there
/// (the client itself, or the server behind it).
fn watch_and_kill(
    client: &mut Process,
    victim: &mut dyn FnMut(&mut Process),
    point: KillPoint,
    context: &str,
) -> Seen {
    let started = Instant::now();
    let deadline = started + WAIT;
    let mut seen = Seen::default();
    match point {
        KillPoint::AfterText(bytes) => loop {
            let Some(line) = client.next_line(deadline, context) else {
                panic!(
                    "{context}: the run ended before it was killed (saw {seen:?}); stderr:\n{}",
                    client.stderr()
                );
            };
            seen.line(&line);
            assert!(
                seen.stop_reason.is_none(),
                "{context}: the turn ended before {bytes} bytes streamed: {seen:?}"
            );
            if seen.started.is_some() && seen.text.len() >= bytes {
                victim(client);
                break;
            }
        },
        KillPoint::AfterDelay(delay) => {
            // Lines that arrive before the delay ends are read as they come.
            let kill_at = started + delay;
            loop {
                let left = kill_at.saturating_duration_since(Instant::now());
                match client.lines.recv_timeout(left) {
                    Ok(line) => seen.line(&line),
                    Err(RecvTimeoutError::Timeout) => break,
                    Err(RecvTimeoutError::Disconnected) => panic!(
                        "{context}: the run ended before it was killed; stderr:\n{}",
                        client.stderr()
                    ),
                }
            }
            victim(client);
        }
    }
    // A client that outlives a killed server is read to its end by the caller.
    seen
}

/// One round's prompt and what its run showed.
#[derive(Debug)]
struct Round {
    prompt: String,
    point: KillPoint,
    seen: Seen,
}

/// A stored turn as `sessions show --json` gives it.
#[derive(Debug)]
struct Stored {
    id: String,
    prompt: String,
    stop_reason: Option<String>,
    text: String,
}

/// A stop reason as text: `end_turn`, `incomplete`, or the JSON of another value.
fn reason_text(reason: &Value) -> Option<String> {
    match reason {
        Value::Null => None,
        Value::String(text) => Some(text.clone()),
        other => Some(other.to_string()),
    }
}

/// Runs `hearth` to its end, in bounded time; it must succeed. Returns stdout.
fn run_to_end(hearth: &Hearth, args: &[&str]) -> String {
    let mut command = hearth.command();
    command.args(args);
    let mut process = Process::spawn(command);
    let what = format!("hearth {args:?}");
    let deadline = Instant::now() + WAIT;
    let mut stdout = String::new();
    while let Some(line) = process.next_line(deadline, &what) {
        stdout.push_str(&line);
        stdout.push('\n');
    }
    let status = process.wait(&what);
    assert!(status.success(), "{what}: {status}\n{}", process.stderr());
    stdout
}

fn stored_turns(hearth: &Hearth, session: &str) -> Vec<Stored> {
    let shown = run_to_end(hearth, &["--local", "sessions", "show", "--json", session]);
    let shown: Value = serde_json::from_str(&shown).unwrap();
    let chats = shown["chats"].as_array().unwrap();
    assert_eq!(chats.len(), 1, "one chat expected: {shown}");
    chats[0]["turns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|turn| Stored {
            id: turn["id"].as_str().unwrap().to_owned(),
            prompt: turn["user"]["text"].as_str().unwrap().to_owned(),
            stop_reason: reason_text(&turn["stopReason"]),
            text: turn["parts"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|part| part["type"] == "text")
                .map(|part| part["text"].as_str().unwrap())
                .collect(),
        })
        .collect()
}

/// `PRAGMA integrity_check` and `foreign_key_check` of the database, run directly.
fn check_database(database: &Path) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut connection = SqliteConnectOptions::new()
            .filename(database)
            .connect()
            .await
            .unwrap();
        let integrity: Vec<String> = sqlx::query_scalar("PRAGMA integrity_check")
            .fetch_all(&mut connection)
            .await
            .unwrap();
        assert_eq!(integrity, vec!["ok".to_owned()], "PRAGMA integrity_check");
        let dangling = sqlx::query("PRAGMA foreign_key_check")
            .fetch_all(&mut connection)
            .await
            .unwrap();
        assert!(
            dangling.is_empty(),
            "PRAGMA foreign_key_check: {} rows",
            dangling.len()
        );
    });
}

/// Every acknowledged turn stored, in order, with its prompt; every stored turn's
/// answer a prefix of the scripted one; the final turn complete.
fn check_turns(hearth: &Hearth, session: &str, rounds: &[Round], final_turn: &str, seed: u64) {
    let answer = answer();
    let stored = stored_turns(hearth, session);
    let context = |what: &str| format!("seed {seed:#x}: {what}; rounds: {rounds:#?}");
    let mut position = 0;
    for (number, round) in rounds.iter().enumerate() {
        let found = stored[position..]
            .iter()
            .position(|turn| turn.prompt == round.prompt);
        match (&round.seen.started, found) {
            (Some((_, turn_id)), Some(offset)) => {
                assert_eq!(
                    &stored[position + offset].id,
                    turn_id,
                    "{}",
                    context(&format!("round {number}'s turn is stored under another id"))
                );
                position += offset + 1;
            }
            (Some((_, turn_id)), None) => panic!(
                "{}",
                context(&format!(
                    "round {number} was acknowledged (turn {turn_id}, killed at {:?}) but its turn is not stored, or not in order",
                    round.point
                ))
            ),
            (None, Some(offset)) => position += offset + 1,
            (None, None) => {}
        }
    }
    let (last, killed) = stored.split_last().unwrap();
    assert_eq!(
        last.id,
        final_turn,
        "{}",
        context("the final turn is not the last stored")
    );
    assert_eq!(
        (last.stop_reason.as_deref(), last.text.as_str()),
        (Some("end_turn"), answer.as_str()),
        "{}",
        context("the final turn")
    );
    for turn in killed {
        assert!(
            rounds.iter().any(|round| round.prompt == turn.prompt),
            "{}",
            context(&format!("a stored turn nobody sent: {turn:?}"))
        );
        match turn.stop_reason.as_deref() {
            Some("incomplete") => assert!(
                answer.starts_with(&turn.text),
                "{}",
                context(&format!(
                    "a killed turn's stored answer is not a prefix of the scripted one: {turn:?}"
                ))
            ),
            Some("end_turn") => assert_eq!(
                turn.text,
                answer,
                "{}",
                context(&format!(
                    "a complete turn without its whole answer: {turn:?}"
                ))
            ),
            other => panic!(
                "{}",
                context(&format!(
                    "a killed turn reads as {other:?}, not incomplete or complete: {turn:?}"
                ))
            ),
        }
    }
    // The loop exercised what it claims: most runs were acknowledged, and some kills
    // came after a checkpoint had saved part of the answer.
    let acknowledged = rounds
        .iter()
        .filter(|round| round.seen.started.is_some())
        .count();
    assert!(
        acknowledged >= rounds.len() / 2,
        "{}",
        context(&format!("only {acknowledged} runs were acknowledged"))
    );
    assert!(
        killed.iter().any(|turn| !turn.text.is_empty()),
        "{}",
        context("no killed turn had any of its answer saved")
    );
    let mut ids: Vec<&str> = stored.iter().map(|turn| turn.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(
        ids.len(),
        stored.len(),
        "{}",
        context("a turn id stored twice")
    );
}

/// Runs a prompt to its end and returns its turn id; it must complete normally.
fn final_run(mut client: Process, context: &str) -> String {
    let deadline = Instant::now() + WAIT;
    let mut seen = Seen::default();
    while let Some(line) = client.next_line(deadline, context) {
        seen.line(&line);
    }
    let status = client.wait(context);
    assert!(
        status.success(),
        "{context}: {status}; stderr:\n{}",
        client.stderr()
    );
    assert_eq!(
        (seen.stop_reason.as_deref(), seen.text.as_str()),
        (Some("end_turn"), answer().as_str()),
        "{context}"
    );
    seen.started.unwrap().1
}

#[test]
fn kill_9_of_hearth_run_at_random_points_loses_no_acknowledged_turn() {
    const SEED: u64 = 0x6865_6172_7468_0001;
    let hearth = Hearth::new();
    let scenario = scenario(&hearth);
    let answer = answer();
    let mut points = Points(SEED);
    let run = |session: Option<&str>, prompt: &str, scale: &str| {
        let mut command = hearth.command();
        command
            .env("HEARTH_REPLAY_DELAY_SCALE", scale)
            .args(["--local", "run", "--json", "--scenario"])
            .arg(&scenario);
        match session {
            Some(session) => command.args(["--session", session]),
            None => command.args(["--provider", "replay"]),
        };
        command.arg(prompt);
        Process::spawn(command)
    };
    let mut session: Option<String> = None;
    let mut rounds = Vec::new();
    for round in 0..ROUNDS {
        let prompt = format!("crash loop round {round}");
        let point = KillPoint::choose(&mut points, round, &answer);
        let context = format!("seed {SEED:#x}, round {round}, kill at {point:?}");
        let mut client = run(session.as_deref(), &prompt, "1");
        let seen = watch_and_kill(&mut client, &mut Process::kill, point, &context);
        if session.is_none() {
            session = seen.started.as_ref().map(|(session, _)| session.clone());
        }
        rounds.push(Round {
            prompt,
            point,
            seen,
        });
    }
    let session = session.unwrap();
    let final_turn = final_run(
        run(Some(&session), "after the crashes", "0"),
        "the run after the crashes",
    );
    check_database(&hearth.database());
    check_turns(&hearth, &session, &rounds, &final_turn, SEED);

    // Control: the check fails when an acknowledged turn is missing.
    let mut lost = rounds;
    lost.push(Round {
        prompt: "a prompt that was never sent".to_owned(),
        point: KillPoint::AfterText(0),
        seen: Seen {
            started: Some((session.clone(), "lost-turn".to_owned())),
            ..Seen::default()
        },
    });
    let missed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        check_turns(&hearth, &session, &lost, &final_turn, SEED);
    }));
    assert!(missed.is_err(), "a lost acknowledged turn went unnoticed");
}

fn serve_command(hearth: &Hearth, scenario: &Path) -> std::process::Command {
    let mut command = hearth.command();
    command
        .env("HEARTH_REPLAY_DELAY_SCALE", "1")
        .args(["serve", "--port", "0", "--scenario"])
        .arg(scenario);
    command
}

/// A `hearth serve` on a free port of `hearth`'s data directory, playing `scenario`,
/// and its URL once it answers.
fn serve(hearth: &Hearth, scenario: &Path) -> (Process, String) {
    let mut server = Process::spawn(serve_command(hearth, scenario));
    let record_path = server_file(hearth.home.path());
    let deadline = Instant::now() + WAIT;
    // The record of a killed server stays behind: wait for this one's.
    loop {
        if let Some(record) = read_record(&record_path)
            && record.pid == server.child.id()
        {
            return (server, record.url);
        }
        if let Some(status) = server.child.try_wait().unwrap() {
            panic!(
                "hearth serve ended ({status}); stderr:\n{}",
                server.stderr()
            );
        }
        assert!(
            Instant::now() < deadline,
            "hearth serve did not start within {WAIT:?}; stderr:\n{}",
            server.stderr()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn kill_9_of_hearth_serve_at_random_points_loses_no_acknowledged_turn() {
    const SEED: u64 = 0x6865_6172_7468_0002;
    let hearth = Hearth::new();
    let scenario = scenario(&hearth);
    let answer = answer();
    let mut points = Points(SEED);
    let run = |url: &str, session: Option<&str>, prompt: &str| {
        let mut command = hearth.command();
        command.args(["--server", url, "run", "--json"]);
        match session {
            Some(session) => command.args(["--session", session]),
            None => command.args(["--provider", "replay"]),
        };
        command.arg(prompt);
        Process::spawn(command)
    };
    let mut session: Option<String> = None;
    let mut rounds = Vec::new();
    for round in 0..ROUNDS {
        let prompt = format!("crash loop round {round}");
        let point = KillPoint::choose(&mut points, round, &answer);
        let context = format!("seed {SEED:#x}, round {round}, kill the server at {point:?}");
        // Now and then a server is also killed while it starts, before it answers
        // anyone: as it opens the database and recovers the turn the last kill cut.
        if round > 0 && points.below(DELAY_KILL_ONE_IN) == 0 {
            let mut starting = Process::spawn(serve_command(&hearth, &scenario));
            std::thread::sleep(Duration::from_millis(points.below(DELAY_KILL_MAX_MS)));
            starting.kill();
        }
        let (mut server, url) = serve(&hearth, &scenario);
        let mut client = run(&url, session.as_deref(), &prompt);
        let mut seen = watch_and_kill(&mut client, &mut |_| server.kill(), point, &context);
        // The client notices the lost connection and ends on its own.
        let deadline = Instant::now() + WAIT;
        while let Some(line) = client.next_line(deadline, &context) {
            seen.line(&line);
        }
        let status = client.wait(&context);
        if seen.stop_reason.is_none() {
            assert!(
                !status.success(),
                "{context}: the client succeeded without the turn ending"
            );
        }
        if session.is_none() {
            session = seen.started.as_ref().map(|(session, _)| session.clone());
        }
        rounds.push(Round {
            prompt,
            point,
            seen,
        });
    }
    let session = session.unwrap();
    let (mut server, url) = serve(&hearth, &scenario);
    let final_turn = final_run(
        run(&url, Some(&session), "after the crashes"),
        "the run after the crashes",
    );
    let status = std::process::Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let status = server.wait("hearth serve after SIGTERM");
    assert!(
        status.success(),
        "hearth serve: {status}\n{}",
        server.stderr()
    );
    check_database(&hearth.database());
    check_turns(&hearth, &session, &rounds, &final_turn, SEED);
}
