//! Context sources as a project lists them, and how a user's argument is classified.

use std::fmt;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::digest::hex;

/// One context source of a project.
///
/// In `project.md` a source is a tagged map (`{type: web, url: …}`); a one-key map
/// (`{web: …}`) and a bare string (classified like [`ContextSource::classify`]) are
/// read too. File, folder and glob paths may be relative to the project folder.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", from = "SourceWire")]
pub enum ContextSource {
    /// A web page or an online document, fetched and converted once.
    Web {
        /// The URL, exactly as configured (it is the source's identity).
        url: String,
    },
    /// A YouTube video: title, description and transcript.
    Youtube {
        /// The video's URL, exactly as configured.
        url: String,
    },
    /// A local document (PDF, DOCX, PPTX, XLSX, ODT, EPUB, HTML, Markdown, text, image).
    File {
        /// The file's path.
        path: PathBuf,
    },
    /// A folder the agent may search; never converted.
    Folder {
        /// The folder's path.
        path: PathBuf,
    },
    /// Files matching a pattern (`*`, `?`, `[…]`, `**`), each converted as a file.
    Glob {
        /// The pattern.
        pattern: String,
    },
}

/// What `project.md` may hold for one source.
#[derive(Deserialize)]
#[serde(untagged)]
enum SourceWire {
    Tagged(TaggedSource),
    Keyed(KeyedSource),
    Text(String),
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum TaggedSource {
    Web { url: String },
    Youtube { url: String },
    File { path: PathBuf },
    Folder { path: PathBuf },
    Glob { pattern: String },
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum KeyedSource {
    Web(String),
    Youtube(String),
    File(PathBuf),
    Folder(PathBuf),
    Glob(String),
}

impl From<SourceWire> for ContextSource {
    fn from(wire: SourceWire) -> Self {
        match wire {
            SourceWire::Tagged(TaggedSource::Web { url })
            | SourceWire::Keyed(KeyedSource::Web(url)) => Self::Web { url },
            SourceWire::Tagged(TaggedSource::Youtube { url })
            | SourceWire::Keyed(KeyedSource::Youtube(url)) => Self::Youtube { url },
            SourceWire::Tagged(TaggedSource::File { path })
            | SourceWire::Keyed(KeyedSource::File(path)) => Self::File { path },
            SourceWire::Tagged(TaggedSource::Folder { path })
            | SourceWire::Keyed(KeyedSource::Folder(path)) => Self::Folder { path },
            SourceWire::Tagged(TaggedSource::Glob { pattern })
            | SourceWire::Keyed(KeyedSource::Glob(pattern)) => Self::Glob { pattern },
            SourceWire::Text(text) => Self::classify(&text),
        }
    }
}

/// Characters that make an argument a glob pattern.
const GLOB_CHARACTERS: &[char] = &['*', '?', '['];

impl ContextSource {
    /// Classifies a user's argument (`hearth projects add-source X`): an http(s) URL
    /// on youtube.com or youtu.be is a YouTube source, any other http(s) URL a web
    /// source, text with `*`, `?` or `[` a glob, an existing directory (relative paths
    /// resolved against `project_folder`) a folder, anything else a file.
    ///
    /// Paths are kept as given, so a project folder stays movable.
    pub fn parse(text: &str, project_folder: &Path) -> Self {
        match Self::classify(text) {
            Self::File { path } if resolve_path(project_folder, &path).is_dir() => {
                Self::Folder { path }
            }
            other => other,
        }
    }

    /// Classifies text without looking at the file system: like [`ContextSource::parse`],
    /// except that a path is a folder only when it ends with a `/`. (A file source
    /// naming a directory is treated as a folder when materialized.)
    pub fn classify(text: &str) -> Self {
        let text = text.trim();
        if let Some(url) = web_url(text) {
            if is_youtube_host(url.host_str().unwrap_or_default()) {
                return Self::Youtube {
                    url: text.to_owned(),
                };
            }
            return Self::Web {
                url: text.to_owned(),
            };
        }
        if text.contains(GLOB_CHARACTERS) {
            return Self::Glob {
                pattern: text.to_owned(),
            };
        }
        if text.ends_with('/') || text.ends_with(std::path::MAIN_SEPARATOR) {
            return Self::Folder {
                path: PathBuf::from(text),
            };
        }
        Self::File {
            path: PathBuf::from(text),
        }
    }

    /// The source's kind: `web`, `youtube`, `file`, `folder` or `glob`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Web { .. } => "web",
            Self::Youtube { .. } => "youtube",
            Self::File { .. } => "file",
            Self::Folder { .. } => "folder",
            Self::Glob { .. } => "glob",
        }
    }

    /// What the source names: its URL, path or pattern, as configured.
    pub fn target(&self) -> String {
        match self {
            Self::Web { url } | Self::Youtube { url } => url.trim().to_owned(),
            Self::File { path } | Self::Folder { path } => path.display().to_string(),
            Self::Glob { pattern } => pattern.clone(),
        }
    }

    /// The same source with its path or pattern made absolute against `project_folder`
    /// and normalized (`.` and `..` removed lexically); URLs are trimmed.
    pub fn resolved(&self, project_folder: &Path) -> Self {
        match self {
            Self::Web { url } => Self::Web {
                url: url.trim().to_owned(),
            },
            Self::Youtube { url } => Self::Youtube {
                url: url.trim().to_owned(),
            },
            Self::File { path } => Self::File {
                path: resolve_path(project_folder, path),
            },
            Self::Folder { path } => Self::Folder {
                path: resolve_path(project_folder, path),
            },
            Self::Glob { pattern } => Self::Glob {
                pattern: resolve_path(project_folder, Path::new(pattern))
                    .display()
                    .to_string(),
            },
        }
    }
}

impl fmt::Display for ContextSource {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Shown to people and models: a URL's credentials never are.
        write!(
            formatter,
            "{} {}",
            self.kind(),
            hearth_core::redact_userinfo(&self.target())
        )
    }
}

/// A digest of the sources' fields, in order: a caller re-materializes a project's
/// context only when its signature changed.
pub fn signature(sources: &[ContextSource]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"hearth-context-sources/1\n");
    for source in sources {
        for field in [source.kind(), &source.target()] {
            hasher.update((field.len() as u64).to_le_bytes());
            hasher.update(field.as_bytes());
        }
    }
    hex(&hasher.finalize())
}

/// The URL in `text` if it is an absolute http(s) URL.
fn web_url(text: &str) -> Option<url::Url> {
    let url = url::Url::parse(text).ok()?;
    matches!(url.scheme(), "http" | "https").then_some(url)
}

/// Whether `host` is YouTube's.
pub(crate) fn is_youtube_host(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    host == "youtu.be"
        || host == "youtube.com"
        || host.ends_with(".youtube.com")
        || host == "youtube-nocookie.com"
        || host.ends_with(".youtube-nocookie.com")
}

/// `path` made absolute against `base` and normalized lexically.
pub(crate) fn resolve_path(base: &Path, path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    normalize(&joined)
}

/// Removes `.` components and resolves `..` lexically (never above the root).
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut normalized = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !normalized.pop() {
                    normalized.push(component);
                }
            }
            Component::Prefix(_) | Component::RootDir | Component::Normal(_) => {
                normalized.push(component);
            }
        }
    }
    normalized
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_arguments() {
        let folder = std::env::temp_dir();
        let cases = [
            ("https://example.com/a", "web"),
            ("http://example.com", "web"),
            ("https://www.youtube.com/watch?v=abc", "youtube"),
            ("https://youtu.be/abc", "youtube"),
            ("https://notyoutube.com/watch?v=abc", "web"),
            ("docs/*.pdf", "glob"),
            ("notes/[ab].md", "glob"),
            ("notes/", "folder"),
            ("report.pdf", "file"),
            ("ftp://example.com/x", "file"),
        ];
        for (text, kind) in cases {
            assert_eq!(ContextSource::parse(text, &folder).kind(), kind, "{text}");
        }
        // An existing directory without a trailing slash is a folder.
        assert_eq!(
            ContextSource::parse(".", &folder),
            ContextSource::Folder {
                path: PathBuf::from(".")
            }
        );
    }

    #[test]
    fn reads_tagged_keyed_and_plain_sources() {
        let yaml = "- {type: web, url: 'https://a.test/'}\n- youtube: https://youtu.be/x\n- notes/*.md\n- {type: file, path: a.pdf}\n";
        let sources: Vec<ContextSource> = serde_yaml_ng::from_str(yaml).unwrap();
        assert_eq!(
            sources,
            vec![
                ContextSource::Web {
                    url: "https://a.test/".to_owned()
                },
                ContextSource::Youtube {
                    url: "https://youtu.be/x".to_owned()
                },
                ContextSource::Glob {
                    pattern: "notes/*.md".to_owned()
                },
                ContextSource::File {
                    path: PathBuf::from("a.pdf")
                },
            ]
        );
        let written = serde_yaml_ng::to_string(&sources[0]).unwrap();
        assert_eq!(written, "type: web\nurl: https://a.test/\n");
    }

    #[test]
    fn signature_follows_fields_and_order() {
        let a = ContextSource::Web {
            url: "https://a.test".to_owned(),
        };
        let b = ContextSource::Youtube {
            url: "https://a.test".to_owned(),
        };
        let one = |source: &ContextSource| signature(std::slice::from_ref(source));
        assert_eq!(one(&a), one(&a));
        assert_ne!(one(&a), one(&b));
        assert_ne!(
            signature(&[a.clone(), b.clone()]),
            signature(&[b, a.clone()])
        );
        assert_ne!(signature(&[]), signature(&[a]));
    }

    #[test]
    fn normalizes_lexically() {
        assert_eq!(
            resolve_path(Path::new("/p/q"), Path::new("../shared/./x.pdf")),
            PathBuf::from("/p/shared/x.pdf")
        );
        assert_eq!(
            resolve_path(Path::new("/p"), Path::new("/abs/y")),
            PathBuf::from("/abs/y")
        );
    }
}
