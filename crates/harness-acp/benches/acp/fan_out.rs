//! Fan-out of a long answer to a subscriber, checked envelope by envelope and against
//! the stored turn.

use std::path::Path;
use std::time::{Duration, Instant};

use hearth_core::{Action, ChatUri, UserMessage};
use hearth_host::Host;
use hearth_store::Store;

use crate::bare::Bare;
use crate::drive::{Driven, ends, next};
use crate::measure::{Sampler, monotonic_nanos, own_memory, resident};
use crate::report::{FanOutRow, Point, Row};
use crate::{CHUNK_SIZE, FAN_OUT_CHUNKS};

/// Chunk `index` of the answer: the index, zero-padded, and a newline (the test
/// agent's `/chunks` text).
pub(crate) fn chunk_text(index: u32) -> String {
    let width = CHUNK_SIZE - 1;
    format!("{index:0width$}\n")
}

/// The whole answer.
pub(crate) fn answer() -> String {
    (0..FAN_OUT_CHUNKS).map(chunk_text).collect()
}

/// Streams the long answer `prompt` asks for through `driven`, with memory sampled
/// meanwhile: the fan-out row, then memory at the peak, after, and at the process's
/// high-water mark.
pub(crate) async fn long_answer(driven: &Driven, chat: &ChatUri, prompt: &str) -> Vec<Row> {
    let expected = answer();
    let pid = driven.harness.process_id().await;
    let sampler = Sampler::start(pid);
    let fan_out = fan_out(
        driven.host(),
        driven.test.store.as_ref(),
        chat,
        prompt,
        &expected,
    )
    .await;
    let (hearth_peak, agent_peak) = sampler.finish();
    let high_water = pid
        .and_then(|pid| resident(&pid.to_string()))
        .map(|memory| memory.peak);
    vec![
        Row::FanOut(FanOutRow {
            label: format!("{}: {prompt}", driven.name),
            ..fan_out
        }),
        driven
            .memory(Point::Streaming, hearth_peak, Some(agent_peak))
            .await,
        driven.memory(Point::After, own_memory().now, None).await,
        driven
            .memory(Point::HighWater, own_memory().peak, high_water)
            .await,
    ]
}

/// The floor: the test agent's `/chunks` read by a bare line reader, checked the same.
pub(crate) async fn bare_floor(agent: &Path) -> FanOutRow {
    let expected = answer();
    let mut bare = Bare::start(agent).await;
    let mut text = String::with_capacity(expected.len());
    let mut deltas = 0;
    let mut first = None;
    let mut last = 0;
    let started = monotonic_nanos();
    bare.prompt(&format!("/chunks {FAN_OUT_CHUNKS}"), |piece, received| {
        first.get_or_insert(received);
        last = received;
        deltas += 1;
        text.push_str(piece);
    })
    .await;
    let complete = monotonic_nanos();
    same_text("the bare reader's chunks", &text, &expected);
    let seconds = |nanos: u64| nanos.saturating_sub(started) as f64 / 1e9;
    FanOutRow {
        label: "floor: bare line reader, test agent".into(),
        chunks: FAN_OUT_CHUNKS,
        bytes: expected.len(),
        deltas,
        first: seconds(first.unwrap_or(started)),
        last: seconds(last),
        complete: seconds(complete),
    }
}

/// Sends `prompt`, receives every envelope of its turn as a subscriber and checks them
/// against `expected` (the whole answer); the stored turn must hold it too. The row
/// has no label yet.
pub(crate) async fn fan_out(
    host: &Host,
    store: &dyn Store,
    chat: &ChatUri,
    prompt: &str,
    expected: &str,
) -> FanOutRow {
    let started = Instant::now();
    let (turn_id, mut subscription) = host
        .send_streaming(chat, UserMessage::text(prompt))
        .await
        .unwrap();
    let mut text = String::with_capacity(expected.len());
    let mut deltas = 0;
    let mut first = None;
    let mut last = Duration::ZERO;
    let mut seq = None;
    loop {
        let envelope = next(&mut subscription.receiver).await;
        if let Some(previous) = seq {
            assert_eq!(
                envelope.seq,
                previous + 1,
                "envelopes {} to {} never reached the subscriber",
                previous + 1,
                envelope.seq.saturating_sub(1)
            );
        }
        seq = Some(envelope.seq);
        if let Action::TextDelta {
            turn_id: id,
            text: piece,
        } = &envelope.action
            && *id == turn_id
        {
            let now = started.elapsed();
            first.get_or_insert(now);
            last = now;
            deltas += 1;
            text.push_str(piece);
        }
        if ends(&envelope, &turn_id) {
            break;
        }
    }
    let complete = started.elapsed();
    same_text("the subscriber's deltas", &text, expected);
    host.flush().await;
    let stored = store.turns(chat).await.unwrap();
    same_text(
        "the stored turn",
        &stored.last().unwrap().response_text(),
        expected,
    );
    FanOutRow {
        label: String::new(),
        chunks: FAN_OUT_CHUNKS,
        bytes: expected.len(),
        deltas,
        first: first.unwrap_or_default().as_secs_f64(),
        last: last.as_secs_f64(),
        complete: complete.as_secs_f64(),
    }
}

/// Panics, naming the first chunk that differs, unless `actual` is `expected`.
pub(crate) fn same_text(what: &str, actual: &str, expected: &str) {
    if actual == expected {
        return;
    }
    let at = actual
        .bytes()
        .zip(expected.bytes())
        .position(|(left, right)| left != right)
        .unwrap_or(actual.len().min(expected.len()));
    let around = |text: &str| {
        let start = at.saturating_sub(CHUNK_SIZE * 2);
        text.get(start..(at + CHUNK_SIZE * 2).min(text.len()))
            .unwrap_or_default()
            .to_owned()
    };
    panic!(
        "{what}: {} bytes where {} were expected; first difference at byte {at} (chunk {}): {:?} where {:?} was expected",
        actual.len(),
        expected.len(),
        at / CHUNK_SIZE,
        around(actual),
        around(expected)
    );
}
