//! Translations between the Agent Client Protocol's types and Hearth's: tool calls and
//! their updates, plans, stop reasons, permission options, commands, modes and models,
//! and the user's message as prompt content.

use agent_client_protocol::v1::schema as acp;
use hearth_core::{
    AvailableCommand, Choice, ChoiceState, PermissionOption, PermissionOptionKind, PlanEntry,
    PlanStatus, StopReason, ToolCallContent, ToolCallPart, ToolCallPatch, ToolCallStatus, ToolKind,
    ToolLocation, ToolResult, Usage,
};
use serde_json::Value;

/// A tool kind in Hearth's terms.
pub(crate) fn tool_kind(kind: &acp::ToolKind) -> ToolKind {
    match kind {
        acp::ToolKind::Read => ToolKind::Read,
        acp::ToolKind::Edit => ToolKind::Edit,
        acp::ToolKind::Delete => ToolKind::Delete,
        acp::ToolKind::Move => ToolKind::Move,
        acp::ToolKind::Search => ToolKind::Search,
        acp::ToolKind::Execute => ToolKind::Execute,
        acp::ToolKind::Think => ToolKind::Think,
        acp::ToolKind::Fetch => ToolKind::Fetch,
        acp::ToolKind::SwitchMode => ToolKind::SwitchMode,
        _ => ToolKind::Other,
    }
}

/// A tool call status in Hearth's terms.
pub(crate) fn tool_status(status: &acp::ToolCallStatus) -> ToolCallStatus {
    match status {
        acp::ToolCallStatus::Pending => ToolCallStatus::Pending,
        acp::ToolCallStatus::InProgress => ToolCallStatus::Running,
        acp::ToolCallStatus::Completed => ToolCallStatus::Completed,
        acp::ToolCallStatus::Failed => ToolCallStatus::Failed,
        _ => ToolCallStatus::Running,
    }
}

/// A content block as text: text as it is, anything else as a short mention.
pub(crate) fn block_text(block: &acp::ContentBlock) -> String {
    match block {
        acp::ContentBlock::Text(text) => text.text.clone(),
        acp::ContentBlock::Image(image) => format!("[image {}]", image.mime_type),
        acp::ContentBlock::Audio(audio) => format!("[audio {}]", audio.mime_type),
        acp::ContentBlock::ResourceLink(link) => format!("[{}]({})", link.name, link.uri),
        acp::ContentBlock::Resource(resource) => match &resource.resource {
            acp::EmbeddedResourceResource::TextResourceContents(contents) => {
                format!("[{}]\n{}", contents.uri, contents.text)
            }
            acp::EmbeddedResourceResource::BlobResourceContents(contents) => {
                format!("[{} (binary)]", contents.uri)
            }
            _ => "[resource]".to_owned(),
        },
        _ => "[content]".to_owned(),
    }
}

fn content(content: &[acp::ToolCallContent]) -> Vec<ToolCallContent> {
    content
        .iter()
        .filter_map(|item| match item {
            acp::ToolCallContent::Content(inner) => Some(ToolCallContent::Text {
                text: block_text(&inner.content),
            }),
            acp::ToolCallContent::Diff(diff) => Some(ToolCallContent::Diff {
                path: diff.path.display().to_string(),
                old_text: diff.old_text.clone(),
                new_text: diff.new_text.clone(),
            }),
            acp::ToolCallContent::Terminal(terminal) => Some(ToolCallContent::Terminal {
                terminal_id: terminal.terminal_id.to_string(),
            }),
            _ => None,
        })
        .collect()
}

fn locations(locations: &[acp::ToolCallLocation]) -> Vec<ToolLocation> {
    locations
        .iter()
        .map(|location| ToolLocation {
            path: location.path.display().to_string(),
            line: location.line,
        })
        .collect()
}

/// The name a tool call is listed under: the agent's tool name, else its kind.
fn call_name(name: Option<&str>, kind: ToolKind) -> String {
    name.map_or_else(|| kind.as_str().to_owned(), str::to_owned)
}

/// A new tool call in Hearth's terms.
pub(crate) fn tool_call(call: &acp::ToolCall) -> ToolCallPart {
    let kind = tool_kind(&call.kind);
    let mut part = ToolCallPart::new(
        call.tool_call_id.to_string(),
        call_name(call.name.as_deref(), kind),
        call.raw_input.clone().unwrap_or(Value::Null),
        tool_status(&call.status),
    );
    part.title = Some(call.title.clone());
    part.kind = Some(kind);
    part.locations = locations(&call.locations);
    part.content = content(&call.content);
    part
}

/// A tool call announced only by an update (or a permission request): what is known.
pub(crate) fn tool_call_from_update(update: &acp::ToolCallUpdate) -> ToolCallPart {
    let fields = &update.fields;
    let kind = fields.kind.as_ref().map_or(ToolKind::Other, tool_kind);
    let mut part = ToolCallPart::new(
        update.tool_call_id.to_string(),
        call_name(fields.name.as_deref(), kind),
        fields.raw_input.clone().unwrap_or(Value::Null),
        fields
            .status
            .as_ref()
            .map_or(ToolCallStatus::Pending, tool_status),
    );
    part.title.clone_from(&fields.title);
    part.kind = Some(kind);
    part.locations = fields
        .locations
        .as_deref()
        .map(locations)
        .unwrap_or_default();
    part.content = fields.content.as_deref().map(content).unwrap_or_default();
    part
}

/// What an update changes: the new status (the current one when it says none), the
/// result once finished, and the changed details.
pub(crate) fn tool_call_update(
    update: &acp::ToolCallUpdate,
    current: ToolCallStatus,
) -> (ToolCallStatus, Option<ToolResult>, ToolCallPatch) {
    let fields = &update.fields;
    let status = fields.status.as_ref().map_or(current, tool_status);
    let patch = ToolCallPatch {
        title: fields.title.clone(),
        kind: fields.kind.as_ref().map(tool_kind),
        locations: fields.locations.as_deref().map(locations),
        content: fields.content.as_deref().map(content),
        arguments: fields.raw_input.clone(),
    };
    let result = matches!(status, ToolCallStatus::Completed | ToolCallStatus::Failed).then(|| {
        let text = fields
            .content
            .as_deref()
            .map(content)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|item| match item {
                ToolCallContent::Text { text } => Some(text),
                ToolCallContent::Diff { path, .. } => Some(format!("changed {path}")),
                ToolCallContent::Terminal { .. } => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        let text = if text.is_empty() {
            fields
                .raw_output
                .as_ref()
                .map(|output| match output {
                    Value::String(text) => text.clone(),
                    other => other.to_string(),
                })
                .unwrap_or_default()
        } else {
            text
        };
        ToolResult {
            content: text,
            is_error: status == ToolCallStatus::Failed,
        }
    });
    (status, result, patch)
}

/// A plan in Hearth's terms.
pub(crate) fn plan(plan: &acp::Plan) -> Vec<PlanEntry> {
    plan.entries
        .iter()
        .map(|entry| PlanEntry {
            content: entry.content.clone(),
            status: match entry.status {
                acp::PlanEntryStatus::Pending => PlanStatus::Pending,
                acp::PlanEntryStatus::InProgress => PlanStatus::InProgress,
                _ => PlanStatus::Completed,
            },
        })
        .collect()
}

/// A stop reason in Hearth's terms.
pub(crate) fn stop_reason(reason: &acp::StopReason) -> StopReason {
    match reason {
        acp::StopReason::EndTurn => StopReason::EndTurn,
        acp::StopReason::MaxTokens => StopReason::MaxTokens,
        acp::StopReason::MaxTurnRequests => StopReason::StepLimit,
        acp::StopReason::Refusal => StopReason::Refusal,
        acp::StopReason::Cancelled => StopReason::Aborted,
        other => StopReason::Other(
            serde_json::to_value(other)
                .ok()
                .and_then(|value| value.as_str().map(str::to_owned))
                .unwrap_or_else(|| "unknown".to_owned()),
        ),
    }
}

/// A permission option kind in Hearth's terms.
pub(crate) fn option_kind(kind: &acp::PermissionOptionKind) -> Option<PermissionOptionKind> {
    match kind {
        acp::PermissionOptionKind::AllowOnce => Some(PermissionOptionKind::AllowOnce),
        acp::PermissionOptionKind::AllowAlways => Some(PermissionOptionKind::AllowAlways),
        acp::PermissionOptionKind::RejectOnce => Some(PermissionOptionKind::RejectOnce),
        acp::PermissionOptionKind::RejectAlways => Some(PermissionOptionKind::RejectAlways),
        _ => None,
    }
}

/// Permission options in Hearth's terms.
pub(crate) fn options(options: &[acp::PermissionOption]) -> Vec<PermissionOption> {
    options
        .iter()
        .map(|option| PermissionOption {
            id: option.option_id.to_string(),
            label: option.name.clone(),
            kind: option_kind(&option.kind),
        })
        .collect()
}

/// The first option of the wanted kinds, in the order given.
pub(crate) fn pick(options: &[PermissionOption], kinds: &[PermissionOptionKind]) -> Option<String> {
    kinds.iter().find_map(|kind| {
        options
            .iter()
            .find(|option| option.kind == Some(*kind))
            .map(|option| option.id.clone())
    })
}

/// Commands in Hearth's terms.
pub(crate) fn commands(commands: &[acp::AvailableCommand]) -> Vec<AvailableCommand> {
    commands
        .iter()
        .map(|command| AvailableCommand {
            name: command.name.clone(),
            description: command.description.clone(),
            input_hint: command.input.as_ref().and_then(|input| match input {
                acp::AvailableCommandInput::Unstructured(input) => Some(input.hint.clone()),
                _ => None,
            }),
        })
        .collect()
}

/// The token counts of a prompt's answer in Hearth's terms.
pub(crate) fn tokens(usage: &acp::Usage) -> Usage {
    Usage {
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
        cached_input_tokens: usage.cached_read_tokens.unwrap_or_default(),
        reasoning_tokens: usage.thought_tokens.unwrap_or_default(),
        ..Usage::default()
    }
}

/// A `usage_update` in Hearth's terms: the context window (tokens in it, its size) and
/// what the session has cost so far. It holds no token counts of the turn.
pub(crate) fn window(update: &acp::UsageUpdate) -> Usage {
    Usage {
        context_used: Some(update.used),
        context_size: Some(update.size),
        cost: update
            .cost
            .as_ref()
            .and_then(|cost| hearth_core::Cost::new(cost.amount, cost.currency.clone())),
        ..Usage::default()
    }
}

/// Session modes in Hearth's terms.
pub(crate) fn modes(state: &acp::SessionModeState) -> ChoiceState {
    ChoiceState {
        current: state.current_mode_id.to_string(),
        choices: state
            .available_modes
            .iter()
            .map(|mode| Choice {
                id: mode.id.to_string(),
                name: mode.name.clone(),
                description: mode.description.clone(),
            })
            .collect(),
    }
}

/// Which setting a configuration option is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Setting {
    /// The model.
    Model,
    /// The mode.
    Mode,
}

/// The select option of a setting, with its id: `(config id, state)`.
pub(crate) fn config_choice(
    options: &[acp::SessionConfigOption],
    setting: Setting,
) -> Option<(String, ChoiceState)> {
    options.iter().find_map(|option| {
        let matches = match (&option.category, setting) {
            (Some(acp::SessionConfigOptionCategory::Model), Setting::Model)
            | (Some(acp::SessionConfigOptionCategory::Mode), Setting::Mode) => true,
            (None, Setting::Model) => option.id.to_string() == "model",
            (None, Setting::Mode) => option.id.to_string() == "mode",
            _ => false,
        };
        if !matches {
            return None;
        }
        let acp::SessionConfigKind::Select(select) = &option.kind else {
            return None;
        };
        let flat: Vec<&acp::SessionConfigSelectOption> = match &select.options {
            acp::SessionConfigSelectOptions::Ungrouped(options) => options.iter().collect(),
            acp::SessionConfigSelectOptions::Grouped(groups) => groups
                .iter()
                .flat_map(|group| group.options.iter())
                .collect(),
            _ => Vec::new(),
        };
        Some((
            option.id.to_string(),
            ChoiceState {
                current: select.current_value.to_string(),
                choices: flat
                    .into_iter()
                    .map(|choice| Choice {
                        id: choice.value.to_string(),
                        name: choice.name.clone(),
                        description: choice.description.clone(),
                    })
                    .collect(),
            },
        ))
    })
}

/// The older `models` field of a session answer (`{currentModelId, availableModels}`).
pub(crate) fn legacy_models(answer: &Value) -> Option<ChoiceState> {
    let models = answer.get("models")?;
    let current = models.get("currentModelId")?.as_str()?.to_owned();
    let choices = models
        .get("availableModels")?
        .as_array()?
        .iter()
        .filter_map(|model| {
            Some(Choice {
                id: model.get("modelId")?.as_str()?.to_owned(),
                name: model
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                description: model
                    .get("description")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            })
        })
        .collect();
    Some(ChoiceState { current, choices })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn parse<T: serde::de::DeserializeOwned>(value: Value) -> T {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn a_tool_call_keeps_its_title_kind_files_and_diff() {
        let call: acp::ToolCall = parse(json!({
            "toolCallId": "call-1",
            "title": "Write notes.md",
            "kind": "edit",
            "locations": [{"path": "/work/notes.md", "line": 3}],
            "content": [{"type": "diff", "path": "/work/notes.md", "newText": "hi"}],
            "rawInput": {"file_path": "/work/notes.md"}
        }));
        let part = tool_call(&call);
        assert_eq!(part.call_id, "call-1");
        assert_eq!(part.name, "edit");
        assert_eq!(part.status, ToolCallStatus::Pending);
        assert_eq!(part.title.as_deref(), Some("Write notes.md"));
        assert_eq!(part.kind, Some(ToolKind::Edit));
        assert_eq!(
            part.locations,
            vec![ToolLocation {
                path: "/work/notes.md".into(),
                line: Some(3)
            }]
        );
        assert_eq!(
            part.content,
            vec![ToolCallContent::Diff {
                path: "/work/notes.md".into(),
                old_text: None,
                new_text: "hi".into()
            }]
        );
        assert_eq!(part.arguments, json!({"file_path": "/work/notes.md"}));
    }

    #[test]
    fn a_finished_update_carries_its_result_and_an_update_without_status_keeps_it() {
        let update: acp::ToolCallUpdate = parse(json!({
            "toolCallId": "call-1",
            "status": "failed",
            "content": [{"type": "content", "content": {"type": "text", "text": "no such file"}}]
        }));
        let (status, result, patch) = tool_call_update(&update, ToolCallStatus::Running);
        assert_eq!(status, ToolCallStatus::Failed);
        assert_eq!(
            result,
            Some(ToolResult {
                content: "no such file".into(),
                is_error: true
            })
        );
        assert!(patch.content.is_some());
        let update: acp::ToolCallUpdate = parse(json!({"toolCallId": "call-1", "title": "Read"}));
        let (status, result, patch) = tool_call_update(&update, ToolCallStatus::Running);
        assert_eq!(status, ToolCallStatus::Running);
        assert_eq!(result, None);
        assert_eq!(patch.title.as_deref(), Some("Read"));
    }

    #[test]
    fn stop_reasons_map_to_hearths() {
        assert_eq!(
            stop_reason(&acp::StopReason::Cancelled),
            StopReason::Aborted
        );
        assert_eq!(
            stop_reason(&acp::StopReason::MaxTurnRequests),
            StopReason::StepLimit
        );
        assert_eq!(stop_reason(&acp::StopReason::EndTurn), StopReason::EndTurn);
    }

    #[test]
    fn models_come_from_config_options_or_the_older_field() {
        let options: Vec<acp::SessionConfigOption> = parse(json!([
            {"id": "mode", "name": "Mode", "category": "mode", "type": "select",
             "currentValue": "ask", "options": [{"value": "ask", "name": "Ask"}]},
            {"id": "model", "name": "Model", "category": "model", "type": "select",
             "currentValue": "small", "options": [
                {"value": "small", "name": "Small"}, {"value": "large", "name": "Large"}]}
        ]));
        let (id, models) = config_choice(&options, Setting::Model).unwrap();
        assert_eq!(id, "model");
        assert_eq!(models.current, "small");
        assert_eq!(models.choices.len(), 2);
        assert_eq!(
            config_choice(&options, Setting::Mode).unwrap().1.current,
            "ask"
        );
        let legacy = legacy_models(&json!({"models": {"currentModelId": "m1",
            "availableModels": [{"modelId": "m1", "name": "One"}]}}))
        .unwrap();
        assert_eq!(legacy.current, "m1");
        assert_eq!(legacy.choices[0].name, "One");
    }

    #[test]
    fn options_are_picked_by_kind_not_by_position() {
        let listed = options(&parse::<Vec<acp::PermissionOption>>(json!([
            {"optionId": "abort", "name": "No", "kind": "reject_once"},
            {"optionId": "approved", "name": "Yes", "kind": "allow_once"}
        ])));
        assert_eq!(
            pick(&listed, &[PermissionOptionKind::AllowOnce]),
            Some("approved".into())
        );
        assert_eq!(pick(&listed, &[PermissionOptionKind::RejectAlways]), None);
    }
}
