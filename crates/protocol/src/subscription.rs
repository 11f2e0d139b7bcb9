//! `subscribe`, `unsubscribe` and the notifications a subscription brings.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::state::{Envelope, Snapshot};

/// `subscribe`: the state of a resource, then its envelopes as
/// `subscription/envelope` notifications. With `lastSeq` (a reconnect), the envelopes
/// missed since then when the server still has them, else a fresh snapshot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubscribeParams {
    /// The resource: `hearth-root:`, a session or a chat URI.
    pub resource: String,
    /// The last seq the client applied, when it reconnects.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_seq: Option<u64>,
    /// For a chat: the snapshot holds only its newest `turnLimit` turns (0: none), and
    /// its `olderTurns` says whether earlier ones exist (read them with `chat/turns`).
    /// Resyncs of this subscription keep the limit. Absent: every turn. Other resources
    /// ignore it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_limit: Option<u32>,
}

/// What `subscribe` returns. Envelopes of the resource follow it, each with the next seq.
// One value per subscribe, serialized at once: boxing the snapshot would only add an
// allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum SubscribeResponse {
    /// The resource's state: replace what the client had.
    Snapshot {
        /// The state and its seq.
        snapshot: Snapshot,
    },
    /// The envelopes after `lastSeq` (possibly none): apply them in order.
    Replay {
        /// The resource.
        resource: String,
        /// The missed envelopes, in order.
        envelopes: Vec<Envelope>,
    },
}

/// `unsubscribe`: no more envelopes of a resource.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnsubscribeParams {
    /// The resource.
    pub resource: String,
}

/// What `unsubscribe` returns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnsubscribeResponse {
    /// Whether the connection was subscribed.
    pub unsubscribed: bool,
}

/// Why the server sent a fresh snapshot instead of the next envelope.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ResyncReason {
    /// The client read too slowly and its queue filled up.
    Lagged,
}

/// `subscription/resync`: the client fell behind; this snapshot replaces its state and
/// envelopes continue after its seq.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResyncNotification {
    /// The fresh state.
    pub snapshot: Snapshot,
    /// Why.
    pub reason: ResyncReason,
}

/// `subscription/ended`: the resource is gone (deleted, or its session evicted and not
/// loadable); no more envelopes come.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionEndedNotification {
    /// The resource.
    pub resource: String,
    /// What happened.
    pub reason: String,
}

/// `subscription/envelope`: one action of a subscribed resource.
pub type EnvelopeNotification = Envelope;
