//! What a chat's agent offers, as `hearth chat` shows it: its modes (`/mode`), its own
//! slash commands (a section of `/help`), and the usage a turn reported (a dim line after
//! the answer: tokens, the context window, the cost).

use hearth_core::{AgentChatState, ChoiceState, Usage, escape_controls_inline};

/// The lines `/mode` prints: the modes, the current one marked with `*`.
pub(crate) fn mode_lines(modes: &ChoiceState) -> Vec<String> {
    modes
        .choices
        .iter()
        .map(|choice| {
            let mark = if choice.id == modes.current { "*" } else { " " };
            let mut line = format!("  {mark} {}", escape_controls_inline(&choice.id));
            if !choice.name.is_empty() && choice.name != choice.id {
                line.push_str(&format!(" — {}", escape_controls_inline(&choice.name)));
            }
            if let Some(description) = choice.description.as_deref().filter(|d| !d.is_empty()) {
                line.push_str(&format!(": {}", escape_controls_inline(description)));
            }
            line
        })
        .collect()
}

/// The `/help` section of the agent's own commands (`<agent> commands:` and one line
/// each), or nothing when it offers none.
pub(crate) fn command_lines(agent: &str, state: Option<&AgentChatState>) -> Vec<String> {
    let Some(state) = state.filter(|state| !state.commands.is_empty()) else {
        return Vec::new();
    };
    let mut lines = vec![format!(
        "{} commands (sent to the agent):",
        escape_controls_inline(agent)
    )];
    for command in &state.commands {
        let mut line = format!("  /{}", escape_controls_inline(&command.name));
        if let Some(hint) = command
            .input_hint
            .as_deref()
            .filter(|hint| !hint.is_empty())
        {
            line.push_str(&format!(" {}", escape_controls_inline(hint)));
        }
        if !command.description.is_empty() {
            line.push_str(&format!(
                " — {}",
                escape_controls_inline(&command.description)
            ));
        }
        lines.push(line);
    }
    lines
}

/// The usage line after an answer: `model m · tokens 100 in / 20 out · context
/// 1234/200000 · cost 0.01 USD`, each part only when reported; `None` when no usage was.
pub(crate) fn usage_line(usage: &Usage, model: Option<&str>) -> Option<String> {
    let mut parts = Vec::new();
    if usage.input_tokens > 0 || usage.output_tokens > 0 {
        let mut tokens = format!(
            "tokens {} in / {} out",
            usage.input_tokens, usage.output_tokens
        );
        if usage.cached_input_tokens > 0 {
            tokens.push_str(&format!(" ({} cached)", usage.cached_input_tokens));
        }
        parts.push(tokens);
    }
    match (usage.context_used, usage.context_size) {
        (Some(used), Some(size)) => parts.push(format!("context {used}/{size}")),
        (Some(used), None) => parts.push(format!("context {used}")),
        _ => {}
    }
    if let Some(cost) = &usage.cost {
        parts.push(format!(
            "cost {} {}",
            cost_amount(cost.amount),
            escape_controls_inline(&cost.currency)
        ));
    }
    if parts.is_empty() {
        return None;
    }
    if let Some(model) = model.filter(|model| !model.is_empty()) {
        parts.insert(0, format!("model {}", escape_controls_inline(model)));
    }
    Some(parts.join(" · "))
}

/// An amount with as many decimals as it needs, at least two (`0.01`, `1.50`, `0.0042`).
fn cost_amount(amount: f64) -> String {
    let text = format!("{amount:.6}");
    let trimmed = text.trim_end_matches('0');
    let decimals = trimmed.split_once('.').map_or(0, |(_, after)| after.len());
    if decimals < 2 {
        format!("{amount:.2}")
    } else {
        trimmed.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth_core::{AvailableCommand, Choice, Cost};
    use pretty_assertions::assert_eq;

    #[test]
    fn usage_lines_show_what_was_reported() {
        let usage = Usage {
            input_tokens: 100,
            output_tokens: 20,
            cached_input_tokens: 60,
            context_used: Some(1234),
            context_size: Some(200_000),
            cost: Cost::new(0.01, "USD"),
            ..Usage::default()
        };
        assert_eq!(
            usage_line(&usage, None).as_deref(),
            Some("tokens 100 in / 20 out (60 cached) · context 1234/200000 · cost 0.01 USD")
        );
        assert_eq!(
            usage_line(&usage, Some("gpt\x1b[2J")).as_deref(),
            Some(
                "model gpt\\x1b[2J · tokens 100 in / 20 out (60 cached) · context 1234/200000 · cost 0.01 USD"
            )
        );
        let window = Usage {
            context_used: Some(5),
            context_size: Some(10),
            ..Usage::default()
        };
        assert_eq!(usage_line(&window, None).as_deref(), Some("context 5/10"));
        assert_eq!(usage_line(&Usage::default(), Some("m")), None);
        assert_eq!(cost_amount(0.0042), "0.0042");
        assert_eq!(cost_amount(1.5), "1.50");
    }

    #[test]
    fn modes_mark_the_current_one_and_commands_list_their_hints() {
        let modes = ChoiceState {
            current: "code".into(),
            choices: vec![
                Choice {
                    id: "ask".into(),
                    name: "Ask".into(),
                    description: None,
                },
                Choice {
                    id: "code".into(),
                    name: "code".into(),
                    description: Some("edits freely".into()),
                },
            ],
        };
        assert_eq!(
            mode_lines(&modes),
            vec!["    ask — Ask", "  * code: edits freely"]
        );
        let state = AgentChatState {
            commands: vec![AvailableCommand {
                name: "slow".into(),
                description: "ticks".into(),
                input_hint: Some("N".into()),
            }],
            ..AgentChatState::default()
        };
        assert_eq!(
            command_lines("tester", Some(&state)),
            vec!["tester commands (sent to the agent):", "  /slow N — ticks"]
        );
        assert!(command_lines("tester", None).is_empty());
    }
}
