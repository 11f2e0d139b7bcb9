//! A running turn's budget: each progress signal of the turn passes through it before it
//! is shown or stored, and comes out within the turn's [`OutputLimits`], or not at all.
//!
//! The rules, in the order they apply:
//! 1. Answer text and reasoning each keep up to `answer_bytes`: the delta that passes it
//!    is cut at a character boundary and ends with a [`cut_mark`]; later ones are dropped.
//! 2. A turn keeps up to `tool_calls` tool calls; a call announced past that is dropped,
//!    and so are (without counting them again) the updates of a call the turn does not
//!    hold.
//! 3. A turn applies up to `tool_call_updates` updates of its calls (a call announced
//!    again counts as one); past that only the update that ends a call passes, once.
//! 4. Each piece of a call (its result, its arguments, its content, its locations) and
//!    each plan keeps up to `tool_result_bytes`, its cut marked with how much was dropped;
//!    a title keeps up to [`TOOL_TITLE_BYTES`].
//! 5. Everything tool calls and plans send counts toward `tool_output_bytes`, every
//!    update anew. Past it, an update's new details are dropped (the call keeps what it
//!    showed), and a new call's arguments and content, a result or a plan become a mark.
//!
//! What is dropped is counted, never kept: [`TurnBudget::closing_note`] tells how much.
//! Each signal costs time in its own size only, whatever the turn holds already.

use std::collections::HashMap;

use crate::harness::Signal;
use crate::output::{
    Dropped, OutputLimit, OutputLimits, TOOL_TITLE_BYTES, clip_arguments, clip_text, cut_mark,
    dropped_mark,
};
use crate::tool_call::{ToolCallContent, ToolCallPatch, ToolLocation};
use crate::turn::{PermissionOption, PlanEntry, ToolCallPart, ToolCallStatus, ToolResult};

/// What a part costs besides its text, in the turn's estimated size.
const PART_BYTES: usize = 64;

/// A signal that passed, and about how many bytes it adds to the turn (text, details and
/// a little for the part itself).
#[derive(Debug)]
pub struct Admitted {
    /// The signal, cut to the limits.
    pub signal: Signal,
    /// About how many bytes it adds.
    pub bytes: usize,
}

/// Text of one kind kept up to a limit.
#[derive(Clone, Copy, Debug, Default)]
struct Meter {
    kept: usize,
    dropped: u64,
    cut: bool,
}

impl Meter {
    /// The part of `delta` to keep: all of it, a marked beginning, or nothing.
    fn take(
        &mut self,
        mut delta: String,
        limit: usize,
        mark: impl FnOnce() -> String,
    ) -> Option<String> {
        if self.cut {
            self.dropped += delta.len() as u64;
            return None;
        }
        let room = limit.saturating_sub(self.kept);
        if delta.len() <= room {
            self.kept += delta.len();
            return Some(delta);
        }
        let end = delta.floor_char_boundary(room);
        self.dropped += (delta.len() - end) as u64;
        self.kept += end;
        self.cut = true;
        delta.truncate(end);
        delta.push_str(&mark());
        Some(delta)
    }
}

/// Whether a status ends a call.
fn ends(status: ToolCallStatus) -> bool {
    matches!(
        status,
        ToolCallStatus::Completed | ToolCallStatus::Failed | ToolCallStatus::Cancelled
    )
}

/// One running turn's budget (see the module's rules).
#[derive(Debug)]
pub struct TurnBudget {
    limits: OutputLimits,
    text: Meter,
    reasoning: Meter,
    /// The calls the turn holds, and whether each has ended.
    calls: HashMap<String, bool>,
    updates: usize,
    /// Bytes tool calls and plans sent so far.
    tool_bytes: usize,
    dropped: Dropped,
}

impl TurnBudget {
    /// A budget for a turn that has just started.
    pub fn new(limits: OutputLimits) -> Self {
        Self {
            limits,
            text: Meter::default(),
            reasoning: Meter::default(),
            calls: HashMap::new(),
            updates: 0,
            tool_bytes: 0,
            dropped: Dropped::default(),
        }
    }

    /// The limits it applies.
    pub fn limits(&self) -> &OutputLimits {
        &self.limits
    }

    /// What was dropped so far.
    pub fn dropped(&self) -> Dropped {
        Dropped {
            answer_bytes: self.text.dropped,
            reasoning_bytes: self.reasoning.dropped,
            ..self.dropped
        }
    }

    /// The note that ends the turn when it dropped anything.
    pub fn closing_note(&self) -> Option<String> {
        self.dropped().note(&self.limits)
    }

    /// The signal as the turn keeps it, or `None` when it is dropped.
    pub fn admit(&mut self, signal: Signal) -> Option<Admitted> {
        let limits = self.limits;
        let admitted = |signal: Signal, bytes: usize| {
            Some(Admitted {
                signal,
                bytes: bytes + PART_BYTES,
            })
        };
        match signal {
            Signal::TextDelta { turn_id, text } => {
                let text = self.text.take(text, limits.answer_bytes, || {
                    cut_mark("the answer", &limits)
                })?;
                let bytes = text.len();
                admitted(Signal::TextDelta { turn_id, text }, bytes)
            }
            Signal::ReasoningDelta { turn_id, text } => {
                let text = self.reasoning.take(text, limits.answer_bytes, || {
                    cut_mark("the reasoning", &limits)
                })?;
                let bytes = text.len();
                admitted(Signal::ReasoningDelta { turn_id, text }, bytes)
            }
            Signal::ToolCallStarted { turn_id, mut call } => {
                let bytes = self.admit_call(&mut call)?;
                admitted(Signal::ToolCallStarted { turn_id, call }, bytes)
            }
            Signal::ToolCallUpdated {
                turn_id,
                call_id,
                status,
                mut result,
                mut patch,
            } => {
                let bytes = self.admit_update(&call_id, status, &mut result, &mut patch)?;
                admitted(
                    Signal::ToolCallUpdated {
                        turn_id,
                        call_id,
                        status,
                        result,
                        patch,
                    },
                    bytes,
                )
            }
            Signal::Plan {
                turn_id,
                mut entries,
            } => {
                let bytes = self.fit_plan(&mut entries)?;
                admitted(Signal::Plan { turn_id, entries }, bytes)
            }
            Signal::PermissionRequested {
                turn_id,
                request_id,
                mut title,
                mut options,
                tool_call_id,
            } => {
                // Never dropped (the agent may wait for its answer); its words are cut.
                let bytes = self.fit_permission(&mut title, &mut options);
                admitted(
                    Signal::PermissionRequested {
                        turn_id,
                        request_id,
                        title,
                        options,
                        tool_call_id,
                    },
                    bytes,
                )
            }
            other => admitted(other, 0),
        }
    }

    /// A call's start (or restart): `None` when it is dropped (rules 2 and 3), else its
    /// size once cut.
    fn admit_call(&mut self, call: &mut ToolCallPart) -> Option<usize> {
        let ended = match self.calls.get(&call.call_id).copied() {
            Some(ended) if !self.count_update(ended, call.status) => return None,
            Some(ended) => ended,
            None if self.calls.len() >= self.limits.tool_calls => {
                self.dropped.tool_calls += 1;
                return None;
            }
            None => false,
        };
        self.calls
            .insert(call.call_id.clone(), ended || ends(call.status));
        Some(self.fit_call(call))
    }

    /// A call's update: `None` when it is dropped, else its size once cut.
    fn admit_update(
        &mut self,
        call_id: &str,
        status: ToolCallStatus,
        result: &mut Option<ToolResult>,
        patch: &mut ToolCallPatch,
    ) -> Option<usize> {
        // A call the turn does not hold was dropped (and counted) whole, or never
        // announced.
        let ended = self.calls.get(call_id).copied()?;
        if !self.count_update(ended, status) {
            return None;
        }
        if ends(status) {
            self.calls.insert(call_id.to_owned(), true);
        }
        let mut bytes = self.fit_patch(patch);
        if let Some(result) = result {
            bytes += self.fit_result(result);
        }
        Some(bytes)
    }

    /// A permission request's title and option labels, cut; returns its size as asked.
    fn fit_permission(&mut self, title: &mut String, options: &mut [PermissionOption]) -> usize {
        let mut bytes = title.len();
        self.dropped.tool_output_bytes +=
            clip_text(title, TOOL_TITLE_BYTES, OutputLimit::ToolResultBytes) as u64;
        for option in options {
            self.dropped.tool_output_bytes += clip_text(
                &mut option.label,
                TOOL_TITLE_BYTES,
                OutputLimit::ToolResultBytes,
            ) as u64;
            bytes += option.label.len() + option.id.len();
        }
        bytes
    }

    /// Counts an update of a call that has `ended` (or not) to `status`: whether it may
    /// pass (rule 3).
    fn count_update(&mut self, ended: bool, status: ToolCallStatus) -> bool {
        self.updates += 1;
        if self.updates <= self.limits.tool_call_updates || (!ended && ends(status)) {
            true
        } else {
            self.dropped.tool_call_updates += 1;
            false
        }
    }

    /// Whether `bytes` more fit in the turn's tool output; counts them when they do
    /// (rule 5). What does not fit is counted as dropped.
    fn spend(&mut self, bytes: usize) -> bool {
        if self.tool_bytes.saturating_add(bytes) <= self.limits.tool_output_bytes {
            self.tool_bytes += bytes;
            true
        } else {
            self.dropped.tool_output_bytes += bytes as u64;
            false
        }
    }

    /// A mark in place of `bytes` bytes of `what` past the turn's tool output.
    fn over_output(&self, what: &str, bytes: usize) -> String {
        dropped_mark(what, bytes, OutputLimit::ToolOutputBytes, &self.limits)
    }

    fn fit_title(&mut self, title: &mut String) -> usize {
        self.dropped.tool_output_bytes +=
            clip_text(title, TOOL_TITLE_BYTES, OutputLimit::ToolResultBytes) as u64;
        title.len()
    }

    /// Cuts content to one piece; returns its size afterwards.
    fn fit_content(&mut self, content: &mut [ToolCallContent]) -> usize {
        let mut room = self.limits.tool_result_bytes;
        let mut bytes = 0;
        let clip = |text: &mut String, room: &mut usize| {
            let dropped = clip_text(text, *room, OutputLimit::ToolResultBytes);
            *room = room.saturating_sub(text.len());
            dropped as u64
        };
        let mut dropped = 0;
        for item in content.iter_mut() {
            match item {
                ToolCallContent::Text { text } => {
                    dropped += clip(text, &mut room);
                    bytes += text.len();
                }
                ToolCallContent::Diff {
                    path,
                    old_text,
                    new_text,
                } => {
                    dropped += clip(path, &mut room);
                    if let Some(old_text) = old_text {
                        dropped += clip(old_text, &mut room);
                        bytes += old_text.len();
                    }
                    dropped += clip(new_text, &mut room);
                    bytes += path.len() + new_text.len();
                }
                ToolCallContent::Terminal { terminal_id } => {
                    dropped += clip(terminal_id, &mut room);
                    bytes += terminal_id.len();
                }
            }
        }
        self.dropped.tool_output_bytes += dropped;
        bytes
    }

    /// Keeps the locations that fit in one piece; returns their size.
    fn fit_locations(&mut self, locations: &mut Vec<ToolLocation>) -> usize {
        let mut bytes = 0;
        let mut kept = locations.len();
        for (index, location) in locations.iter().enumerate() {
            let size = location.path.len() + 8;
            if bytes + size > self.limits.tool_result_bytes {
                kept = index;
                break;
            }
            bytes += size;
        }
        let dropped: usize = locations[kept..]
            .iter()
            .map(|location| location.path.len() + 8)
            .sum();
        self.dropped.tool_output_bytes += dropped as u64;
        locations.truncate(kept);
        bytes
    }

    /// A new (or announced again) call within rules 4 and 5.
    fn fit_call(&mut self, call: &mut ToolCallPart) -> usize {
        let mut bytes = self.fit_title(&mut call.name);
        if let Some(title) = &mut call.title {
            bytes += self.fit_title(title);
        }
        let (arguments, dropped) = clip_arguments(&mut call.arguments, &self.limits);
        self.dropped.tool_output_bytes += dropped as u64;
        if self.spend(arguments) {
            bytes += arguments;
        } else {
            call.arguments =
                serde_json::Value::String(self.over_output("the arguments", arguments));
        }
        let locations = self.fit_locations(&mut call.locations);
        if self.spend(locations) {
            bytes += locations;
        } else {
            call.locations.clear();
        }
        let content = self.fit_content(&mut call.content);
        if self.spend(content) {
            bytes += content;
        } else {
            call.content = vec![ToolCallContent::Text {
                text: self.over_output("the content", content),
            }];
        }
        if let Some(result) = &mut call.result {
            bytes += self.fit_result(result);
        }
        bytes
    }

    /// An update's new details within rules 4 and 5: what does not fit is left out, so
    /// the call keeps what it showed before.
    fn fit_patch(&mut self, patch: &mut ToolCallPatch) -> usize {
        let mut bytes = 0;
        if let Some(title) = &mut patch.title {
            let size = self.fit_title(title);
            if self.spend(size) {
                bytes += size;
            } else {
                patch.title = None;
            }
        }
        if let Some(arguments) = &mut patch.arguments {
            let (size, dropped) = clip_arguments(arguments, &self.limits);
            self.dropped.tool_output_bytes += dropped as u64;
            if self.spend(size) {
                bytes += size;
            } else {
                patch.arguments = None;
            }
        }
        if let Some(locations) = &mut patch.locations {
            let size = self.fit_locations(locations);
            if self.spend(size) {
                bytes += size;
            } else {
                patch.locations = None;
            }
        }
        if let Some(content) = &mut patch.content {
            let size = self.fit_content(content);
            if self.spend(size) {
                bytes += size;
            } else {
                patch.content = None;
            }
        }
        bytes
    }

    fn fit_result(&mut self, result: &mut ToolResult) -> usize {
        self.dropped.tool_output_bytes += clip_text(
            &mut result.content,
            self.limits.tool_result_bytes,
            OutputLimit::ToolResultBytes,
        ) as u64;
        let size = result.content.len();
        if !self.spend(size) {
            result.content = self.over_output("the result", size);
        }
        result.content.len()
    }

    /// A plan within rules 4 and 5; `None` when it is dropped (the turn keeps the plan
    /// it showed).
    fn fit_plan(&mut self, entries: &mut [PlanEntry]) -> Option<usize> {
        let mut room = self.limits.tool_result_bytes;
        let mut bytes = 0;
        for entry in entries.iter_mut() {
            self.dropped.tool_output_bytes +=
                clip_text(&mut entry.content, room, OutputLimit::ToolResultBytes) as u64;
            room = room.saturating_sub(entry.content.len());
            bytes += entry.content.len() + 8;
        }
        self.spend(bytes).then_some(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::TurnId;
    use crate::output::TRUNCATED_MARK;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn limits() -> OutputLimits {
        OutputLimits {
            answer_bytes: 10,
            tool_calls: 2,
            tool_call_updates: 3,
            tool_result_bytes: 16,
            tool_output_bytes: 64,
        }
    }

    fn turn() -> TurnId {
        TurnId::parse("turn-1").unwrap()
    }

    fn text(budget: &mut TurnBudget, delta: &str) -> Option<String> {
        match budget
            .admit(Signal::TextDelta {
                turn_id: turn(),
                text: delta.into(),
            })?
            .signal
        {
            Signal::TextDelta { text, .. } => Some(text),
            other => panic!("{other:?}"),
        }
    }

    fn start(
        budget: &mut TurnBudget,
        id: &str,
        arguments: serde_json::Value,
    ) -> Option<ToolCallPart> {
        let call = ToolCallPart::new(id, "read", arguments, ToolCallStatus::Running);
        match budget
            .admit(Signal::ToolCallStarted {
                turn_id: turn(),
                call,
            })?
            .signal
        {
            Signal::ToolCallStarted { call, .. } => Some(call),
            other => panic!("{other:?}"),
        }
    }

    fn update(
        budget: &mut TurnBudget,
        id: &str,
        status: ToolCallStatus,
        result: Option<&str>,
    ) -> Option<(Option<ToolResult>, ToolCallPatch)> {
        let signal = Signal::ToolCallUpdated {
            turn_id: turn(),
            call_id: id.into(),
            status,
            result: result.map(|content| ToolResult {
                content: content.into(),
                is_error: false,
            }),
            patch: ToolCallPatch {
                content: Some(vec![ToolCallContent::Text {
                    text: "line\n".into(),
                }]),
                ..ToolCallPatch::default()
            },
        };
        match budget.admit(signal)?.signal {
            Signal::ToolCallUpdated { result, patch, .. } => Some((result, patch)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn answer_text_is_cut_once_at_its_limit_and_counted_after() {
        let mut budget = TurnBudget::new(limits());
        assert_eq!(text(&mut budget, "hello ").as_deref(), Some("hello "));
        let cut = text(&mut budget, "world, and more").unwrap();
        assert!(
            cut.starts_with(
                "worl\n\n[truncated by Hearth: the answer reached its limit of 10 bytes"
            ),
            "{cut}"
        );
        assert_eq!(text(&mut budget, "dropped"), None);
        // Reasoning has a limit of its own.
        let reasoning = budget
            .admit(Signal::ReasoningDelta {
                turn_id: turn(),
                text: "think".into(),
            })
            .unwrap();
        assert!(matches!(reasoning.signal, Signal::ReasoningDelta { text, .. } if text == "think"));
        let dropped = budget.dropped();
        assert_eq!(dropped.answer_bytes, 11 + 7);
        assert_eq!(dropped.reasoning_bytes, 0);
        let note = budget.closing_note().unwrap();
        assert!(note.contains("18 bytes of answer text"), "{note}");
    }

    #[test]
    fn calls_past_the_limit_and_their_updates_are_dropped() {
        let mut budget = TurnBudget::new(limits());
        assert!(start(&mut budget, "a", json!({})).is_some());
        assert!(start(&mut budget, "b", json!({})).is_some());
        assert_eq!(start(&mut budget, "c", json!({})), None);
        assert_eq!(
            update(&mut budget, "c", ToolCallStatus::Completed, None),
            None
        );
        let dropped = budget.dropped();
        assert_eq!((dropped.tool_calls, dropped.tool_call_updates), (1, 0));
    }

    #[test]
    fn past_the_update_limit_only_the_end_of_each_call_passes_once() {
        let mut budget = TurnBudget::new(limits());
        start(&mut budget, "a", json!({})).unwrap();
        start(&mut budget, "b", json!({})).unwrap();
        for _ in 0..3 {
            assert!(update(&mut budget, "a", ToolCallStatus::Running, None).is_some());
        }
        assert_eq!(
            update(&mut budget, "a", ToolCallStatus::Running, None),
            None
        );
        assert!(update(&mut budget, "a", ToolCallStatus::Completed, Some("ok")).is_some());
        assert_eq!(
            update(&mut budget, "a", ToolCallStatus::Completed, Some("again")),
            None
        );
        // Announcing a call again counts as an update.
        assert_eq!(start(&mut budget, "b", json!({})), None);
        assert!(update(&mut budget, "b", ToolCallStatus::Failed, Some("no")).is_some());
        assert_eq!(budget.dropped().tool_call_updates, 3);
    }

    #[test]
    fn pieces_are_cut_to_their_limit_and_the_turn_to_its_tool_output() {
        let mut budget = TurnBudget::new(OutputLimits {
            tool_output_bytes: 600,
            tool_call_updates: 1000,
            ..limits()
        });
        let call = start(&mut budget, "a", json!({"path": "a/very/long/path/indeed"})).unwrap();
        assert!(
            matches!(&call.arguments, serde_json::Value::String(mark) if mark.starts_with(TRUNCATED_MARK)),
            "{:?}",
            call.arguments
        );
        let (result, _) = update(
            &mut budget,
            "a",
            ToolCallStatus::Completed,
            Some("a result far longer than sixteen bytes"),
        )
        .unwrap();
        let result = result.unwrap().content;
        assert!(
            result.starts_with("a result far lon\n[truncated by Hearth: 22 bytes more dropped"),
            "{result}"
        );
        assert_eq!(budget.dropped().tool_output_bytes, 34 + 22);
        // Once the turn's tool output is spent, an update's new content is left out (the
        // call keeps what it showed), and a new call's arguments become a mark.
        start(&mut budget, "b", json!({})).unwrap();
        let mut updates = 0;
        while update(&mut budget, "b", ToolCallStatus::Running, None)
            .unwrap()
            .1
            .content
            .is_some()
        {
            updates += 1;
            assert!(updates < 200, "the tool output is never spent");
        }
        let mut budget = TurnBudget::new(OutputLimits {
            tool_output_bytes: 4,
            ..limits()
        });
        let call = start(&mut budget, "c", json!({"a": 1})).unwrap();
        assert!(
            matches!(&call.arguments, serde_json::Value::String(mark) if mark.contains("`tool_output_bytes`")),
            "{:?}",
            call.arguments
        );
        let note = budget.closing_note().unwrap();
        assert!(note.contains("7 bytes of tool output"), "{note}");
        assert!(note.contains("`tool_output_bytes` = 4"), "{note}");
    }

    #[test]
    fn a_plan_is_cut_and_dropped_once_the_tool_output_is_spent() {
        let mut budget = TurnBudget::new(limits());
        let plan = |content: &str| Signal::Plan {
            turn_id: turn(),
            entries: vec![PlanEntry {
                content: content.into(),
                status: crate::turn::PlanStatus::Pending,
            }],
        };
        let admitted = budget.admit(plan("step one")).unwrap();
        assert_eq!(admitted.bytes, 8 + 8 + PART_BYTES);
        let mut kept = 0;
        while budget.admit(plan("step two")).is_some() {
            kept += 1;
            assert!(kept < 10, "plans are never dropped");
        }
        assert_eq!(budget.dropped().tool_output_bytes, 16);
    }
}
