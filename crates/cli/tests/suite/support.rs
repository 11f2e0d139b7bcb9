use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use hearth_test_support::{BoundedCommand, PROCESS_WAIT};

pub struct Hearth {
    pub home: tempfile::TempDir,
}

impl Hearth {
    pub fn new() -> Self {
        let home = tempfile::tempdir().unwrap();
        // Private, as Hearth makes a data directory (it narrows and says so otherwise).
        std::fs::set_permissions(
            home.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )
        .unwrap();
        Self { home }
    }

    pub fn command(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_hearth"));
        command
            .arg("--home")
            .arg(self.home.path())
            .env_remove("HEARTH_HOME")
            .env_remove("HEARTH_SERVER")
            .env_remove("HEARTH_TOKEN")
            .env_remove("HEARTH_STORE_URL")
            .env_remove("HEARTH_CONTEXT_SHARED")
            .env_remove("HEARTH_CONFIG")
            .env_remove("HEARTH_REPLAY_SCENARIO")
            .env_remove("OPENAI_API_KEY")
            .env_remove("ANTHROPIC_API_KEY")
            .env("HEARTH_REPLAY_DELAY_SCALE", "0")
            .stdin(Stdio::null());
        // `hearth serve` imports the agents' own stores: those of the machine running the
        // tests stay out of them.
        let stores = self.home.path().join("agent-stores");
        for (variable, folder) in [
            ("CLAUDE_CONFIG_DIR", "claude"),
            ("CODEX_HOME", "codex"),
            ("COPILOT_HOME", "copilot"),
            ("GEMINI_CLI_HOME", "gemini"),
            ("XDG_DATA_HOME", "data"),
        ] {
            command.env(variable, stores.join(folder));
        }
        command
    }

    /// Runs to the end (bounded: a hung process fails the test).
    pub fn run(&self, args: &[&str]) -> Output {
        self.command().args(args).output_within(PROCESS_WAIT)
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

    /// Writes a file into the data directory, private like everything in it.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.home.path().join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .unwrap();
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

/// The test venv's python when it can import `module` (see
/// [`hearth_test_support::venv_python`]); required when `HEARTH_REQUIRE_PYTHON=1`.
pub fn venv_python(module: &str) -> Option<PathBuf> {
    hearth_test_support::venv_python(module, "HEARTH_REQUIRE_PYTHON")
}
