//! Driving one turn at the terminal, for `hearth run` and `hearth chat`, whoever answers
//! it (this process's host or a running server): the answer printed as it streams,
//! permission questions asked inline, Ctrl-C stopping the turn and a second one leaving.

use std::collections::VecDeque;

use hearth_app::turn::{Question, TurnEvent, TurnStream};
use hearth_core::{Action, StopReason, escape_controls_inline};

use crate::interrupts::{Interrupts, Press};
use crate::keyboard::Keyboard;
use crate::permissions::{Reply, agent_label, ask, option_effect};
use crate::printer::Printer;

/// How a driven turn ended at the terminal.
pub(crate) enum Driven {
    /// The turn ended this way (an abort asked for here ends as [`StopReason::Aborted`]).
    Ended {
        stop_reason: StopReason,
        /// Printing the answer failed (nobody reads it any more): the turn was aborted
        /// then and what streamed before is kept.
        broken_output: Option<anyhow::Error>,
    },
    /// The user pressed Ctrl-C again while the turn stopped: leave at once (what this
    /// process holds of the turn is written).
    Leave,
}

/// Follows `stream` to its end, printing with `printer` and asking its questions from
/// `answers` (none when nobody sits at a terminal: questions are then refused).
#[allow(clippy::print_stderr)]
pub(crate) async fn drive(
    stream: &mut TurnStream<'_>,
    printer: &mut Printer,
    interrupts: &mut Interrupts,
    mut answers: Option<&mut Keyboard>,
) -> anyhow::Result<Driven> {
    let mut stopping = false;
    let mut broken_output = None;
    // Events that arrived while a question was being asked, to handle in order after it.
    let mut held = VecDeque::new();
    loop {
        let event = if let Some(event) = held.pop_front() {
            event
        } else {
            tokio::select! {
                event = stream.next() => event?,
                pressed = interrupts.recv_press() => {
                    if stopping || pressed? == Press::Double {
                        printer.finish_line()?;
                        stream.flush().await;
                        return Ok(Driven::Leave);
                    }
                    stopping = true;
                    eprintln!("\nhearth: stopping the answer (Ctrl-C again leaves)");
                    stream.abort().await?;
                    continue;
                }
            }
        };
        match event {
            TurnEvent::Envelope(envelope) => {
                if broken_output.is_none()
                    && let Err(error) = printer.envelope(&envelope)
                {
                    broken_output = Some(error);
                    stream.abort().await?;
                }
            }
            TurnEvent::Question(question) => {
                printer.break_line(&mut std::io::stdout().lock())?;
                let asked = ask_unless_settled(
                    stream,
                    &question,
                    answers.as_deref_mut(),
                    interrupts,
                    &mut held,
                )
                .await?;
                let Some(reply) = asked else { continue };
                match reply {
                    Reply::Chosen(option) => answer(stream, &question, &option, false).await,
                    Reply::Refused { option_id, notice } => {
                        eprintln!("{notice}");
                        match option_id {
                            // Nobody was asked: the refusal is Hearth's, not the user's.
                            Some(option) => answer(stream, &question, &option, true).await,
                            None => stream.abort().await?,
                        }
                    }
                    Reply::Interrupted => {
                        stopping = true;
                        eprintln!("hearth: stopping the answer");
                        stream.abort().await?;
                    }
                }
            }
            TurnEvent::Ended(stop_reason) => {
                if broken_output.is_none() {
                    printer.finish_line()?;
                }
                return Ok(Driven::Ended {
                    stop_reason,
                    broken_output,
                });
            }
        }
    }
}

/// Asks `question` while following the turn: when the request is settled meanwhile
/// (answered in another window, or the turn ended), the question is withdrawn with a
/// note and `None` is returned. What arrived while asking is put in `held`.
#[allow(clippy::print_stderr)]
async fn ask_unless_settled(
    stream: &mut TurnStream<'_>,
    question: &Question,
    answers: Option<&mut Keyboard>,
    interrupts: &mut Interrupts,
    held: &mut VecDeque<TurnEvent>,
) -> anyhow::Result<Option<Reply>> {
    let asking = ask(question, answers, interrupts);
    tokio::pin!(asking);
    loop {
        tokio::select! {
            reply = &mut asking => return Ok(Some(reply?)),
            event = stream.next() => {
                let event = event?;
                let settled = settles(&event, question);
                held.push_back(event);
                match settled {
                    Some(Settled::Answered(outcome)) => {
                        let chosen = question
                            .options
                            .iter()
                            .find(|option| option.id == outcome)
                            .map_or_else(
                                || escape_controls_inline(&outcome).into_owned(),
                                |option| format!("{} {}", option_effect(option.kind), agent_label(option)),
                            );
                        eprintln!("\nhearth: answered elsewhere: {chosen}");
                        return Ok(None);
                    }
                    Some(Settled::TurnEnded) => {
                        eprintln!("\nhearth: the turn ended before the question was answered");
                        return Ok(None);
                    }
                    None => {}
                }
            }
        }
    }
}

/// How a turn event settles a question being asked.
enum Settled {
    /// The request got this answer (from another window, or Hearth's policy).
    Answered(String),
    /// The turn ended.
    TurnEnded,
}

fn settles(event: &TurnEvent, question: &Question) -> Option<Settled> {
    match event {
        TurnEvent::Envelope(envelope) => match &envelope.action {
            Action::PermissionResolved {
                request_id,
                outcome,
                ..
            } if *request_id == question.request_id => Some(Settled::Answered(outcome.clone())),
            _ => None,
        },
        TurnEvent::Ended(_) => Some(Settled::TurnEnded),
        TurnEvent::Question(_) => None,
    }
}

/// Gives the answer; one that no longer reaches the agent (its turn ended meanwhile) is
/// said, and the turn goes on to its end.
#[allow(clippy::print_stderr)]
async fn answer(stream: &TurnStream<'_>, question: &Question, option: &str, by_policy: bool) {
    if let Err(error) = stream.answer(question, option, by_policy).await {
        eprintln!(
            "hearth: the answer did not reach the agent: {}",
            crate::shown::error(&error)
        );
    }
}
