//! What `hearth run` and `hearth chat` print of a turn as it streams: the answer on
//! stdout, tool calls, their results and terminal output, reasoning, errors and usage
//! on stderr (each starting on a line of its own), or every envelope as a JSON line.
//! On a terminal (see [`crate::style`]) the answer is rendered from Markdown as its
//! lines complete and what goes to stderr is coloured; elsewhere the answer is printed
//! as the agent wrote it, its controls escaped.

use std::io::{IsTerminal, Write};

use hearth_core::{Action, Envelope, ResponsePart, ToolCallStatus, escape_controls};

use crate::markdown::MarkdownStream;
use crate::render;
use crate::style::Paint;

/// Prints a turn's envelopes as they arrive.
pub(crate) struct Printer {
    json: bool,
    show_reasoning: bool,
    printed: usize,
    ends_with_newline: bool,
    /// Bytes of each call's terminal output printed so far.
    terminals: std::collections::HashMap<String, usize>,
    /// The answer's renderer, on a terminal.
    markdown: Option<MarkdownStream>,
    /// Whether stderr is coloured.
    colour: bool,
    /// The model answering, when the chat says.
    model: Option<String>,
    /// The turn's usage line was printed.
    usage_shown: bool,
}

impl Printer {
    /// A printer of answer text (or, with `json`, of every envelope as a JSON line).
    pub(crate) fn new(json: bool, show_reasoning: bool) -> Self {
        Self {
            json,
            show_reasoning,
            printed: 0,
            ends_with_newline: true,
            terminals: std::collections::HashMap::new(),
            markdown: (!json && crate::style::on_stdout()).then(MarkdownStream::for_terminal),
            colour: !json && crate::style::on_stderr(),
            model: None,
            usage_shown: false,
        }
    }

    /// Whether the turn's usage line was printed (a chat then prints none of its own).
    pub(crate) fn usage_shown(&self) -> bool {
        self.usage_shown
    }

    /// Prints what the answer's renderer holds back, if it holds anything.
    fn flush_markdown(&mut self, stdout: &mut impl Write) -> anyhow::Result<()> {
        if let Some(markdown) = &mut self.markdown
            && !markdown.is_idle()
        {
            let mut out = String::new();
            markdown.finish(&mut out);
            stdout.write_all(out.as_bytes())?;
            stdout.flush()?;
        }
        Ok(())
    }

    /// `text` on stderr, each line in `paint` when stderr is coloured.
    #[allow(clippy::print_stderr)]
    fn note(&self, paint: Paint, text: &str) {
        for line in text.lines() {
            eprintln!("{}", paint.paint_if(self.colour, line));
        }
    }

    /// Prints what a call's terminal output gained since it was last printed.
    #[allow(clippy::print_stderr)]
    fn terminal_update(&mut self, call_id: &str, content: &[hearth_core::ToolCallContent]) {
        let Some((output, ended)) = render::terminal_output(content) else {
            return;
        };
        let printed = self.terminals.entry(call_id.to_owned()).or_default();
        // What was printed is a start of the output, unless older output was dropped
        // meanwhile: then all of what is kept now.
        let start = if output.is_char_boundary(*printed) {
            *printed
        } else {
            0
        };
        let rest = &output[start..];
        // Only whole lines while it runs; the rest once it ended.
        let new = match (&ended, rest.rfind('\n')) {
            (Some(_), _) => rest,
            (None, Some(end)) => &rest[..=end],
            (None, None) => "",
        };
        *printed = start + new.len();
        for line in render::terminal_lines(new, ended.as_deref()) {
            self.note(Paint::DIM, &line);
        }
    }

    /// Ends the answer's last line, if it printed one without a newline.
    pub(crate) fn finish_line(&mut self) -> anyhow::Result<()> {
        self.flush_markdown(&mut std::io::stdout().lock())?;
        if !self.json && self.printed > 0 && !self.ends_with_newline {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(b"\n")?;
            stdout.flush()?;
            self.ends_with_newline = true;
        }
        Ok(())
    }

    /// Ends the answer's open line on a terminal, so that what follows on stderr (a tool
    /// call, an error, a question) starts on a line of its own instead of being glued to
    /// the answer. Output to a file or pipe is left exactly as the agent wrote it.
    pub(crate) fn break_line(&mut self, stdout: &mut impl Write) -> anyhow::Result<()> {
        self.flush_markdown(stdout)?;
        if !self.json
            && self.printed > 0
            && !self.ends_with_newline
            && std::io::stdout().is_terminal()
        {
            stdout.write_all(b"\n")?;
            stdout.flush()?;
            self.ends_with_newline = true;
        }
        Ok(())
    }

    #[allow(clippy::print_stderr)]
    pub(crate) fn envelope(&mut self, envelope: &Envelope) -> anyhow::Result<()> {
        let mut stdout = std::io::stdout().lock();
        if self.json {
            stdout.write_all(crate::shown::json(envelope)?.as_bytes())?;
            stdout.write_all(b"\n")?;
            return Ok(stdout.flush()?);
        }
        if let Action::PartAdded {
            part: ResponsePart::Error { .. },
            ..
        } = &envelope.action
        {
            // An answer that failed ends where it broke off, whoever reads it.
            self.finish_line()?;
        } else if self.goes_to_stderr(&envelope.action) {
            self.break_line(&mut stdout)?;
        }
        match &envelope.action {
            Action::TextDelta { text, .. } => self.text_delta(text, &mut stdout)?,
            Action::ReasoningDelta { text, .. } if self.show_reasoning => {
                let text = escape_controls(text);
                eprint!("{}", Paint::DIM.paint_if(self.colour, &text));
            }
            Action::ToolCallStarted { call, .. } => {
                self.note(Paint::CYAN, &render::tool_call_line(call));
            }
            Action::ToolCallUpdated {
                call_id,
                patch:
                    hearth_core::ToolCallPatch {
                        content: Some(content),
                        ..
                    },
                ..
            } if render::terminal_output(content).is_some() => {
                self.terminal_update(call_id, content);
            }
            Action::ToolCallUpdated {
                status: ToolCallStatus::Completed | ToolCallStatus::Failed,
                result: Some(result),
                ..
            } => self.tool_result(&result.content),
            Action::AgentStateChanged { state } => {
                if let Some(models) = &state.models {
                    self.model = Some(models.current.clone());
                }
            }
            Action::ChatAdded { chat } | Action::ChatUpdated { chat } if chat.model.is_some() => {
                self.model.clone_from(&chat.model);
            }
            Action::PartAdded {
                part: ResponsePart::PermissionRequest { .. },
                ..
            } => {}
            // What the turn used, dim after the answer, for the person at a terminal.
            Action::TurnCompleted {
                usage: Some(usage), ..
            } if self.colour => {
                if let Some(line) = crate::offered::usage_line(usage, self.model.as_deref()) {
                    self.break_line(&mut stdout)?;
                    self.note(Paint::DIM, &line);
                    self.usage_shown = true;
                }
            }
            Action::PartAdded { part, .. } if !matches!(part, ResponsePart::Text { .. }) => {
                let mut text = String::new();
                render::part(part, &mut text);
                self.note(part_paint(part), &text);
            }
            _ => {}
        }
        Ok(())
    }

    /// The agent's text, its escape sequences shown rather than sent; `printed` counts
    /// the text as the agent wrote it.
    fn text_delta(&mut self, text: &str, stdout: &mut impl Write) -> anyhow::Result<()> {
        match &mut self.markdown {
            Some(markdown) => {
                let mut out = String::new();
                markdown.push(text, &mut out);
                if !out.is_empty() {
                    stdout.write_all(out.as_bytes())?;
                    stdout.flush()?;
                }
                // The renderer prints whole lines only.
                self.ends_with_newline = true;
            }
            None => {
                stdout.write_all(escape_controls(text).as_bytes())?;
                stdout.flush()?;
                self.ends_with_newline = text.ends_with('\n');
            }
        }
        self.printed += text.len();
        Ok(())
    }

    /// A finished tool call's result, dim: on one line when it is short, else its
    /// first [`LIVE_RESULT_LINES`] lines.
    fn tool_result(&mut self, content: &str) {
        match render::short_result(content) {
            Some(short) if short.trim().is_empty() => {}
            Some(short) => self.note(Paint::DIM, &format!("  → {short}")),
            None => {
                self.note(Paint::DIM, "  →");
                for line in render::result_lines(content, Some(LIVE_RESULT_LINES)) {
                    self.note(Paint::DIM, &line);
                }
            }
        }
    }

    /// Whether [`Printer::envelope`] prints this on stderr (outside JSON).
    fn goes_to_stderr(&self, action: &Action) -> bool {
        match action {
            Action::ReasoningDelta { .. } => self.show_reasoning,
            Action::ToolCallStarted { .. } => true,
            Action::ToolCallUpdated {
                patch:
                    hearth_core::ToolCallPatch {
                        content: Some(content),
                        ..
                    },
                ..
            } if render::terminal_output(content).is_some() => true,
            Action::ToolCallUpdated {
                status: ToolCallStatus::Completed | ToolCallStatus::Failed,
                result: Some(_),
                ..
            } => true,
            Action::PartAdded { part, .. } => !matches!(
                part,
                ResponsePart::Text { .. } | ResponsePart::PermissionRequest { .. }
            ),
            _ => false,
        }
    }
}

/// How a response part printed on stderr is coloured.
fn part_paint(part: &ResponsePart) -> Paint {
    match part {
        ResponsePart::Error { .. } => Paint::RED,
        ResponsePart::Notice { .. } => Paint::YELLOW,
        ResponsePart::Proposal { .. } => Paint::BOLD,
        ResponsePart::PermissionRequest { .. } => Paint::MAGENTA,
        ResponsePart::ToolCall(_) => Paint::CYAN,
        ResponsePart::Reasoning { .. } | ResponsePart::Compaction { .. } => Paint::DIM,
        ResponsePart::Text { .. } | ResponsePart::Plan { .. } => Paint(""),
    }
}

/// Lines of a tool's result printed as a turn runs; `hearth sessions show` prints all.
const LIVE_RESULT_LINES: usize = 20;
