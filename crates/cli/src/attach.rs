//! What goes with a prompt typed at the terminal: files named with `--attach FILE` or
//! `@path` in the prompt (attached to the turn and stored with it), and text piped to
//! `hearth run` (the context the prompt is about: `cat log | hearth run "why?"`).

use std::io::Read as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use hearth_core::{Attachment, UserMessage};

/// The media type of a file, from its name; text that is not named is sniffed.
fn media_type(path: &Path) -> String {
    let extension = path
        .extension()
        .and_then(|extension| extension.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    let known = match extension.as_str() {
        "md" | "markdown" => "text/markdown",
        "txt" | "log" | "text" => "text/plain",
        "csv" => "text/csv",
        "html" | "htm" => "text/html",
        "json" => "application/json",
        "toml" => "application/toml",
        "yaml" | "yml" => "application/yaml",
        "xml" => "application/xml",
        "ics" => "text/calendar",
        "pdf" => "application/pdf",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "rs" | "py" | "js" | "ts" | "go" | "c" | "h" | "cpp" | "java" | "rb" | "sh" | "css"
        | "sql" => "text/plain",
        _ => "",
    };
    if !known.is_empty() {
        return known.to_owned();
    }
    match std::fs::read(path) {
        Ok(bytes) if std::str::from_utf8(&bytes).is_ok() => "text/plain".to_owned(),
        _ => "application/octet-stream".to_owned(),
    }
}

/// A file to attach, by its absolute path; an error says which file and why.
pub(crate) fn attachment(path: &Path) -> anyhow::Result<Attachment> {
    let absolute =
        std::fs::canonicalize(path).with_context(|| format!("cannot attach {}", path.display()))?;
    if !absolute.is_file() {
        bail!("cannot attach {}: it is not a file", path.display());
    }
    let name = absolute.file_name().map_or_else(
        || absolute.display().to_string(),
        |name| name.to_string_lossy().into_owned(),
    );
    Ok(Attachment {
        name,
        media_type: media_type(&absolute),
        uri: absolute.display().to_string(),
    })
}

/// The files a prompt names with `@path` (relative to `base`) that exist; a mention of
/// nothing (an e-mail address, `@someone`) is left as text.
pub(crate) fn mentioned(prompt: &str, base: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = Vec::new();
    for word in prompt.split_whitespace() {
        let Some(name) = word.strip_prefix('@') else {
            continue;
        };
        let name = name.trim_end_matches([',', '.', ';', ':', '!', '?', ')', '"', '\'']);
        if name.is_empty() {
            continue;
        }
        let path = base.join(name);
        if path.is_file() && !found.contains(&path) {
            found.push(path);
        }
    }
    found
}

/// The message of a prompt, with the files it mentions and those given attached.
pub(crate) fn message(prompt: String, attach: &[PathBuf]) -> anyhow::Result<UserMessage> {
    let here = std::env::current_dir().context("finding the current directory")?;
    let mut paths: Vec<PathBuf> = attach.to_vec();
    paths.extend(mentioned(&prompt, &here));
    let mut attachments: Vec<Attachment> = Vec::new();
    for path in &paths {
        let attached = attachment(path)?;
        if !attachments.iter().any(|known| known.uri == attached.uri) {
            attachments.push(attached);
        }
    }
    Ok(UserMessage {
        text: prompt,
        attachments,
        context: Vec::new(),
    })
}

/// Text piped to stdin (a pipe or a file, never a terminal or nothing), when there is
/// some; `None` otherwise.
pub(crate) fn piped_stdin() -> anyhow::Result<Option<String>> {
    use std::io::IsTerminal as _;
    use std::os::fd::AsFd as _;
    use std::os::unix::fs::FileTypeExt as _;
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok(None);
    }
    let Ok(owned) = stdin.as_fd().try_clone_to_owned() else {
        return Ok(None);
    };
    let Ok(metadata) = std::fs::File::from(owned).metadata() else {
        return Ok(None);
    };
    let kind = metadata.file_type();
    if !(kind.is_fifo() || kind.is_file()) {
        return Ok(None);
    }
    let mut bytes = Vec::new();
    stdin
        .lock()
        .read_to_end(&mut bytes)
        .context("reading what was piped to stdin")?;
    if bytes.is_empty() {
        return Ok(None);
    }
    match String::from_utf8(bytes) {
        Ok(text) => Ok(Some(text)),
        Err(_) => bail!(
            "what was piped to stdin is not text; save it to a file and give it with --attach FILE"
        ),
    }
}

/// A prompt with piped text after it, marked as what was piped.
pub(crate) fn with_piped(prompt: &str, piped: &str) -> String {
    format!(
        "{prompt}\n\n<stdin>\n{}\n</stdin>",
        piped.trim_end_matches('\n')
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_of_files_that_exist_are_found_and_others_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.md"), "# notes").unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/a.rs"), "fn a() {}").unwrap();
        let found = mentioned(
            "see @notes.md, and @src/a.rs? not @someone or me@example.com or @src",
            dir.path(),
        );
        assert_eq!(
            found,
            [dir.path().join("notes.md"), dir.path().join("src/a.rs")]
        );
    }

    #[test]
    fn media_types_come_from_names_or_the_content() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("README");
        std::fs::write(&plain, "hello").unwrap();
        let binary = dir.path().join("blob");
        std::fs::write(&binary, [0xff, 0xfe, 0x00]).unwrap();
        assert_eq!(media_type(Path::new("a.PNG")), "image/png");
        assert_eq!(media_type(Path::new("a.md")), "text/markdown");
        assert_eq!(media_type(&plain), "text/plain");
        assert_eq!(media_type(&binary), "application/octet-stream");
        let error = attachment(&dir.path().join("missing.txt")).unwrap_err();
        assert!(format!("{error:#}").contains("cannot attach"), "{error:#}");
    }

    #[test]
    fn piped_text_follows_the_prompt_marked() {
        assert_eq!(
            with_piped("why?", "line 1\nline 2\n"),
            "why?\n\n<stdin>\nline 1\nline 2\n</stdin>"
        );
    }
}
