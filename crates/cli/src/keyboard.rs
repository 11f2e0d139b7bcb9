//! What the user types at `hearth chat` and `hearth run`: a line editor at the chat's
//! prompt on a terminal (arrows, history kept per data directory, a bracketed paste as
//! one prompt, a line ending in `\` or Alt-Enter going on to the next line, completion of
//! slash commands, session ids and `@`paths), and plain lines for answers to questions.
//!
//! Lines are read on a thread of their own, one per request: nothing reads the terminal
//! while an answer streams, so what is typed then waits in the terminal for the next
//! read. The runtime's blocking pool is not used: it waits for its reads when it shuts
//! down, and one blocked on a terminal would keep the chat from leaving.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use anyhow::Context as _;
use rustyline::completion::{Completer, FilenameCompleter, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::FileHistory;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{Cmd, Editor, KeyCode, KeyEvent, Modifiers};
use tokio::sync::mpsc;

/// The most entries the history file keeps.
const HISTORY_ENTRIES: usize = 2000;

/// What a read brought.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Typed {
    /// A line (or, from the editor, several lines entered as one).
    Line(String),
    /// Ctrl-C at the editor's prompt.
    Interrupted,
    /// The input ended (Ctrl-D at an empty prompt, or the end of a pipe).
    Ended,
}

/// What the completion offers, kept current by the chat as it learns them.
#[derive(Clone, Debug, Default)]
pub(crate) struct Completions {
    inner: Arc<Mutex<Offered>>,
}

#[derive(Debug, Default)]
struct Offered {
    commands: Vec<String>,
    sessions: Vec<String>,
}

impl Completions {
    /// The slash commands (with their `/`) to complete at the start of a line.
    pub(crate) fn set_commands(&self, commands: Vec<String>) {
        self.lock().commands = commands;
    }

    /// The session ids `/open` and `/resume` complete.
    pub(crate) fn set_sessions(&self, sessions: Vec<String>) {
        self.lock().sessions = sessions;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Offered> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The completions of `line` with the cursor at `pos`: where the replaced word
    /// starts, and the candidates.
    fn complete(&self, line: &str, pos: usize) -> (usize, Vec<String>) {
        let before = &line[..pos];
        let start = before
            .rfind(char::is_whitespace)
            .map_or(0, |index| index + 1);
        let word = &before[start..];
        let offered = self.lock();
        let from = |list: &[String]| -> Vec<String> {
            list.iter()
                .filter(|item| item.starts_with(word))
                .cloned()
                .collect()
        };
        if start == 0 && word.starts_with('/') {
            return (0, from(&offered.commands));
        }
        let first = before.split_whitespace().next().unwrap_or_default();
        if matches!(first, "/open" | "/resume") && start > 0 {
            return (start, from(&offered.sessions));
        }
        (start, Vec::new())
    }
}

/// The editor's helper: completion, and the line ending in `\` that goes on.
struct Helper {
    completions: Completions,
    files: FilenameCompleter,
}

impl Completer for Helper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        ctx: &rustyline::Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let _ = ctx;
        let before = &line[..pos];
        let start = before
            .rfind(char::is_whitespace)
            .map_or(0, |index| index + 1);
        if before[start..].starts_with('@') {
            let path = &before[start + 1..];
            let (at, found) = self.files.complete_path(path, path.len())?;
            return Ok((start + 1 + at, found));
        }
        let (at, found) = self.completions.complete(line, pos);
        Ok((
            at,
            found
                .into_iter()
                .map(|item| Pair {
                    display: item.clone(),
                    replacement: item,
                })
                .collect(),
        ))
    }
}

impl Hinter for Helper {
    type Hint = String;
}

impl Highlighter for Helper {}

impl Validator for Helper {
    fn validate(&self, ctx: &mut ValidationContext<'_>) -> rustyline::Result<ValidationResult> {
        Ok(if ctx.input().ends_with('\\') {
            ValidationResult::Incomplete
        } else {
            ValidationResult::Valid(None)
        })
    }
}

impl rustyline::Helper for Helper {}

/// Lines ended with `\` to go on are joined without it.
fn entered(text: &str) -> String {
    text.replace("\\\n", "\n")
}

/// The line editor at a terminal's prompt, with its history file.
struct LineEditor {
    editor: Editor<Helper, FileHistory>,
    history: PathBuf,
}

impl LineEditor {
    fn new(history: PathBuf, completions: Completions) -> anyhow::Result<Self> {
        let config = rustyline::Config::builder()
            .max_history_size(HISTORY_ENTRIES)
            .context("configuring the line editor")?
            .history_ignore_dups(true)
            .context("configuring the line editor")?
            .history_ignore_space(true)
            .auto_add_history(false)
            .bracketed_paste(true)
            .completion_type(rustyline::CompletionType::List)
            .build();
        let mut editor: Editor<Helper, FileHistory> =
            Editor::with_config(config).context("starting the line editor")?;
        editor.set_helper(Some(Helper {
            completions,
            files: FilenameCompleter::new(),
        }));
        editor.bind_sequence(
            KeyEvent(KeyCode::Enter, Modifiers::ALT),
            rustyline::EventHandler::Simple(Cmd::Newline),
        );
        match editor.load_history(&history) {
            Ok(()) => {}
            Err(ReadlineError::Io(error)) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => {
                tracing::warn!(
                    "could not read the chat history {}: {error}",
                    history.display()
                );
            }
        }
        Ok(Self { editor, history })
    }

    fn read(&mut self, prompt: &str) -> Typed {
        match self.editor.readline(prompt) {
            Ok(text) => {
                let text = entered(&text);
                if !text.trim().is_empty() {
                    self.remember(&text);
                }
                Typed::Line(text)
            }
            Err(ReadlineError::Interrupted) => Typed::Interrupted,
            Err(ReadlineError::Eof) => Typed::Ended,
            Err(error) => {
                tracing::warn!("the line editor failed: {error}");
                Typed::Ended
            }
        }
    }

    /// Adds an entry and appends it to the history file (created private).
    fn remember(&mut self, text: &str) {
        if let Err(error) = self.editor.add_history_entry(text) {
            tracing::debug!("history: {error}");
            return;
        }
        if let Err(error) = self.editor.append_history(&self.history) {
            tracing::warn!(
                "could not write the chat history {}: {error}",
                self.history.display()
            );
        }
    }
}

/// A read the reading thread is asked for.
enum Request {
    /// A prompt at the editor (a plain line where there is none), shown with this text.
    Prompt { id: u64, prompt: String },
    /// A plain line: an answer to a question.
    Answer { id: u64 },
}

/// Where plain lines come from.
enum Source {
    Stdin,
    Terminal(BufReader<std::fs::File>),
}

impl Source {
    fn read_line(&mut self) -> Typed {
        let mut line = String::new();
        let read = match self {
            Self::Stdin => std::io::stdin().lock().read_line(&mut line),
            Self::Terminal(reader) => reader.read_line(&mut line),
        };
        match read {
            Ok(0) | Err(_) => Typed::Ended,
            Ok(_) => {
                let end = line.trim_end_matches(['\n', '\r']).len();
                line.truncate(end);
                Typed::Line(line)
            }
        }
    }
}

/// The user's keyboard: reads on request, on a thread of its own.
pub(crate) struct Keyboard {
    requests: std::sync::mpsc::Sender<Request>,
    replies: mpsc::UnboundedReceiver<(u64, Typed)>,
    next: u64,
    /// A read asked for whose reply has not been taken (its asker went away: a
    /// question answered elsewhere). The next read takes its line.
    pending: Option<u64>,
    /// The pending read is a plain one (its prompt is not the editor's).
    plain_pending: bool,
    /// Prompts are shown by the editor (otherwise on stderr, when `show_prompts`).
    editing: bool,
    show_prompts: bool,
}

/// How a [`Keyboard`] reads.
pub(crate) enum Setup {
    /// A line editor on the terminal that is stdin, with this history file.
    Editor {
        history: PathBuf,
        completions: Completions,
    },
    /// Plain lines from stdin; prompts shown on stderr when `prompts`.
    Stdin { prompts: bool },
    /// Plain lines from the controlling terminal (stdin may be a pipe).
    Terminal,
}

impl Keyboard {
    /// Starts reading as `setup` says.
    pub(crate) fn start(setup: Setup) -> anyhow::Result<Self> {
        let (editor, source, editing, show_prompts) = match setup {
            Setup::Editor {
                history,
                completions,
            } => (
                Some(LineEditor::new(history, completions)?),
                Source::Stdin,
                true,
                true,
            ),
            Setup::Stdin { prompts } => (None, Source::Stdin, false, prompts),
            Setup::Terminal => {
                let tty = std::fs::File::open("/dev/tty").context("opening the terminal")?;
                (None, Source::Terminal(BufReader::new(tty)), false, true)
            }
        };
        let (requests, asked) = std::sync::mpsc::channel::<Request>();
        let (reply, replies) = mpsc::unbounded_channel();
        std::thread::Builder::new()
            .name("hearth-keyboard".to_owned())
            .spawn(move || read_on_request(editor, source, &asked, &reply))
            .context("starting the keyboard reader")?;
        Ok(Self {
            requests,
            replies,
            next: 0,
            pending: None,
            plain_pending: false,
            editing,
            show_prompts,
        })
    }

    /// Whether a person types here (a terminal), who can be asked.
    pub(crate) fn has_a_person(&self) -> bool {
        self.editing || self.show_prompts
    }

    /// The next line at the prompt (edited, on a terminal).
    pub(crate) async fn prompt(&mut self, prompt: &str) -> Typed {
        if self.pending.is_none() {
            let id = self.fresh_id();
            let request = if self.editing {
                Request::Prompt {
                    id,
                    prompt: prompt.to_owned(),
                }
            } else {
                Request::Answer { id }
            };
            self.send(request, id);
        }
        if !self.editing || self.pending_is_plain() {
            self.show(prompt);
        }
        self.reply().await
    }

    /// The next plain line: an answer to a question (its prompt is already shown).
    pub(crate) async fn answer(&mut self) -> Typed {
        if self.pending.is_none() {
            let id = self.fresh_id();
            self.send(Request::Answer { id }, id);
        }
        self.reply().await
    }

    fn fresh_id(&mut self) -> u64 {
        self.next += 1;
        self.next
    }

    fn send(&mut self, request: Request, id: u64) {
        self.pending = Some(id);
        self.plain_pending = matches!(request, Request::Answer { .. });
        if self.requests.send(request).is_err() {
            tracing::debug!("the keyboard reader ended");
        }
    }

    fn pending_is_plain(&self) -> bool {
        self.plain_pending
    }

    #[allow(clippy::print_stderr)]
    fn show(&self, prompt: &str) {
        use std::io::Write as _;
        if self.show_prompts && !prompt.is_empty() {
            eprint!("{prompt}");
            let _ignored = std::io::stderr().flush();
        }
    }

    /// Waits for the pending read's line; cancelling this leaves the read pending, for
    /// the next read to take.
    async fn reply(&mut self) -> Typed {
        while let Some((id, typed)) = self.replies.recv().await {
            if Some(id) == self.pending {
                self.pending = None;
                return typed;
            }
        }
        self.pending = None;
        Typed::Ended
    }
}

/// The reading thread: one read per request, until the keyboard is dropped.
fn read_on_request(
    mut editor: Option<LineEditor>,
    mut source: Source,
    requests: &std::sync::mpsc::Receiver<Request>,
    replies: &mpsc::UnboundedSender<(u64, Typed)>,
) {
    while let Ok(request) = requests.recv() {
        let (id, typed) = match request {
            Request::Prompt { id, prompt } => match editor.as_mut() {
                Some(editor) => (id, editor.read(&prompt)),
                None => (id, source.read_line()),
            },
            Request::Answer { id } => (id, source.read_line()),
        };
        let ended = typed == Typed::Ended;
        if replies.send((id, typed)).is_err() || ended {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_sessions_and_nothing_else_complete() {
        let completions = Completions::default();
        completions.set_commands(vec!["/fork".into(), "/model".into(), "/mode".into()]);
        completions.set_sessions(vec!["0a1b2c".into(), "0a9z".into(), "77f".into()]);
        assert_eq!(
            completions.complete("/mo", 3),
            (0, vec!["/model".to_owned(), "/mode".to_owned()])
        );
        assert_eq!(
            completions.complete("/open 0a", 8),
            (6, vec!["0a1b2c".to_owned(), "0a9z".to_owned()])
        );
        assert_eq!(completions.complete("tell me /mo", 11), (8, Vec::new()));
    }

    #[test]
    fn a_line_ending_in_a_backslash_goes_on() {
        assert_eq!(entered("one\\\ntwo\\\nthree"), "one\ntwo\nthree");
        assert_eq!(entered("C:\\dir"), "C:\\dir");
    }
}
