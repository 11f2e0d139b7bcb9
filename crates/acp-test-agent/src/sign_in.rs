//! Signing in the way real agents do it: a terminal sign-in run as the agent's own
//! program (`hearth-acp-test-agent login`), which stores a credential in the state
//! directory; a credential found there counts as signed in; `logout` removes it.
//!
//! The terminal method is offered in two shapes, chosen by [`TERMINAL_AUTH_VAR`]:
//! - `spec`: an `AuthMethod` of type `terminal` (the client runs the agent's own command
//!   with the method's `args` and `env`), offered only to a client that declared
//!   `clientCapabilities.auth.terminal`;
//! - `meta`: an agent-type method carrying `_meta."terminal-auth"` with the command to
//!   run (the older convention of Zed's agents), offered only to a client that declared
//!   `clientCapabilities._meta."terminal-auth"`.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    AuthMethod, AuthMethodAgent, AuthMethodTerminal, ClientCapabilities,
};
use anyhow::{Context, bail};
use serde_json::json;

use crate::config::STATE_VAR;

/// Which shape of terminal sign-in is offered: unset, `spec` or `meta`.
pub(crate) const TERMINAL_AUTH_VAR: &str = "HEARTH_TEST_AGENT_TERMINAL_AUTH";
/// The id of the terminal sign-in method.
pub(crate) const TERMINAL_METHOD: &str = "test-terminal";
/// The subcommand that runs the terminal sign-in.
pub(crate) const LOGIN_SUBCOMMAND: &str = "login";
/// Set by the `spec` method's `env` for the sign-in, and recorded by it.
const LOGIN_BY_VAR: &str = "HEARTH_TEST_AGENT_LOGIN_BY";
/// The credential file in the state directory.
const CREDENTIAL_FILE: &str = "signed-in.json";

/// The shape of the terminal sign-in offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TerminalAuth {
    /// None.
    Off,
    /// An `AuthMethod::Terminal`.
    Spec,
    /// An agent method with `_meta."terminal-auth"`.
    Meta,
}

impl TerminalAuth {
    /// Reads [`TERMINAL_AUTH_VAR`].
    pub(crate) fn from_env() -> anyhow::Result<Self> {
        match std::env::var(TERMINAL_AUTH_VAR).as_deref() {
            Ok("") | Err(_) => Ok(Self::Off),
            Ok("spec") => Ok(Self::Spec),
            Ok("meta") => Ok(Self::Meta),
            Ok(other) => bail!("{TERMINAL_AUTH_VAR}={other:?} is not understood; use spec or meta"),
        }
    }

    /// The method offered to a client with `client`'s capabilities, if any.
    pub(crate) fn method(self, client: &ClientCapabilities) -> Option<AuthMethod> {
        let description = "Run `hearth-acp-test-agent login` in the terminal";
        match self {
            Self::Off => None,
            Self::Spec if client.auth.terminal => Some(AuthMethod::Terminal(
                AuthMethodTerminal::new(TERMINAL_METHOD, "Test terminal login")
                    .description(description.to_owned())
                    .args(vec![LOGIN_SUBCOMMAND.to_owned()])
                    .env(HashMap::from([(
                        LOGIN_BY_VAR.to_owned(),
                        "spec".to_owned(),
                    )])),
            )),
            Self::Meta if declares_meta_terminal_auth(client) => {
                let program = std::env::current_exe()
                    .map(|path| path.to_string_lossy().into_owned())
                    .unwrap_or_else(|_| "hearth-acp-test-agent".to_owned());
                let meta = json!({"terminal-auth": {
                    "command": program,
                    "args": [LOGIN_SUBCOMMAND, "--from-meta"],
                    "label": "Test terminal login",
                }});
                Some(AuthMethod::Agent(
                    AuthMethodAgent::new(TERMINAL_METHOD, "Test terminal login")
                        .description(description.to_owned())
                        .meta(meta.as_object().cloned()),
                ))
            }
            Self::Spec | Self::Meta => None,
        }
    }
}

/// Whether the client declared `_meta."terminal-auth": true`.
fn declares_meta_terminal_auth(client: &ClientCapabilities) -> bool {
    client
        .meta
        .as_ref()
        .and_then(|meta| meta.get("terminal-auth"))
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false)
}

fn credential(state: &Path) -> PathBuf {
    state.join(CREDENTIAL_FILE)
}

/// Whether a credential is stored in `state`.
pub(crate) fn signed_in(state: &Path) -> bool {
    credential(state).is_file()
}

/// Removes the stored credential, if any.
pub(crate) fn sign_out(state: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(credential(state)) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(error),
        _ => Ok(()),
    }
}

/// `hearth-acp-test-agent login [ARGS…]`: asks for a name on stdout, reads it from
/// stdin, and stores it with the arguments, the working directory and
/// `HEARTH_TEST_AGENT_LOGIN_BY` as the credential in `HEARTH_TEST_AGENT_STATE`. An empty
/// answer cancels (exit status 1).
#[allow(
    clippy::print_stdout,
    reason = "the sign-in talks to the user's terminal"
)]
pub(crate) fn login(arguments: &[String]) -> anyhow::Result<bool> {
    let state = std::env::var_os(STATE_VAR)
        .filter(|state| !state.is_empty())
        .map(PathBuf::from)
        .with_context(|| format!("{STATE_VAR} is not set: there is nowhere to keep the sign-in"))?;
    print!("test agent sign-in; your name: ");
    std::io::stdout()
        .flush()
        .context("writing to the terminal")?;
    let mut name = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut name)
        .context("reading the answer")?;
    let name = name.trim();
    if name.is_empty() {
        println!("sign-in cancelled");
        return Ok(false);
    }
    std::fs::create_dir_all(&state)
        .with_context(|| format!("creating the state directory {}", state.display()))?;
    let record = json!({
        "name": name,
        "args": arguments,
        "by": std::env::var(LOGIN_BY_VAR).ok(),
        "cwd": std::env::current_dir().ok(),
    });
    std::fs::write(credential(&state), record.to_string())
        .with_context(|| format!("writing {}", credential(&state).display()))?;
    println!("signed in as {name}");
    Ok(true)
}
