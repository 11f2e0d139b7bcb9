//! `project.md`: a project's configuration (YAML front matter) and instructions (the
//! body). The file is the project's source of truth; Hearth's registry only remembers
//! where it is. Keys Hearth does not know are kept as they are when Hearth writes the
//! file, and the body is kept byte for byte.

use std::fs;
use std::path::{Path, PathBuf};

use hearth_core::ProjectId;
use serde_yaml_ng::{Mapping, Value};

use crate::context::ContextSource;
use crate::error::{ProjectError, ProjectResult};

/// The file that makes a folder a project.
pub const PROJECT_FILE: &str = "project.md";

/// The keys of the front matter Hearth reads and writes.
const KEYS: [&str; 7] = [
    "id",
    "name",
    "description",
    "sources",
    "agent",
    "provider",
    "model",
];

/// A project's `project.md`, read.
#[derive(Clone, Debug, PartialEq)]
pub struct ProjectFile {
    /// The project's id, fixed when the project is made.
    pub id: ProjectId,
    /// Its name.
    pub name: String,
    /// A line about it.
    pub description: Option<String>,
    /// Its context sources, in the order given.
    pub sources: Vec<ContextSource>,
    /// The agent (harness) new sessions use unless told otherwise.
    pub agent: Option<String>,
    /// The model provider new sessions use unless told otherwise.
    pub provider: Option<String>,
    /// The model new sessions use unless told otherwise.
    pub model: Option<String>,
    /// The body: instructions for every agent working in the project.
    pub instructions: String,
    /// Front-matter keys Hearth does not know, kept as found.
    pub other: Mapping,
}

impl ProjectFile {
    /// A new project's file.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            id: ProjectId::generate(),
            name: name.into(),
            description: None,
            sources: Vec::new(),
            agent: None,
            provider: None,
            model: None,
            instructions: String::new(),
            other: Mapping::new(),
        }
    }

    /// The path of `project.md` in a folder.
    pub fn path_in(folder: &Path) -> PathBuf {
        folder.join(PROJECT_FILE)
    }

    /// Reads the `project.md` in `folder`.
    pub fn read(folder: &Path) -> ProjectResult<Self> {
        let path = Self::path_in(folder);
        let text = fs::read_to_string(&path).map_err(|source| {
            if source.kind() == std::io::ErrorKind::NotFound {
                ProjectError::NoProjectFile {
                    folder: folder.to_path_buf(),
                }
            } else {
                ProjectError::Io {
                    path: path.clone(),
                    source,
                }
            }
        })?;
        Self::parse(&text).map_err(|detail| ProjectError::Malformed { path, detail })
    }

    /// Parses the text of a `project.md`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let (front, body) = split_front_matter(text).ok_or_else(|| {
            "it has no front matter: it must start with a `---` line, then YAML (at least `id:` and `name:`), then another `---` line".to_owned()
        })?;
        let mut mapping: Mapping = if front.trim().is_empty() {
            Mapping::new()
        } else {
            serde_yaml_ng::from_str(front)
                .map_err(|error| format!("its front matter is not valid YAML: {error}"))?
        };
        let id = match mapping.remove("id") {
            Some(Value::String(id)) => ProjectId::parse(id.trim())
                .map_err(|error| format!("its `id` is not valid: {error}"))?,
            Some(_) => return Err("its `id` must be text".into()),
            None => return Err("its front matter has no `id`".into()),
        };
        let name = optional_text(&mut mapping, "name")?
            .ok_or_else(|| "its front matter has no `name`".to_owned())?;
        let description = optional_text(&mut mapping, "description")?;
        let sources = match mapping.remove("sources") {
            None | Some(Value::Null) => Vec::new(),
            Some(value) => serde_yaml_ng::from_value(value)
                .map_err(|error| format!("its `sources` are not valid: {error}"))?,
        };
        let agent = optional_text(&mut mapping, "agent")?;
        let provider = optional_text(&mut mapping, "provider")?;
        let model = optional_text(&mut mapping, "model")?;
        Ok(Self {
            id,
            name,
            description,
            sources,
            agent,
            provider,
            model,
            instructions: body.to_owned(),
            other: mapping,
        })
    }

    /// The file's text: front matter (Hearth's keys first, then the others as found),
    /// then the instructions.
    pub fn render(&self) -> ProjectResult<String> {
        let mut mapping = Mapping::new();
        mapping.insert("id".into(), Value::String(self.id.to_string()));
        mapping.insert("name".into(), Value::String(self.name.clone()));
        let mut put = |key: &str, value: &Option<String>| {
            if let Some(value) = value {
                mapping.insert(key.into(), Value::String(value.clone()));
            }
        };
        put("description", &self.description);
        put("agent", &self.agent);
        put("provider", &self.provider);
        put("model", &self.model);
        if !self.sources.is_empty() {
            let sources = serde_yaml_ng::to_value(&self.sources).map_err(|error| {
                ProjectError::Malformed {
                    path: PathBuf::from(PROJECT_FILE),
                    detail: format!("its sources could not be written: {error}"),
                }
            })?;
            mapping.insert("sources".into(), sources);
        }
        for (key, value) in &self.other {
            let known = key.as_str().is_some_and(|key| KEYS.contains(&key));
            if !known {
                mapping.insert(key.clone(), value.clone());
            }
        }
        let front =
            serde_yaml_ng::to_string(&mapping).map_err(|error| ProjectError::Malformed {
                path: PathBuf::from(PROJECT_FILE),
                detail: format!("its front matter could not be written: {error}"),
            })?;
        Ok(format!("---\n{front}---\n{}", self.instructions))
    }

    /// Writes `project.md` into `folder` atomically (a temporary file in the folder,
    /// synced, renamed over the old one, the folder synced).
    pub fn write(&self, folder: &Path) -> ProjectResult<()> {
        let text = self.render()?;
        write_atomically(&Self::path_in(folder), text.as_bytes())
    }
}

/// Splits `---\n<front>\n---\n<body>`; `None` when the text does not open with front
/// matter.
fn split_front_matter(text: &str) -> Option<(&str, &str)> {
    let rest = text
        .strip_prefix("---\r\n")
        .or_else(|| text.strip_prefix("---\n"))?;
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end_matches(['\r', '\n']) == "---" {
            let front = &rest[..offset];
            let body = &rest[offset + line.len()..];
            return Some((front, body));
        }
        offset += line.len();
    }
    None
}

fn optional_text(mapping: &mut Mapping, key: &str) -> Result<Option<String>, String> {
    match mapping.remove(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => {
            let text = text.trim();
            Ok((!text.is_empty()).then(|| text.to_owned()))
        }
        Some(Value::Number(number)) => Ok(Some(number.to_string())),
        Some(_) => Err(format!("its `{key}` must be text")),
    }
}

/// Replaces `path` with `bytes` atomically and durably (readers see the old file or the
/// new one); a new file gets the process's default permissions, a replaced one keeps its
/// own.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> ProjectResult<()> {
    hearth_fs::write_atomic(
        path,
        bytes,
        hearth_fs::WriteMode::Replace,
        hearth_fs::FilePermissions::KeepExisting,
    )
    .map_err(|source| ProjectError::Io {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn reads_and_writes_a_project_file_keeping_unknown_keys_and_the_body() {
        let text = "---\nid: thesis-1\nname: Thesis\ncolour: teal\nsources:\n  - type: web\n    url: https://example.org/a\n---\n# Rules\nCite sources.\n";
        let file = ProjectFile::parse(text).unwrap();
        assert_eq!(file.id.as_str(), "thesis-1");
        assert_eq!(file.name, "Thesis");
        assert_eq!(
            file.sources,
            vec![ContextSource::Web {
                url: "https://example.org/a".into()
            }]
        );
        assert_eq!(file.instructions, "# Rules\nCite sources.\n");
        let written = file.render().unwrap();
        assert_eq!(
            written,
            "---\nid: thesis-1\nname: Thesis\nsources:\n- type: web\n  url: https://example.org/a\ncolour: teal\n---\n# Rules\nCite sources.\n"
        );
        assert_eq!(ProjectFile::parse(&written).unwrap(), file);
    }

    #[test]
    fn a_file_without_front_matter_or_id_is_refused_with_what_is_missing() {
        let missing = ProjectFile::parse("# Just notes\n").unwrap_err();
        assert!(missing.contains("no front matter"), "{missing}");
        let no_id = ProjectFile::parse("---\nname: X\n---\n").unwrap_err();
        assert!(no_id.contains("no `id`"), "{no_id}");
        let bad_yaml = ProjectFile::parse("---\nid: [\n---\n").unwrap_err();
        assert!(bad_yaml.contains("not valid YAML"), "{bad_yaml}");
    }

    #[test]
    fn crlf_and_a_byte_order_mark_are_read() {
        let file =
            ProjectFile::parse("\u{feff}---\r\nid: p\r\nname: P\r\n---\r\nBody\r\n").unwrap();
        assert_eq!(
            (file.id.as_str(), file.instructions.as_str()),
            ("p", "Body\r\n")
        );
    }
}
