//! Added latency: from the agent's write of a `/timed` chunk to its envelope leaving
//! the host subscription, and the floor without Hearth.

use std::path::Path;

use hearth_core::{Action, ChatUri, UserMessage};
use hearth_host::Host;

use crate::bare::Bare;
use crate::drive::{ends, next};
use crate::measure::monotonic_nanos;

/// The delays (ns) of the chunks of `/timed count`, from the agent's write to the
/// envelope's arrival here.
pub(crate) async fn timed_through_host(host: &Host, chat: &ChatUri, count: u32) -> Vec<u64> {
    let (turn_id, mut subscription) = host
        .send_streaming(chat, UserMessage::text(format!("/timed {count}")))
        .await
        .unwrap();
    let mut delays = Vec::with_capacity(count as usize);
    loop {
        let envelope = next(&mut subscription.receiver).await;
        let received = monotonic_nanos();
        if let Action::TextDelta { text, .. } = &envelope.action {
            for line in text.lines() {
                let (index, written) = parse_timed(line);
                assert_eq!(
                    index as usize,
                    delays.len(),
                    "a timed chunk lost or reordered"
                );
                delays.push(received.saturating_sub(written));
            }
        }
        if ends(&envelope, &turn_id) {
            break;
        }
    }
    assert_eq!(delays.len(), count as usize, "timed chunks lost");
    delays
}

/// `I NANOS` of a `/timed` chunk.
pub(crate) fn parse_timed(line: &str) -> (u32, u64) {
    let (index, nanos) = line
        .split_once(' ')
        .unwrap_or_else(|| panic!("not a timed chunk: {line:?}"));
    (index.parse().unwrap(), nanos.parse().unwrap())
}

/// The floor: the same agent and command read by a bare line reader, with no ACP SDK,
/// harness or host in between.
pub(crate) async fn timed_floor(agent: &Path, count: u32) -> Vec<u64> {
    let mut bare = Bare::start(agent).await;
    let mut delays = Vec::with_capacity(count as usize);
    bare.prompt(&format!("/timed {count}"), |text, received| {
        let (index, written) = parse_timed(text.trim_end());
        assert_eq!(index as usize, delays.len());
        delays.push(received.saturating_sub(written));
    })
    .await;
    assert_eq!(delays.len(), count as usize);
    delays
}
