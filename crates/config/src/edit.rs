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
    /// it was there. The other tables stay as they are, and the comments above the
    /// removed header (which may be the file's own) move to the next header, or to the
    /// end of the file.
    pub fn remove_table(&mut self, section: &str, id: &str) -> bool {
        let Some(parent) = self
            .document
            .get_mut(section)
            .and_then(Item::as_table_like_mut)
        else {
            return false;
        };
        let Some(removed) = parent.remove(id) else {
            return false;
        };
        if parent.is_empty() {
            self.document.remove(section);
        }
        if let Some(table) = removed.as_table() {
            let comments = table
                .decor()
                .prefix()
                .and_then(|prefix| prefix.as_str())
                .filter(|prefix| prefix.contains('#'))
                .map(str::to_owned);
            if let Some(comments) = comments {
                self.keep_comments(table.position(), &comments);
            }
        }
        true
    }

    /// Puts `comments` above the first table header after `position`, or at the end.
    fn keep_comments(&mut self, position: Option<isize>, comments: &str) {
        let after = position.unwrap_or(isize::MAX);
        let mut next: Option<(isize, Vec<String>)> = None;
        let mut path = Vec::new();
        find_next(self.document.as_table(), after, &mut path, &mut next);
        let target = next.and_then(|(_, path)| {
            let mut table = self.document.as_table_mut();
            for key in &path {
                table = table.get_mut(key)?.as_table_mut()?;
            }
            Some(table)
        });
        match target {
            Some(table) => {
                let existing = table
                    .decor()
                    .prefix()
                    .and_then(|prefix| prefix.as_str())
                    .unwrap_or_default()
                    .to_owned();
                table
                    .decor_mut()
                    .set_prefix(format!("{comments}{existing}"));
            }
            None => {
                let trailing = self
                    .document
                    .trailing()
                    .as_str()
                    .unwrap_or_default()
                    .to_owned();
                self.document.set_trailing(format!("{trailing}{comments}"));
            }
        }
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
        // The first setting written on a new machine makes the configuration's folder.
        if let Some(folder) = self.path.parent() {
            std::fs::create_dir_all(folder).map_err(|source| ConfigError::Write {
                path: self.path.clone(),
                source,
            })?;
        }
        hearth_fs::write_atomic(
            &self.path,
            text.as_bytes(),
            hearth_fs::WriteMode::Replace,
            hearth_fs::FilePermissions::KeepExisting,
        )
        .map_err(|source| ConfigError::Write {
            path: self.path.clone(),
            source,
        })?;
        Ok(config)
    }
}

/// The path of the table header that comes first after `after` (by position).
fn find_next(
    table: &Table,
    after: isize,
    path: &mut Vec<String>,
    next: &mut Option<(isize, Vec<String>)>,
) {
    for (key, item) in table.iter() {
        let Some(child) = item.as_table() else {
            continue;
        };
        path.push(key.to_owned());
        if !child.is_implicit()
            && let Some(position) = child.position()
            && position > after
            && next.as_ref().is_none_or(|(best, _)| position < *best)
        {
            *next = Some((position, path.clone()));
        }
        find_next(child, after, path, next);
        path.pop();
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
            "# Mine\n\n# The second\n[mcp_servers.b]\ncommand = \"b\"\n\n[defaults]\nprovider = \"local\"\n"
        );
        let mut edit = ConfigEdit::open(&path).unwrap();
        assert!(edit.remove_table("mcp_servers", "b"));
        assert!(!edit.has("mcp_servers", "b"));
        assert_eq!(
            edit.text(),
            "# Mine\n\n# The second\n\n[defaults]\nprovider = \"local\"\n"
        );
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
