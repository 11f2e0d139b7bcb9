//! What one line typed at the chat's prompt asks for: a prompt, or one of Hearth's own
//! commands.

/// Hearth's own commands, as completed at the prompt.
pub(super) const COMMANDS: &[&str] = &[
    "/approve",
    "/compact",
    "/fork",
    "/help",
    "/model",
    "/mode",
    "/new",
    "/open",
    "/project",
    "/proposals",
    "/quit",
    "/reject",
    "/resume",
];

/// What one line of input asks for.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Input<'a> {
    Prompt(&'a str),
    /// `/compact`: summarise the chat's earlier turns now (an agent that offers its own
    /// `/compact` gets it as typed).
    Compact,
    /// `/fork [TURN]`: branch at the last turn, or at the one named (index or id start).
    Fork(Option<&'a str>),
    Model(Option<&'a str>),
    /// `/mode [ID]`: list the agent's modes, or switch to one.
    Mode(Option<&'a str>),
    New,
    /// `/open ID`: another session (its URI, id or the start of its id), switching to
    /// its scope.
    Open(&'a str),
    /// `/project NAME|global`: enter a project (a new session in it), or say which.
    Project(Option<&'a str>),
    /// `/resume`: pick one of the newest sessions and open it.
    Resume,
    /// `/proposals`: the session's pending changes.
    Proposals,
    /// `/approve [ID]`: approve and apply a pending change.
    Approve(Option<&'a str>),
    /// `/reject [ID] [REASON]`: reject a pending change.
    Reject(Option<&'a str>, Option<&'a str>),
    Help,
    Quit,
    Unknown(&'a str),
    Nothing,
}

pub(super) fn parse(line: &str) -> Input<'_> {
    let line = line.trim();
    if line.is_empty() {
        return Input::Nothing;
    }
    let Some(command) = line.strip_prefix('/') else {
        return Input::Prompt(line);
    };
    // `//text` sends `/text`.
    if command.starts_with('/') {
        return Input::Prompt(&line[1..]);
    }
    let (name, rest) = command
        .split_once(char::is_whitespace)
        .map_or((command, ""), |(name, rest)| (name, rest.trim()));
    match name {
        "compact" => Input::Compact,
        "fork" => Input::Fork(Some(rest).filter(|rest| !rest.is_empty())),
        "model" => Input::Model(Some(rest).filter(|rest| !rest.is_empty())),
        "mode" => Input::Mode(Some(rest).filter(|rest| !rest.is_empty())),
        "new" => Input::New,
        "open" if !rest.is_empty() => Input::Open(rest),
        "project" => Input::Project(Some(rest).filter(|rest| !rest.is_empty())),
        "proposals" => Input::Proposals,
        "resume" => Input::Resume,
        "approve" => Input::Approve(Some(rest).filter(|rest| !rest.is_empty())),
        "reject" => {
            let (id, reason) = rest
                .split_once(char::is_whitespace)
                .map_or((rest, ""), |(id, reason)| (id, reason.trim()));
            Input::Reject(
                Some(id).filter(|id| !id.is_empty()),
                Some(reason).filter(|reason| !reason.is_empty()),
            )
        }
        "help" | "?" => Input::Help,
        "quit" | "exit" | "q" => Input::Quit,
        _ => Input::Unknown(name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_prompts_or_commands() {
        assert_eq!(parse("  hello "), Input::Prompt("hello"));
        assert_eq!(parse(""), Input::Nothing);
        assert_eq!(parse("/fork"), Input::Fork(None));
        assert_eq!(parse("/fork -1"), Input::Fork(Some("-1")));
        assert_eq!(parse("/model  gpt-x "), Input::Model(Some("gpt-x")));
        assert_eq!(parse("/model"), Input::Model(None));
        assert_eq!(parse("/mode code"), Input::Mode(Some("code")));
        assert_eq!(parse("/mode"), Input::Mode(None));
        assert_eq!(parse("/new"), Input::New);
        assert_eq!(parse("/quit"), Input::Quit);
        assert_eq!(parse("/frob x"), Input::Unknown("frob"));
        assert_eq!(parse("//etc/hosts?"), Input::Prompt("/etc/hosts?"));
    }
}
