//! Signing in to an agent and out again: the ways it offers in `initialize`, read into
//! [`SignInMethod`]s, and what running each means.
//!
//! An agent offers three kinds of method, and each is run differently:
//! 1. a method of type `terminal` (ACP v1): the user runs the agent's own program, as
//!    Hearth starts it, with the method's extra arguments and variables, in a terminal;
//! 2. an agent method carrying `_meta."terminal-auth"` (the earlier convention of Zed's
//!    agents, still used by OpenCode, Copilot and the older Claude adapter): the user
//!    runs the command it names, with the agent's environment, in a terminal;
//! 3. any other method: Hearth asks the agent to sign in itself (`authenticate`).
//!
//! Hearth declares both terminal forms in `initialize` (`auth.terminal` and
//! `_meta."terminal-auth"`), since `hearth agents login` can run them; some agents
//! (claude-agent-acp) offer their sign-in only then. Signing out is ACP `logout`, where
//! the agent declares `auth.logout`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema as acp;
use hearth_process::ChildEnv;
use serde_json::Value;

use crate::harness::AcpHarness;
use crate::shared::Shared;

/// The key of the earlier convention for terminal sign-in, in a method's `_meta` and in
/// the client capabilities' `_meta`.
pub(crate) const TERMINAL_AUTH_META: &str = "terminal-auth";

/// One way to sign in to an agent, as it offered it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignInMethod {
    /// Its id (what `--method` and `auth_method` name).
    pub id: String,
    /// Its name, as the agent gives it.
    pub name: String,
    /// What it does, as the agent says.
    pub description: Option<String>,
    /// How it is run.
    pub way: SignInWay,
}

/// How a sign-in method is run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SignInWay {
    /// The user runs this command in a terminal; a zero exit status means success.
    Terminal(SignInCommand),
    /// Hearth asks the agent to sign in (`authenticate`).
    Agent,
}

/// A terminal sign-in: a program, its arguments, and the environment and directory the
/// agent runs with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SignInCommand {
    /// The program.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its environment: the agent's, plus what the method sets.
    pub env: ChildEnv,
    /// The directory it starts in (the one the agent runs in).
    pub directory: PathBuf,
}

impl SignInCommand {
    /// The command, with exactly this environment and directory; stdio is the
    /// caller's choice (a terminal sign-in inherits the user's terminal). It is not a
    /// [`hearth_process::Launch`]: a sign-in reads the user's terminal, so it must stay
    /// in the terminal's foreground process group, not in a group of its own.
    pub fn command(&self) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(&self.program);
        command.args(&self.args).current_dir(&self.directory);
        self.env.apply(&mut command);
        command
    }

    /// The command line, for messages.
    pub fn display(&self) -> String {
        std::iter::once(self.program.display().to_string())
            .chain(self.args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

impl SignInMethod {
    /// Whether the user runs it in a terminal.
    pub fn is_terminal(&self) -> bool {
        matches!(self.way, SignInWay::Terminal(_))
    }
}

/// Reads the methods an agent offered, for the agent started as `shared` says.
pub(crate) fn methods(shared: &Shared, offered: &[acp::AuthMethod]) -> Vec<SignInMethod> {
    offered
        .iter()
        .map(|method| SignInMethod {
            id: method.id().0.to_string(),
            name: method.name().to_owned(),
            description: method.description().map(str::to_owned),
            way: way(shared, method),
        })
        .collect()
}

fn way(shared: &Shared, method: &acp::AuthMethod) -> SignInWay {
    let launch = crate::connection::launch_of(shared);
    match method {
        acp::AuthMethod::Terminal(terminal) => SignInWay::Terminal(SignInCommand {
            program: launch.command,
            args: launch
                .args
                .into_iter()
                .chain(terminal.args.iter().cloned())
                .collect(),
            env: launch.env.set(terminal.env.clone()),
            directory: launch.directory,
        }),
        _ => match meta_terminal(method.meta()) {
            Some((command, args, env)) => {
                let env = launch.env.set(env);
                SignInWay::Terminal(SignInCommand {
                    program: resolve(&command, &launch.command, &env),
                    args,
                    env,
                    directory: launch.directory,
                })
            }
            None => SignInWay::Agent,
        },
    }
}

/// The command, arguments and variables of `_meta."terminal-auth"`, when it names a
/// command.
fn meta_terminal(
    meta: Option<&acp::Meta>,
) -> Option<(String, Vec<String>, BTreeMap<String, String>)> {
    let terminal = meta?.get(TERMINAL_AUTH_META)?;
    let command = terminal.get("command")?.as_str()?.to_owned();
    let args = terminal
        .get("args")
        .and_then(Value::as_array)
        .map(|args| {
            args.iter()
                .filter_map(|arg| arg.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let env = terminal
        .get("env")
        .and_then(Value::as_object)
        .map(|env| {
            env.iter()
                .filter_map(|(name, value)| Some((name.clone(), value.as_str()?.to_owned())))
                .collect()
        })
        .unwrap_or_default();
    Some((command, args, env))
}

/// The program a bare command name of `_meta."terminal-auth"` means: found on the
/// agent's `PATH`; else the agent's own program when it has that name (OpenCode names
/// `opencode`, its package's program is `opencode.exe`); else the name as given (its
/// start then fails saying so).
fn resolve(command: &str, agent_program: &Path, env: &ChildEnv) -> PathBuf {
    if command.contains('/') {
        return PathBuf::from(command);
    }
    let path = env.resolve().get(std::ffi::OsStr::new("PATH")).cloned();
    let found = path
        .iter()
        .flat_map(std::env::split_paths)
        .map(|directory| directory.join(command))
        .find(|candidate| candidate.is_file());
    if let Some(found) = found {
        return found;
    }
    if agent_program
        .file_stem()
        .is_some_and(|stem| stem == std::ffi::OsStr::new(command))
    {
        return agent_program.to_path_buf();
    }
    PathBuf::from(command)
}

impl AcpHarness {
    /// Starts the agent (when it is not running) and returns the sign-in methods it
    /// offers.
    pub async fn sign_in_methods(&self) -> crate::Result<Vec<SignInMethod>> {
        let connection = self.inner.connection().await?;
        Ok(methods(&self.inner.shared, &connection.info.auth_methods))
    }

    /// Asks the agent to sign in with `method` (`authenticate`).
    pub async fn authenticate(&self, method: &str) -> crate::Result<()> {
        let connection = self.inner.connection().await?;
        connection
            .request(
                "authenticate",
                acp::AuthenticateRequest::new(method.to_owned()),
                None,
            )
            .await?;
        Ok(())
    }

    /// Asks the agent to sign out (`logout`); refused when it does not offer that.
    pub async fn sign_out(&self) -> crate::Result<()> {
        let connection = self.inner.connection().await?;
        if connection.info.capabilities.auth.logout.is_none() {
            return Err(crate::Error::Unsupported {
                agent: self.inner.shared.agent().to_owned(),
                what: "signing out through Hearth (it does not offer ACP `logout`); sign out with the agent's own command".to_owned(),
            });
        }
        connection
            .request(
                "logout",
                acp::LogoutRequest::new(),
                Some(self.inner.shared.options.timeouts.request),
            )
            .await?;
        Ok(())
    }
}
