//! Real Agent Client Protocol agents, installed from npm by `.ci/install-acp-agents`,
//! run offline against the mock model server.
//!
//! For each agent this module knows where the install script put it ([`RealAgent::locate`]),
//! how to start it in an isolated home pointed at the mock model server with every
//! update, telemetry and network switch off ([`RealAgent::prepare`]), and which wire
//! format it speaks to its model ([`RealAgent::model`] gives a [`ScriptedModel`] that
//! serves scripted [`ModelTurn`]s in that format and answers the agent's incidental
//! requests itself).
//!
//! | agent | id | model wire | writes a file with | the write reaches disk through |
//! |---|---|---|---|---|
//! | `@zed-industries/claude-agent-acp` | `claude` | Anthropic Messages | `Write {file_path, content}` | the agent itself |
//! | `@zed-industries/claude-code-acp` | `claude-code` | Anthropic Messages | `mcp__acp__Write {file_path, content}` | the client (`fs/write_text_file`) |
//! | `@zed-industries/codex-acp` | `codex` | OpenAI Responses | `apply_patch` (freeform: `*** Add File:` patch) | the agent itself |
//! | `@google/gemini-cli` | `gemini` | Gemini `streamGenerateContent` | `write_file {file_path, content}` | the client (`fs/read_text_file`, then `fs/write_text_file`) |
//! | `opencode-ai` | `opencode` | OpenAI Chat Completions | `write {filePath, content}` | the client (`fs/write_text_file`) |
//! | `@github/copilot` | `copilot` | OpenAI Chat Completions | `create {path, file_text}` | the agent itself |
//!
//! Every one of them asks `session/request_permission` before that write, with an
//! `allow_once` option among others.

mod outside;
mod scripted;
mod setup;
mod wire;

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::Value;

pub use outside::acp_prompt;
pub use scripted::{ModelTurn, ScriptedModel, ServedTurn, WireFormat};

/// When set to `1`, an agent that is not installed fails the test instead of skipping it.
pub const REQUIRE_AGENTS_VARIABLE: &str = "HEARTH_REQUIRE_ACP_AGENTS";

/// Where `.ci/install-acp-agents` installs, when set; else `<workspace>/target/acp-agents`.
pub const AGENTS_DIR_VARIABLE: &str = "HEARTH_ACP_AGENTS_DIR";

/// A real ACP agent that Hearth's tests can run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RealAgent {
    /// Claude through Zed's current adapter, `@zed-industries/claude-agent-acp`.
    ClaudeAgent,
    /// Claude through Zed's earlier adapter, `@zed-industries/claude-code-acp`.
    ClaudeCode,
    /// Codex through `@zed-industries/codex-acp` (a native binary).
    Codex,
    /// Gemini CLI in ACP mode, `@google/gemini-cli`.
    Gemini,
    /// OpenCode in ACP mode, `opencode-ai` (a native binary).
    OpenCode,
    /// GitHub Copilot CLI in ACP mode, `@github/copilot` (a native binary, which
    /// unpacks itself into a cache folder on its first start).
    Copilot,
}

/// How an agent's program is started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Runner {
    /// `node <entry>`.
    Node,
    /// The entry is the program.
    Native,
}

/// What the install script puts where, for one agent.
struct Package {
    /// The npm package installed.
    name: &'static str,
    /// Its pinned version (as in `.ci/install-acp-agents`).
    version: &'static str,
    /// The program or script, under `node_modules`.
    entry: &'static str,
    runner: Runner,
    /// Arguments after the entry.
    args: &'static [&'static str],
}

/// How to start an agent. `env` is the whole environment: start the program with a
/// cleared environment plus these (as [`AgentLaunch::tokio_command`] does), so that
/// nothing of the caller's own configuration reaches the agent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentLaunch {
    /// The program.
    pub command: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its environment, complete.
    pub env: Vec<(String, String)>,
}

impl AgentLaunch {
    /// A command that starts the agent in `workdir`: cleared environment plus `env`,
    /// stdin, stdout and stderr piped, in a process group of its own (the agents leave
    /// children behind, and some outlive a closed stdin: end the whole group), killed
    /// when dropped.
    pub fn tokio_command(&self, workdir: &Path) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(&self.command);
        command
            .args(&self.args)
            .env_clear()
            .envs(self.env.iter().map(|(name, value)| (name, value)))
            .current_dir(workdir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        command
    }

    /// The value of an environment variable of the launch.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.env
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

impl RealAgent {
    /// Every agent, in a fixed order.
    pub fn all() -> [RealAgent; 6] {
        [
            RealAgent::ClaudeAgent,
            RealAgent::ClaudeCode,
            RealAgent::Codex,
            RealAgent::Gemini,
            RealAgent::OpenCode,
            RealAgent::Copilot,
        ]
    }

    /// The agent's short id: `claude`, `claude-code`, `codex`, `gemini`, `opencode`,
    /// `copilot` (also its folder under the install directory).
    pub fn id(self) -> &'static str {
        match self {
            RealAgent::ClaudeAgent => "claude",
            RealAgent::ClaudeCode => "claude-code",
            RealAgent::Codex => "codex",
            RealAgent::Gemini => "gemini",
            RealAgent::OpenCode => "opencode",
            RealAgent::Copilot => "copilot",
        }
    }

    /// The agent with this id.
    pub fn from_id(id: &str) -> Option<RealAgent> {
        RealAgent::all().into_iter().find(|agent| agent.id() == id)
    }

    fn package(self) -> Package {
        match self {
            RealAgent::ClaudeAgent => Package {
                name: "@zed-industries/claude-agent-acp",
                version: "0.23.1",
                entry: "@zed-industries/claude-agent-acp/dist/index.js",
                runner: Runner::Node,
                args: &[],
            },
            RealAgent::ClaudeCode => Package {
                name: "@zed-industries/claude-code-acp",
                version: "0.16.2",
                entry: "@zed-industries/claude-code-acp/dist/index.js",
                runner: Runner::Node,
                args: &[],
            },
            RealAgent::Codex => Package {
                name: "@zed-industries/codex-acp",
                version: "0.16.0",
                entry: "@zed-industries/codex-acp-linux-x64/bin/codex-acp",
                runner: Runner::Native,
                args: &[],
            },
            RealAgent::Gemini => Package {
                name: "@google/gemini-cli",
                version: "0.61.0",
                entry: "@google/gemini-cli/bundle/gemini.js",
                runner: Runner::Node,
                args: &["--acp"],
            },
            RealAgent::OpenCode => Package {
                name: "opencode-ai",
                version: "1.18.33",
                entry: "opencode-ai/bin/opencode.exe",
                runner: Runner::Native,
                args: &["acp"],
            },
            RealAgent::Copilot => Package {
                name: "@github/copilot",
                version: "1.0.102",
                entry: "@github/copilot-linux-x64/copilot",
                runner: Runner::Native,
                args: &["--acp"],
            },
        }
    }

    /// The npm package and its pinned version.
    pub fn npm_package(self) -> (&'static str, &'static str) {
        let package = self.package();
        (package.name, package.version)
    }

    /// The wire format the agent speaks to its model.
    pub fn wire_format(self) -> WireFormat {
        match self {
            RealAgent::ClaudeAgent | RealAgent::ClaudeCode => WireFormat::AnthropicMessages,
            RealAgent::Codex => WireFormat::OpenAiResponses,
            RealAgent::Gemini => WireFormat::GeminiGenerateContent,
            RealAgent::OpenCode | RealAgent::Copilot => WireFormat::OpenAiChat,
        }
    }

    /// The directory the install script installs into.
    pub fn agents_dir() -> PathBuf {
        match std::env::var_os(AGENTS_DIR_VARIABLE) {
            Some(dir) if !dir.is_empty() => PathBuf::from(dir),
            // crates/test-support → the workspace.
            _ => Path::new(env!("CARGO_MANIFEST_DIR"))
                .ancestors()
                .nth(2)
                .unwrap_or_else(|| Path::new("."))
                .join("target/acp-agents"),
        }
    }

    fn entry_in(self, dir: &Path) -> PathBuf {
        dir.join(self.id())
            .join("node_modules")
            .join(self.package().entry)
    }

    /// The agent's program or script where the install script put it; `Err` says why
    /// it is not there (not installed, or another version than the pinned one).
    pub fn locate(self) -> Result<PathBuf, String> {
        self.locate_in(&RealAgent::agents_dir())
    }

    fn locate_in(self, dir: &Path) -> Result<PathBuf, String> {
        let package = self.package();
        let entry = self.entry_in(dir);
        let manifest = dir
            .join(self.id())
            .join("node_modules")
            .join(package.name)
            .join("package.json");
        let fix = "run .ci/install-acp-agents";
        let text = std::fs::read_to_string(&manifest).map_err(|error| {
            format!(
                "{} {} is not installed ({}: {error}); {fix}",
                package.name,
                package.version,
                manifest.display()
            )
        })?;
        let version = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|manifest| manifest["version"].as_str().map(str::to_owned))
            .unwrap_or_default();
        if version != package.version {
            return Err(format!(
                "{} {} is wanted, {} has version {version:?}; {fix}",
                package.name,
                package.version,
                manifest.display()
            ));
        }
        if !entry.is_file() {
            return Err(format!(
                "{} {} is installed but {} is missing; {fix}",
                package.name,
                package.version,
                entry.display()
            ));
        }
        Ok(entry)
    }

    /// [`RealAgent::locate`] for a test: `None` (after printing why, so the test can
    /// return early) when the agent is not installed, unless `HEARTH_REQUIRE_ACP_AGENTS=1`,
    /// in which case it panics with the reason.
    #[allow(clippy::print_stderr, reason = "a skipped test says why on stderr")]
    pub fn locate_or_skip(self) -> Option<PathBuf> {
        match self.locate() {
            Ok(path) => Some(path),
            Err(reason) if required() => {
                panic!("{REQUIRE_AGENTS_VARIABLE}=1 but {}: {reason}", self.id())
            }
            Err(reason) => {
                eprintln!("skipping: real ACP agent {}: {reason}", self.id());
                None
            }
        }
    }

    /// Writes the configuration the agent needs under `home` (its isolated HOME,
    /// XDG directories and agent-specific homes), and returns how to start it against
    /// the mock model server at `model_url` (`http://127.0.0.1:PORT`) for sessions in
    /// `workdir`. File edits ask for permission; updates, telemetry, plugin and model
    /// list downloads are off. Panics when a file cannot be written.
    pub fn prepare(self, home: &Path, model_url: &str, workdir: &Path) -> AgentLaunch {
        let package = self.package();
        let entry = self.entry_in(&RealAgent::agents_dir());
        let (command, mut args) = match package.runner {
            Runner::Node => (
                setup::find_program("node"),
                vec![entry.to_string_lossy().into_owned()],
            ),
            Runner::Native => (entry, Vec::new()),
        };
        args.extend(package.args.iter().map(|arg| (*arg).to_owned()));
        let mut env = setup::base_env(home);
        let model_url = model_url.trim_end_matches('/');
        let specific = match self {
            RealAgent::ClaudeAgent | RealAgent::ClaudeCode => setup::claude(home, model_url),
            RealAgent::Codex => setup::codex(home, model_url, workdir),
            RealAgent::Gemini => setup::gemini(home, model_url),
            RealAgent::OpenCode => setup::opencode(home, model_url),
            RealAgent::Copilot => {
                setup::copilot(home, model_url, &RealAgent::agents_dir().join(self.id()))
            }
        };
        env.extend(specific);
        AgentLaunch { command, args, env }
    }

    /// A scripted model in this agent's wire format; install it on the mock model
    /// server with [`ScriptedModel::install`].
    pub fn model(self) -> ScriptedModel {
        ScriptedModel::new(self.wire_format())
    }
}

/// Whether `HEARTH_REQUIRE_ACP_AGENTS=1`.
pub fn required() -> bool {
    std::env::var(REQUIRE_AGENTS_VARIABLE).is_ok_and(|value| value == "1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip() {
        for agent in RealAgent::all() {
            assert_eq!(RealAgent::from_id(agent.id()), Some(agent));
        }
        assert_eq!(RealAgent::from_id("claude-agent"), None);
    }

    #[test]
    fn a_missing_or_wrong_install_is_reported_with_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let manifest = dir
            .path()
            .join("codex/node_modules/@zed-industries/codex-acp/package.json");
        std::fs::create_dir_all(manifest.parent().unwrap()).unwrap();
        std::fs::write(&manifest, r#"{"version": "0.1.0"}"#).unwrap();
        let reason = RealAgent::Codex.locate_in(dir.path()).unwrap_err();
        assert!(reason.contains("0.16.0 is wanted"), "{reason}");
        assert!(reason.contains("run .ci/install-acp-agents"), "{reason}");

        std::fs::write(&manifest, r#"{"version": "0.16.0"}"#).unwrap();
        let reason = RealAgent::Codex.locate_in(dir.path()).unwrap_err();
        assert!(reason.contains("codex-acp is missing"), "{reason}");

        let reason = RealAgent::Gemini.locate_in(dir.path()).unwrap_err();
        assert!(reason.contains("is not installed"), "{reason}");
    }

    #[test]
    fn a_complete_install_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let modules = dir.path().join("gemini/node_modules/@google/gemini-cli");
        std::fs::create_dir_all(modules.join("bundle")).unwrap();
        std::fs::write(modules.join("package.json"), r#"{"version": "0.61.0"}"#).unwrap();
        std::fs::write(modules.join("bundle/gemini.js"), "").unwrap();
        assert_eq!(
            RealAgent::Gemini.locate_in(dir.path()),
            Ok(modules.join("bundle/gemini.js"))
        );
    }
}
