//! What a permission covers: exactly the call the user was shown.
//!
//! A [`Scope`] is a call's kind and its target: the files it names, or the command line
//! with the environment changes and the working directory it was shown with, or (for
//! any other call) its title. An answer covers only its scope:
//!
//! 1. Writing a file is covered only by an allowed call of a writing kind (edit, delete,
//!    move) that named that file. Reading a file never covers writing it; an edit that
//!    named no file covers no write.
//! 2. Running a command is covered only by an allowed call showing that command line,
//!    with no environment change and no working directory it did not show; "allow once"
//!    covers one run.
//! 3. "Allow (or refuse) for this chat" makes a [`Grant`] of that scope: it answers later
//!    calls of the same kind and target in the chat, nothing wider. Grants are listed and
//!    revoked by the user.

use std::path::{Path, PathBuf};

use hearth_core::{ToolCallPart, ToolKind};
use serde_json::Value;

/// A command as a permission shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ShownCommand {
    /// The program and its arguments, joined with spaces.
    pub line: String,
    /// Variables it sets, as shown.
    pub env: Vec<(String, String)>,
    /// Where it runs, when shown.
    pub cwd: Option<PathBuf>,
}

impl ShownCommand {
    /// The command in words: `` `make test` in /work with LD_PRELOAD=/x.so ``.
    pub fn describe(&self) -> String {
        let mut text = format!("`{}`", self.line);
        if let Some(cwd) = &self.cwd {
            text.push_str(&format!(" in {}", cwd.display()));
        }
        if !self.env.is_empty() {
            let variables: Vec<String> = self
                .env
                .iter()
                .map(|(name, value)| format!("{name}={value}"))
                .collect();
            text.push_str(&format!(" with {}", variables.join(" ")));
        }
        text
    }
}

/// What a call acts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// The files it names (absolute, sorted).
    Files(Vec<PathBuf>),
    /// The command it runs.
    Command(ShownCommand),
    /// Neither: the call as titled.
    Call(String),
}

/// A call's kind and target: what a permission answer is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Scope {
    /// The call's kind, when it said.
    pub kind: Option<ToolKind>,
    /// What it acts on.
    pub target: Target,
}

/// Kinds of calls that change files.
fn writes(kind: Option<ToolKind>) -> bool {
    matches!(
        kind,
        Some(ToolKind::Edit | ToolKind::Delete | ToolKind::Move)
    )
}

impl Scope {
    /// The scope of an agent's tool call naming `paths`: its files when it names any; a
    /// command call's command (from its raw input, else its title); otherwise its title.
    pub fn of_call(call: &ToolCallPart, paths: &[PathBuf]) -> Self {
        let target = if !paths.is_empty() {
            Target::Files(paths.to_vec())
        } else if call.kind == Some(ToolKind::Execute) {
            Target::Command(ShownCommand {
                line: shown_command(call),
                env: Vec::new(),
                cwd: None,
            })
        } else {
            Target::Call(call.title.clone().unwrap_or_else(|| call.name.clone()))
        };
        Self {
            kind: call.kind,
            target,
        }
    }

    /// The scope of writing one file.
    pub fn write(path: &Path) -> Self {
        Self {
            kind: Some(ToolKind::Edit),
            target: Target::Files(vec![path.to_path_buf()]),
        }
    }

    /// The scope of running a command.
    pub fn command(command: ShownCommand) -> Self {
        Self {
            kind: Some(ToolKind::Execute),
            target: Target::Command(command),
        }
    }

    /// Rule 1: whether allowing this scope covers writing `path`.
    pub fn covers_write(&self, path: &Path) -> bool {
        writes(self.kind)
            && matches!(&self.target, Target::Files(files) if files.iter().any(|file| file == path))
    }

    /// Rule 2: whether allowing this scope covers running `wanted` (which runs in
    /// `default_cwd` unless it names another directory).
    pub fn covers_command(&self, wanted: &ShownCommand, default_cwd: Option<&Path>) -> bool {
        let (Some(ToolKind::Execute), Target::Command(shown)) = (self.kind, &self.target) else {
            return false;
        };
        let shown_line = normalize(&shown.line);
        // An agent shows `make test` and runs it as `make test`, or through a shell
        // (`bash -lc 'make test'`): what runs is what it showed, whole.
        let same_command = !shown_line.is_empty()
            && (normalize(&wanted.line) == shown_line
                || without_shell(&wanted.line).is_some_and(|line| line == shown_line));
        let env_shown = wanted
            .env
            .iter()
            .all(|variable| shown.env.contains(variable));
        let cwd_shown = match (&wanted.cwd, &shown.cwd) {
            (Some(wanted), Some(shown)) => wanted == shown,
            (Some(wanted), None) => default_cwd.is_some_and(|default| default == wanted),
            (None, _) => true,
        };
        same_command && env_shown && cwd_shown
    }

    /// Rule 3: whether a grant of this scope answers a later call of `other`: the same
    /// kind and target, or a write of files the grant named.
    pub fn answers(&self, other: &Scope) -> bool {
        if self.kind != other.kind {
            return false;
        }
        match (&self.target, &other.target) {
            (Target::Files(granted), Target::Files(wanted)) => {
                wanted.iter().all(|file| granted.contains(file))
            }
            (granted, wanted) => granted == wanted,
        }
    }

    /// The scope in words, for listings: `edit of /work/a.md`, `` execute of `ls` ``.
    pub fn describe(&self) -> String {
        let kind = self.kind.map_or("call", ToolKind::as_str);
        match &self.target {
            Target::Files(files) => format!(
                "{kind} of {}",
                files
                    .iter()
                    .map(|file| file.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Target::Command(command) => format!("{kind} of {}", command.describe()),
            Target::Call(title) => format!("{kind}: {title}"),
        }
    }
}

/// Whitespace collapsed, quotes a shell would remove dropped.
fn normalize(line: &str) -> String {
    line.split_whitespace()
        .map(|word| word.trim_matches(|c| c == '\'' || c == '"'))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The command a shell is asked to run (`bash -lc 'make test'` → `make test`), when the
/// line starts a shell.
fn without_shell(line: &str) -> Option<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let (program, rest) = words.split_first()?;
    let name = program.rsplit('/').next().unwrap_or(program);
    if !matches!(name, "sh" | "bash" | "zsh" | "dash" | "fish") {
        return None;
    }
    let flags = rest.iter().take_while(|word| word.starts_with('-')).count();
    (flags > 0 && flags < rest.len()).then(|| normalize(&rest[flags..].join(" ")))
}

/// The command a call shows: `command` in its raw input (a string, or a list of
/// words), else its title.
fn shown_command(call: &ToolCallPart) -> String {
    match call.arguments.get("command") {
        Some(Value::String(command)) => command.clone(),
        Some(Value::Array(words)) => words
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" "),
        _ => call
            .title
            .clone()
            .map(|title| title.trim_matches('`').to_owned())
            .unwrap_or_default(),
    }
}

/// A standing answer for the rest of a chat ("allow for this chat", "refuse for this
/// chat"), listed and revocable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Grant {
    /// Its id (unique in the process).
    pub id: String,
    /// What it answers.
    pub scope: Scope,
    /// Allowed (`true`) or refused (`false`).
    pub allowed: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth_core::ToolCallStatus;
    use serde_json::json;

    fn call(kind: ToolKind, arguments: Value, title: &str) -> ToolCallPart {
        let mut call = ToolCallPart::new("c", "tool", arguments, ToolCallStatus::Pending);
        call.kind = Some(kind);
        call.title = Some(title.to_owned());
        call
    }

    fn command(line: &str, env: &[(&str, &str)], cwd: Option<&str>) -> ShownCommand {
        ShownCommand {
            line: line.to_owned(),
            env: env
                .iter()
                .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
                .collect(),
            cwd: cwd.map(PathBuf::from),
        }
    }

    #[test]
    fn a_read_never_covers_a_write_and_an_edit_covers_only_its_files() {
        let notes = PathBuf::from("/work/notes.md");
        let read = Scope::of_call(
            &call(ToolKind::Read, json!({}), "Read"),
            std::slice::from_ref(&notes),
        );
        assert!(!read.covers_write(&notes));
        let edit = Scope::of_call(
            &call(ToolKind::Edit, json!({}), "Edit"),
            std::slice::from_ref(&notes),
        );
        assert!(edit.covers_write(&notes));
        assert!(!edit.covers_write(Path::new("/work/other.md")));
        // An edit that named no file covers no write.
        let vague = Scope::of_call(&call(ToolKind::Edit, json!({}), "Edit"), &[]);
        assert!(!vague.covers_write(&notes));
    }

    #[test]
    fn a_command_is_covered_only_as_shown() {
        let shown = Scope::of_call(
            &call(
                ToolKind::Execute,
                json!({"command": "make test"}),
                "Run tests",
            ),
            &[],
        );
        let work = Some(Path::new("/work"));
        assert!(shown.covers_command(&command("make test", &[], None), work));
        assert!(shown.covers_command(&command("bash -lc 'make test'", &[], None), work));
        assert!(shown.covers_command(&command("make test", &[], Some("/work")), work));
        for (line, env, cwd) in [
            ("make install", &[][..], None),
            ("make test && curl evil", &[], None),
            ("curl evil; make test", &[], None),
            ("env X=1 make test", &[], None),
            ("make", &[], None),
            ("make test", &[("LD_PRELOAD", "/tmp/x.so")][..], None),
            ("make test", &[], Some("/etc")),
        ] {
            assert!(
                !shown.covers_command(&command(line, env, cwd), work),
                "{line} {env:?} {cwd:?}"
            );
        }
        // Hearth's own question shows the variables and directory: then they are covered.
        let asked = Scope::command(command("ls", &[("LD_PRELOAD", "/x.so")], Some("/w")));
        assert!(asked.covers_command(&command("ls", &[("LD_PRELOAD", "/x.so")], Some("/w")), None));
        assert!(!asked.covers_command(
            &command("ls -la", &[("LD_PRELOAD", "/x.so")], Some("/w")),
            None
        ));
    }

    #[test]
    fn a_grant_answers_the_same_call_and_nothing_wider() {
        let a = PathBuf::from("/w/a.md");
        let b = PathBuf::from("/w/b.md");
        let granted = Scope::of_call(
            &call(ToolKind::Edit, json!({}), "Edit"),
            std::slice::from_ref(&a),
        );
        assert!(granted.answers(&Scope::write(&a)));
        assert!(!granted.answers(&Scope::write(&b)));
        let read_a = Scope::of_call(&call(ToolKind::Read, json!({}), "Read"), &[a]);
        assert!(!granted.answers(&read_a));
        let ls = Scope::command(command("ls", &[], None));
        assert!(ls.answers(&Scope::command(command("ls", &[], None))));
        assert!(!ls.answers(&Scope::command(command("rm -rf /", &[], None))));
        assert_eq!(ls.describe(), "execute of `ls`");
    }
}
