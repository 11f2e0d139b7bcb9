//! What `hearth run` and `hearth chat` print of a turn as it streams: the answer on
//! stdout, tool calls, their results and terminal output, reasoning, errors and usage
//! on stderr (each starting on a line of its own), or every envelope as a JSON line.

use std::io::{IsTerminal, Write};

use hearth_core::{Action, Envelope, ResponsePart, ToolCallStatus, escape_controls};

use crate::render;

/// Prints a turn's envelopes as they arrive.
pub(crate) struct Printer {
    json: bool,
    show_reasoning: bool,
    printed: usize,
    ends_with_newline: bool,
    /// Bytes of each call's terminal output printed so far.
    terminals: std::collections::HashMap<String, usize>,
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
            eprintln!("{line}");
        }
    }

    /// Ends the answer's last line, if it printed one without a newline.
    pub(crate) fn finish_line(&mut self) -> anyhow::Result<()> {
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
            Action::TextDelta { text, .. } => {
                // The agent's text, its escape sequences shown rather than sent; `printed`
                // counts the text as the agent wrote it.
                stdout.write_all(escape_controls(text).as_bytes())?;
                stdout.flush()?;
                self.printed += text.len();
                self.ends_with_newline = text.ends_with('\n');
            }
            Action::ReasoningDelta { text, .. } if self.show_reasoning => {
                eprint!("{}", escape_controls(text));
            }
            Action::ToolCallStarted { call, .. } => eprintln!("{}", render::tool_call_line(call)),
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
            } => match render::short_result(&result.content) {
                Some(short) if short.trim().is_empty() => {}
                Some(short) => eprintln!("  → {short}"),
                None => {
                    eprintln!("  →");
                    for line in render::result_lines(&result.content, Some(LIVE_RESULT_LINES)) {
                        eprintln!("{line}");
                    }
                }
            },
            Action::PartAdded {
                part: ResponsePart::PermissionRequest { .. },
                ..
            } => {}
            // What the turn used, dim after the answer, for the person at a terminal.
            Action::TurnCompleted {
                usage: Some(usage), ..
            } if crate::colour_on_stderr() => {
                if let Some(line) = crate::offered::usage_line(usage) {
                    self.break_line(&mut stdout)?;
                    eprintln!("\x1b[2m{line}\x1b[0m");
                }
            }
            Action::PartAdded { part, .. } if !matches!(part, ResponsePart::Text { .. }) => {
                let mut text = String::new();
                render::part(part, &mut text);
                eprint!("{text}");
            }
            _ => {}
        }
        Ok(())
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

/// Lines of a tool's result printed as a turn runs; `hearth sessions show` prints all.
const LIVE_RESULT_LINES: usize = 20;
