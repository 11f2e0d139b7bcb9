use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

pub struct Hearth {
    pub home: tempfile::TempDir,
}

impl Hearth {
    pub fn new() -> Self {
        Self {
            home: tempfile::tempdir().unwrap(),
        }
    }

    pub fn command(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_hearth"));
        command
            .arg("--home")
            .arg(self.home.path())
            .env_remove("HEARTH_HOME")
            .env_remove("HEARTH_SERVER")
            .env_remove("HEARTH_CONFIG")
            .env_remove("HEARTH_REPLAY_SCENARIO")
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .env("HEARTH_REPLAY_DELAY_SCALE", "0")
            .stdin(Stdio::null());
        command
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command().args(args).output().unwrap()
    }

    /// Runs and expects success; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let output = self.run(args);
        assert!(
            output.status.success(),
            "hearth {args:?} failed: {}\n{}",
            String::from_utf8_lossy(&output.stderr),
            String::from_utf8_lossy(&output.stdout)
        );
        String::from_utf8(output.stdout).unwrap()
    }

    /// Runs and expects failure; returns stderr.
    pub fn fails(&self, args: &[&str]) -> String {
        let output = self.run(args);
        assert!(
            !output.status.success(),
            "hearth {args:?} succeeded unexpectedly"
        );
        String::from_utf8(output.stderr).unwrap()
    }

    pub fn database(&self) -> PathBuf {
        self.home.path().join("hearth.db")
    }

    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.home.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// The URIs of listed sessions, newest first.
    pub fn session_uris(&self) -> Vec<String> {
        self.ok(&["sessions", "list", "--json"])
            .lines()
            .filter_map(|line| {
                let value: serde_json::Value = serde_json::from_str(line).unwrap();
                value
                    .get("uri")
                    .and_then(|uri| uri.as_str())
                    .map(str::to_owned)
            })
            .collect()
    }
}

pub fn stderr_line_count(text: &str) -> usize {
    text.lines().filter(|line| !line.trim().is_empty()).count()
}
