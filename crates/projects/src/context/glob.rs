//! Glob expansion for glob sources: `*`, `?` and `[…]` within one path component,
//! `**` for any number of directories. Names starting with a dot match only a pattern
//! that starts with a dot; directory links are not descended. Results are sorted and
//! capped.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::fs;
use std::path::{Component, Path, PathBuf};

/// Directory entries examined before an expansion stops.
const MAX_VISITED: usize = 50_000;

/// The files a pattern matched.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Expansion {
    /// Matching regular files, sorted, at most the cap.
    pub(crate) files: Vec<PathBuf>,
    /// Whether more files matched than the cap (or the walk was cut short).
    pub(crate) capped: bool,
}

enum Part {
    Literal(OsString),
    Pattern(Vec<char>),
    AnyDepth,
}

struct Walk {
    found: BTreeSet<PathBuf>,
    cap: usize,
    visited: usize,
    capped: bool,
}

/// Expands the absolute `pattern` into at most `cap` files.
pub(crate) fn expand(pattern: &Path, cap: usize) -> Expansion {
    let mut base = PathBuf::new();
    let mut parts = Vec::new();
    for component in pattern.components() {
        match component {
            Component::Normal(name) => {
                let text = name.to_string_lossy();
                if text == "**" {
                    parts.push(Part::AnyDepth);
                } else if text.contains(['*', '?', '[']) {
                    parts.push(Part::Pattern(text.chars().collect()));
                } else if parts.is_empty() {
                    base.push(name);
                } else {
                    parts.push(Part::Literal(name.to_owned()));
                }
            }
            Component::Prefix(_)
            | Component::RootDir
            | Component::CurDir
            | Component::ParentDir => {
                if parts.is_empty() {
                    base.push(component);
                } else {
                    parts.push(Part::Literal(component.as_os_str().to_owned()));
                }
            }
        }
    }
    let mut walk = Walk {
        found: BTreeSet::new(),
        cap,
        visited: 0,
        capped: false,
    };
    if parts.is_empty() {
        if base.is_file() {
            walk.found.insert(base);
        }
    } else {
        walk.visit(&base, &parts);
    }
    Expansion {
        files: walk.found.into_iter().take(cap).collect(),
        capped: walk.capped,
    }
}

impl Walk {
    fn full(&mut self) -> bool {
        if self.found.len() > self.cap || self.visited > MAX_VISITED {
            self.capped = true;
        }
        self.capped
    }

    fn visit(&mut self, directory: &Path, parts: &[Part]) {
        let Some((first, rest)) = parts.split_first() else {
            return;
        };
        if self.full() {
            return;
        }
        match first {
            Part::Literal(name) => {
                let next = directory.join(name);
                if rest.is_empty() {
                    if next.is_file() {
                        self.found.insert(next);
                    }
                } else if next.is_dir() {
                    self.visit(&next, rest);
                }
            }
            Part::Pattern(pattern) => {
                for (name, path, is_directory) in self.entries(directory) {
                    if !component_matches(pattern, &name) {
                        continue;
                    }
                    if rest.is_empty() {
                        if path.is_file() {
                            self.found.insert(path);
                        }
                    } else if is_directory {
                        self.visit(&path, rest);
                    }
                    if self.full() {
                        return;
                    }
                }
            }
            Part::AnyDepth => {
                self.visit(directory, rest);
                for (name, path, is_directory) in self.entries(directory) {
                    if is_directory && !name.starts_with('.') {
                        self.visit(&path, parts);
                    }
                    if self.full() {
                        return;
                    }
                }
            }
        }
    }

    /// The directory's entries, sorted: name, path, and whether it is a real directory.
    fn entries(&mut self, directory: &Path) -> Vec<(String, PathBuf, bool)> {
        let Ok(reader) = fs::read_dir(directory) else {
            return Vec::new();
        };
        let mut entries: Vec<_> = reader
            .filter_map(|entry| entry.ok())
            .map(|entry| {
                let is_directory = entry.file_type().is_ok_and(|kind| kind.is_dir());
                (
                    entry.file_name().to_string_lossy().into_owned(),
                    entry.path(),
                    is_directory,
                )
            })
            .collect();
        self.visited += entries.len();
        entries.sort();
        entries
    }
}

/// Whether one path component matches a pattern of `*`, `?`, `[…]` and literals.
fn component_matches(pattern: &[char], name: &str) -> bool {
    let name: Vec<char> = name.chars().collect();
    if name.first() == Some(&'.') && pattern.first() != Some(&'.') {
        return false;
    }
    matches_from(pattern, &name)
}

fn matches_from(pattern: &[char], name: &[char]) -> bool {
    // Iterative wildcard matching with backtracking to the last `*`.
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, n));
                p += 1;
                continue;
            }
            Some('?') => {
                p += 1;
                n += 1;
                continue;
            }
            Some('[') => {
                if let Some((matched, next)) = class_matches(&pattern[p..], name[n]) {
                    if matched {
                        p += next;
                        n += 1;
                        continue;
                    }
                } else if name[n] == '[' {
                    p += 1;
                    n += 1;
                    continue;
                }
            }
            Some(&literal) if literal == name[n] => {
                p += 1;
                n += 1;
                continue;
            }
            _ => {}
        }
        match star {
            Some((star_p, star_n)) => {
                p = star_p + 1;
                n = star_n + 1;
                star = Some((star_p, star_n + 1));
            }
            None => return false,
        }
    }
    pattern[p..].iter().all(|character| *character == '*')
}

/// Whether `character` is in the class at the start of `pattern` (`[abc]`, `[a-z]`,
/// `[!x]` or `[^x]`), and the class's length; `None` if the class is unterminated.
fn class_matches(pattern: &[char], character: char) -> Option<(bool, usize)> {
    let mut index = 1;
    let negated = matches!(pattern.get(index), Some('!' | '^'));
    if negated {
        index += 1;
    }
    let mut matched = false;
    let mut first = true;
    loop {
        let current = *pattern.get(index)?;
        if current == ']' && !first {
            return Some((matched != negated, index + 1));
        }
        first = false;
        if pattern.get(index + 1) == Some(&'-')
            && let Some(&end) = pattern.get(index + 2)
            && end != ']'
        {
            matched |= (current..=end).contains(&character);
            index += 3;
        } else {
            matched |= current == character;
            index += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, name: &str) -> bool {
        component_matches(&pattern.chars().collect::<Vec<_>>(), name)
    }

    #[test]
    fn matches_components() {
        assert!(matches("*.pdf", "a.pdf"));
        assert!(!matches("*.pdf", "a.pdf.txt"));
        assert!(matches("a?c", "abc"));
        assert!(matches("[ab]*", "bx"));
        assert!(!matches("[!ab]*", "bx"));
        assert!(matches("[a-c]1", "b1"));
        assert!(matches("*a*b*", "xxaYYbZZ"));
        assert!(!matches("*", ".hidden"));
        assert!(matches(".*", ".hidden"));
    }

    #[test]
    fn expands_and_caps() {
        let root = tempfile::tempdir().unwrap();
        for name in [
            "a.md",
            "b.md",
            "c.txt",
            "sub/d.md",
            "sub/deep/e.md",
            ".hidden/f.md",
        ] {
            let path = root.path().join(name);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, "x").unwrap();
        }
        let names = |pattern: &str, cap| {
            let expansion = expand(&root.path().join(pattern), cap);
            let files = expansion
                .files
                .iter()
                .map(|file| {
                    file.strip_prefix(root.path())
                        .unwrap()
                        .display()
                        .to_string()
                })
                .collect::<Vec<_>>();
            (files, expansion.capped)
        };
        assert_eq!(
            names("*.md", 10),
            (vec!["a.md".into(), "b.md".into()], false)
        );
        assert_eq!(
            names("**/*.md", 10),
            (
                vec![
                    "a.md".into(),
                    "b.md".into(),
                    "sub/d.md".into(),
                    "sub/deep/e.md".into()
                ],
                false
            )
        );
        assert_eq!(
            names("sub/*/e.md", 10),
            (vec!["sub/deep/e.md".into()], false)
        );
        assert_eq!(
            names("**/*.md", 2),
            (vec!["a.md".into(), "b.md".into()], true)
        );
    }
}
