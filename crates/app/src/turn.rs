//! One turn, followed the same way whether this process's host answers it or a running
//! server does: its envelopes in order, the text a lagging listener missed, the
//! permission questions it raises, and how it ended. `hearth run` and `hearth chat`
//! drive every turn through [`TurnStream`]; only what they print is theirs.

use std::collections::VecDeque;

use anyhow::{Context as _, bail};
use hearth_core::{
    Action, ChatUri, Envelope, PERMISSION_BY_POLICY, PermissionAnswer, PermissionOption,
    ResourceUri, ResponsePart, StopReason, ToolCallPart, Turn, TurnId, UserMessage,
};
use hearth_host::{Host, HostResult};
use hearth_protocol as wire;
use hearth_server::{Client, Notifications, Notified};
use tokio::sync::broadcast::error::RecvError;

/// A permission request waiting for an answer, as a client shows it.
#[derive(Clone, Debug)]
pub struct Question {
    /// The harness that asks.
    pub agent: String,
    /// The chat it asks in.
    pub chat: String,
    /// The request.
    pub request_id: String,
    /// What it asks.
    pub title: String,
    /// The choices.
    pub options: Vec<PermissionOption>,
    /// The tool call it is about.
    pub call: Option<ToolCallPart>,
}

/// What happened next in a turn.
#[derive(Debug)]
pub enum TurnEvent {
    /// An envelope of the chat, in order (text a lagging listener missed comes as one
    /// text delta).
    Envelope(Envelope),
    /// The turn asks permission; it waits until [`TurnStream::answer`] or an abort.
    Question(Question),
    /// The turn ended.
    Ended(StopReason),
}

/// Who answers the turn.
enum Answerer<'a> {
    /// The host in this process.
    Local {
        host: &'a Host,
        receiver: hearth_host::EnvelopeReceiver,
    },
    /// A running server, over its connection.
    Remote {
        client: &'a Client,
        notifications: &'a mut Notifications,
    },
}

/// A turn being answered.
pub struct TurnStream<'a> {
    answerer: Answerer<'a>,
    chat: ChatUri,
    turn_id: TurnId,
    /// Bytes of the turn's answer text handed out so far.
    text_seen: usize,
    /// Events decided but not yet handed out.
    queued: VecDeque<TurnEvent>,
}

impl<'a> TurnStream<'a> {
    /// Sends `message` to `chat` in this process's host and follows the turn it starts.
    pub async fn local(host: &'a Host, chat: &ChatUri, message: UserMessage) -> HostResult<Self> {
        let (turn_id, subscription) = host.send_streaming(chat, message).await?;
        Ok(Self::new(
            Answerer::Local {
                host,
                receiver: subscription.receiver,
            },
            chat.clone(),
            turn_id,
        ))
    }

    /// Sends `message` to `chat` through a running server and follows the turn it starts.
    /// The connection's notifications are this stream's until it is dropped.
    pub async fn remote(
        client: &'a Client,
        notifications: &'a mut Notifications,
        chat: &ChatUri,
        message: UserMessage,
    ) -> anyhow::Result<Self> {
        let subscribed = client
            .call::<wire::Subscribe>(&wire::SubscribeParams {
                resource: chat.to_string(),
                last_seq: None,
                turn_limit: None,
            })
            .await?;
        if !matches!(subscribed, wire::SubscribeResponse::Snapshot { .. }) {
            bail!("the server answered a fresh subscription with a replay");
        }
        let sent = client
            .call::<wire::ChatSend>(&wire::ChatSendParams {
                chat: chat.to_string(),
                message: message.into(),
            })
            .await?;
        let turn_id = TurnId::parse(&sent.turn_id)
            .with_context(|| format!("the server named its turn `{}`", sent.turn_id))?;
        Ok(Self::new(
            Answerer::Remote {
                client,
                notifications,
            },
            chat.clone(),
            turn_id,
        ))
    }

    fn new(answerer: Answerer<'a>, chat: ChatUri, turn_id: TurnId) -> Self {
        Self {
            answerer,
            chat,
            turn_id,
            text_seen: 0,
            queued: VecDeque::new(),
        }
    }

    /// The chat the turn is in.
    pub fn chat(&self) -> &ChatUri {
        &self.chat
    }

    /// The turn.
    pub fn turn_id(&self) -> &TurnId {
        &self.turn_id
    }

    /// What happened next. After [`TurnEvent::Ended`] the stream has nothing more.
    pub async fn next(&mut self) -> anyhow::Result<TurnEvent> {
        loop {
            if let Some(event) = self.queued.pop_front() {
                return Ok(event);
            }
            let event = match &mut self.answerer {
                Answerer::Local { receiver, .. } => match receiver.recv().await {
                    Ok(envelope) => Some(envelope),
                    Err(RecvError::Lagged(_)) => {
                        self.caught_up_locally();
                        None
                    }
                    Err(RecvError::Closed) => {
                        self.queued
                            .push_back(TurnEvent::Ended(StopReason::Incomplete));
                        None
                    }
                },
                Answerer::Remote { notifications, .. } => {
                    let notified = notifications.recv().await;
                    match notice(&self.chat, &self.turn_id, notified)? {
                        Notice::Envelope(envelope) => Some(envelope),
                        Notice::Resync(turn) => {
                            self.catch_up(turn);
                            None
                        }
                        Notice::Other => None,
                    }
                }
            };
            if let Some(envelope) = event {
                self.arrived(envelope).await?;
            }
        }
    }

    /// Asks the answerer to stop the turn; it still ends with [`TurnEvent::Ended`].
    pub async fn abort(&self) -> anyhow::Result<()> {
        match &self.answerer {
            Answerer::Local { host, .. } => {
                host.abort(&self.chat).await?;
            }
            Answerer::Remote { client, .. } => {
                client
                    .call::<wire::ChatAbort>(&wire::ChatParams {
                        chat: self.chat.to_string(),
                    })
                    .await?;
            }
        }
        Ok(())
    }

    /// Answers a question of this turn with `option_id`: the user's choice, or with
    /// `by_policy` the refusal Hearth made because nobody could be asked (the harness
    /// then tells the model that nobody was asked).
    pub async fn answer(
        &self,
        question: &Question,
        option_id: &str,
        by_policy: bool,
    ) -> anyhow::Result<()> {
        match &self.answerer {
            Answerer::Local { host, .. } => {
                let answer = PermissionAnswer {
                    option_id: option_id.to_owned(),
                    via: if by_policy {
                        PERMISSION_BY_POLICY
                    } else {
                        "cli"
                    }
                    .to_owned(),
                };
                host.respond_permission(&self.chat, &question.request_id, &answer)
                    .await?;
            }
            Answerer::Remote { client, .. } => {
                client
                    .call::<wire::PermissionRespond>(&wire::PermissionRespondParams {
                        chat: question.chat.clone(),
                        request_id: question.request_id.clone(),
                        option_id: option_id.to_owned(),
                        by_policy,
                    })
                    .await?;
            }
        }
        Ok(())
    }

    /// Makes sure what this process's host holds of the turn is written (before the
    /// process leaves in a hurry); nothing to do when a server answers.
    pub async fn flush(&self) {
        if let Answerer::Local { host, .. } = &self.answerer {
            host.flush().await;
        }
    }

    /// Queues what an envelope of the chat means for the turn, the envelope first.
    async fn arrived(&mut self, envelope: Envelope) -> anyhow::Result<()> {
        let mut question = None;
        let mut ended = None;
        match &envelope.action {
            Action::TextDelta { turn_id, text } if turn_id == &self.turn_id => {
                self.text_seen += text.len();
            }
            Action::PartAdded {
                turn_id,
                part:
                    ResponsePart::PermissionRequest {
                        request_id,
                        outcome: None,
                        ..
                    },
            } if turn_id == &self.turn_id => {
                question = self.question(request_id, &envelope).await?;
            }
            Action::TurnCompleted {
                turn_id,
                stop_reason,
                ..
            } if turn_id == &self.turn_id => ended = Some(stop_reason.clone()),
            _ => {}
        }
        self.queued.push_back(TurnEvent::Envelope(envelope));
        self.queued.extend(question.map(TurnEvent::Question));
        self.queued.extend(ended.map(TurnEvent::Ended));
        Ok(())
    }

    /// The question a permission request of the turn asks, with the tool call it is
    /// about as the chat shows it now.
    async fn question(
        &self,
        request_id: &str,
        envelope: &Envelope,
    ) -> anyhow::Result<Option<Question>> {
        match &self.answerer {
            Answerer::Local { host, .. } => Ok(local_question(host, &self.chat, envelope)),
            Answerer::Remote { client, .. } => {
                let chat = self.chat.to_string();
                Ok(pending_questions(client)
                    .await?
                    .into_iter()
                    .find(|question| question.request_id == request_id && question.chat == chat))
            }
        }
    }

    /// After this process's listener fell behind: the text it missed, and the end if it
    /// was among what was missed.
    fn caught_up_locally(&mut self) {
        let Answerer::Local { host, .. } = &self.answerer else {
            return;
        };
        let turn = host.peek_chat(&self.chat).and_then(|state| {
            state
                .turns
                .into_iter()
                .rev()
                .find(|turn| turn.id == self.turn_id)
        });
        if let Some(turn) = turn {
            self.catch_up(turn);
        }
    }

    /// Queues the text of `turn` not handed out yet, and its end if it ended.
    fn catch_up(&mut self, turn: Turn) {
        let text = turn.response_text();
        if let Some(missing) = text.get(self.text_seen..).filter(|rest| !rest.is_empty()) {
            self.queued.push_back(TurnEvent::Envelope(Envelope {
                seq: 0,
                resource: ResourceUri::Chat(self.chat.clone()),
                action: Action::TextDelta {
                    turn_id: turn.id.clone(),
                    text: missing.to_owned(),
                },
            }));
            self.text_seen = text.len();
        }
        if let Some(reason) = turn.stop_reason {
            self.queued.push_back(TurnEvent::Ended(reason));
        }
    }
}

/// What a server's notification means for the turn `turn_id` of `chat`.
fn notice(
    chat_uri: &ChatUri,
    turn_id: &TurnId,
    notified: Option<Notified>,
) -> anyhow::Result<Notice> {
    let chat = chat_uri.to_string();
    match notified {
        Some(Notified::Envelope(envelope)) if envelope.resource == chat => {
            Ok(Notice::Envelope(Envelope::try_from(envelope)?))
        }
        Some(Notified::Resync(resync)) if resync.snapshot.resource == chat => {
            let snapshot = hearth_core::Snapshot::try_from(resync.snapshot)?;
            let hearth_core::ResourceState::Chat(state) = snapshot.state else {
                return Ok(Notice::Other);
            };
            Ok(state
                .turns
                .into_iter()
                .find(|turn| &turn.id == turn_id)
                .map_or(Notice::Other, Notice::Resync))
        }
        Some(Notified::Ended(ended)) if ended.resource == chat => {
            bail!("the chat went away while it answered: {}", ended.reason)
        }
        Some(_) => Ok(Notice::Other),
        None => bail!(
            "the connection to the Hearth server closed while the turn ran; the server may still be running it (see `hearth sessions show {}`)",
            chat_uri.session()
        ),
    }
}

/// A server's notification, as far as one turn is concerned.
enum Notice {
    Envelope(Envelope),
    /// The listener fell behind; the turn as the server holds it now.
    Resync(Turn),
    Other,
}

/// The question a permission request envelope raises in this process's host.
fn local_question(host: &Host, chat: &ChatUri, envelope: &Envelope) -> Option<Question> {
    let Action::PartAdded {
        turn_id,
        part:
            ResponsePart::PermissionRequest {
                request_id,
                title,
                options,
                tool_call_id,
                outcome: None,
            },
    } = &envelope.action
    else {
        return None;
    };
    let state = host.peek_chat(chat);
    let turn = state
        .as_ref()
        .and_then(|state| state.turns.iter().rev().find(|turn| &turn.id == turn_id));
    // A request settled by the time its envelope is read (the policy answered it, or
    // another window did) is no question any more.
    let settled = turn.is_some_and(|turn| {
        turn.parts.iter().any(|part| {
            matches!(part, ResponsePart::PermissionRequest { request_id: id, outcome: Some(_), .. } if id == request_id)
        })
    });
    if settled {
        return None;
    }
    let call = tool_call_id.as_ref().and_then(|call_id| {
        turn?.parts.iter().find_map(|part| match part {
            ResponsePart::ToolCall(call) if &call.call_id == call_id => Some(call.clone()),
            _ => None,
        })
    });
    Some(Question {
        agent: chat.harness().to_string(),
        chat: chat.to_string(),
        request_id: request_id.clone(),
        title: title.clone(),
        options: options.clone(),
        call,
    })
}

/// The permission requests waiting in a server.
pub async fn pending_questions(client: &Client) -> anyhow::Result<Vec<Question>> {
    let listed = client
        .call::<wire::PermissionList>(&wire::PermissionListParams {})
        .await?;
    listed
        .permissions
        .into_iter()
        .map(|pending| {
            let chat = ChatUri::parse(&pending.chat)?;
            Ok(Question {
                agent: chat.harness().to_string(),
                chat: pending.chat,
                request_id: pending.request_id,
                title: pending.title,
                options: pending.options.into_iter().map(Into::into).collect(),
                call: pending.tool_call.map(Into::into),
            })
        })
        .collect()
}
