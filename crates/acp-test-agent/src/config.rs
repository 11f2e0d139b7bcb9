//! Settings read from the environment once, at start-up.
//!
//! Every knob is an environment variable so that a client can start the agent exactly
//! as it starts a real one (a command line plus an environment). A value that cannot
//! be understood stops the agent at start-up with a message naming the variable.

use std::collections::BTreeSet;
use std::path::PathBuf;

use agent_client_protocol::v1::schema::{
    AgentAuthCapabilities, AgentCapabilities, LogoutCapabilities, McpCapabilities,
    PromptCapabilities, SessionCapabilities, SessionCloseCapabilities, SessionForkCapabilities,
    SessionListCapabilities, SessionResumeCapabilities,
};
use anyhow::{Context, bail};

/// Comma list of advertised capabilities (see [`Capability`]).
pub(crate) const CAPS_VAR: &str = "HEARTH_TEST_AGENT_CAPS";
/// `1` makes every session method wait for `authenticate`.
pub(crate) const AUTH_VAR: &str = "HEARTH_TEST_AGENT_AUTH";
/// Must be non-empty for `authenticate` to succeed.
pub(crate) const TOKEN_VAR: &str = "HEARTH_TEST_AGENT_TOKEN";
/// Directory holding one JSON file per session.
pub(crate) const STATE_VAR: &str = "HEARTH_TEST_AGENT_STATE";
/// `1` calls client methods even when the client did not declare them.
pub(crate) const IGNORE_CLIENT_CAPS_VAR: &str = "HEARTH_TEST_AGENT_IGNORE_CLIENT_CAPS";
/// How many sessions one `session/list` page holds.
pub(crate) const PAGE_SIZE_VAR: &str = "HEARTH_TEST_AGENT_PAGE_SIZE";
/// When a new session is first written to disk (see [`Saving`]).
pub(crate) const SAVE_VAR: &str = "HEARTH_TEST_AGENT_SAVE";
/// `1` puts a reopened session (load, resume) back on the default model and mode, as
/// agents do that keep no settings with a session.
pub(crate) const REOPEN_DEFAULTS_VAR: &str = "HEARTH_TEST_AGENT_REOPEN_DEFAULTS";
/// Comma list of the models offered (of `test-small`, `test-large`); all when unset.
pub(crate) const MODELS_VAR: &str = "HEARTH_TEST_AGENT_MODELS";
/// `tracing` filter for the agent's own logs (stderr).
pub(crate) const LOG_VAR: &str = "HEARTH_TEST_AGENT_LOG";

/// The capabilities advertised when [`CAPS_VAR`] is unset.
const DEFAULT_CAPS: &str = "load,list,resume,fork,close,image,embedded";
const DEFAULT_PAGE_SIZE: usize = 50;

/// One token of [`CAPS_VAR`], and what it turns on in `initialize`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Capability {
    /// `agentCapabilities.loadSession`.
    Load,
    /// `sessionCapabilities.list`.
    List,
    /// `sessionCapabilities.resume`.
    Resume,
    /// `sessionCapabilities.fork`.
    Fork,
    /// `sessionCapabilities.close`.
    Close,
    /// `promptCapabilities.image`.
    Image,
    /// `promptCapabilities.audio`.
    Audio,
    /// `promptCapabilities.embeddedContext`.
    Embedded,
    /// `mcpCapabilities.http`.
    McpHttp,
    /// `mcpCapabilities.sse`.
    McpSse,
    /// `auth.logout`.
    Logout,
}

/// The explicit table from token to capability; `none` is handled apart.
const CAPABILITY_TOKENS: &[(&str, Capability)] = &[
    ("load", Capability::Load),
    ("list", Capability::List),
    ("resume", Capability::Resume),
    ("fork", Capability::Fork),
    ("close", Capability::Close),
    ("image", Capability::Image),
    ("audio", Capability::Audio),
    ("embedded", Capability::Embedded),
    ("mcp-http", Capability::McpHttp),
    ("mcp-sse", Capability::McpSse),
    ("logout", Capability::Logout),
];

/// Whether session methods wait for `authenticate`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AuthMode {
    /// Sessions work at once and no method is offered.
    Open,
    /// One method (`test-login`) is offered and required.
    Required,
}

/// Whether client methods are called only when the client declared them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClientCapabilityChecks {
    /// Undeclared client methods are never called (the protocol's rule).
    Honour,
    /// Client methods are called regardless, to test the client's own gate.
    Ignore,
}

/// When a new (or forked) session is first written to disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Saving {
    /// At once: it can be loaded after a restart even if it never had a turn.
    AtOnce,
    /// With its first turn, as Codex and the Claude agents do: after a restart, loading
    /// or resuming a session that never had a turn is refused (`-32002`).
    WithFirstTurn,
}

/// What a reopened session keeps of its settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReopenSettings {
    /// The model and mode it had.
    Kept,
    /// The default model and mode.
    Defaults,
}

/// Where session files live.
pub(crate) enum StateDir {
    /// A directory the caller named; it outlives the process.
    Given(PathBuf),
    /// A directory of this process, removed at exit.
    Temporary(tempfile::TempDir),
}

impl StateDir {
    /// Removes a temporary directory (the process exits without running destructors,
    /// so this is done explicitly); a given directory is kept.
    pub(crate) fn remove_if_temporary(&self) {
        if let Self::Temporary(dir) = self
            && let Err(error) = std::fs::remove_dir_all(dir.path())
        {
            tracing::warn!(%error, "removing the temporary state directory failed");
        }
    }

    /// The directory's path.
    pub(crate) fn path(&self) -> PathBuf {
        match self {
            Self::Given(path) => path.clone(),
            Self::Temporary(dir) => dir.path().to_path_buf(),
        }
    }
}

/// Everything the environment decides.
pub(crate) struct Settings {
    /// Capabilities advertised in `initialize`.
    pub(crate) capabilities: BTreeSet<Capability>,
    /// Whether authentication is required.
    pub(crate) auth: AuthMode,
    /// Where sessions are persisted.
    pub(crate) state_dir: StateDir,
    /// Whether client capabilities gate client calls.
    pub(crate) client_checks: ClientCapabilityChecks,
    /// Sessions per `session/list` page.
    pub(crate) page_size: usize,
    /// When new sessions are first written.
    pub(crate) saving: Saving,
    /// What a reopened session keeps of its settings.
    pub(crate) reopen: ReopenSettings,
    /// The models offered: `(id, name)`.
    pub(crate) models: Vec<(&'static str, &'static str)>,
    /// Which terminal sign-in is offered.
    pub(crate) terminal_auth: crate::sign_in::TerminalAuth,
}

impl Settings {
    /// Reads the settings from the process environment.
    pub(crate) fn from_env() -> anyhow::Result<Self> {
        let caps = std::env::var(CAPS_VAR).unwrap_or_else(|_| DEFAULT_CAPS.to_owned());
        let capabilities = parse_capabilities(&caps)?;
        let auth = match std::env::var(AUTH_VAR).as_deref() {
            Ok("1") => AuthMode::Required,
            Ok("0") | Ok("") | Err(_) => AuthMode::Open,
            Ok(other) => bail!("{AUTH_VAR}={other:?} is not understood; use 1 or 0"),
        };
        let client_checks = match std::env::var(IGNORE_CLIENT_CAPS_VAR).as_deref() {
            Ok("1") => ClientCapabilityChecks::Ignore,
            Ok("0") | Ok("") | Err(_) => ClientCapabilityChecks::Honour,
            Ok(other) => bail!("{IGNORE_CLIENT_CAPS_VAR}={other:?} is not understood; use 1 or 0"),
        };
        let page_size = match std::env::var(PAGE_SIZE_VAR) {
            Ok(value) => match value.parse::<usize>() {
                Ok(size) if size > 0 => size,
                _ => bail!("{PAGE_SIZE_VAR}={value:?} is not a positive number"),
            },
            Err(_) => DEFAULT_PAGE_SIZE,
        };
        let saving = match std::env::var(SAVE_VAR).as_deref() {
            Ok("at-once") | Ok("") | Err(_) => Saving::AtOnce,
            Ok("with-first-turn") => Saving::WithFirstTurn,
            Ok(other) => {
                bail!("{SAVE_VAR}={other:?} is not understood; use at-once or with-first-turn")
            }
        };
        let reopen = match std::env::var(REOPEN_DEFAULTS_VAR).as_deref() {
            Ok("1") => ReopenSettings::Defaults,
            Ok("0") | Ok("") | Err(_) => ReopenSettings::Kept,
            Ok(other) => bail!("{REOPEN_DEFAULTS_VAR}={other:?} is not understood; use 1 or 0"),
        };
        let models = match std::env::var(MODELS_VAR) {
            Ok(list) if !list.trim().is_empty() => parse_models(&list)?,
            _ => crate::agent::MODELS.to_vec(),
        };
        let state_dir = match std::env::var_os(STATE_VAR) {
            Some(path) if !path.is_empty() => {
                let path = PathBuf::from(path);
                std::fs::create_dir_all(&path).with_context(|| {
                    format!(
                        "creating the state directory {} ({STATE_VAR})",
                        path.display()
                    )
                })?;
                StateDir::Given(path)
            }
            _ => StateDir::Temporary(
                tempfile::Builder::new()
                    .prefix("hearth-acp-test-agent-")
                    .tempdir()
                    .context("creating a temporary state directory")?,
            ),
        };
        Ok(Self {
            capabilities,
            auth,
            state_dir,
            client_checks,
            page_size,
            saving,
            reopen,
            models,
            terminal_auth: crate::sign_in::TerminalAuth::from_env()?,
        })
    }

    /// Whether `capability` is advertised.
    pub(crate) fn has(&self, capability: Capability) -> bool {
        self.capabilities.contains(&capability)
    }

    /// The `agentCapabilities` object for `initialize`.
    pub(crate) fn agent_capabilities(&self) -> AgentCapabilities {
        let mut session = SessionCapabilities::new();
        if self.has(Capability::List) {
            session = session.list(SessionListCapabilities::new());
        }
        if self.has(Capability::Resume) {
            session = session.resume(SessionResumeCapabilities::new());
        }
        if self.has(Capability::Fork) {
            session = session.fork(SessionForkCapabilities::new());
        }
        if self.has(Capability::Close) {
            session = session.close(SessionCloseCapabilities::new());
        }
        let mut auth = AgentAuthCapabilities::new();
        if self.has(Capability::Logout) {
            auth = auth.logout(LogoutCapabilities::new());
        }
        AgentCapabilities::new()
            .load_session(self.has(Capability::Load))
            .auth(auth)
            .prompt_capabilities(
                PromptCapabilities::new()
                    .image(self.has(Capability::Image))
                    .audio(self.has(Capability::Audio))
                    .embedded_context(self.has(Capability::Embedded)),
            )
            .mcp_capabilities(
                McpCapabilities::new()
                    .http(self.has(Capability::McpHttp))
                    .sse(self.has(Capability::McpSse)),
            )
            .session_capabilities(session)
    }
}

/// Parses a comma list of model ids, each one of [`crate::agent::MODELS`].
fn parse_models(list: &str) -> anyhow::Result<Vec<(&'static str, &'static str)>> {
    list.split(',')
        .map(str::trim)
        .filter(|id| !id.is_empty())
        .map(|id| {
            crate::agent::MODELS
                .iter()
                .find(|(known, _)| *known == id)
                .copied()
                .with_context(|| format!("{MODELS_VAR}: unknown model {id:?}"))
        })
        .collect()
}

/// Parses a comma list of capability tokens; `none` (or an empty list) is the empty set.
pub(crate) fn parse_capabilities(list: &str) -> anyhow::Result<BTreeSet<Capability>> {
    let mut capabilities = BTreeSet::new();
    for token in list
        .split(',')
        .map(str::trim)
        .filter(|token| !token.is_empty())
    {
        if token == "none" {
            continue;
        }
        match CAPABILITY_TOKENS.iter().find(|(name, _)| *name == token) {
            Some((_, capability)) => {
                capabilities.insert(*capability);
            }
            None => {
                let known: Vec<&str> = CAPABILITY_TOKENS.iter().map(|(name, _)| *name).collect();
                bail!(
                    "{CAPS_VAR}: unknown capability {token:?}; known: {}, none",
                    known.join(", ")
                );
            }
        }
    }
    Ok(capabilities)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_default_list_turns_on_the_documented_capabilities() {
        let parsed = parse_capabilities(DEFAULT_CAPS).unwrap();
        assert_eq!(
            parsed.into_iter().collect::<Vec<_>>(),
            vec![
                Capability::Load,
                Capability::List,
                Capability::Resume,
                Capability::Fork,
                Capability::Close,
                Capability::Image,
                Capability::Embedded,
            ]
        );
    }

    #[test]
    fn none_and_blanks_give_the_empty_set() {
        assert!(parse_capabilities("none").unwrap().is_empty());
        assert!(parse_capabilities(" , ").unwrap().is_empty());
    }

    #[test]
    fn an_unknown_token_is_refused_by_name() {
        let error = parse_capabilities("load,teleport").unwrap_err().to_string();
        assert!(error.contains("\"teleport\""), "{error}");
        assert!(error.contains(CAPS_VAR), "{error}");
    }
}
