//! The data directory and the files in it.

use std::env;
use std::path::{Path, PathBuf};

use thiserror::Error;

use crate::private::{Tightening, create_private_dir, tighten};

/// Environment variable that selects the data directory.
pub const HOME_ENV: &str = "HEARTH_HOME";
/// Environment variable that selects the configuration file.
pub const CONFIG_ENV: &str = "HEARTH_CONFIG";

/// The data directory could not be determined.
#[derive(Debug, Error)]
#[error(
    "cannot find a data directory for Hearth (no home directory known); set HEARTH_HOME or pass --home DIR"
)]
pub struct PathsError;

/// How the configuration file was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConfigOrigin {
    /// Named by `--config` or `HEARTH_CONFIG`: it must exist.
    Given,
    /// The default place: a missing file is the empty configuration.
    Default,
}

/// Where Hearth reads and writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Paths {
    /// The data directory: database, token, cache, logs.
    pub home: PathBuf,
    /// The configuration file (may not exist when it is the default one).
    pub config_file: PathBuf,
    /// How the configuration file was chosen.
    pub config_origin: ConfigOrigin,
}

impl Paths {
    /// Resolves the data directory from `--home`, then `HEARTH_HOME`, then the platform
    /// data directory; the configuration file from `--config`, then `HEARTH_CONFIG`, then
    /// `config.toml` in an explicitly chosen home, then the platform config directory.
    pub fn resolve(home: Option<&Path>, config: Option<&Path>) -> Result<Self, PathsError> {
        // A relative `--home ../h` is made absolute here, once: agents, their terminals
        // and converters run in other working directories, where it would name another
        // place.
        let explicit_home = home
            .map(Path::to_path_buf)
            .or_else(|| {
                env::var_os(HOME_ENV)
                    .filter(|v| !v.is_empty())
                    .map(PathBuf::from)
            })
            .map(|home| absolute(&home));
        let dirs = directories::ProjectDirs::from("", "", "hearth");
        let home = match &explicit_home {
            Some(home) => home.clone(),
            None => dirs
                .as_ref()
                .map(|dirs| dirs.data_dir().to_path_buf())
                .ok_or(PathsError)?,
        };
        let (config_file, config_origin) = match config.map(Path::to_path_buf).or_else(|| {
            env::var_os(CONFIG_ENV)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        }) {
            Some(file) => (absolute(&file), ConfigOrigin::Given),
            None => (
                match (&explicit_home, &dirs) {
                    (Some(home), _) => home.join("config.toml"),
                    (None, Some(dirs)) => dirs.config_dir().join("config.toml"),
                    (None, None) => home.join("config.toml"),
                },
                ConfigOrigin::Default,
            ),
        };
        Ok(Self {
            home,
            config_file,
            config_origin,
        })
    }

    /// Paths rooted at one directory (tests, benchmarks).
    pub fn in_dir(home: &Path) -> Self {
        Self {
            home: home.to_path_buf(),
            config_file: home.join("config.toml"),
            config_origin: ConfigOrigin::Default,
        }
    }

    /// The SQLite database.
    pub fn database(&self) -> PathBuf {
        self.home.join("hearth.db")
    }

    /// The per-install server token.
    pub fn token(&self) -> PathBuf {
        self.home.join("token")
    }

    /// Log files.
    pub fn logs(&self) -> PathBuf {
        self.home.join("logs")
    }

    /// Per-workspace caches.
    pub fn workspaces(&self) -> PathBuf {
        self.home.join("workspaces")
    }

    /// Local calendars Hearth creates.
    pub fn calendars(&self) -> PathBuf {
        self.home.join("calendars")
    }

    /// The cache of projects' context sources converted to Markdown, shared by every
    /// project of this data directory.
    pub fn context_cache(&self) -> PathBuf {
        self.home.join("context-cache")
    }

    /// The key that seals the audit log's rows (32 random bytes, mode 0600; kept out of
    /// the database so that write access to it does not let anyone re-seal a row).
    pub fn audit_key(&self) -> PathBuf {
        self.home.join("audit.key")
    }

    /// The audit log's head file: one line per entry (`SEQ HASH TIME`), appended only.
    pub fn audit_head(&self) -> PathBuf {
        self.home.join("audit.head")
    }

    /// Makes the data directory ready for use: created private (0700) when it does not
    /// exist yet — on a new machine every command starts here, `serve` included — and an
    /// existing one narrowed to its owner, the directory 0700 and everything in it
    /// readable by its owner only (see [`tighten`]).
    pub fn prepare(&self) -> Result<Tightening, HomeError> {
        create_private_dir(&self.home).map_err(|source| HomeError {
            home: self.home.clone(),
            source,
        })?;
        Ok(tighten(&self.home))
    }
}

/// The data directory could not be created.
#[derive(Debug, Error)]
#[error(
    "cannot create Hearth's data directory {}: {source}; choose another with --home DIR or HEARTH_HOME",
    home.display()
)]
pub struct HomeError {
    /// The directory.
    pub home: PathBuf,
    /// Why.
    #[source]
    pub source: std::io::Error,
}

/// `path` made absolute against the current directory (without resolving symbolic
/// links); left as it is when the current directory is unknown.
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_home_holds_its_own_config() {
        let paths = Paths::resolve(Some(Path::new("/tmp/h")), None).unwrap();
        assert_eq!(paths.home, PathBuf::from("/tmp/h"));
        assert_eq!(paths.config_file, PathBuf::from("/tmp/h/config.toml"));
        assert_eq!(paths.config_origin, ConfigOrigin::Default);
        assert_eq!(paths.database(), PathBuf::from("/tmp/h/hearth.db"));
        assert_eq!(paths.audit_key(), PathBuf::from("/tmp/h/audit.key"));
        assert_eq!(paths.audit_head(), PathBuf::from("/tmp/h/audit.head"));
        let paths =
            Paths::resolve(Some(Path::new("/tmp/h")), Some(Path::new("/etc/x.toml"))).unwrap();
        assert_eq!(paths.config_file, PathBuf::from("/etc/x.toml"));
        assert_eq!(paths.config_origin, ConfigOrigin::Given);
    }

    #[test]
    fn a_relative_home_is_made_absolute() {
        let paths = Paths::resolve(Some(Path::new("../h")), Some(Path::new("c.toml"))).unwrap();
        let here = env::current_dir().unwrap();
        assert_eq!(paths.home, here.join("../h"));
        assert_eq!(paths.config_file, here.join("c.toml"));
        assert!(paths.home.is_absolute());
    }

    #[test]
    fn prepare_creates_a_missing_home_private() {
        use std::os::unix::fs::PermissionsExt as _;
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join("a/new/home");
        let paths = Paths::in_dir(&home);
        let tightening = paths.prepare().unwrap();
        assert!(tightening.is_empty());
        let mode = std::fs::metadata(&home).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
        // A second time finds it there and leaves it.
        assert!(paths.prepare().unwrap().is_empty());
        // Where it cannot be made, the error names it and what to do.
        let blocked = Paths::in_dir(&root.path().join("file/home"));
        std::fs::write(root.path().join("file"), "").unwrap();
        let error = blocked.prepare().unwrap_err().to_string();
        assert!(error.contains("file/home"), "{error}");
        assert!(error.contains("--home DIR"), "{error}");
    }
}
