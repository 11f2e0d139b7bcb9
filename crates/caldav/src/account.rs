//! A CalDAV account and its credentials: the password is read from its source (an
//! environment variable, or a command such as a keyring's command-line tool) each time
//! a client needs it, and never kept in the configuration, caches, logs or errors.

use base64::Engine as _;

use crate::error::{CalDavError, Result};

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
    fn password(&self) -> Result<Option<String>> {
        match &self.password {
            PasswordSource::None => Ok(None),
            PasswordSource::Env(name) => match std::env::var(name) {
                Ok(value) if !value.is_empty() => Ok(Some(value)),
                _ => Err(self.error(format!(
                    "the password variable `{name}` is not set; export it (an app password from the provider), or set `password_command`"
                ))),
            },
            PasswordSource::Command(command) => {
                let Some((program, args)) = command.split_first() else {
                    return Err(self.error("`password_command` is empty".to_owned()));
                };
                let output = std::process::Command::new(program)
                    .args(args)
                    .stdin(std::process::Stdio::null())
                    .output()
                    .map_err(|error| {
                        self.error(format!("`password_command` ({program}) cannot run: {error}"))
                    })?;
                if !output.status.success() {
                    return Err(self.error(format!(
                        "`password_command` ({program}) failed ({}); run it yourself to see why",
                        output.status
                    )));
                }
                let text = String::from_utf8(output.stdout).map_err(|_| {
                    self.error(format!("`password_command` ({program}) printed non-UTF-8 text"))
                })?;
                let password = text.lines().next().unwrap_or("").to_owned();
                if password.is_empty() {
                    return Err(self.error(format!(
                        "`password_command` ({program}) printed no password"
                    )));
                }
                Ok(Some(password))
            }
        }
    }

    /// The `Authorization` header's value (HTTP Basic), the password read now.
    pub(crate) fn authorization(&self) -> Result<Option<String>> {
        let password = self.password()?;
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

    #[test]
    fn a_missing_password_variable_is_named() {
        let account = CalDavAccount {
            label: "work".to_owned(),
            url: "http://x.test/".to_owned(),
            username: Some("alice".to_owned()),
            password: PasswordSource::Env("HEARTH_TEST_UNSET_CALDAV_PASSWORD".to_owned()),
            allow_private_network: false,
        };
        let error = account.authorization().unwrap_err().to_string();
        assert!(
            error.contains("HEARTH_TEST_UNSET_CALDAV_PASSWORD"),
            "{error}"
        );
    }

    #[test]
    fn a_password_command_is_run_and_its_first_line_used() {
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
        assert_eq!(account.authorization().unwrap(), Some(expected));
    }
}
