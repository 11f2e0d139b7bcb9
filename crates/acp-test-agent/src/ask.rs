//! `/ask KIND`: the agent asks the user a question (`elicitation/create`, form mode,
//! scoped to the session) and says what came back.
//!
//! | KIND | the form |
//! |---|---|
//! | `choice` | `color`, one of `red`, `green`, `blue` (required) |
//! | `confirm` | no fields: accept or decline |
//! | `text` | `name`, free text (required) |

use std::collections::BTreeMap;

use agent_client_protocol::Error;
use agent_client_protocol::v1::schema::{
    CreateElicitationRequest, ElicitationAction, ElicitationContentValue, ElicitationFormMode,
    ElicitationSchema, ElicitationSessionScope, StopReason, StringPropertySchema,
};

use crate::agent::ClientMethod;
use crate::client_calls::describe;
use crate::turn::Turn;

/// The form `/ask` shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AskKind {
    /// One of three colours.
    Choice,
    /// Yes or no.
    Confirm,
    /// A free-text name.
    Text,
}

impl AskKind {
    /// The kind a word names.
    pub(crate) fn parse(word: &str) -> Option<Self> {
        match word {
            "choice" => Some(Self::Choice),
            "confirm" => Some(Self::Confirm),
            "text" => Some(Self::Text),
            _ => None,
        }
    }

    fn question(self) -> (&'static str, ElicitationSchema) {
        match self {
            Self::Choice => (
                "Which colour?",
                ElicitationSchema::new().property(
                    "color",
                    StringPropertySchema::new().enum_values(vec![
                        "red".to_owned(),
                        "green".to_owned(),
                        "blue".to_owned(),
                    ]),
                    true,
                ),
            ),
            Self::Confirm => ("Go ahead?", ElicitationSchema::new()),
            Self::Text => ("Your name?", ElicitationSchema::new().string("name", true)),
        }
    }
}

/// What an answer's fields say, as `key=value` words in key order.
fn fields(content: &BTreeMap<String, ElicitationContentValue>) -> String {
    content
        .iter()
        .map(|(key, value)| {
            let value = match value {
                ElicitationContentValue::String(text) => text.clone(),
                other => serde_json::to_string(other).unwrap_or_default(),
            };
            format!(" {key}={value}")
        })
        .collect()
}

/// `/ask KIND`: `answer: accept[ key=value…]`, `answer: decline`, `answer: cancel`, or
/// `ask failed: <why>`.
pub(crate) async fn ask(turn: &mut Turn, kind: AskKind) -> Result<StopReason, Error> {
    if !turn.agent.client_can(ClientMethod::Elicitation) {
        turn.say(format!(
            "ask failed: the client did not declare {} in initialize",
            ClientMethod::Elicitation.capability_name()
        ))?;
        return Ok(StopReason::EndTurn);
    }
    let (message, schema) = kind.question();
    let request = CreateElicitationRequest::new(
        ElicitationFormMode::new(ElicitationSessionScope::new(turn.session_id()), schema),
        message,
    );
    let reply = match turn.request(request).await {
        Ok(response) => match response.action {
            ElicitationAction::Accept(accepted) => format!(
                "answer: accept{}",
                accepted.content.as_ref().map(fields).unwrap_or_default()
            ),
            ElicitationAction::Decline => "answer: decline".to_owned(),
            ElicitationAction::Cancel => "answer: cancel".to_owned(),
            other => format!("answer: {other:?}"),
        },
        Err(error) => format!("ask failed: {}", describe(&error)),
    };
    turn.say(reply)?;
    Ok(StopReason::EndTurn)
}
