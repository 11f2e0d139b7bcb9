//! Asking the user before a tool call runs: the seam between a toolbox that needs an
//! answer (an MCP tool that is not read-only) and the agent whose turn waits for it.
//!
//! The agent running a turn puts a [`PermissionAsker`] in scope around each tool call
//! ([`with_permission_asker`]); a toolbox that must ask finds it with
//! [`permission_asker`]. Outside a turn that can ask (Hearth's tools lent over MCP, the
//! user trying a tool), there is none, and the toolbox refuses instead of running.

use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use hearth_core::{PermissionOption, PermissionOptionKind, ToolCallContext};

/// What a tool call asks the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PermissionQuestion {
    /// One line a human reads, naming the tool and the exact arguments.
    pub title: String,
    /// The choices.
    pub options: Vec<PermissionOption>,
}

/// The user's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PermissionReply {
    /// The chosen option.
    pub option_id: String,
    /// What it means, when the option said.
    pub kind: Option<PermissionOptionKind>,
    /// Through what the user answered (`cli`, `server`, `web`).
    pub via: String,
}

impl PermissionReply {
    /// Whether the user allowed the call.
    pub fn allows(&self) -> bool {
        self.kind.is_some_and(PermissionOptionKind::allows)
    }

    /// Whether the policy answered because nobody could be asked (not the user).
    pub fn by_policy(&self) -> bool {
        self.via == hearth_core::PERMISSION_BY_POLICY
    }

    /// Who answered, for the audit log: the user through `via`, or Hearth's policy.
    pub fn actor(&self) -> crate::Actor {
        if self.by_policy() {
            crate::Actor::Hearth
        } else {
            crate::Actor::User(crate::UserActor::new(&self.via))
        }
    }
}

/// Puts a question to the user on behalf of a running turn and waits for the answer.
pub trait PermissionAsker: Send + Sync {
    /// Asks about `call`; `None` when the turn ended or nobody can answer.
    fn ask<'a>(
        &'a self,
        call: &'a ToolCallContext,
        question: PermissionQuestion,
    ) -> BoxFuture<'a, Option<PermissionReply>>;
}

tokio::task_local! {
    static ASKER: Arc<dyn PermissionAsker>;
}

/// Runs `future` (a tool call) with `asker` available to the toolbox.
pub async fn with_permission_asker<F: Future>(
    asker: Arc<dyn PermissionAsker>,
    future: F,
) -> F::Output {
    ASKER.scope(asker, future).await
}

/// The asker of the turn this tool call runs in, if it can ask.
pub fn permission_asker() -> Option<Arc<dyn PermissionAsker>> {
    ASKER.try_with(Arc::clone).ok()
}

/// The options offered when a tool call needs the user's permission.
pub fn tool_call_options() -> Vec<PermissionOption> {
    options(&[
        ("allow-once", "Allow", PermissionOptionKind::AllowOnce),
        ("reject-once", "Refuse", PermissionOptionKind::RejectOnce),
    ])
}

/// [`tool_call_options`] and allowing the tool for the rest of the chat, for a toolbox
/// that remembers that answer.
pub fn tool_call_options_for_chat() -> Vec<PermissionOption> {
    options(&[
        ("allow-once", "Allow", PermissionOptionKind::AllowOnce),
        (
            "allow-chat",
            "Allow this tool for the rest of this chat",
            PermissionOptionKind::AllowAlways,
        ),
        ("reject-once", "Refuse", PermissionOptionKind::RejectOnce),
    ])
}

fn options(table: &[(&str, &str, PermissionOptionKind)]) -> Vec<PermissionOption> {
    table
        .iter()
        .copied()
        .map(|(id, label, kind)| PermissionOption {
            id: id.to_owned(),
            label: label.to_owned(),
            kind: Some(kind),
        })
        .collect()
}
