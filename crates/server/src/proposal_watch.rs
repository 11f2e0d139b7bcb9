//! Proposals staged or decided by another process (a `hearth run` or `hearth chat` beside
//! the server, sharing its data directory) are announced to the root's subscribers like
//! the server's own: the store is asked every two seconds what changed since it last
//! looked. Pages and badges follow those announcements instead of polling.

use std::collections::HashSet;
use std::time::Duration;

use hearth_core::Timestamp;
use hearth_host::Host;
use tokio_util::sync::CancellationToken;

/// How often the store is asked.
pub(crate) const WATCH_EVERY: Duration = Duration::from_secs(2);

/// Announces the proposals changed after the watch started, until `stop`.
pub(crate) async fn watch_proposals(host: Host, stop: CancellationToken) {
    let mut after = hearth_core::now();
    // The changes read at the latest instant: read again next time (`>=`), not announced
    // twice.
    let mut seen: HashSet<String> = HashSet::new();
    let mut ticker = tokio::time::interval(WATCH_EVERY);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = ticker.tick() => {}
        }
        match host.store().proposals_changed_after(after).await {
            Ok(changed) => {
                for id in fresh(changed, &mut after, &mut seen) {
                    host.proposal_changed(&id);
                }
            }
            Err(error) => tracing::debug!(%error, "could not read the changed proposals"),
        }
    }
}

/// The changes not announced yet, oldest first; moves `after` to the latest change and
/// remembers the ids changed at that instant (`seen`), which the next read returns again.
fn fresh(
    changed: Vec<(String, Timestamp)>,
    after: &mut Timestamp,
    seen: &mut HashSet<String>,
) -> Vec<String> {
    let mut announced = Vec::new();
    for (id, at) in changed {
        if at < *after || (at == *after && seen.contains(&id)) {
            continue;
        }
        if at > *after {
            *after = at;
            seen.clear();
        }
        seen.insert(id.clone());
        announced.push(id);
    }
    announced
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(millis: i64) -> Timestamp {
        chrono::DateTime::from_timestamp_millis(millis).unwrap()
    }

    #[test]
    fn each_change_is_announced_once_even_when_read_again_at_the_same_instant() {
        let mut after = at(100);
        let mut seen = HashSet::new();
        let first = vec![("a".to_owned(), at(100)), ("b".to_owned(), at(105))];
        assert_eq!(fresh(first, &mut after, &mut seen), ["a", "b"]);
        assert_eq!(after, at(105));
        // Read again from 105 (`>=`): b is known; c changed at the same millisecond.
        let second = vec![("b".to_owned(), at(105)), ("c".to_owned(), at(105))];
        assert_eq!(fresh(second, &mut after, &mut seen), ["c"]);
        let third = vec![("b".to_owned(), at(105)), ("c".to_owned(), at(105))];
        assert!(fresh(third, &mut after, &mut seen).is_empty());
        // b decided later: announced again, as a new change.
        let fourth = vec![("b".to_owned(), at(110))];
        assert_eq!(fresh(fourth, &mut after, &mut seen), ["b"]);
    }
}
