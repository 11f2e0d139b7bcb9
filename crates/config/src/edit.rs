//! Changing `config.toml` the way a person would: the file read as a document (its
//! comments, order and formatting kept), tables added or replaced, the result checked
//! to be a configuration Hearth reads, and written atomically. Never by pasting text.

use std::path::{Path, PathBuf};

use toml_edit::{DocumentMut, Item, Table, Value};

use crate::config::{Config, ConfigError};

/// `config.toml` opened for changes.
#[derive(Debug)]
pub struct ConfigEdit {
    path: PathBuf,
    document: DocumentMut,
    /// The tables added, in order (for saying what changed).
    added: DocumentMut,
}

impl ConfigEdit {
    /// Opens `path` (a missing file is an empty configuration).
    pub fn open(path: &Path) -> Result<Self, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(source) => {
                return Err(ConfigError::Read {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        let document = text
            .parse::<DocumentMut>()
            .map_err(|error| ConfigError::Parse {
                path: path.to_path_buf(),
                message: error.to_string(),
            })?;
        Ok(Self {
            path: path.to_path_buf(),
            document,
            added: DocumentMut::new(),
        })
    }

    /// Whether `[section.id]` exists.
    pub fn has(&self, section: &str, id: &str) -> bool {
        self.document
            .get(section)
            .and_then(Item::as_table_like)
            .is_some_and(|table| table.contains_key(id))
    }

    /// Sets `[section.id]` to these entries (replacing a table of that name).
    pub fn set_table<I, K>(&mut self, section: &str, id: &str, entries: I)
    where
        I: IntoIterator<Item = (K, Value)>,
        K: Into<String>,
    {
        let mut table = Table::new();
        for (key, value) in entries {
            table.insert(&key.into(), Item::Value(value));
        }
        for document in [&mut self.document, &mut self.added] {
            let parent = document.entry(section).or_insert_with(|| {
                let mut parent = Table::new();
                parent.set_implicit(true);
                Item::Table(parent)
            });
            if let Some(parent) = parent.as_table_mut() {
                parent.insert(id, Item::Table(table.clone()));
            }
        }
    }

    /// Removes `[section.id]` (and `section` when nothing else is left in it); whether
    /// it was there. Comments and the other tables stay as they are.
    pub fn remove_table(&mut self, section: &str, id: &str) -> bool {
        let Some(parent) = self
            .document
            .get_mut(section)
            .and_then(Item::as_table_like_mut)
        else {
            return false;
        };
        let removed = parent.remove(id).is_some();
        if removed && parent.is_empty() {
            self.document.remove(section);
        }
        removed
    }

    /// The tables set so far, as TOML (what would be added).
    pub fn added_text(&self) -> String {
        self.added.to_string()
    }

    /// The whole file as it would be written.
    pub fn text(&self) -> String {
        self.document.to_string()
    }

    /// Checks that the result is a configuration Hearth reads, and writes it atomically
    /// (the file's permissions kept); returns what it now says.
    pub fn save(self) -> Result<Config, ConfigError> {
        let text = self.document.to_string();
        let config = Config::parse(&text, &self.path)?;
        hearth_fs::write_atomic(
            &self.path,
            text.as_bytes(),
            hearth_fs::WriteMode::Replace,
            hearth_fs::FilePermissions::KeepExisting,
        )
        .map_err(|source| ConfigError::Read {
            path: self.path.clone(),
            source,
        })?;
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn tables_are_added_and_comments_kept() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("config.toml");
        std::fs::write(
            &path,
            "# My setup\n[defaults]\nprovider = \"local\" # the fast one\n\n[calendars.home]\nkind = \"ics\"\npath = \"/h.ics\"\n",
        )
        .unwrap();
        let mut edit = ConfigEdit::open(&path).unwrap();
        assert!(edit.has("calendars", "home"));
        assert!(!edit.has("calendars", "work"));
        edit.set_table(
            "calendars",
            "work",
            [
                ("kind", Value::from("caldav")),
                ("url", Value::from("https://dav.example/work/")),
                ("allow_private_network", Value::from(true)),
            ],
        );
        assert_eq!(
            edit.added_text(),
            "[calendars.work]\nkind = \"caldav\"\nurl = \"https://dav.example/work/\"\nallow_private_network = true\n"
        );
        let config = edit.save().unwrap();
        assert_eq!(config.calendars.len(), 2);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("# My setup\n[defaults]\nprovider = \"local\" # the fast one\n"),
            "{text}"
        );
        assert!(
            text.contains("[calendars.work]\nkind = \"caldav\""),
            "{text}"
        );
    }

    #[test]
    fn a_removed_table_takes_nothing_else_with_it() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("config.toml");
        std::fs::write(
            &path,
            "# Mine\n[mcp_servers.a]\ncommand = \"a\" # first\n\n# The second\n[mcp_servers.b]\ncommand = \"b\"\n\n[defaults]\nprovider = \"local\"\n",
        )
        .unwrap();
        let mut edit = ConfigEdit::open(&path).unwrap();
        assert!(edit.remove_table("mcp_servers", "a"));
        assert!(!edit.remove_table("mcp_servers", "a"));
        assert!(!edit.remove_table("nothing", "a"));
        edit.save().unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "# Mine\n# The second\n[mcp_servers.b]\ncommand = \"b\"\n\n[defaults]\nprovider = \"local\"\n"
        );
        let mut edit = ConfigEdit::open(&path).unwrap();
        assert!(edit.remove_table("mcp_servers", "b"));
        assert!(!edit.has("mcp_servers", "b"));
        assert!(!edit.text().contains("mcp_servers"), "{}", edit.text());
    }

    #[test]
    fn a_result_hearth_cannot_read_is_not_written() {
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("config.toml");
        let mut edit = ConfigEdit::open(&path).unwrap();
        edit.set_table("calendars", "broken", [("kind", Value::from("nonsense"))]);
        assert!(edit.save().is_err());
        assert!(!path.exists());
        // A file that is not TOML is refused when opened, not overwritten.
        std::fs::write(&path, "[[[").unwrap();
        assert!(ConfigEdit::open(&path).is_err());
    }
}
