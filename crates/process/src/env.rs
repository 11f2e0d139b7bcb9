//! The environment of a child process: a minimal base, the variables passed by name,
//! and the variables set.

use std::collections::BTreeMap;
use std::ffi::OsString;

/// The variables every child gets from Hearth's environment (when set): what programs
/// need to find their tools, files, language, terminal and network — never a key. Every
/// `LC_*` locale variable goes too.
pub const BASE_VARIABLES: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TERM",
    "COLORTERM",
    "TZ",
    "TMPDIR",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    "XDG_RUNTIME_DIR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
];

/// The environment a child gets: [`BASE_VARIABLES`] (and `LC_*`) from Hearth's, the
/// variables passed by name (`NAME`, or `PREFIX*` for every variable starting with
/// `PREFIX`), then the variables set (which win).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChildEnv {
    pass: Vec<String>,
    set: BTreeMap<String, String>,
    /// Where variables are read from: the process environment, or a fixed map (tests).
    source: Option<BTreeMap<String, String>>,
}

impl ChildEnv {
    /// Only [`BASE_VARIABLES`] from the process environment.
    pub fn minimal() -> Self {
        Self::default()
    }

    /// The same rules over a fixed environment instead of the process's (tests).
    pub fn over(source: impl IntoIterator<Item = (String, String)>) -> Self {
        Self {
            source: Some(source.into_iter().collect()),
            ..Self::default()
        }
    }

    /// Also passes these variables (`NAME` or `PREFIX*`) when they are set.
    #[must_use]
    pub fn pass<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.pass.extend(names.into_iter().map(Into::into));
        self
    }

    /// Sets these variables (they win over passed ones).
    #[must_use]
    pub fn set<I, K, V>(mut self, variables: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<String>,
    {
        self.set.extend(
            variables
                .into_iter()
                .map(|(name, value)| (name.into(), value.into())),
        );
        self
    }

    /// The names passed by name (not the base ones), as given.
    pub fn passed(&self) -> &[String] {
        &self.pass
    }

    /// The variables set, by name.
    pub fn set_variables(&self) -> &BTreeMap<String, String> {
        &self.set
    }

    /// The whole environment the child gets, by name.
    pub fn resolve(&self) -> BTreeMap<OsString, OsString> {
        let inherited: Vec<(OsString, OsString)> = match &self.source {
            Some(source) => source
                .iter()
                .map(|(name, value)| (OsString::from(name), OsString::from(value)))
                .collect(),
            None => std::env::vars_os().collect(),
        };
        let mut resolved: BTreeMap<OsString, OsString> = inherited
            .into_iter()
            .filter(|(name, _)| name.to_str().is_some_and(|name| self.takes(name)))
            .collect();
        resolved.extend(
            self.set
                .iter()
                .map(|(name, value)| (OsString::from(name), OsString::from(value))),
        );
        resolved
    }

    fn takes(&self, name: &str) -> bool {
        BASE_VARIABLES.contains(&name)
            || name.starts_with("LC_")
            || self.pass.iter().any(|pattern| matches(pattern, name))
    }

    /// Gives `command` exactly this environment (nothing else of Hearth's).
    pub fn apply(&self, command: &mut tokio::process::Command) {
        command.env_clear().envs(self.resolve());
    }

    /// Gives a blocking `command` exactly this environment.
    pub fn apply_std(&self, command: &mut std::process::Command) {
        command.env_clear().envs(self.resolve());
    }
}

/// Whether `name` matches `pattern` (`NAME`, or `PREFIX*`).
fn matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => pattern == name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn names(env: &ChildEnv) -> Vec<String> {
        env.resolve()
            .into_iter()
            .map(|(name, value)| format!("{}={}", name.to_string_lossy(), value.to_string_lossy()))
            .collect()
    }

    #[test]
    fn only_the_base_the_passed_and_the_set_variables_reach_a_child() {
        let hearth = [
            ("PATH", "/usr/bin"),
            ("HOME", "/home/me"),
            ("LC_TIME", "de_DE.UTF-8"),
            ("OPENAI_API_KEY", "sk-secret"),
            ("FASTMAIL_APP_PASSWORD", "pw"),
            ("ANTHROPIC_API_KEY", "sk-ant"),
            ("ANTHROPIC_BASE_URL", "http://127.0.0.1:1"),
            ("HEARTH_HOME", "/data"),
        ]
        .map(|(name, value)| (name.to_owned(), value.to_owned()));
        let env = ChildEnv::over(hearth.clone());
        assert_eq!(
            names(&env),
            ["HOME=/home/me", "LC_TIME=de_DE.UTF-8", "PATH=/usr/bin"]
        );
        let env = ChildEnv::over(hearth)
            .pass(["ANTHROPIC_*", "NOT_SET"])
            .set([("CODEX_HOME", "/c"), ("HOME", "/elsewhere")]);
        assert_eq!(
            names(&env),
            [
                "ANTHROPIC_API_KEY=sk-ant",
                "ANTHROPIC_BASE_URL=http://127.0.0.1:1",
                "CODEX_HOME=/c",
                "HOME=/elsewhere",
                "LC_TIME=de_DE.UTF-8",
                "PATH=/usr/bin",
            ]
        );
    }

    #[tokio::test]
    async fn a_child_started_with_it_sees_nothing_else() {
        // The child gets a fixed environment and prints what it saw.
        let env = ChildEnv::over([
            ("PATH".to_owned(), "/usr/bin:/bin".to_owned()),
            ("SECRET_TOKEN".to_owned(), "x".to_owned()),
        ]);
        let mut command = tokio::process::Command::new("/usr/bin/env");
        env.apply(&mut command);
        let output = command.output().await.unwrap();
        assert_eq!(
            String::from_utf8(output.stdout).unwrap(),
            "PATH=/usr/bin:/bin\n"
        );
    }
}
