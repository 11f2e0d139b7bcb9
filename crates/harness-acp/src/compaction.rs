//! An external agent's own compactions (ACP `compaction_update` and
//! `compaction_summary_chunk`, sent to a client that declares `session.compaction`):
//! shown in the turn they happen in, with the summary the agent wrote.

use agent_client_protocol::v1::schema as acp;
use hearth_core::{Signal, TurnId};

use crate::mapping;
use crate::shared::Route;

/// The signals of a compaction update; `None` when the update is not one. Summary
/// chunks are collected until the compaction completes; a completed compaction shows
/// with its summary (the one it carries, else the chunks), a failed one as an error.
pub(crate) fn compaction_signals(
    route: &mut Route,
    turn_id: &TurnId,
    update: &acp::SessionUpdate,
) -> Option<Vec<Signal>> {
    match update {
        acp::SessionUpdate::CompactionSummaryChunk(chunk) => {
            route
                .compaction_summary
                .push_str(&mapping::block_text(&chunk.content));
            Some(Vec::new())
        }
        acp::SessionUpdate::CompactionUpdate(update) => {
            Some(status_signals(route, turn_id, update))
        }
        _ => None,
    }
}

fn status_signals(
    route: &mut Route,
    turn_id: &TurnId,
    update: &acp::CompactionUpdate,
) -> Vec<Signal> {
    if let Some(blocks) = update.summary.value() {
        route.compaction_summary = blocks.iter().map(mapping::block_text).collect();
    }
    match &update.status {
        acp::CompactionStatus::Completed => vec![Signal::Compacted {
            turn_id: turn_id.clone(),
            turns: None,
            summary: std::mem::take(&mut route.compaction_summary),
        }],
        acp::CompactionStatus::Failed => {
            route.compaction_summary.clear();
            let reason = update
                .error
                .value()
                .map_or_else(String::new, |error| format!(": {error}"));
            vec![Signal::Error {
                turn_id: turn_id.clone(),
                message: format!("the agent could not compact its context{reason}"),
            }]
        }
        acp::CompactionStatus::Cancelled => {
            route.compaction_summary.clear();
            Vec::new()
        }
        _ => Vec::new(),
    }
}
