//! A CalDAV account and its credentials: the password is read from its source (an
//! environment variable, or a command such as a keyring's command-line tool) each time
//! a client needs it, and never kept in the configuration, caches, logs or errors.

use std::time::Duration;

use base64::Engine as _;
use hearth_process::{ChildEnv, Launch, RunError, RunLimits, Stdin, run_to_end};

use crate::error::{CalDavError, Result};

/// How long a password command may run: long enough for a keyring to ask the user to
/// unlock it.
const PASSWORD_COMMAND_TIME: Duration = Duration::from_secs(120);

/// The most a password command may print.
const PASSWORD_COMMAND_OUTPUT: usize = 64 * 1024;

/// What keyrings and password managers need from Hearth's environment, beyond the
/// minimal one every child gets: the session bus (Secret Service), the display (an
/// unlock prompt), GnuPG (`pass`), `pass`'s settings and 1Password's sessions.
const KEYRING_VARIABLES: &[&str] = &[
    "DBUS_SESSION_BUS_ADDRESS",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "GNUPGHOME",
    "GPG_TTY",
    "PASSWORD_STORE_*",
    "OP_*",
];

/// Where a CalDAV password comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PasswordSource {
    /// No password (a server that needs none).
    None,
    /// An environment variable.
    Env(String),
    /// A program and its arguments that print the password (`secret-tool lookup …`,
    /// `security find-generic-password -w …`, `pass show …`).
    Command(Vec<String>),
}

/// A CalDAV account: the server, the user and where the password comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CalDavAccount {
    /// The calendar id it belongs to (for messages), or the URL being discovered.
    pub label: String,
    /// The URL (a calendar collection, or a server root to discover from).
    pub url: String,
    /// The user name.
    pub username: Option<String>,
    /// The password's source.
    pub password: PasswordSource,
    /// Whether the server may be on a private network.
    pub allow_private_network: bool,
}

impl CalDavAccount {
    /// The password, read now from its source.
    async fn password(&self, command_limit: Duration) -> Result<Option<String>> {
        match &self.password {
            PasswordSource::None => Ok(None),
            PasswordSource::Env(name) => match std::env::var(name) {
                Ok(value) if !value.is_empty() => Ok(Some(value)),
                _ => Err(self.error(format!(
                    "the password variable `{name}` is not set; export it (an app password from the provider), or set `password_command`"
                ))),
            },
            PasswordSource::Command(command) => self.run_password_command(command, command_limit).await,
        }
    }

    /// Runs the password command in a process group of its own, with a minimal
    /// environment (and what keyrings need), and reads the first line it prints; a
    /// command that fails is quoted from its stderr, one that runs past `limit` is killed
    /// with everything it started.
    async fn run_password_command(
        &self,
        command: &[String],
        limit: Duration,
    ) -> Result<Option<String>> {
        let Some((program, args)) = command.split_first() else {
            return Err(self.error("`password_command` is empty".to_owned()));
        };
        let launch = Launch::new("password_command", program)
            .args(args)
            .env(ChildEnv::minimal().pass(KEYRING_VARIABLES.iter().copied()))
            .stdin(Stdin::Null);
        let limits = RunLimits {
            wall_time: limit,
            max_output_bytes: PASSWORD_COMMAND_OUTPUT,
        };
        let finished = match run_to_end(&launch, None, limits).await {
            Ok(finished) => finished,
            Err(RunError::TimedOut { limit, stderr }) => {
                return Err(self.error(format!(
                    "`password_command` ({program}) did not finish within {} s and was stopped{stderr}; run it yourself to see whether it waits for something (an unlock prompt, a device)",
                    limit.as_secs_f32()
                )));
            }
            Err(error) => {
                return Err(self.error(format!("`password_command` ({program}): {error}")));
            }
        };
        if !finished.exit.success() {
            return Err(self.error(format!(
                "`password_command` ({program}) failed ({}){}; run it yourself to see why",
                finished.exit,
                finished.stderr.quoted()
            )));
        }
        let text = String::from_utf8(finished.stdout).map_err(|_| {
            self.error(format!(
                "`password_command` ({program}) printed non-UTF-8 text"
            ))
        })?;
        let password = text.lines().next().unwrap_or("").to_owned();
        if password.is_empty() {
            return Err(self.error(format!(
                "`password_command` ({program}) printed no password"
            )));
        }
        Ok(Some(password))
    }

    /// The `Authorization` header's value (HTTP Basic), the password read now.
    pub(crate) async fn authorization(&self) -> Result<Option<String>> {
        self.authorization_within(PASSWORD_COMMAND_TIME).await
    }

    async fn authorization_within(&self, command_limit: Duration) -> Result<Option<String>> {
        let password = self.password(command_limit).await?;
        match (&self.username, password) {
            (None, None) => Ok(None),
            (user, password) => {
                let pair = format!(
                    "{}:{}",
                    user.as_deref().unwrap_or(""),
                    password.as_deref().unwrap_or("")
                );
                Ok(Some(format!(
                    "Basic {}",
                    base64::engine::general_purpose::STANDARD.encode(pair)
                )))
            }
        }
    }

    /// An error about this account's server: what failed and what to do.
    pub fn error(&self, message: String) -> CalDavError {
        CalDavError::Server {
            id: self.label.clone(),
            url: self.url.clone(),
            message,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_missing_password_variable_is_named() {
        let account = CalDavAccount {
            label: "work".to_owned(),
            url: "http://x.test/".to_owned(),
            username: Some("alice".to_owned()),
            password: PasswordSource::Env("HEARTH_TEST_UNSET_CALDAV_PASSWORD".to_owned()),
            allow_private_network: false,
        };
        let error = account.authorization().await.unwrap_err().to_string();
        assert!(
            error.contains("HEARTH_TEST_UNSET_CALDAV_PASSWORD"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn a_password_command_is_run_and_its_first_line_used() {
        let account = CalDavAccount {
            label: "work".to_owned(),
            url: "http://x.test/".to_owned(),
            username: Some("alice".to_owned()),
            password: PasswordSource::Command(vec![
                "printf".to_owned(),
                "s3cret\\nignored\\n".to_owned(),
            ]),
            allow_private_network: false,
        };
        let expected = format!(
            "Basic {}",
            base64::engine::general_purpose::STANDARD.encode("alice:s3cret")
        );
        assert_eq!(account.authorization().await.unwrap(), Some(expected));
    }

    fn account_with_command(command: &[&str]) -> CalDavAccount {
        CalDavAccount {
            label: "work".to_owned(),
            url: "http://x.test/".to_owned(),
            username: Some("alice".to_owned()),
            password: PasswordSource::Command(
                command.iter().map(|part| (*part).to_owned()).collect(),
            ),
            allow_private_network: false,
        }
    }

    #[tokio::test]
    async fn a_failing_password_command_is_named_with_what_it_said() {
        let account = account_with_command(&[
            "sh",
            "-c",
            "echo 'secret-tool: no such secret collection' >&2; exit 1",
        ]);
        let error = account.authorization().await.unwrap_err().to_string();
        assert!(
            error.contains("`password_command` (sh) failed (exit status 1)")
                && error.contains(
                    "its last lines on stderr:\n  secret-tool: no such secret collection"
                ),
            "{error}"
        );
    }

    #[tokio::test]
    async fn a_hanging_password_command_is_stopped_with_what_it_started() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pid");
        let script = format!(
            "echo $$ > {}; echo 'waiting for the keyring to unlock' >&2; sleep 60 & wait",
            pid_file.display()
        );
        let account = account_with_command(&["sh", "-c", &script]);
        let error = account
            .authorization_within(Duration::from_secs(2))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("`password_command` (sh) did not finish within 2 s and was stopped")
                && error.contains("waiting for the keyring to unlock"),
            "{error}"
        );
        let group: u32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(
            !hearth_process::group::runs(group, None),
            "the password command's processes still run"
        );
    }
}
