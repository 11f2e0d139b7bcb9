//! Questions the agent asks the user (`elicitation/create`), put to the user the way
//! permission requests are: a question in the chat's running turn, with choices, that
//! the CLI, `hearth permissions` and Agent Home answer.
//!
//! The forms Hearth can put as choices, in this order (anything else is declined, with
//! a notice in the turn saying what was asked):
//! 1. no fields: accept or decline;
//! 2. one single-choice text field (`enum` or `oneOf`): one choice per value, or decline;
//! 3. one yes/no field: yes, no, or decline.
//!
//! URL elicitations are not declared in `initialize`, and forms with free-text or number
//! fields are declined. A question outside a running turn, or scoped to a request rather
//! than a session, is cancelled: nobody is there to answer it. An agent whose policy
//! refuses everything gets `decline` without the user being asked.

use std::collections::BTreeMap;

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema as acp;
use hearth_core::{ChatUri, PermissionOption, PermissionOptionKind, Signal, TurnId};
use hearth_tools::{AuditOutcome, Decision};
use tokio::sync::oneshot;

use crate::handlers::Handlers;
use crate::lines::Admission;
use crate::shared::{Answer, Waiting};
use crate::spec::PermissionMode;

/// The option id that declines.
const DECLINE: &str = "decline";

/// A question as choices: each option's id, and the answer it gives the agent.
struct Choices {
    options: Vec<PermissionOption>,
    answers: BTreeMap<String, acp::ElicitationAction>,
}

impl Choices {
    fn new() -> Self {
        Self {
            options: Vec::new(),
            answers: BTreeMap::new(),
        }
    }

    fn add(&mut self, id: String, label: String, answer: acp::ElicitationAction) {
        self.options.push(PermissionOption {
            id: id.clone(),
            label,
            kind: None,
        });
        self.answers.insert(id, answer);
    }

    /// One field's value as the accepted answer.
    fn accept(field: &str, value: acp::ElicitationContentValue) -> acp::ElicitationAction {
        acp::ElicitationAction::Accept(
            acp::ElicitationAcceptAction::new()
                .content(BTreeMap::from([(field.to_owned(), value)])),
        )
    }

    /// The decline option, last (the refusal a CLI without a terminal chooses).
    fn with_decline(mut self) -> Self {
        self.options.push(PermissionOption {
            id: DECLINE.to_owned(),
            label: "Decline".to_owned(),
            kind: Some(PermissionOptionKind::RejectOnce),
        });
        self.answers
            .insert(DECLINE.to_owned(), acp::ElicitationAction::Decline);
        self
    }
}

/// The form as choices, when it is one Hearth can put (see the module's rules).
fn choices(schema: &acp::ElicitationSchema) -> Option<Choices> {
    let mut choices = Choices::new();
    let mut fields = schema.properties.iter();
    let Some((field, property)) = fields.next() else {
        choices.add(
            "accept".to_owned(),
            "Yes".to_owned(),
            acp::ElicitationAction::Accept(acp::ElicitationAcceptAction::new()),
        );
        return Some(choices.with_decline());
    };
    if fields.next().is_some() {
        return None;
    }
    match property {
        acp::ElicitationPropertySchema::String(text) => {
            let values: Vec<(String, String)> = match (&text.one_of, &text.enum_values) {
                (Some(options), _) => options
                    .iter()
                    .map(|option| (option.value.clone(), option.title.clone()))
                    .collect(),
                (None, Some(values)) => values
                    .iter()
                    .map(|value| (value.clone(), value.clone()))
                    .collect(),
                (None, None) => return None,
            };
            for (index, (value, label)) in values.into_iter().enumerate() {
                choices.add(
                    format!("choice-{}", index + 1),
                    label,
                    Choices::accept(field, value.into()),
                );
            }
        }
        acp::ElicitationPropertySchema::Boolean(_) => {
            choices.add(
                "yes".to_owned(),
                "Yes".to_owned(),
                Choices::accept(field, true.into()),
            );
            choices.add(
                "no".to_owned(),
                "No".to_owned(),
                Choices::accept(field, false.into()),
            );
        }
        _ => return None,
    }
    Some(choices.with_decline())
}

/// The question's title: the agent's message, with the field's title or description
/// when it has one.
fn title(request: &acp::CreateElicitationRequest, schema: &acp::ElicitationSchema) -> String {
    let detail = schema
        .properties
        .values()
        .find_map(|property| match property {
            acp::ElicitationPropertySchema::String(text) => {
                text.title.clone().or_else(|| text.description.clone())
            }
            acp::ElicitationPropertySchema::Boolean(flag) => {
                flag.title.clone().or_else(|| flag.description.clone())
            }
            _ => None,
        });
    match detail {
        Some(detail) if !request.message.contains(&detail) => {
            format!("{} ({detail})", request.message)
        }
        _ => request.message.clone(),
    }
}

fn respond(responder: Responder<acp::CreateElicitationResponse>, action: acp::ElicitationAction) {
    if let Err(error) = responder.respond(acp::CreateElicitationResponse::new(action)) {
        tracing::debug!(%error, "could not answer an elicitation");
    }
}

/// A question put to the user: in which chat and turn, its request id and title.
struct Asked {
    chat: ChatUri,
    turn_id: TurnId,
    request_id: String,
    title: String,
}

impl Handlers {
    /// `elicitation/create`.
    pub async fn elicitation(
        &self,
        request: acp::CreateElicitationRequest,
        responder: Responder<acp::CreateElicitationResponse>,
        admission: Admission,
    ) {
        let session = match request.scope() {
            acp::ElicitationScope::Session(scope) => scope.session_id.to_string(),
            _ => {
                respond(responder, acp::ElicitationAction::Cancel);
                return;
            }
        };
        let asked = {
            let routes = self.shared.routes();
            routes.get(&session).and_then(|route| {
                let turn = route.turn.as_ref()?;
                Some((route.chat.clone(), turn.turn_id.clone()))
            })
        };
        let Some((chat, turn_id)) = asked else {
            // No turn runs in that session: nobody could be asked.
            respond(responder, acp::ElicitationAction::Cancel);
            return;
        };
        let acp::ElicitationMode::Form(form) = &request.mode else {
            self.decline_unaskable(&chat, &turn_id, &request, "it asks to open a web page")
                .await;
            respond(responder, acp::ElicitationAction::Decline);
            return;
        };
        let Some(choices) = choices(&form.requested_schema) else {
            self.decline_unaskable(
                &chat,
                &turn_id,
                &request,
                "its form has fields Hearth cannot ask for yet (text, numbers, several fields)",
            )
            .await;
            respond(responder, acp::ElicitationAction::Decline);
            return;
        };
        let request_id = self.shared.permission_id();
        let title = title(&request, &form.requested_schema);
        self.shared.audit_permission(
            &chat,
            Decision::Requested,
            &request_id,
            &title,
            AuditOutcome::ok(),
            "agent",
        );
        let question = Signal::PermissionRequested {
            turn_id: turn_id.clone(),
            request_id: request_id.clone(),
            title: title.clone(),
            options: choices.options.clone(),
            tool_call_id: None,
        };
        let asked = Asked {
            chat,
            turn_id,
            request_id,
            title,
        };
        if self.shared.spec.policy.mode == PermissionMode::Reject {
            self.decline_by_policy(asked, question).await;
            respond(responder, acp::ElicitationAction::Decline);
            drop(admission);
            return;
        }
        self.wait_for_choice(asked, question, choices, responder, admission)
            .await;
    }

    /// Shows the question already declined: the agent's policy refuses every request.
    async fn decline_by_policy(&self, asked: Asked, question: Signal) {
        let Asked {
            chat,
            turn_id,
            request_id,
            title,
        } = asked;
        self.shared.audit_permission(
            &chat,
            Decision::Policy,
            &request_id,
            &title,
            AuditOutcome::ok_with(format!(
                "{DECLINE}: the agent's policy refuses every request"
            )),
            "policy",
        );
        let resolved = Signal::PermissionResolved {
            turn_id,
            request_id,
            outcome: DECLINE.to_owned(),
        };
        self.shared.signal(&chat, vec![question, resolved]).await;
    }

    /// Shows the question and answers the agent once the user chose (or the turn ended).
    async fn wait_for_choice(
        &self,
        asked: Asked,
        question: Signal,
        choices: Choices,
        responder: Responder<acp::CreateElicitationResponse>,
        admission: Admission,
    ) {
        let Asked {
            chat,
            turn_id,
            request_id,
            title,
        } = asked;
        let (sender, receiver) = oneshot::channel();
        self.shared.waiting().insert(
            request_id.clone(),
            Waiting {
                chat: chat.clone(),
                turn_id,
                answer: sender,
            },
        );
        self.shared.signal(&chat, vec![question]).await;
        drop(admission);
        let handlers = self.clone();
        tokio::spawn(async move {
            let answer = receiver.await.unwrap_or(Answer::Cancelled);
            let (action, outcome, via) = match answer {
                Answer::Selected { option_id, via } => match choices.answers.get(&option_id) {
                    Some(action) => (action.clone(), option_id, via),
                    None => (acp::ElicitationAction::Cancel, option_id, via),
                },
                Answer::Cancelled => (
                    acp::ElicitationAction::Cancel,
                    hearth_core::PERMISSION_CANCELLED.to_owned(),
                    "turn ended".to_owned(),
                ),
            };
            handlers.shared.audit_permission(
                &chat,
                if via == hearth_core::PERMISSION_BY_POLICY {
                    Decision::Policy
                } else {
                    Decision::Answered
                },
                &request_id,
                &title,
                AuditOutcome::ok_with(outcome),
                &via,
            );
            respond(responder, action);
        });
    }

    /// Tells the turn that the agent asked something Hearth cannot put to the user.
    async fn decline_unaskable(
        &self,
        chat: &ChatUri,
        turn_id: &TurnId,
        request: &acp::CreateElicitationRequest,
        why: &str,
    ) {
        let message = format!(
            "{} asked \"{}\", which Hearth declined: {why}",
            self.shared.agent(),
            hearth_core::escape_controls_inline(&request.message)
        );
        self.shared.notice(chat, turn_id, message).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn ids(choices: &Choices) -> Vec<(&str, &str)> {
        choices
            .options
            .iter()
            .map(|option| (option.id.as_str(), option.label.as_str()))
            .collect()
    }

    #[test]
    fn choice_forms_become_options_and_others_are_not_asked() {
        let empty = choices(&acp::ElicitationSchema::new()).unwrap();
        assert_eq!(ids(&empty), vec![("accept", "Yes"), ("decline", "Decline")]);

        let colours = acp::ElicitationSchema::new().property(
            "color",
            acp::StringPropertySchema::new().enum_values(vec!["red".into(), "blue".into()]),
            true,
        );
        let colours = choices(&colours).unwrap();
        assert_eq!(
            ids(&colours),
            vec![
                ("choice-1", "red"),
                ("choice-2", "blue"),
                ("decline", "Decline")
            ]
        );
        assert_eq!(
            serde_json::to_value(&colours.answers["choice-2"]).unwrap(),
            serde_json::json!({"action": "accept", "content": {"color": "blue"}})
        );

        let flag =
            acp::ElicitationSchema::new().property("sure", acp::BooleanPropertySchema::new(), true);
        let flag = choices(&flag).unwrap();
        assert_eq!(
            serde_json::to_value(&flag.answers["no"]).unwrap(),
            serde_json::json!({"action": "accept", "content": {"sure": false}})
        );

        assert!(choices(&acp::ElicitationSchema::new().string("name", true)).is_none());
        let two = acp::ElicitationSchema::new()
            .property("a", acp::BooleanPropertySchema::new(), true)
            .property("b", acp::BooleanPropertySchema::new(), true);
        assert!(choices(&two).is_none());
    }
}
