//! Reading the command a prompt's first line selects.
//!
//! The first line of the prompt text selects a command from [`COMMANDS`]; a line that
//! names no command is echoed. A known command with unusable arguments becomes
//! [`Command::BadArguments`], answered with its usage line.

/// A command of the agent: its name, arguments and what it does.
pub(crate) struct CommandSpec {
    /// The name after the slash.
    pub(crate) name: &'static str,
    /// The arguments, as shown to a user.
    pub(crate) arguments: &'static str,
    /// What the command does.
    pub(crate) description: &'static str,
}

/// Every command, in the order of the reference table.
pub(crate) const COMMANDS: &[CommandSpec] = &[
    spec("slow", "N", "Stream N ticks, one every 20 ms; cancellable."),
    spec(
        "chunks",
        "N [SIZE]",
        "Stream N chunks of SIZE bytes as fast as possible.",
    ),
    spec(
        "timed",
        "N",
        "Stream N chunks 1 ms apart, each stamped with the monotonic clock as written.",
    ),
    spec("think", "", "Two thought chunks, then text."),
    spec("plan", "", "A plan with three entries, then text."),
    spec(
        "usage",
        "",
        "A usage update, then text; the answer carries token counts.",
    ),
    spec("settings", "", "Say the session's model and mode."),
    spec(
        "tool",
        "",
        "A tool call that runs to completion, then text.",
    ),
    spec(
        "write",
        "PATH CONTENT...",
        "Write a file through the client, asking first.",
    ),
    spec(
        "write-noask",
        "PATH CONTENT...",
        "Write a file through the client without asking.",
    ),
    spec("read", "PATH", "Read a file through the client."),
    spec(
        "ask",
        "choice|confirm|text",
        "Ask the user a question (elicitation/create, form mode).",
    ),
    spec(
        "terminal",
        "CMD ARGS...",
        "Run a command in a client terminal.",
    ),
    spec("mcp", "", "List the session's MCP servers as JSON."),
    spec(
        "live",
        "",
        "Say how many sessions are live in this process.",
    ),
    spec(
        "mcp-call",
        "SERVER TOOL [JSONARGS]",
        "Call a tool of a stdio MCP server.",
    ),
    spec("crash", "", "Exit with status 3 in the middle of the turn."),
    spec("hang", "", "Never answer until cancelled."),
    spec("junk", "", "Write non-JSON lines to stdout between chunks."),
    spec("flood", "", "Write an endless line to stdout."),
    spec("stderr", "N", "Write N lines to stderr."),
    spec("pid", "", "Reply with the process id."),
    spec(
        "sneak-write",
        "PATH CONTENT...",
        "Ask permission to read PATH, then write CONTENT to it.",
    ),
    spec(
        "sneak-run",
        "CMD ARGS...",
        "Ask permission to run CMD once, then run it twice.",
    ),
    spec(
        "env",
        "NAME...",
        "Say which of these variables the agent's own environment has.",
    ),
    spec("refuse", "", "End the turn with stop reason refusal."),
    spec("max", "", "End the turn with stop reason max_tokens."),
    spec("title", "TITLE", "Set the session title."),
    spec(
        "compact",
        "",
        "Compact the context, telling a client that takes compaction updates.",
    ),
    spec(
        "later",
        "TEXT...",
        "Answer `ok`, then say TEXT 100 ms after the turn ended.",
    ),
    spec(
        "hostile",
        "",
        "Send a title, thought, plan, tool calls, permission options and answer full of terminal escape sequences.",
    ),
    spec(
        "big-answer",
        "BYTES [CHUNK]",
        "Stream BYTES of answer text in chunks of CHUNK bytes (default 1 MiB).",
    ),
    spec(
        "tool-updates",
        "N [CALLS]",
        "Start CALLS tool calls (default 1), send N updates of them in turn, then complete them.",
    ),
    spec(
        "big-result",
        "BYTES",
        "A tool call that completes with BYTES of text.",
    ),
];

const fn spec(
    name: &'static str,
    arguments: &'static str,
    description: &'static str,
) -> CommandSpec {
    CommandSpec {
        name,
        arguments,
        description,
    }
}

/// Limits on numeric arguments, so a typo cannot exhaust memory.
const MAX_TICKS: u32 = 100_000;
const MAX_CHUNKS: u32 = 10_000_000;
const MAX_CHUNK_SIZE: usize = 1 << 20;
const DEFAULT_CHUNK_SIZE: usize = 16;
const MAX_TIMED: u32 = 1_000_000;
const MAX_STDERR_LINES: u32 = 1_000_000;
const MAX_BIG_BYTES: usize = 1 << 30;
const MAX_BIG_CHUNK: usize = 16 << 20;
const DEFAULT_BIG_CHUNK: usize = 1 << 20;
const MAX_TOOL_UPDATES: u32 = 10_000_000;
const MAX_TOOL_CALLS: u32 = 1_000_000;

/// Whether `/write` asks for permission first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Permission {
    /// `session/request_permission` before writing.
    Ask,
    /// Write at once; the client must gate the write itself.
    Skip,
    /// Ask to *read* the file, then write it (a client must not take the one for the
    /// other).
    AskToRead,
}

/// What the prompt asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Command {
    /// Plain text: echo it.
    Echo,
    /// A known command with unusable arguments: reply with this usage line.
    BadArguments(String),
    /// `/slow N`.
    Slow { ticks: u32 },
    /// `/chunks N [SIZE]`.
    Chunks { count: u32, size: usize },
    /// `/timed N`.
    Timed { count: u32 },
    /// `/think`.
    Think,
    /// `/plan`.
    Plan,
    /// `/usage`.
    Usage,
    /// `/settings`.
    Settings,
    /// `/tool`.
    Tool,
    /// `/write PATH CONTENT...` and `/write-noask PATH CONTENT...`.
    Write {
        path: String,
        content: String,
        permission: Permission,
    },
    /// `/read PATH`.
    Read { path: String },
    /// `/ask KIND`.
    Ask { kind: crate::ask::AskKind },
    /// `/terminal [NAME=VALUE...] CMD ARGS...`.
    Terminal {
        command: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
    },
    /// `/env NAME...`.
    Env { names: Vec<String> },
    /// `/sneak-run CMD ARGS...`.
    SneakRun { command: String, args: Vec<String> },
    /// `/mcp`.
    Mcp,
    /// `/live`.
    Live,
    /// `/mcp-call SERVER TOOL [JSONARGS]`.
    McpCall {
        server: String,
        tool: String,
        arguments: String,
    },
    /// `/crash`.
    Crash,
    /// `/hang`.
    Hang,
    /// `/junk`.
    Junk,
    /// `/flood`.
    Flood,
    /// `/stderr N`.
    Stderr { lines: u32 },
    /// `/pid`.
    Pid,
    /// `/refuse`.
    Refuse,
    /// `/max`.
    Max,
    /// `/title TITLE`.
    Title { title: String },
    /// `/compact`.
    Compact,
    /// `/later TEXT...`.
    Later { text: String },
    /// `/hostile`.
    Hostile,
    /// `/big-answer BYTES [CHUNK]`.
    BigAnswer { bytes: usize, chunk: usize },
    /// `/tool-updates N [CALLS]`.
    ToolUpdates { updates: u32, calls: u32 },
    /// `/big-result BYTES`.
    BigResult { bytes: usize },
}

impl Command {
    /// Reads the command the first line of `text` selects.
    pub(crate) fn parse(text: &str) -> Self {
        let first_line = text.lines().next().unwrap_or_default();
        let Some(invocation) = first_line.strip_prefix('/') else {
            return Self::Echo;
        };
        let name = invocation
            .split(char::is_whitespace)
            .next()
            .unwrap_or_default();
        let Some(spec) = COMMANDS.iter().find(|spec| spec.name == name) else {
            return Self::Echo;
        };
        // Everything after the name, across lines (for `/write` content).
        let rest = &text[1 + name.len()..];
        let arguments: Vec<&str> = first_line[1 + name.len()..].split_whitespace().collect();
        parse_arguments(spec, &arguments, rest).unwrap_or_else(|| {
            Self::BadArguments(
                format!("usage: /{} {}", spec.name, spec.arguments)
                    .trim_end()
                    .to_owned(),
            )
        })
    }
}

/// Splits off the first whitespace-separated word of `text`, returning it and what
/// follows it, minus one separating whitespace character.
fn first_word(text: &str) -> Option<(&str, &str)> {
    let text = text.trim_start();
    if text.is_empty() {
        return None;
    }
    let end = text.find(char::is_whitespace).unwrap_or(text.len());
    let (word, after) = text.split_at(end);
    let mut chars = after.chars();
    chars.next();
    Some((word, chars.as_str()))
}

fn number<T: std::str::FromStr + PartialOrd>(text: &str, max: T) -> Option<T> {
    text.parse::<T>().ok().filter(|value| *value <= max)
}

fn parse_arguments(spec: &CommandSpec, arguments: &[&str], rest: &str) -> Option<Command> {
    let command = match (spec.name, arguments) {
        ("slow", [ticks]) => Command::Slow {
            ticks: number(ticks, MAX_TICKS)?,
        },
        ("chunks", [count]) => chunks(count, None)?,
        ("chunks", [count, size]) => chunks(count, Some(size))?,
        ("timed", [count]) => Command::Timed {
            count: number(count, MAX_TIMED)?,
        },
        ("think", []) => Command::Think,
        ("plan", []) => Command::Plan,
        ("usage", []) => Command::Usage,
        ("settings", []) => Command::Settings,
        ("tool", []) => Command::Tool,
        ("write" | "write-noask" | "sneak-write", [_, ..]) => {
            let (path, content) = first_word(rest)?;
            Command::Write {
                path: path.to_owned(),
                content: content.to_owned(),
                permission: match spec.name {
                    "write" => Permission::Ask,
                    "sneak-write" => Permission::AskToRead,
                    _ => Permission::Skip,
                },
            }
        }
        ("read", [path]) => Command::Read {
            path: (*path).to_owned(),
        },
        ("ask", [kind]) => Command::Ask {
            kind: crate::ask::AskKind::parse(kind)?,
        },
        ("terminal", [_, ..]) => {
            // Leading NAME=VALUE words are variables the terminal is asked to set.
            let settings = arguments
                .iter()
                .take_while(|word| word.contains('=') && !word.starts_with('='))
                .count();
            let (env, rest) = arguments.split_at(settings);
            let [command, args @ ..] = rest else {
                return None;
            };
            Command::Terminal {
                command: (*command).to_owned(),
                args: args.iter().map(|arg| (*arg).to_owned()).collect(),
                env: env
                    .iter()
                    .filter_map(|word| word.split_once('='))
                    .map(|(name, value)| (name.to_owned(), value.to_owned()))
                    .collect(),
            }
        }
        ("sneak-run", [command, args @ ..]) => Command::SneakRun {
            command: (*command).to_owned(),
            args: args.iter().map(|arg| (*arg).to_owned()).collect(),
        },
        ("env", [_, ..]) => Command::Env {
            names: arguments.iter().map(|name| (*name).to_owned()).collect(),
        },
        ("mcp", []) => Command::Mcp,
        ("live", []) => Command::Live,
        ("mcp-call", [_, _, ..]) => {
            let (server, after_server) = first_word(rest)?;
            let (tool, arguments) = first_word(after_server)?;
            Command::McpCall {
                server: server.to_owned(),
                tool: tool.to_owned(),
                arguments: arguments.trim().to_owned(),
            }
        }
        ("crash", []) => Command::Crash,
        ("hang", []) => Command::Hang,
        ("junk", []) => Command::Junk,
        ("flood", []) => Command::Flood,
        ("stderr", [lines]) => Command::Stderr {
            lines: number(lines, MAX_STDERR_LINES)?,
        },
        ("pid", []) => Command::Pid,
        ("refuse", []) => Command::Refuse,
        ("max", []) => Command::Max,
        ("compact", []) => Command::Compact,
        ("title", [_, ..]) => Command::Title {
            title: arguments.join(" "),
        },
        ("later", [_, ..]) => Command::Later {
            text: arguments.join(" "),
        },
        ("hostile", []) => Command::Hostile,
        ("big-answer", [bytes, chunk @ ..]) if chunk.len() <= 1 => Command::BigAnswer {
            bytes: number(bytes, MAX_BIG_BYTES)?,
            chunk: match chunk {
                [chunk] => number(chunk, MAX_BIG_CHUNK).filter(|chunk| *chunk > 0)?,
                _ => DEFAULT_BIG_CHUNK,
            },
        },
        ("tool-updates", [updates, calls @ ..]) if calls.len() <= 1 => Command::ToolUpdates {
            updates: number(updates, MAX_TOOL_UPDATES)?,
            calls: match calls {
                [calls] => number(calls, MAX_TOOL_CALLS).filter(|calls| *calls > 0)?,
                _ => 1,
            },
        },
        ("big-result", [bytes]) => Command::BigResult {
            bytes: number(bytes, MAX_BIG_BYTES)?,
        },
        _ => return None,
    };
    Some(command)
}

fn chunks(count: &str, size: Option<&&str>) -> Option<Command> {
    let count = number(count, MAX_CHUNKS)?;
    let size = match size {
        Some(size) => number(size, MAX_CHUNK_SIZE)?,
        None => DEFAULT_CHUNK_SIZE,
    };
    // Each chunk is its zero-padded index and a newline, so it must hold the
    // largest index's digits plus one.
    let digits = count.saturating_sub(1).to_string().len();
    (size > digits).then_some(Command::Chunks { count, size })
}

/// The text of chunk `index` of `/chunks`: the index, zero-padded to `size - 1`
/// digits, and a newline (exactly `size` bytes; unique and in order).
pub(crate) fn chunk_text(index: u32, size: usize) -> String {
    let width = size.saturating_sub(1);
    format!("{index:0width$}\n")
}

/// The text of chunk `index` of `/timed`, written at `nanos` on the monotonic clock:
/// the index, a space, the nanoseconds, and a newline.
pub(crate) fn timed_text(index: u32, nanos: u64) -> String {
    format!("{index} {nanos}\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn plain_text_and_unknown_commands_echo() {
        assert_eq!(Command::parse("hello"), Command::Echo);
        assert_eq!(Command::parse("/nonsense 1"), Command::Echo);
        assert_eq!(Command::parse(""), Command::Echo);
        assert_eq!(Command::parse("hello\n/slow 3"), Command::Echo);
    }

    #[test]
    fn commands_read_their_arguments() {
        assert_eq!(Command::parse("/slow 3"), Command::Slow { ticks: 3 });
        assert_eq!(
            Command::parse("/chunks 10000"),
            Command::Chunks {
                count: 10_000,
                size: 16
            }
        );
        assert_eq!(
            Command::parse("/timed 2000"),
            Command::Timed { count: 2000 }
        );
        assert_eq!(
            Command::parse("/terminal ls -l /tmp"),
            Command::Terminal {
                command: "ls".into(),
                args: vec!["-l".into(), "/tmp".into()],
                env: Vec::new(),
            }
        );
        assert_eq!(
            Command::parse("/terminal LD_PRELOAD=/tmp/x.so A=b ls -l"),
            Command::Terminal {
                command: "ls".into(),
                args: vec!["-l".into()],
                env: vec![
                    ("LD_PRELOAD".into(), "/tmp/x.so".into()),
                    ("A".into(), "b".into())
                ],
            }
        );
        assert_eq!(
            Command::parse("/mcp-call files echo {\"text\": \"a b\"}"),
            Command::McpCall {
                server: "files".into(),
                tool: "echo".into(),
                arguments: "{\"text\": \"a b\"}".into()
            }
        );
        assert_eq!(
            Command::parse("/big-answer 209715200"),
            Command::BigAnswer {
                bytes: 200 << 20,
                chunk: 1 << 20
            }
        );
        assert_eq!(
            Command::parse("/tool-updates 200000 10"),
            Command::ToolUpdates {
                updates: 200_000,
                calls: 10
            }
        );
        assert_eq!(
            Command::parse("/tool-updates 5"),
            Command::ToolUpdates {
                updates: 5,
                calls: 1
            }
        );
        assert_eq!(
            Command::parse("/big-result 1000"),
            Command::BigResult { bytes: 1000 }
        );
        assert_eq!(
            Command::parse("/title  A  new title "),
            Command::Title {
                title: "A new title".into()
            }
        );
    }

    #[test]
    fn write_content_keeps_spaces_and_later_lines() {
        assert_eq!(
            Command::parse("/write /tmp/a.txt hello  world\nsecond line"),
            Command::Write {
                path: "/tmp/a.txt".into(),
                content: "hello  world\nsecond line".into(),
                permission: Permission::Ask
            }
        );
        assert_eq!(
            Command::parse("/write-noask ../../etc/passwd"),
            Command::Write {
                path: "../../etc/passwd".into(),
                content: String::new(),
                permission: Permission::Skip
            }
        );
    }

    #[test]
    fn bad_arguments_answer_with_the_usage_line() {
        assert_eq!(
            Command::parse("/slow many"),
            Command::BadArguments("usage: /slow N".into())
        );
        assert_eq!(
            Command::parse("/chunks 1000 3"),
            Command::BadArguments("usage: /chunks N [SIZE]".into())
        );
        assert_eq!(
            Command::parse("/timed"),
            Command::BadArguments("usage: /timed N".into())
        );
        assert_eq!(
            Command::parse("/tool-updates 5 0"),
            Command::BadArguments("usage: /tool-updates N [CALLS]".into())
        );
        assert_eq!(
            Command::parse("/big-answer 2000000000"),
            Command::BadArguments("usage: /big-answer BYTES [CHUNK]".into())
        );
        assert_eq!(
            Command::parse("/pid now"),
            Command::BadArguments("usage: /pid".into())
        );
    }

    #[test]
    fn chunk_texts_are_sized_unique_and_ordered() {
        assert_eq!(chunk_text(7, 16), "000000000000007\n");
        assert_eq!(chunk_text(9999, 5), "9999\n");
        let texts: Vec<String> = (0..100).map(|index| chunk_text(index, 4)).collect();
        let mut sorted = texts.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted, texts);
    }
}
