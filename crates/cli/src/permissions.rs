//! Agents' permission requests at the command line: shown with what they are about (the
//! tool call's kind, files and diff) and answered by the user — inline in `hearth run`
//! and `hearth chat` on a terminal, or with `hearth permissions list|allow|reject` while
//! `hearth serve` runs them. Where nobody can answer (a script, a pipe), the request is
//! refused with a note saying how to allow it.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use crate::interrupts::Interrupts;
use crate::keyboard::{Keyboard, Typed};
use anyhow::{Context, bail};
use clap::Subcommand;
use hearth_app::App;
use hearth_core::{
    PermissionOption, PermissionOptionKind, ToolCallContent, ToolKind, escape_controls_inline,
};

/// Lines of a diff shown with a request.
const DIFF_LINES: usize = 40;

pub use hearth_app::turn::Question;

/// How a question was settled.
pub enum Reply {
    /// The user chose this option.
    Chosen(String),
    /// Nobody could answer: refused with this option (none when the agent offered no way
    /// to refuse), and a note for the user.
    Refused {
        option_id: Option<String>,
        notice: String,
    },
    /// The user pressed Ctrl-C instead of answering.
    Interrupted,
}

/// The keyboard of the terminal (`/dev/tty`) for answers, when stderr is a terminal;
/// `None` when nobody sits at one.
pub fn terminal_keyboard() -> Option<Keyboard> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    Keyboard::start(crate::keyboard::Setup::Terminal).ok()
}

/// What choosing an option of this kind does, in Hearth's words: the agent's label may
/// say anything, so this is what the user reads first.
pub fn option_effect(kind: Option<PermissionOptionKind>) -> &'static str {
    match kind {
        Some(PermissionOptionKind::AllowOnce) => "allow once",
        Some(PermissionOptionKind::AllowAlways) => "allow for this chat",
        Some(PermissionOptionKind::RejectOnce) => "refuse once",
        Some(PermissionOptionKind::RejectAlways) => "refuse for this chat",
        None => "agent's choice (what it does is not stated)",
    }
}

/// The widest [`option_effect`] of a kind, for aligning the agent's labels after them.
const EFFECT_WIDTH: usize = 20;

/// The agent's label of an option, quoted and escaped: shown after Hearth's words, it can
/// neither hide them nor start a line of its own.
pub fn agent_label(option: &PermissionOption) -> String {
    format!("\"{}\"", escape_controls_inline(&option.label))
}

/// An option on one line: Hearth's words, then the agent's label.
pub fn option_text(option: &PermissionOption) -> String {
    format!(
        "{:<EFFECT_WIDTH$}  agent's label: {}",
        option_effect(option.kind),
        agent_label(option)
    )
}

/// A diff of two texts: the lines that differ between their common start and end (each
/// shown escaped: the text is the agent's).
fn diff(path: &str, old: Option<&str>, new: &str, out: &mut String) {
    let old_lines: Vec<&str> = old.unwrap_or_default().lines().collect();
    let new_lines: Vec<&str> = new.lines().collect();
    let common_start = old_lines
        .iter()
        .zip(&new_lines)
        .take_while(|(a, b)| a == b)
        .count();
    let common_end = old_lines[common_start..]
        .iter()
        .rev()
        .zip(new_lines[common_start..].iter().rev())
        .take_while(|(a, b)| a == b)
        .count();
    out.push_str(&format!(
        "  {} {}\n",
        if old.is_none() { "new file" } else { "changes" },
        escape_controls_inline(path)
    ));
    let removed = &old_lines[common_start..old_lines.len() - common_end];
    let added = &new_lines[common_start..new_lines.len() - common_end];
    let changed = removed
        .iter()
        .map(|line| ('-', line))
        .chain(added.iter().map(|line| ('+', line)));
    for (sign, line) in changed.clone().take(DIFF_LINES) {
        out.push_str(&format!("  {sign} {}\n", escape_controls_inline(line)));
    }
    let hidden = changed.count().saturating_sub(DIFF_LINES);
    if hidden > 0 {
        out.push_str(&format!("  … {hidden} more line(s)\n"));
    }
}

/// A question's diff lines coloured for a terminal: added green, removed red.
fn coloured_diff(text: &str) -> String {
    text.split_inclusive('\n')
        .map(|line| {
            let body = line.trim_end_matches('\n');
            let end = &line[body.len()..];
            let painted = if body.starts_with("  + ") {
                crate::style::Paint::GREEN.paint(body)
            } else if body.starts_with("  - ") {
                crate::style::Paint::RED.paint(body)
            } else {
                body.to_owned()
            };
            format!("{painted}{end}")
        })
        .collect()
}

/// The question as text: who asks what, about which files, with the diff, and the
/// choices — one a line, each led by what it does in Hearth's words, the agent's label
/// after it. Everything the agent wrote is shown escaped.
pub fn describe(question: &Question) -> String {
    let mut out = format!(
        "? {} asks: {}\n",
        question.agent,
        escape_controls_inline(&question.title)
    );
    if let Some(call) = &question.call {
        if let Some(kind) = call.kind.filter(|kind| *kind != ToolKind::Other) {
            out.push_str(&format!("  kind: {}\n", kind.as_str()));
        }
        let files: Vec<String> = call
            .locations
            .iter()
            .map(|location| escape_controls_inline(&location.path).into_owned())
            .collect();
        if !files.is_empty() {
            out.push_str(&format!("  files: {}\n", files.join(", ")));
        }
        for content in &call.content {
            match content {
                ToolCallContent::Diff {
                    path,
                    old_text,
                    new_text,
                } => diff(path, old_text.as_deref(), new_text, &mut out),
                ToolCallContent::Text { text } if !text.trim().is_empty() => {
                    for line in text.lines().take(DIFF_LINES) {
                        out.push_str(&format!("  | {}\n", escape_controls_inline(line)));
                    }
                }
                _ => {}
            }
        }
        if call.content.is_empty() && !call.arguments.is_null() {
            let arguments = call.arguments.to_string();
            let shown: String = arguments.chars().take(300).collect();
            out.push_str(&format!(
                "  arguments: {}\n",
                escape_controls_inline(&shown)
            ));
        }
    }
    for (index, option) in question.options.iter().enumerate() {
        let text = match (is_question(question), option.kind) {
            // A value the agent asked for: the answer is the agent's label itself.
            (true, None) => format!(
                "{:<EFFECT_WIDTH$}  agent's label: {}",
                "answer",
                agent_label(option)
            ),
            _ => option_text(option),
        };
        out.push_str(&format!("  [{}] {text}\n", index + 1));
    }
    out
}

/// Whether the agent asks the user something (elicitation) rather than for permission
/// to run a tool call: a question is about no call.
fn is_question(question: &Question) -> bool {
    question.call.is_none()
}

/// The option a typed answer means: its number, or `y`/`yes` (allow once), `a`/`always`
/// (allow for the rest of the chat; `chat` too), `n`/`no` (refuse), `never` (refuse for
/// the rest of the chat).
pub fn choice(options: &[PermissionOption], answer: &str) -> Option<String> {
    let answer = answer.trim().to_lowercase();
    if let Ok(number) = answer.parse::<usize>() {
        return number
            .checked_sub(1)
            .and_then(|index| options.get(index))
            .map(|option| option.id.clone());
    }
    let kinds: &[PermissionOptionKind] = match answer.as_str() {
        "y" | "yes" | "allow" => &[
            PermissionOptionKind::AllowOnce,
            PermissionOptionKind::AllowAlways,
        ],
        "a" | "always" | "chat" => &[PermissionOptionKind::AllowAlways],
        "n" | "no" | "refuse" | "reject" => &[
            PermissionOptionKind::RejectOnce,
            PermissionOptionKind::RejectAlways,
        ],
        "never" => &[PermissionOptionKind::RejectAlways],
        _ => {
            return options
                .iter()
                .find(|option| option.id == answer)
                .map(|option| option.id.clone());
        }
    };
    kinds.iter().find_map(|kind| {
        options
            .iter()
            .find(|option| option.kind == Some(*kind))
            .map(|option| option.id.clone())
    })
}

/// How to stop being asked: an MCP tool is allowed under its server, an external
/// agent's kind of request under the agent.
fn allow_for_good(question: &Question) -> String {
    let mcp_tool = question
        .title
        .starts_with("Run MCP tool `")
        .then(|| question.call.as_ref()?.name.split_once("__"))
        .flatten();
    match mcp_tool {
        Some((server, tool)) => format!(
            "allow this tool for good with `allow = [\"{}\"]` under [mcp_servers.{}] in config.toml",
            escape_controls_inline(tool),
            escape_controls_inline(server)
        ),
        None => format!(
            "allow this kind of request for good with `allow = [\"{}\"]` under [agents.{}] in config.toml",
            question
                .call
                .as_ref()
                .and_then(|call| call.kind)
                .map_or("edit", ToolKind::as_str),
            question.agent
        ),
    }
}

/// The words a permission question takes: the number always, and each word whose kind
/// of option the agent offers (`always` only when it offers to allow always, …).
fn answer_words(options: &[PermissionOption]) -> String {
    let offers = |kinds: &[PermissionOptionKind]| {
        options
            .iter()
            .any(|option| option.kind.is_some_and(|kind| kinds.contains(&kind)))
    };
    let mut words = vec!["number"];
    for (word, kinds) in [
        (
            "y",
            &[
                PermissionOptionKind::AllowOnce,
                PermissionOptionKind::AllowAlways,
            ][..],
        ),
        (
            "n",
            &[
                PermissionOptionKind::RejectOnce,
                PermissionOptionKind::RejectAlways,
            ][..],
        ),
        ("always", &[PermissionOptionKind::AllowAlways][..]),
        ("never", &[PermissionOptionKind::RejectAlways][..]),
    ] {
        if offers(kinds) {
            words.push(word);
        }
    }
    words.join(", ")
}

/// The option that refuses, preferring "once".
fn refusal(options: &[PermissionOption]) -> Option<String> {
    choice(options, "no")
}

/// Asks the user (reading `lines`), or refuses with a note when nobody can answer.
#[allow(clippy::print_stderr)]
pub async fn ask(
    question: &Question,
    keyboard: Option<&mut Keyboard>,
    interrupts: &mut Interrupts,
) -> anyhow::Result<Reply> {
    let Some(keyboard) = keyboard else {
        if is_question(question) {
            return Ok(Reply::Refused {
                option_id: refusal(&question.options),
                notice: format!(
                    "hearth: {} asked: {}\nhearth: declined: nobody can answer here (not a terminal). Answer it from a terminal (`hearth run` or `hearth chat`), or in Agent Home while `hearth serve` runs it",
                    question.agent,
                    escape_controls_inline(&question.title),
                ),
            });
        }
        return Ok(Reply::Refused {
            option_id: refusal(&question.options),
            notice: format!(
                "hearth: {} asked: {}\nhearth: refused: nobody can answer here (not a terminal). Answer it from a terminal (`hearth run` or `hearth chat`), with `hearth permissions allow` while `hearth serve` runs it, or {}",
                question.agent,
                escape_controls_inline(&question.title),
                allow_for_good(question)
            ),
        });
    };
    let described = describe(question);
    if crate::style::on_stderr() {
        eprint!("\n{}", coloured_diff(&described));
    } else {
        eprint!("\n{described}");
    }
    loop {
        if is_question(question) {
            eprint!("  answer (number, or n to decline): ");
        } else {
            eprint!("  answer ({}): ", answer_words(&question.options));
        }
        std::io::stderr().flush()?;
        let typed = tokio::select! {
            typed = keyboard.answer() => typed,
            pressed = interrupts.recv() => {
                pressed?;
                eprintln!();
                return Ok(Reply::Interrupted);
            }
        };
        let Typed::Line(line) = typed else {
            eprintln!();
            return Ok(Reply::Refused {
                option_id: refusal(&question.options),
                notice: "hearth: the input ended; the request was refused".to_owned(),
            });
        };
        match choice(&question.options, &line) {
            Some(option) => return Ok(Reply::Chosen(option)),
            None => eprintln!(
                "  `{}` is not one of the choices",
                escape_controls_inline(line.trim())
            ),
        }
    }
}

/// `hearth permissions` subcommands.
#[derive(Debug, Subcommand)]
pub enum PermissionsCommand {
    /// The agents' permission requests waiting for an answer (in `hearth serve`), or
    /// with --granted the standing answers given for the rest of a chat.
    List {
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
        /// The standing answers ("allow for this chat") instead, each exactly the call
        /// it was given for; revoke one with `hearth permissions revoke <id>`.
        #[arg(long)]
        granted: bool,
    },
    /// Revoke a standing answer: the next such call asks again.
    Revoke {
        /// The grant's id (a unique prefix is enough).
        grant: String,
    },
    /// Allow a waiting request (once, or with --always: this exact call for the rest of
    /// its chat).
    Allow {
        /// The request id (a unique prefix is enough).
        request: String,
        /// Allow this exact call (its kind and files, or its command) for the rest of
        /// the chat.
        #[arg(long)]
        always: bool,
    },
    /// Refuse a waiting request (once, or with --always: this exact call for the rest of
    /// its chat).
    Reject {
        /// The request id (a unique prefix is enough).
        request: String,
        /// Refuse this exact call for the rest of the chat.
        #[arg(long)]
        always: bool,
    },
}

/// Runs `hearth permissions …` against the running server.
pub async fn permissions(app: &App, command: PermissionsCommand) -> anyhow::Result<ExitCode> {
    let Some(remote) = crate::remote::connect(app).await? else {
        bail!(
            "no Hearth server is running for {}: permission requests wait in the process that runs the turn — answer them in the terminal running `hearth run` or `hearth chat`, or run agents through `hearth serve` and answer here",
            app.paths.home.display()
        );
    };
    let mut out = String::new();
    match command {
        PermissionsCommand::List {
            json,
            granted: true,
        } => list_grants(&remote, json, &mut out).await?,
        PermissionsCommand::Revoke { grant } => revoke(&remote, &grant, &mut out).await?,
        command => answer_or_list(&remote, command, &mut out).await?,
    }
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(out.as_bytes())?;
    stdout.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// The standing answers the server's harnesses hold.
async fn list_grants(
    remote: &crate::remote::Remote,
    json: bool,
    out: &mut String,
) -> anyhow::Result<()> {
    let grants = crate::remote::permission_grants(remote).await?;
    if json {
        for grant in &grants {
            out.push_str(&crate::shown::json(grant)?);
            out.push('\n');
        }
    } else if grants.is_empty() {
        out.push_str("no standing answers: every call asks (or goes by the configured policy)\n");
    } else {
        for grant in &grants {
            out.push_str(&format!(
                "{}  {} for the rest of chat {}: {}\n",
                grant.id,
                if grant.allowed { "allowed" } else { "refused" },
                grant.chat,
                crate::shown::message(&grant.scope)
            ));
        }
        out.push_str("revoke one with `hearth permissions revoke <id>`\n");
    }
    Ok(())
}

/// Revokes one standing answer, named by a prefix of its id.
async fn revoke(
    remote: &crate::remote::Remote,
    grant: &str,
    out: &mut String,
) -> anyhow::Result<()> {
    let grants = crate::remote::permission_grants(remote).await?;
    let matching: Vec<_> = grants
        .iter()
        .filter(|held| held.id.starts_with(grant))
        .collect();
    let held = match matching.as_slice() {
        [held] => *held,
        [] => bail!("no standing answer `{grant}` (see `hearth permissions list --granted`)"),
        _ => bail!("`{grant}` names several standing answers; give more of the id"),
    };
    if crate::remote::revoke_permission_grant(remote, &held.id).await? {
        out.push_str(&format!(
            "revoked {}: {} asks again\n",
            held.id,
            crate::shown::message(&held.scope)
        ));
        Ok(())
    } else {
        bail!("the standing answer `{}` is gone already", held.id)
    }
}

/// Lists the waiting requests, or answers one.
async fn answer_or_list(
    remote: &crate::remote::Remote,
    command: PermissionsCommand,
    out: &mut String,
) -> anyhow::Result<()> {
    let questions = crate::remote::pending_permissions(remote).await?;
    match command {
        PermissionsCommand::List { json, .. } => {
            if json {
                for question in &questions {
                    out.push_str(&crate::shown::json(&serde_json::json!({
                        "chat": question.chat,
                        "requestId": question.request_id,
                        "agent": question.agent,
                        "title": question.title,
                        "options": question.options,
                        "toolCall": question.call,
                    }))?);
                    out.push('\n');
                }
            } else if questions.is_empty() {
                out.push_str("no permission requests are waiting\n");
            } else {
                for question in &questions {
                    out.push_str(&format!(
                        "{}  (chat {})\n",
                        question.request_id, question.chat
                    ));
                    out.push_str(&describe(question));
                    out.push('\n');
                }
                out.push_str("answer with `hearth permissions allow <id>` or `hearth permissions reject <id>` (--always for the rest of the chat)\n");
            }
        }
        PermissionsCommand::Allow { request, always } => {
            answer(remote, &questions, &request, true, always, out).await?;
        }
        PermissionsCommand::Reject { request, always } => {
            answer(remote, &questions, &request, false, always, out).await?;
        }
        PermissionsCommand::Revoke { .. } => {}
    }
    Ok(())
}

/// Allows or refuses one waiting request, named by a prefix of its id.
async fn answer(
    remote: &crate::remote::Remote,
    questions: &[Question],
    request: &str,
    allow: bool,
    always: bool,
    out: &mut String,
) -> anyhow::Result<()> {
    {
        {
            let matching: Vec<&Question> = questions
                .iter()
                .filter(|question| question.request_id.starts_with(request))
                .collect();
            let question = match matching.as_slice() {
                [question] => *question,
                [] => bail!(
                    "no waiting permission request `{request}` (see `hearth permissions list`)"
                ),
                _ => bail!("`{request}` names several requests; give more of the id"),
            };
            let answer = match (allow, always) {
                (true, false) => "yes",
                (true, true) => "always",
                (false, false) => "no",
                (false, true) => "never",
            };
            let option = choice(&question.options, answer).with_context(|| {
                format!(
                    "the agent offers no option to {answer} this request; its options: {}",
                    question
                        .options
                        .iter()
                        .map(|option| format!(
                            "{} ({})",
                            option_effect(option.kind),
                            agent_label(option)
                        ))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })?;
            crate::remote::respond_permission(
                remote,
                &question.chat,
                &question.request_id,
                &option,
            )
            .await?;
            out.push_str(&format!(
                "{} {}: {}\n",
                if allow { "allowed" } else { "refused" },
                question.request_id,
                escape_controls_inline(&question.title)
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_words_are_only_those_the_agent_offers() {
        let option = |id: &str, kind| PermissionOption {
            id: id.into(),
            label: id.into(),
            kind: Some(kind),
        };
        let once = [
            option("allow", PermissionOptionKind::AllowOnce),
            option("reject", PermissionOptionKind::RejectOnce),
        ];
        assert_eq!(answer_words(&once), "number, y, n");
        assert_eq!(choice(&once, "always"), None);
        let all = [
            option("allow", PermissionOptionKind::AllowOnce),
            option("always", PermissionOptionKind::AllowAlways),
            option("reject", PermissionOptionKind::RejectOnce),
            option("never", PermissionOptionKind::RejectAlways),
        ];
        assert_eq!(answer_words(&all), "number, y, n, always, never");
    }
    use hearth_core::ToolCallPart;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_terminal_sees_the_diff_coloured_and_nothing_else() {
        let text = "? tester asks: Write\n  changes a.txt\n  - old\n  + new\n  [1] allow once\n";
        assert_eq!(
            crate::style::visible_escapes(&coloured_diff(text)),
            "? tester asks: Write\n  changes a.txt\n⟨31⟩  - old⟨0⟩\n⟨32⟩  + new⟨0⟩\n  [1] allow once\n"
        );
    }

    fn options() -> Vec<PermissionOption> {
        [
            ("approved", "Yes", PermissionOptionKind::AllowOnce),
            ("abort", "No", PermissionOptionKind::RejectOnce),
            ("always", "Always", PermissionOptionKind::AllowAlways),
        ]
        .into_iter()
        .map(|(id, label, kind)| PermissionOption {
            id: id.into(),
            label: label.into(),
            kind: Some(kind),
        })
        .collect()
    }

    #[test]
    fn answers_name_options_by_number_word_or_id() {
        let options = options();
        assert_eq!(choice(&options, "2"), Some("abort".into()));
        assert_eq!(choice(&options, " y "), Some("approved".into()));
        assert_eq!(choice(&options, "always"), Some("always".into()));
        assert_eq!(choice(&options, "no"), Some("abort".into()));
        assert_eq!(choice(&options, "never"), None);
        assert_eq!(choice(&options, "9"), None);
        assert_eq!(choice(&options, "approved"), Some("approved".into()));
    }

    #[test]
    fn a_question_shows_the_files_and_the_changed_lines() {
        let mut call = ToolCallPart::new(
            "c1",
            "edit",
            serde_json::Value::Null,
            hearth_core::ToolCallStatus::Pending,
        );
        call.kind = Some(ToolKind::Edit);
        call.locations = vec![hearth_core::ToolLocation {
            path: "/work/a.txt".into(),
            line: None,
        }];
        call.content = vec![ToolCallContent::Diff {
            path: "/work/a.txt".into(),
            old_text: Some("one\ntwo\nthree\n".into()),
            new_text: "one\n2\nthree\n".into(),
        }];
        let text = describe(&Question {
            agent: "codex".into(),
            chat: "hearth-chat:codex/s/default".into(),
            request_id: "r1".into(),
            title: "Edit a.txt".into(),
            options: options(),
            call: Some(call),
        });
        assert_eq!(
            text,
            "? codex asks: Edit a.txt
  kind: edit
  files: /work/a.txt
  changes /work/a.txt
  - two
  + 2
  [1] allow once            agent's label: \"Yes\"
  [2] refuse once           agent's label: \"No\"
  [3] allow for this chat   agent's label: \"Always\"
"
        );
    }

    /// An agent's escape sequences in a request: the title, a file, the diff and the
    /// labels are shown escaped, and each choice leads with what it does. The label
    /// `Refuse\e[8m` on an "allow always" option would hide what follows it on a
    /// terminal; here it is a quoted label after "allow always".
    #[test]
    fn a_hostile_request_cannot_hide_or_reword_a_choice() {
        let mut call = ToolCallPart::new(
            "c1",
            "edit",
            serde_json::Value::Null,
            hearth_core::ToolCallStatus::Pending,
        );
        call.kind = Some(ToolKind::Edit);
        call.locations = vec![hearth_core::ToolLocation {
            path: "/work/\u{202e}txt.exe".into(),
            line: None,
        }];
        call.content = vec![ToolCallContent::Diff {
            path: "/work/a.txt".into(),
            old_text: None,
            new_text: "\x1b]52;c;ZWNobyBvd25lZA==\x07\n".into(),
        }];
        let options = [
            (
                "allow-always",
                "Refuse\x1b[8m (allow always)",
                Some(PermissionOptionKind::AllowAlways),
            ),
            (
                "reject-once",
                "No\n  [3] allow once            agent's label: \"x\"",
                Some(PermissionOptionKind::RejectOnce),
            ),
            ("custom", "\x1b[2JMaybe", None),
        ]
        .into_iter()
        .map(|(id, label, kind)| PermissionOption {
            id: id.into(),
            label: label.into(),
            kind,
        })
        .collect();
        let text = describe(&Question {
            agent: "tester".into(),
            chat: "hearth-chat:tester/s/default".into(),
            request_id: "r1".into(),
            title: "Write\x1b]0;owned\x07 a.txt".into(),
            options,
            call: Some(call),
        });
        assert_eq!(
            text,
            r#"? tester asks: Write\x1b]0;owned\x07 a.txt
  kind: edit
  files: /work/\u{202e}txt.exe
  new file /work/a.txt
  + \x1b]52;c;ZWNobyBvd25lZA==\x07
  [1] allow for this chat   agent's label: "Refuse\x1b[8m (allow always)"
  [2] refuse once           agent's label: "No\n  [3] allow once            agent's label: "x""
  [3] agent's choice (what it does is not stated)  agent's label: "\x1b[2JMaybe"
"#
        );
        assert!(!text.contains(['\x1b', '\x07', '\u{202e}']), "{text}");
    }
}
