//! The agents Hearth knows by name and how it finds them, and the agents of
//! `config.toml` (`[agents.<id>]`, and the older `[providers.<id>] kind = "acp"`) as
//! specs the harness can run.

use std::path::{Path, PathBuf};

use hearth_config::{Config, ExternalAgentConfig, PermissionsSetting};
use hearth_core::{HarnessId, ToolKind};

use crate::spec::{AgentSpec, LentTools, PermissionMode, PermissionPolicy};

/// An agent Hearth knows by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Preset {
    /// Its id (the provider id of its sessions).
    pub id: &'static str,
    /// Display name.
    pub name: &'static str,
    /// The program its npm package installs.
    pub program: &'static str,
    /// The arguments that make it speak ACP.
    pub args: &'static [&'static str],
    /// The npm package that installs it.
    pub package: &'static str,
    /// Whether it reads `AGENTS.md` in its working directory by itself.
    pub reads_agents_file: bool,
    /// The variables of Hearth's environment it gets (its vendor's key and settings):
    /// nothing else of Hearth's but the minimal environment, unless `pass_env` says.
    pub pass_env: &'static [&'static str],
}

/// What both Claude adapters read (they run Claude Code underneath).
const CLAUDE_ENV: &[&str] = &[
    "ANTHROPIC_*",
    "CLAUDE_*",
    "AWS_*",
    "CLOUD_ML_REGION",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "DISABLE_TELEMETRY",
    "DISABLE_ERROR_REPORTING",
    "DISABLE_AUTOUPDATER",
    "IS_SANDBOX",
];

/// Claude (through Zed's ACP adapter), Claude Code's older adapter, Codex, Gemini CLI,
/// OpenCode and GitHub Copilot CLI.
pub const PRESETS: [Preset; 6] = [
    Preset {
        id: "claude",
        name: "Claude",
        program: "claude-agent-acp",
        args: &[],
        package: "@zed-industries/claude-agent-acp",
        reads_agents_file: false,
        pass_env: CLAUDE_ENV,
    },
    Preset {
        id: "claude-code",
        name: "Claude Code (older ACP adapter)",
        program: "claude-code-acp",
        args: &[],
        package: "@zed-industries/claude-code-acp",
        reads_agents_file: false,
        pass_env: CLAUDE_ENV,
    },
    Preset {
        id: "codex",
        name: "Codex",
        program: "codex-acp",
        args: &[],
        package: "@zed-industries/codex-acp",
        reads_agents_file: true,
        pass_env: &["OPENAI_*", "CODEX_*", "AZURE_OPENAI_*"],
    },
    Preset {
        id: "gemini",
        name: "Gemini CLI",
        program: "gemini",
        args: &["--acp"],
        package: "@google/gemini-cli",
        reads_agents_file: false,
        pass_env: &["GEMINI_*", "GOOGLE_*"],
    },
    Preset {
        id: "opencode",
        name: "OpenCode",
        program: "opencode",
        args: &["acp"],
        package: "opencode-ai",
        reads_agents_file: true,
        pass_env: &[
            "OPENCODE*",
            "OPENAI_*",
            "ANTHROPIC_*",
            "GEMINI_*",
            "GOOGLE_*",
            "OPENROUTER_*",
        ],
    },
    Preset {
        id: "copilot",
        name: "GitHub Copilot",
        program: "copilot",
        args: &["--acp"],
        package: "@github/copilot",
        // It reads AGENTS.md (and CLAUDE.md, GEMINI.md, .github/copilot-instructions.md)
        // in its working directory and the git root.
        reads_agents_file: true,
        // Its settings and bring-your-own-key provider (`COPILOT_PROVIDER_*`,
        // `COPILOT_MODEL`, `COPILOT_HOME`, ...), and the GitHub tokens it signs in with
        // (`COPILOT_GITHUB_TOKEN`, then `GH_TOKEN`, then `GITHUB_TOKEN`).
        pass_env: &["COPILOT_*", "GH_TOKEN", "GITHUB_TOKEN"],
    },
];

/// The other built-in agents that read the same catalog of sessions as `id`: both Claude
/// adapters list Claude Code's own sessions, so each is listed once, under whichever
/// adapter found it first.
pub fn catalog_peers(id: &HarnessId) -> Vec<HarnessId> {
    const CLAUDE: [&str; 2] = ["claude", "claude-code"];
    if !CLAUDE.contains(&id.as_str()) {
        return Vec::new();
    }
    CLAUDE
        .iter()
        .filter(|peer| **peer != id.as_str())
        .filter_map(|peer| HarnessId::parse(peer).ok())
        .collect()
}

/// An agent of the configuration or a built-in one, and whether it can be started.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfiguredAgent {
    /// How to run it.
    pub spec: AgentSpec,
    /// The built-in agent it is (possibly adjusted by `[agents.<id>]`).
    pub preset: Option<Preset>,
    /// Its program was found; otherwise what is missing and how to install it.
    pub installed: Result<(), String>,
}

/// Where programs are looked for: `PATH`, then npm's global prefix (`NPM_CONFIG_PREFIX`,
/// the `prefix` of `~/.npmrc`, `~/.npm-global`, `~/.local`).
fn search_directories(lookup: &dyn Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    let mut directories: Vec<PathBuf> = lookup("PATH")
        .map(|path| std::env::split_paths(&path).collect())
        .unwrap_or_default();
    if let Some(prefix) = lookup("NPM_CONFIG_PREFIX") {
        directories.push(Path::new(&prefix).join("bin"));
    }
    if let Some(home) = lookup("HOME") {
        let home = PathBuf::from(home);
        if let Ok(npmrc) = std::fs::read_to_string(home.join(".npmrc")) {
            for line in npmrc.lines() {
                if let Some(prefix) = line.trim().strip_prefix("prefix")
                    && let Some(prefix) = prefix.trim().strip_prefix('=')
                {
                    let prefix = prefix
                        .trim()
                        .replace("${HOME}", &home.display().to_string());
                    let prefix = match prefix.strip_prefix("~/") {
                        Some(rest) => home.join(rest),
                        None => PathBuf::from(prefix),
                    };
                    directories.push(prefix.join("bin"));
                }
            }
        }
        directories.push(home.join(".npm-global/bin"));
        directories.push(home.join(".local/bin"));
    }
    directories
}

/// A program by name (found on the search path) or by path (checked to exist).
fn find(program: &str, directories: &[PathBuf]) -> Option<PathBuf> {
    let path = Path::new(program);
    if path.components().count() > 1 {
        return path.is_file().then(|| path.to_path_buf());
    }
    directories
        .iter()
        .map(|directory| directory.join(program))
        .find(|candidate| candidate.is_file())
}

/// The permission policy of a configuration section; unknown tool kinds are reported.
fn policy(
    id: &str,
    section: Option<&ExternalAgentConfig>,
    problems: &mut Vec<String>,
) -> PermissionPolicy {
    let Some(section) = section else {
        return PermissionPolicy::default();
    };
    let mut allow_kinds = Vec::new();
    for kind in &section.allow {
        match ToolKind::parse(kind) {
            Some(kind) => allow_kinds.push(kind),
            None => problems.push(format!(
                "[agents.{id}] allow: `{kind}` is not a tool kind (use {})",
                ToolKind::ALL
                    .iter()
                    .map(|kind| kind.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
    PermissionPolicy {
        mode: match section.permissions {
            PermissionsSetting::Ask => PermissionMode::Ask,
            PermissionsSetting::Reject => PermissionMode::Reject,
        },
        allow_kinds,
    }
}

/// What Hearth knows of one agent: the built-in agent of that id and its `[agents.<id>]`
/// section (which the configuration also fills from an older
/// `[providers.<id>] kind = "acp"` one). The section wins over the built-in settings.
struct Declared<'a> {
    id: &'a str,
    preset: Option<Preset>,
    section: Option<&'a ExternalAgentConfig>,
}

impl<'a> Declared<'a> {
    fn new(config: &'a Config, id: &'a str) -> Self {
        Self {
            id,
            preset: PRESETS.iter().find(|preset| preset.id == id).copied(),
            section: config.agents.get(id),
        }
    }

    /// The program configured to run the agent, if one is.
    fn command(&self) -> Option<String> {
        self.section.and_then(|section| section.command.clone())
    }

    fn args(&self) -> Vec<String> {
        self.section
            .and_then(|section| section.args.clone())
            .or_else(|| {
                self.preset
                    .map(|preset| preset.args.iter().map(|arg| (*arg).to_owned()).collect())
            })
            .unwrap_or_default()
    }

    /// The variables the section sets.
    fn env(&self) -> Vec<(String, String)> {
        self.section
            .map(|section| section.env.clone().into_iter().collect())
            .unwrap_or_default()
    }

    /// The variables of Hearth's environment passed: the built-in agent's, then the
    /// section's.
    fn pass_env(&self) -> Vec<String> {
        self.preset
            .map(|preset| preset.pass_env.iter().map(|name| (*name).to_owned()))
            .into_iter()
            .flatten()
            .chain(
                self.section
                    .map(|section| section.pass_env.clone())
                    .unwrap_or_default(),
            )
            .collect()
    }

    fn name(&self) -> String {
        self.section
            .and_then(|section| section.name.clone())
            .or_else(|| self.preset.map(|preset| preset.name.to_owned()))
            .unwrap_or_else(|| self.id.to_owned())
    }

    /// Why `program` cannot be started, and how to install it or set it.
    fn not_found(&self, program: &str, command: Option<&String>) -> String {
        let id = self.id;
        match (self.preset, command) {
            (Some(preset), None) => format!(
                "`{}` is not on PATH or in npm's global prefix; install it with `npm install -g {}`, or set `command` under [agents.{id}]",
                preset.program, preset.package
            ),
            _ => format!("`{program}` was not found; check `command` under [agents.{id}]"),
        }
    }
}

/// The ids of every agent Hearth knows: the built-in ones, then the configured ones.
fn agent_ids(config: &Config) -> Vec<String> {
    let mut ids: Vec<String> = PRESETS.iter().map(|preset| preset.id.to_owned()).collect();
    for id in config.agents.keys() {
        if !ids.contains(id) {
            ids.push(id.clone());
        }
    }
    ids
}

/// Every agent Hearth can run: the built-in ones (unless disabled) with the settings of
/// their `[agents.<id>]` section, then the other configured ones. `lend` gives the MCP
/// server lent to an agent (`None`: lend nothing); `lookup` reads the environment.
/// Problems of the configuration come back as messages.
pub fn configured_agents(
    config: &Config,
    lend: &dyn Fn(&HarnessId) -> Option<LentTools>,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> (Vec<ConfiguredAgent>, Vec<String>) {
    let directories = search_directories(lookup);
    let mut problems = Vec::new();
    let agents = agent_ids(config)
        .iter()
        .filter_map(|id| {
            configured_agent(
                &Declared::new(config, id),
                &directories,
                lend,
                &mut problems,
            )
        })
        .collect();
    (agents, problems)
}

/// One agent as the harness runs it; `None` when it is disabled or cannot be used (then
/// `problems` says why).
fn configured_agent(
    declared: &Declared<'_>,
    directories: &[PathBuf],
    lend: &dyn Fn(&HarnessId) -> Option<LentTools>,
    problems: &mut Vec<String>,
) -> Option<ConfiguredAgent> {
    let (id, section) = (declared.id, declared.section);
    if section.and_then(|section| section.enabled) == Some(false) {
        return None;
    }
    let provider = match HarnessId::parse(id) {
        Ok(provider) => provider,
        Err(error) => {
            problems.push(format!("[agents.{id}] cannot be used: {error}"));
            return None;
        }
    };
    let command = declared.command();
    let Some(program) = command
        .clone()
        .or_else(|| declared.preset.map(|preset| preset.program.to_owned()))
    else {
        problems.push(format!(
            "[agents.{id}] names no `command`: set the program that runs the agent"
        ));
        return None;
    };
    let found = find(&program, directories);
    let installed = match &found {
        Some(_) => Ok(()),
        None => Err(declared.not_found(&program, command.as_ref())),
    };
    let lent_tools = if section.and_then(|section| section.lend_tools) == Some(false) {
        None
    } else {
        lend(&provider)
    };
    Some(ConfiguredAgent {
        spec: AgentSpec {
            name: declared.name(),
            id: provider,
            command: found.unwrap_or_else(|| PathBuf::from(program)),
            args: declared.args(),
            env: declared.env(),
            pass_env: declared.pass_env(),
            policy: policy(id, section, problems),
            lent_tools,
            auth_method: section.and_then(|section| section.auth_method.clone()),
            reads_agents_file: declared
                .preset
                .is_some_and(|preset| preset.reads_agents_file),
        },
        preset: declared.preset,
        installed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use std::collections::HashMap;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn both_claude_adapters_read_one_catalog_and_no_other_agent_shares_it() {
        let id = |text: &str| HarnessId::parse(text).unwrap();
        assert_eq!(catalog_peers(&id("claude")), vec![id("claude-code")]);
        assert_eq!(catalog_peers(&id("claude-code")), vec![id("claude")]);
        for other in ["codex", "gemini", "opencode", "my-agent"] {
            assert_eq!(catalog_peers(&id(other)), Vec::new(), "{other}");
        }
    }

    fn executable(directory: &Path, name: &str) -> PathBuf {
        let path = directory.join(name);
        std::fs::write(&path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    #[test]
    fn built_in_agents_are_found_on_path_or_in_the_npm_prefix_and_configured_ones_added() {
        let bin = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let codex = executable(bin.path(), "codex-acp");
        let copilot = executable(bin.path(), "copilot");
        std::fs::create_dir_all(home.path().join("npm/bin")).unwrap();
        let gemini = executable(&home.path().join("npm/bin"), "gemini");
        std::fs::write(home.path().join(".npmrc"), "prefix=~/npm\n").unwrap();
        let mine = executable(bin.path(), "my-agent");
        let config = Config::parse(
            &format!(
                r#"
                [agents.codex]
                allow = ["read", "typo"]
                lend_tools = false

                [agents.opencode]
                enabled = false

                [agents.mine]
                command = "{}"
                permissions = "reject"

                [agents.broken]
                args = ["x"]
                "#,
                mine.display()
            ),
            Path::new("config.toml"),
        )
        .unwrap();
        let environment: HashMap<&str, String> = [
            ("PATH", bin.path().display().to_string()),
            ("HOME", home.path().display().to_string()),
        ]
        .into();
        let lent = |_: &HarnessId| {
            Some(LentTools {
                command: "/bin/hearth".into(),
                args: vec!["mcp".into(), "--stdio".into()],
                env: Vec::new(),
            })
        };
        let (agents, problems) =
            configured_agents(&config, &lent, &|key| environment.get(key).cloned());
        let ids: Vec<&str> = agents.iter().map(|agent| agent.spec.id.as_str()).collect();
        assert_eq!(
            ids,
            vec![
                "claude",
                "claude-code",
                "codex",
                "gemini",
                "copilot",
                "mine"
            ]
        );
        let by_id = |id: &str| {
            agents
                .iter()
                .find(|agent| agent.spec.id.as_str() == id)
                .unwrap()
        };
        assert!(
            by_id("claude")
                .installed
                .as_ref()
                .unwrap_err()
                .contains("npm install -g @zed-industries/claude-agent-acp")
        );
        assert_eq!(by_id("codex").installed, Ok(()));
        assert_eq!(by_id("codex").spec.command, codex);
        assert_eq!(by_id("codex").spec.policy.allow_kinds, vec![ToolKind::Read]);
        assert_eq!(by_id("codex").spec.lent_tools, None);
        assert_eq!(by_id("gemini").spec.command, gemini);
        assert_eq!(by_id("gemini").spec.args, vec!["--acp".to_owned()]);
        assert!(by_id("gemini").spec.lent_tools.is_some());
        assert_eq!(by_id("copilot").installed, Ok(()));
        assert_eq!(by_id("copilot").spec.command, copilot);
        assert_eq!(by_id("copilot").spec.args, vec!["--acp".to_owned()]);
        assert_eq!(
            by_id("copilot").spec.pass_env,
            vec![
                "COPILOT_*".to_owned(),
                "GH_TOKEN".to_owned(),
                "GITHUB_TOKEN".to_owned()
            ]
        );
        assert!(by_id("copilot").spec.reads_agents_file);
        assert_eq!(by_id("mine").spec.policy.mode, PermissionMode::Reject);
        assert_eq!(by_id("mine").preset, None);
        assert_eq!(
            problems,
            vec![
                "[agents.codex] allow: `typo` is not a tool kind (use read, edit, delete, move, search, execute, think, fetch, switch_mode, other)".to_owned(),
                "[agents.broken] names no `command`: set the program that runs the agent".to_owned(),
            ]
        );
    }
}
