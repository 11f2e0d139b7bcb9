//! A chat's settings on the agent: the mode the user chooses (`session/set_mode`, or the
//! configuration option of category `mode` when the agent keeps its modes there), and
//! the chosen model and mode set again when a session is reopened — agents come back on
//! their defaults after a restart. A choice the agent no longer offers is dropped with a
//! note in the log; the chat goes on with what the agent has, and its agent state says
//! so. Also the usage a turn ends with: the answer's token counts joined with the last
//! context window and cost the agent reported.

use agent_client_protocol::v1::schema as acp;
use hearth_core::{ChatContext, ChatUri, ChoiceState, Signal, Usage, now};
use serde_json::Value;

use crate::connection::Connection;
use crate::error::{Error, Result};
use crate::harness::Inner;

/// Which of a chat's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Setting {
    Model,
    Mode,
}

impl Setting {
    fn name(self) -> &'static str {
        match self {
            Self::Model => "model",
            Self::Mode => "mode",
        }
    }
}

/// What a reopened session says about one setting: its choices and the configuration
/// option that holds it, if any.
struct Offered {
    choices: ChoiceState,
    option: Option<String>,
}

impl Inner {
    /// Switches the chat's mode to one the agent offers, and records the choice.
    pub async fn set_mode(&self, context: &ChatContext, mode: String) -> Result<()> {
        let mode = mode.trim().to_owned();
        if mode.is_empty() {
            return Err(Error::Invalid("the mode name is empty".to_owned()));
        }
        let connection = self.connection().await?;
        let (session_id, _) = self.attach(&connection, context).await?;
        let Some(offered) = self.offered(&session_id, Setting::Mode) else {
            return Err(Error::Unsupported {
                agent: self.shared.agent().to_owned(),
                what: "choosing a mode (it offers no modes)".to_owned(),
            });
        };
        if !offered
            .choices
            .choices
            .iter()
            .any(|choice| choice.id == mode)
        {
            let known: Vec<&str> = offered
                .choices
                .choices
                .iter()
                .map(|choice| choice.id.as_str())
                .collect();
            return Err(Error::Invalid(format!(
                "agent `{}` has no mode `{mode}`; it offers: {}",
                self.shared.agent(),
                known.join(", ")
            )));
        }
        self.apply(
            &connection,
            &session_id,
            Setting::Mode,
            offered.option,
            &mode,
        )
        .await?;
        self.record_setting(&context.chat, |conversation| {
            conversation.mode = Some(mode);
        })
        .await?;
        self.show_agent_state(&context.chat, &session_id).await;
        Ok(())
    }

    /// Sets the chat's chosen model and mode again on a session just reopened, where
    /// the agent is on others. Never fails: a choice the agent no longer offers, or
    /// refuses, is dropped (logged), and the chat goes on with the agent's current one.
    pub(crate) async fn restore_settings(
        &self,
        connection: &Connection,
        context: &ChatContext,
        session_id: &str,
    ) {
        let chat = &context.chat;
        let Ok((model, mode)) = self.shared.chats.with(chat, |entry| {
            (
                entry.conversation.model.clone(),
                entry.conversation.mode.clone(),
            )
        }) else {
            return;
        };
        let mut touched = false;
        for (setting, wanted) in [(Setting::Model, model), (Setting::Mode, mode)] {
            let Some(wanted) = wanted else { continue };
            let Some(offered) = self.offered(session_id, setting) else {
                continue;
            };
            if offered.choices.current == wanted {
                continue;
            }
            touched = true;
            let agent = self.shared.agent();
            let current = offered.choices.current.clone();
            let failure = if offered.choices.choices.iter().any(|c| c.id == wanted) {
                match self
                    .apply(connection, session_id, setting, offered.option, &wanted)
                    .await
                {
                    Ok(()) => continue,
                    Err(error) => format!("refused it ({error})"),
                }
            } else {
                "no longer offers it".to_owned()
            };
            tracing::warn!(
                agent = %agent,
                %chat,
                "the chat's {} `{wanted}` could not be set again after the agent reopened the session: the agent {failure}; the chat goes on with `{current}`",
                setting.name()
            );
            let recorded = self
                .record_setting(chat, |conversation| match setting {
                    Setting::Model => conversation.model = Some(current),
                    Setting::Mode => conversation.mode = None,
                })
                .await;
            if let Err(error) = recorded {
                tracing::warn!(%chat, %error, "could not record the chat's settings");
            }
        }
        if touched {
            self.show_agent_state(chat, session_id).await;
        }
    }

    /// What the session's route says the agent offers for a setting.
    fn offered(&self, session_id: &str, setting: Setting) -> Option<Offered> {
        let routes = self.shared.routes();
        let route = routes.get(session_id)?;
        let (choices, option) = match setting {
            Setting::Model => (&route.agent_state.models, &route.model_option),
            Setting::Mode => (&route.agent_state.modes, &route.mode_option),
        };
        Some(Offered {
            choices: choices.clone()?,
            option: option.clone(),
        })
    }

    /// Sets a setting on the agent: through its configuration option when it has one,
    /// else through the setting's own method.
    async fn apply(
        &self,
        connection: &Connection,
        session_id: &str,
        setting: Setting,
        option: Option<String>,
        value: &str,
    ) -> Result<()> {
        match (option, setting) {
            (Some(config_id), _) => {
                self.set_config_option(connection, session_id, config_id, value)
                    .await
            }
            (None, Setting::Model) => self.set_session_model(connection, session_id, value).await,
            (None, Setting::Mode) => self.set_session_mode(connection, session_id, value).await,
        }
    }

    /// Sets `value` (a model or a mode) through the agent's configuration option
    /// `config_id` that holds it, and takes the settings it answers with.
    pub(crate) async fn set_config_option(
        &self,
        connection: &Connection,
        session_id: &str,
        config_id: String,
        value: &str,
    ) -> Result<()> {
        let request = acp::SetSessionConfigOptionRequest::new(
            session_id.to_owned(),
            config_id,
            acp::SessionConfigOptionValue::value_id(value.to_owned()),
        );
        let (answer, _): (acp::SetSessionConfigOptionResponse, Value) = connection
            .request_json(
                "session/set_config_option",
                request,
                self.shared.options.timeouts.request,
            )
            .await?;
        if let Some(route) = self.shared.routes().get_mut(session_id) {
            Self::take_settings(route, None, Some(&answer.config_options), &Value::Null);
        }
        Ok(())
    }

    /// Chooses the mode through `session/set_mode`.
    async fn set_session_mode(
        &self,
        connection: &Connection,
        session_id: &str,
        mode: &str,
    ) -> Result<()> {
        let request = acp::SetSessionModeRequest::new(session_id.to_owned(), mode.to_owned());
        connection
            .request_json::<_, Value>(
                "session/set_mode",
                request,
                self.shared.options.timeouts.request,
            )
            .await?;
        if let Some(modes) = self
            .shared
            .routes()
            .get_mut(session_id)
            .and_then(|route| route.agent_state.modes.as_mut())
        {
            modes.current = mode.to_owned();
        }
        Ok(())
    }

    /// Changes the chat's conversation and hands the host the new record.
    async fn record_setting(
        &self,
        chat: &ChatUri,
        change: impl FnOnce(&mut crate::conversation::AcpConversation),
    ) -> Result<()> {
        let data = self.shared.chats.with(chat, |entry| {
            change(&mut entry.conversation);
            entry.conversation.updated_at = now();
            hearth_harness::encode(chat, &entry.conversation)
        })??;
        self.publish_conversation(chat, data).await;
        Ok(())
    }

    /// Shows what the agent offers in the chat now.
    pub(crate) async fn show_agent_state(&self, chat: &ChatUri, session_id: &str) {
        let state = self
            .shared
            .routes()
            .get(session_id)
            .map(|route| route.agent_state.clone());
        if let Some(state) = state {
            self.shared
                .signal(chat, vec![Signal::AgentStateChanged { state }])
                .await;
        }
    }

    /// The usage a turn of the chat ends with: the token counts of the agent's answer,
    /// with the context window and cost it last reported in the turn.
    pub(crate) fn turn_usage(&self, chat: &ChatUri, answer: &acp::PromptResponse) -> Option<Usage> {
        let window = self
            .shared
            .routes()
            .values()
            .find(|route| &route.chat == chat)
            .and_then(|route| route.turn.as_ref())
            .and_then(|turn| turn.usage.clone());
        let tokens = answer.usage.as_ref().map(crate::mapping::tokens);
        match (tokens, window) {
            (Some(mut tokens), Some(window)) => {
                tokens.context_used = window.context_used;
                tokens.context_size = window.context_size;
                tokens.cost = window.cost;
                Some(tokens)
            }
            (tokens, window) => tokens.or(window),
        }
    }
}
