//! Where a turn's tool calls, permission requests and plan are among its parts, so that
//! applying an update to one of them costs the same however many parts the turn holds.

use std::collections::HashMap;

use crate::ids::TurnId;
use crate::turn::{ResponsePart, Turn};

/// The positions of one turn's parts by id, for whoever applies many actions to a turn
/// (the host, to its running turns; see
/// [`reduce_chat_indexed`](crate::reduce_chat_indexed)). Parts only ever join the end of
/// a turn, so the index reads the new ones as it is used; a position that no longer
/// holds what it held (the turn changed by other means) makes it read the turn again, so
/// a stale index costs time, never a wrong answer.
#[derive(Clone, Debug, Default)]
pub struct PartIndex {
    turn: Option<TurnId>,
    /// Parts read so far.
    seen: usize,
    /// The last call with each id (as a search from the end finds it).
    calls: HashMap<String, usize>,
    /// Every permission request with each id.
    permissions: HashMap<String, Vec<usize>>,
    /// The first plan.
    plan: Option<usize>,
}

impl PartIndex {
    /// An empty index; it learns its turn on first use.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads the parts added since the last use (all of them for another turn, or when
    /// the turn lost parts).
    fn sync(&mut self, turn: &Turn) {
        if self.turn.as_ref() != Some(&turn.id) || turn.parts.len() < self.seen {
            *self = Self {
                turn: Some(turn.id.clone()),
                ..Self::default()
            };
        }
        for (position, part) in turn.parts.iter().enumerate().skip(self.seen) {
            match part {
                ResponsePart::ToolCall(call) => {
                    self.calls.insert(call.call_id.clone(), position);
                }
                ResponsePart::PermissionRequest { request_id, .. } => {
                    self.permissions
                        .entry(request_id.clone())
                        .or_default()
                        .push(position);
                }
                ResponsePart::Plan { .. } => {
                    self.plan.get_or_insert(position);
                }
                _ => {}
            }
        }
        self.seen = turn.parts.len();
    }

    /// Forgets everything, so the next use reads the turn again.
    fn reset(&mut self) {
        *self = Self::default();
    }

    fn call(&mut self, turn: &Turn, call_id: &str) -> Option<usize> {
        self.sync(turn);
        let position = *self.calls.get(call_id)?;
        match turn.parts.get(position) {
            Some(ResponsePart::ToolCall(call)) if call.call_id == call_id => Some(position),
            _ => {
                self.reset();
                self.sync(turn);
                self.calls.get(call_id).copied()
            }
        }
    }

    fn plan(&mut self, turn: &Turn) -> Option<usize> {
        self.sync(turn);
        let position = self.plan?;
        match turn.parts.get(position) {
            Some(ResponsePart::Plan { .. }) => Some(position),
            _ => {
                self.reset();
                self.sync(turn);
                self.plan
            }
        }
    }

    fn permissions(&mut self, turn: &Turn, request_id: &str) -> Vec<usize> {
        self.sync(turn);
        let holds = |positions: &Vec<usize>| {
            positions.iter().all(|position| {
                matches!(
                    turn.parts.get(*position),
                    Some(ResponsePart::PermissionRequest { request_id: id, .. }) if id == request_id
                )
            })
        };
        match self.permissions.get(request_id) {
            None => Vec::new(),
            Some(positions) if holds(positions) => positions.clone(),
            Some(_) => {
                self.reset();
                self.sync(turn);
                self.permissions
                    .get(request_id)
                    .cloned()
                    .unwrap_or_default()
            }
        }
    }
}

/// How the reducer finds parts: by searching the turn, or through an index.
pub(crate) enum Lookup<'a> {
    /// Search the parts (a client applying an envelope now and then).
    Search,
    /// Ask the index (the host, applying every signal of a running turn).
    Index(&'a mut PartIndex),
}

impl Lookup<'_> {
    /// The position of the last call with this id.
    pub fn call(&mut self, turn: &Turn, call_id: &str) -> Option<usize> {
        match self {
            Self::Search => turn.parts.iter().rposition(
                |part| matches!(part, ResponsePart::ToolCall(call) if call.call_id == call_id),
            ),
            Self::Index(index) => index.call(turn, call_id),
        }
    }

    /// The position of the first plan.
    pub fn plan(&mut self, turn: &Turn) -> Option<usize> {
        match self {
            Self::Search => turn
                .parts
                .iter()
                .position(|part| matches!(part, ResponsePart::Plan { .. })),
            Self::Index(index) => index.plan(turn),
        }
    }

    /// The positions of the permission requests with this id.
    pub fn permissions(&mut self, turn: &Turn, request_id: &str) -> Vec<usize> {
        match self {
            Self::Search => turn
                .parts
                .iter()
                .enumerate()
                .filter(|(_, part)| {
                    matches!(part, ResponsePart::PermissionRequest { request_id: id, .. } if id == request_id)
                })
                .map(|(position, _)| position)
                .collect(),
            Self::Index(index) => index.permissions(turn, request_id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chat::{ChatOrigin, ChatSummary};
    use crate::ids::{ChatUri, SessionUri};
    use crate::state::{Action, ChatState, reduce_chat, reduce_chat_indexed};
    use crate::tool_call::ToolCallPatch;
    use crate::turn::{PlanEntry, PlanStatus, ToolCallPart, ToolCallStatus, UserMessage, now};
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;

    fn chat_state() -> ChatState {
        let session = SessionUri::parse("hearth-session:replay/s1").unwrap();
        ChatState::new(ChatSummary::new(
            ChatUri::default_for(&session),
            ChatOrigin::User,
            now(),
        ))
    }

    /// An action on `turn` chosen by `kind`, about id `id` (a few ids, so they repeat).
    fn action(turn: &TurnId, kind: u8, id: u8) -> Action {
        let turn_id = turn.clone();
        let id = format!("id-{id}");
        match kind % 7 {
            0 => Action::ToolCallStarted {
                turn_id,
                call: ToolCallPart::new(
                    id,
                    "read",
                    serde_json::Value::Null,
                    ToolCallStatus::Running,
                ),
            },
            1 => Action::ToolCallUpdated {
                turn_id,
                call_id: id.clone(),
                status: ToolCallStatus::Completed,
                result: None,
                patch: ToolCallPatch {
                    title: Some(id),
                    ..ToolCallPatch::default()
                },
            },
            2 => Action::PlanUpdated {
                turn_id,
                entries: vec![PlanEntry {
                    content: id,
                    status: PlanStatus::Pending,
                }],
            },
            3 => Action::PartAdded {
                turn_id,
                part: ResponsePart::PermissionRequest {
                    request_id: id,
                    title: "May I?".into(),
                    options: Vec::new(),
                    outcome: None,
                    tool_call_id: None,
                },
            },
            4 => Action::PermissionResolved {
                turn_id,
                request_id: id.clone(),
                outcome: id,
            },
            5 => Action::TextDelta { turn_id, text: id },
            _ => Action::ReasoningDelta { turn_id, text: id },
        }
    }

    proptest! {
        #[test]
        fn the_indexed_reducer_ends_where_the_searching_one_does(
            steps in proptest::collection::vec((0u8..7, 0u8..5), 0..80)
        ) {
            let turn = Turn::started(TurnId::generate(), UserMessage::text("hi"), now());
            let turn_id = turn.id.clone();
            let mut searched = chat_state();
            let mut indexed = searched.clone();
            let mut index = PartIndex::new();
            let started = Action::TurnStarted { turn };
            reduce_chat(&mut searched, &started);
            reduce_chat_indexed(&mut indexed, &started, &mut index);
            for (kind, id) in steps {
                let action = action(&turn_id, kind, id);
                reduce_chat(&mut searched, &action);
                reduce_chat_indexed(&mut indexed, &action, &mut index);
                prop_assert_eq!(&indexed, &searched);
            }
        }
    }

    fn call(id: &str) -> ResponsePart {
        ResponsePart::ToolCall(ToolCallPart::new(
            id,
            "read",
            serde_json::Value::Null,
            ToolCallStatus::Running,
        ))
    }

    #[test]
    fn the_index_answers_as_a_search_does_even_after_the_turn_changed_behind_it() {
        let mut turn = Turn::started(TurnId::generate(), UserMessage::text("hi"), now());
        turn.parts = vec![call("a"), call("b"), call("a")];
        let mut index = PartIndex::new();
        let mut indexed = Lookup::Index(&mut index);
        assert_eq!(indexed.call(&turn, "a"), Some(2));
        assert_eq!(Lookup::Search.call(&turn, "a"), Some(2));
        turn.parts.push(call("c"));
        assert_eq!(indexed.call(&turn, "c"), Some(3));
        // Parts moved by other means: the index notices and reads the turn again.
        turn.parts.swap(0, 3);
        assert_eq!(indexed.call(&turn, "c"), Some(0));
        assert_eq!(indexed.call(&turn, "missing"), None);
        turn.parts.truncate(1);
        assert_eq!(indexed.call(&turn, "a"), None);
        assert_eq!(indexed.plan(&turn), None);
        // Another turn starts afresh.
        let other = Turn::started(TurnId::generate(), UserMessage::text("hi"), now());
        assert_eq!(indexed.call(&other, "c"), None);
    }
}
