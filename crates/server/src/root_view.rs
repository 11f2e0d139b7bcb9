//! The session list as one user of a team server follows it: the root's envelopes about
//! their sessions and their teams', numbered for them without gaps. The operator of a
//! team server follows the root whole, except the users' own harnesses (their providers
//! and agent sign-ins), which are theirs alone, as `initialize` shows.
//!
//! The root carries no state (clients page through `session/list`), so a user's
//! subscription is the operator's with envelopes left out: a session they cannot see
//! is never added, updated or removed in their view, and one that stops being shared
//! with them is removed from it. The writer of their connection passes each envelope
//! through the view after putting it in order, so every other subscriber still shares
//! one encoding.

use std::collections::HashSet;
use std::sync::Arc;

use axum::extract::ws::Utf8Bytes;
use hearth_protocol::{
    self as wire, Action, EnvelopeNotified, NotificationMethod, notification_text,
};
use serde::Deserialize;

use crate::access::UserView;

/// One user's view of the root, or the team server operator's.
#[derive(Debug)]
pub(crate) struct RootView {
    /// `None` for the operator.
    user: Option<Arc<UserView>>,
    /// The sessions the user's client has been told of (and may be told are gone).
    shown: HashSet<String>,
    /// The seq of the last envelope written to the user.
    seq: u64,
}

/// A `subscription/envelope` notification as it was encoded.
#[derive(Deserialize)]
struct Notified {
    params: wire::Envelope,
}

impl RootView {
    /// A view for `user` whose client knows `shown`, continuing after `seq` (the seq of
    /// the snapshot it was sent).
    pub fn new(user: Arc<UserView>, shown: HashSet<String>, seq: u64) -> Self {
        Self {
            user: Some(user),
            shown,
            seq,
        }
    }

    /// The team server operator's view, continuing after `seq`: every envelope, with
    /// only the server's own harnesses in a change of harnesses.
    pub fn operator(seq: u64) -> Self {
        Self {
            user: None,
            shown: HashSet::new(),
            seq,
        }
    }

    /// The envelope as the user sees it, numbered next; `None` when it is not theirs.
    pub fn admit(&mut self, text: &str) -> Option<Utf8Bytes> {
        // The operator's envelopes pass as they were encoded, but for harnesses.
        if self.user.is_none() && !text.contains("\"harnessesChanged\"") {
            self.seq += 1;
            return Some(text.into());
        }
        let Notified {
            params: mut envelope,
        } = serde_json::from_str(text).ok()?;
        envelope.action = match &self.user {
            Some(_) => self.seen(envelope.action)?,
            None => operators(envelope.action),
        };
        self.seq += 1;
        envelope.seq = self.seq;
        match notification_text(EnvelopeNotified::NAME, &envelope) {
            Ok(text) => Some(text.into()),
            Err(error) => {
                tracing::error!(%error, "cannot encode an envelope of a user's view");
                None
            }
        }
    }

    /// What of `action` the user sees.
    fn seen(&mut self, action: Action) -> Option<Action> {
        let user = Arc::clone(self.user.as_ref()?);
        match action {
            Action::SessionAdded { summary } | Action::SessionUpdated { summary }
                if !self.visible(&summary) =>
            {
                // Unshared from them since: gone from their list.
                self.shown
                    .remove(&summary.uri)
                    .then_some(Action::SessionRemoved {
                        session: summary.uri,
                    })
            }
            Action::SessionAdded { summary } => {
                let known = !self.shown.insert(summary.uri.clone());
                Some(if known {
                    Action::SessionUpdated { summary }
                } else {
                    Action::SessionAdded { summary }
                })
            }
            Action::SessionUpdated { summary } => {
                let new = self.shown.insert(summary.uri.clone());
                Some(if new {
                    Action::SessionAdded { summary }
                } else {
                    Action::SessionUpdated { summary }
                })
            }
            Action::SessionRemoved { session } => self
                .shown
                .remove(&session)
                .then_some(Action::SessionRemoved { session }),
            // The server's harnesses and the user's own providers', never another
            // user's.
            Action::HarnessesChanged { mut harnesses } => {
                harnesses.retain(|harness| crate::user_providers::shows(&user, &harness.id));
                Some(Action::HarnessesChanged { harnesses })
            }
            // A hint to look at proposals again (`proposal/list` answers each user with
            // theirs).
            action @ Action::ProposalChanged { .. } => Some(action),
            _ => None,
        }
    }

    fn visible(&self, summary: &wire::SessionSummary) -> bool {
        let owner = summary.owner.as_ref().map(|user| hearth_core::Owner {
            user: user.clone(),
            team: summary.team.clone(),
        });
        self.user
            .as_ref()
            .is_some_and(|user| user.sees(owner.as_ref()))
    }
}

/// `action` as the operator sees it: the users' own harnesses left out.
fn operators(action: Action) -> Action {
    match action {
        Action::HarnessesChanged { mut harnesses } => {
            harnesses.retain(|harness| crate::user_providers::owner_of(&harness.id).is_none());
            Action::HarnessesChanged { harnesses }
        }
        action => action,
    }
}
