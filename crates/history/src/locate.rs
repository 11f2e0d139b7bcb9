//! Where each agent keeps its sessions, from the environment the agent runs with.

use std::path::PathBuf;

use crate::model::Agent;

/// Where an agent's store is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreLocation {
    /// The agent.
    pub agent: Agent,
    /// The folder its reader starts from: `CODEX_HOME`, `CLAUDE_CONFIG_DIR`,
    /// `~/.gemini`, `$XDG_DATA_HOME/opencode` or `COPILOT_HOME`.
    pub root: PathBuf,
}

/// The store of `agent` for an agent started with the environment `env` (the variables
/// Hearth gives it: its configuration's and those it passes from Hearth's own), with the
/// agent's own defaults under `HOME`. `None` when neither the variable nor `HOME` is set.
pub fn locate(agent: Agent, env: &dyn Fn(&str) -> Option<String>) -> Option<StoreLocation> {
    let set = |name: &str| {
        env(name)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    };
    let home = set("HOME");
    let root = match agent {
        Agent::Codex => set("CODEX_HOME").or_else(|| Some(home?.join(".codex"))),
        Agent::Claude => set("CLAUDE_CONFIG_DIR").or_else(|| Some(home?.join(".claude"))),
        Agent::Gemini => set("GEMINI_CLI_HOME")
            .or(home)
            .map(|home| home.join(".gemini")),
        Agent::OpenCode => set("XDG_DATA_HOME")
            .or_else(|| Some(home?.join(".local/share")))
            .map(|data| data.join("opencode")),
        Agent::Copilot => set("COPILOT_HOME").or_else(|| Some(home?.join(".copilot"))),
    }?;
    Some(StoreLocation { agent, root })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        }
    }

    #[test]
    fn each_store_is_where_its_variable_says_else_under_home() {
        let only_home = lookup(&[("HOME", "/h")]);
        let roots: Vec<PathBuf> = Agent::ALL
            .iter()
            .map(|agent| locate(*agent, &only_home).unwrap().root)
            .collect();
        assert_eq!(
            roots,
            [
                "/h/.codex",
                "/h/.claude",
                "/h/.gemini",
                "/h/.local/share/opencode",
                "/h/.copilot"
            ]
            .map(PathBuf::from)
        );
        let set = lookup(&[
            ("HOME", "/h"),
            ("CODEX_HOME", "/c"),
            ("CLAUDE_CONFIG_DIR", "/cl"),
            ("XDG_DATA_HOME", "/d"),
            ("COPILOT_HOME", "/co"),
        ]);
        let roots: Vec<PathBuf> = Agent::ALL
            .iter()
            .map(|agent| locate(*agent, &set).unwrap().root)
            .collect();
        assert_eq!(
            roots,
            ["/c", "/cl", "/h/.gemini", "/d/opencode", "/co"].map(PathBuf::from)
        );
        assert_eq!(locate(Agent::Claude, &lookup(&[])), None);
    }
}
