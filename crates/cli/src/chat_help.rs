//! What `hearth chat`'s `/help` says: Hearth's slash commands, one line each, and the
//! keys that matter while an answer streams.

/// Hearth's own commands in a chat, with what each does.
const COMMANDS: &[(&str, &str)] = &[
    ("/help", "this list (and the agent's own commands)"),
    (
        "/fork [TURN]",
        "branch this chat at its last turn, or turn N (-1: the last)",
    ),
    ("/model [NAME]", "show the model, or switch to NAME"),
    (
        "/compact",
        "summarise the earlier turns for the model now (they stay here)",
    ),
    ("/mode [ID]", "list the agent's modes, or switch to one"),
    ("/new", "start a new session in the same scope"),
    (
        "/open ID",
        "open another session (URI, id or its start), in its scope",
    ),
    ("/resume", "pick one of the newest sessions and open it"),
    (
        "/project NAME|global",
        "a new session in a project, or the global scope",
    ),
    ("/proposals", "the changes staged in this session, waiting"),
    (
        "/approve [ID]",
        "approve and apply a staged change (the only one, or ID)",
    ),
    (
        "/reject [ID] [REASON]",
        "reject a staged change; nothing is written",
    ),
    ("/quit", "leave (also /exit, /q, or Ctrl-D)"),
    ("//text", "send text that starts with /"),
];

/// The keys, after the commands.
const KEYS: &[(&str, &str)] = &[
    ("Ctrl-C", "stop the answer (twice, or at the prompt: leave)"),
    ("↑ ↓", "earlier prompts (kept across chats)"),
    (
        "Tab",
        "complete a /command, a session id after /open, or an @path",
    ),
    ("\\ Enter, Alt-Enter", "go on to a new line; Enter sends"),
    ("@path", "attach that file to the prompt"),
];

/// The `/help` lines: a heading, then one aligned line per command and key.
pub(crate) fn lines() -> Vec<String> {
    let width = COMMANDS
        .iter()
        .chain(KEYS)
        .map(|(name, _)| name.chars().count())
        .max()
        .unwrap_or(0);
    let mut lines = vec!["hearth: commands:".to_owned()];
    for (name, what) in COMMANDS.iter().chain(KEYS) {
        lines.push(format!("  {name:<width$}  {what}"));
    }
    lines.push("  An agent's own /commands go to the agent as typed.".to_owned());
    lines
}

/// One line for the chat's start and for an unknown command: where the list is.
pub(crate) const SHORT: &str = "/help lists the commands; /quit or Ctrl-D leaves";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn help_lists_every_command_on_a_line_of_its_own() {
        insta::assert_snapshot!(lines().join("\n"), @r"
        hearth: commands:
          /help                  this list (and the agent's own commands)
          /fork [TURN]           branch this chat at its last turn, or turn N (-1: the last)
          /model [NAME]          show the model, or switch to NAME
          /compact               summarise the earlier turns for the model now (they stay here)
          /mode [ID]             list the agent's modes, or switch to one
          /new                   start a new session in the same scope
          /open ID               open another session (URI, id or its start), in its scope
          /resume                pick one of the newest sessions and open it
          /project NAME|global   a new session in a project, or the global scope
          /proposals             the changes staged in this session, waiting
          /approve [ID]          approve and apply a staged change (the only one, or ID)
          /reject [ID] [REASON]  reject a staged change; nothing is written
          /quit                  leave (also /exit, /q, or Ctrl-D)
          //text                 send text that starts with /
          Ctrl-C                 stop the answer (twice, or at the prompt: leave)
          ↑ ↓                    earlier prompts (kept across chats)
          Tab                    complete a /command, a session id after /open, or an @path
          \ Enter, Alt-Enter     go on to a new line; Enter sends
          @path                  attach that file to the prompt
          An agent's own /commands go to the agent as typed.
        ");
    }
}
