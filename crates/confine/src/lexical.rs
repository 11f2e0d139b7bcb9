//! Lexical path handling, used only to choose a root and to split off the part the
//! kernel resolves. No decision about what a path reaches is made here.

use std::path::{Component, Path, PathBuf};

/// `path` with `.` removed and `..` applied to the components before it (`..` at `/`
/// stays at `/`). Symlinks are not consulted: this is only for choosing a root.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut normalized = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(prefix) => normalized.push(prefix.as_os_str()),
            Component::RootDir => normalized.push(Component::RootDir.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if !normalized.pop() && !normalized.has_root() {
                    normalized.push(Component::ParentDir.as_os_str());
                }
            }
            Component::Normal(name) => normalized.push(name),
        }
    }
    normalized
}

/// Whether `path` (normalized) lies under `root` (normalized), component by component.
pub(crate) fn is_under(path: &Path, root: &Path) -> bool {
    path.starts_with(root)
}

/// `path` without its leading `root`, as written (`..` and symlinks left for the
/// kernel), or `None` when `path` does not start with `root` as written (it passes
/// outside the root with `..` before entering it).
pub(crate) fn remainder(path: &Path, root: &Path) -> Option<PathBuf> {
    path.strip_prefix(root).ok().map(Path::to_path_buf)
}

/// `relative` split into its parent and its final name, when the final component is
/// a name (not `..`, and not empty).
pub(crate) fn split_name(relative: &Path) -> Option<(&Path, &std::ffi::OsStr)> {
    match relative.components().next_back() {
        Some(Component::Normal(name)) => Some((relative.parent().unwrap_or(Path::new("")), name)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn normalize_applies_dot_and_dot_dot() {
        assert_eq!(normalize(Path::new("/a/./b/../c")), PathBuf::from("/a/c"));
        assert_eq!(normalize(Path::new("/../../a")), PathBuf::from("/a"));
        assert_eq!(normalize(Path::new("/a/b/../../..")), PathBuf::from("/"));
        assert_eq!(normalize(Path::new("//a//b/")), PathBuf::from("/a/b"));
    }

    #[test]
    fn under_is_component_wise() {
        assert!(is_under(
            Path::new("/work/project/a"),
            Path::new("/work/project")
        ));
        assert!(is_under(
            Path::new("/work/project"),
            Path::new("/work/project")
        ));
        assert!(!is_under(
            Path::new("/work/project2/a"),
            Path::new("/work/project")
        ));
    }

    #[test]
    fn remainder_keeps_dot_dot_for_the_kernel() {
        assert_eq!(
            remainder(Path::new("/r/a/../b"), Path::new("/r")),
            Some(PathBuf::from("a/../b"))
        );
        assert_eq!(remainder(Path::new("/x/../r/b"), Path::new("/r")), None);
        assert_eq!(
            remainder(Path::new("/r"), Path::new("/r")),
            Some(PathBuf::new())
        );
    }

    #[test]
    fn split_name_wants_a_final_name() {
        assert_eq!(
            split_name(Path::new("a/b/c.txt")),
            Some((Path::new("a/b"), std::ffi::OsStr::new("c.txt")))
        );
        assert_eq!(
            split_name(Path::new("c.txt")),
            Some((Path::new(""), std::ffi::OsStr::new("c.txt")))
        );
        assert_eq!(split_name(Path::new("a/..")), None);
        assert_eq!(split_name(Path::new("")), None);
    }
}
