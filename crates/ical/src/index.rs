//! The event index: which events occur in a range of time, with recurrence expanded.
//!
//! Single events (and overrides of one occurrence) sit in arrays sorted by start, so a
//! range query is a binary search. Series keep their rules compiled and their bounds
//! (first start, last end — unbounded for open-ended rules; `COUNT` rules are expanded
//! once at build time to find their end); a query expands only the series whose bounds
//! meet the range, each jumping straight to the range.

use std::collections::HashMap;

use chrono::{DateTime, Duration, NaiveDate, NaiveDateTime, NaiveTime, Utc};
use chrono_tz::Tz;

use crate::event::{Event, EventId, EventSource};
use crate::expand::{Ended, Expander, Visit};
use crate::time::{EventTime, Zone};
use build::build_series;

/// Single events longer than this go to the (linearly scanned) long list.
const SHORT_SECONDS: i64 = 7 * 86_400;

/// Steps (see the `expand` module) one calendar's index may take to find where its
/// `COUNT` rules end, and one rule at most. A rule whose end takes more is cut off where
/// the search stopped, and the calendar says so ([`EventIndex::limited`]); a calendar
/// with a runaway rule is indexed in bounded time and never holds up other calendars.
const INDEX_BUDGET: u64 = 4_000_000;
const RULE_BUDGET: u64 = 1_000_000;

/// One occurrence of an event in a range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Occurrence<'a> {
    /// The event (for an occurrence of a series, the series).
    pub event: &'a Event,
    /// When it starts.
    pub start: DateTime<Utc>,
    /// When it ends.
    pub end: DateTime<Utc>,
    /// For an occurrence of a series or an override: the original start of the
    /// occurrence, which names it (`RECURRENCE-ID`).
    pub recurrence_id: Option<EventTime>,
    /// The event's place in its index by title, for sorting without comparing text.
    pub(crate) rank: u32,
}

impl Occurrence<'_> {
    /// Whether it is an all-day occurrence.
    pub fn is_all_day(&self) -> bool {
        self.event.is_all_day()
    }
}

/// A query range in one zone's wall clock.
#[derive(Clone, Copy, Debug)]
struct Window {
    start: NaiveDateTime,
    end: NaiveDateTime,
    margin: Duration,
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    start: i64,
    end: i64,
    event: u32,
}

/// From a `RANGE=THISANDFUTURE` override on: later occurrences move and take its length.
#[derive(Clone, Copy, Debug)]
struct Future {
    /// The override's RECURRENCE-ID (series wall clock); occurrences after it change.
    after: NaiveDateTime,
    shift: Duration,
    length_seconds: i64,
    length_days: i64,
}

/// A series whose `COUNT` rule was cut off at the index budget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitedSeries {
    /// The series.
    pub event: EventId,
    /// Where it is stored.
    pub source: EventSource,
    /// The rule, as written.
    pub rule: String,
    /// The last occurrence shown (series wall clock).
    pub shown_until: NaiveDateTime,
}

#[derive(Debug)]
struct Series {
    event: u32,
    zone: Zone,
    all_day: bool,
    dtstart: NaiveDateTime,
    include_dtstart: bool,
    rules: Vec<Expander>,
    rdates: Vec<NaiveDateTime>,
    // Sorted keys (usually empty or a few): binary search beats hashing here.
    excluded: Vec<i64>,
    excluded_dates: Vec<i64>,
    overridden: Vec<i64>,
    length_seconds: i64,
    length_days: i64,
    /// `RDATE;VALUE=PERIOD` starts (series wall clock) with their own length in seconds.
    periods: Vec<(NaiveDateTime, i64)>,
    futures: Vec<Future>,
    /// How far before the window an occurrence may be generated and still show in it
    /// (longest length plus latest shift), and how far after it (earliest shift).
    reach_before: Duration,
    reach_after: Duration,
    first_start: i64,
    last_end: i64,
}

/// Events of one or more calendars, ready for range queries.
#[derive(Debug)]
pub struct EventIndex {
    events: Vec<Event>,
    floating: Tz,
    singles: Vec<Slot>,
    long: Vec<Slot>,
    series: Vec<Series>,
    by_uid: HashMap<(String, String), u32>,
    /// Each event's position when sorted by title.
    ranks: Vec<u32>,
    limited: Vec<LimitedSeries>,
}

fn day_number(date: NaiveDate) -> i64 {
    i64::from(chrono::Datelike::num_days_from_ce(&date))
}

/// Each event's position when sorted by title.
fn title_ranks(events: &[Event]) -> Vec<u32> {
    let mut order: Vec<u32> = (0..events.len() as u32).collect();
    order.sort_by(|a, b| events[*a as usize].title.cmp(&events[*b as usize].title));
    let mut ranks = vec![0; order.len()];
    for (rank, position) in order.into_iter().enumerate() {
        ranks[position as usize] = rank as u32;
    }
    ranks
}

/// Where each event is by `(calendar, uid)` — its series or single event, else (when
/// that is missing) an override standing for it — and the overrides of each series.
type ByUid = HashMap<(String, String), u32>;

fn by_series(events: &[Event]) -> (ByUid, HashMap<(String, String), Vec<u32>>) {
    let mut by_uid = ByUid::new();
    let mut overrides: HashMap<(String, String), Vec<u32>> = HashMap::new();
    for (position, event) in events.iter().enumerate() {
        let key = (event.calendar.clone(), event.uid.clone());
        match event.recurrence_id {
            Some(_) => overrides.entry(key).or_default().push(position as u32),
            None => {
                by_uid.entry(key).or_insert(position as u32);
            }
        }
    }
    // An override whose series is missing stands for its event.
    for (position, event) in events.iter().enumerate() {
        if event.recurrence_id.is_some() {
            let key = (event.calendar.clone(), event.uid.clone());
            by_uid.entry(key).or_insert(position as u32);
        }
    }
    (by_uid, overrides)
}

impl EventIndex {
    /// Indexes `events`; floating times and all-day dates are placed in `floating`.
    pub fn new(events: Vec<Event>, floating: Tz) -> Self {
        let (by_uid, overrides) = by_series(&events);
        let mut index = Self {
            ranks: title_ranks(&events),
            events,
            floating,
            singles: Vec::new(),
            long: Vec::new(),
            series: Vec::new(),
            by_uid,
            limited: Vec::new(),
        };
        let mut budget = INDEX_BUDGET;
        for position in 0..index.events.len() {
            let event = &index.events[position];
            if event.recurrence.is_some() && event.recurrence_id.is_none() {
                let replaced: Vec<&Event> = overrides
                    .get(&(event.calendar.clone(), event.uid.clone()))
                    .map(|positions| {
                        positions
                            .iter()
                            .map(|p| &index.events[*p as usize])
                            .collect()
                    })
                    .unwrap_or_default();
                let series = build_series(
                    position as u32,
                    event,
                    &replaced,
                    floating,
                    &mut budget,
                    &mut index.limited,
                );
                index.series.push(series);
            } else {
                let start = event.start.to_utc(floating).timestamp();
                let end = event.end.to_utc(floating).timestamp().max(start);
                let slot = Slot {
                    start,
                    end,
                    event: position as u32,
                };
                if end - start > SHORT_SECONDS {
                    index.long.push(slot);
                } else {
                    index.singles.push(slot);
                }
            }
        }
        index.singles.sort_unstable_by_key(|s| (s.start, s.end));
        index.long.sort_unstable_by_key(|s| (s.start, s.end));
        index.series.sort_unstable_by_key(|s| s.first_start);
        index
    }

    /// All indexed events.
    pub fn events(&self) -> &[Event] {
        &self.events
    }

    /// Series whose `COUNT` rule needed more work to end than an index may take: they
    /// are shown up to where the work stopped.
    pub fn limited(&self) -> &[LimitedSeries] {
        &self.limited
    }

    /// The zone floating times are placed in.
    pub fn floating_zone(&self) -> Tz {
        self.floating
    }

    /// The event (series or single event; an override only when its series is missing)
    /// with this UID in a calendar.
    pub fn get(&self, calendar: &str, uid: &str) -> Option<&Event> {
        self.by_uid
            .get(&(calendar.to_owned(), uid.to_owned()))
            .map(|&i| &self.events[i as usize])
    }

    /// The overrides of a series.
    pub fn overrides<'a>(
        &'a self,
        calendar: &'a str,
        uid: &'a str,
    ) -> impl Iterator<Item = &'a Event> + 'a {
        self.events
            .iter()
            .filter(move |e| e.recurrence_id.is_some() && e.calendar == calendar && e.uid == uid)
    }

    /// Visits every occurrence that overlaps `[from, to)` of the events `keep` accepts,
    /// unordered. An event without length counts when it starts in the range.
    pub fn visit<'a>(
        &'a self,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
        keep: &dyn Fn(&Event) -> bool,
        visit: &mut dyn FnMut(Occurrence<'a>),
    ) {
        let (low, high) = (from.timestamp(), to.timestamp());
        let overlaps = |start: i64, end: i64| start < high && (end > low || start >= low);
        let first = self
            .singles
            .partition_point(|s| s.start < low - SHORT_SECONDS);
        for slot in self.singles[first..]
            .iter()
            .take_while(|s| s.start < high)
            .chain(self.long.iter().take_while(|s| s.start < high))
        {
            if overlaps(slot.start, slot.end) {
                let event = &self.events[slot.event as usize];
                if keep(event) {
                    visit(self.single_occurrence(event, slot));
                }
            }
        }
        let last_series = self.series.partition_point(|s| s.first_start < high);
        let mut buffer = Vec::new();
        // The range in each zone's wall clock, converted once per zone, with a margin
        // that covers the offset changing within the range (DST) plus three hours.
        let mut windows: Vec<(Zone, Window)> = Vec::new();
        for series in &self.series[..last_series] {
            if series.last_end <= low {
                continue;
            }
            let event = &self.events[series.event as usize];
            if !keep(event) {
                continue;
            }
            let zone = if series.all_day {
                Zone::Floating
            } else {
                series.zone
            };
            let window = match windows.iter().find(|(z, _)| *z == zone) {
                Some((_, window)) => *window,
                None => {
                    let (start, end) = (
                        zone.to_local(from, self.floating),
                        zone.to_local(to, self.floating),
                    );
                    let shift = ((start - from.naive_utc()) - (end - to.naive_utc())).abs();
                    let window = Window {
                        start,
                        end,
                        margin: shift + Duration::hours(3),
                    };
                    windows.push((zone, window));
                    window
                }
            };
            self.expand_series(series, event, window, (from, to), &mut buffer, visit);
        }
    }

    /// The occurrences overlapping `[from, to)`, sorted by start (then end, then title).
    pub fn between(&self, from: DateTime<Utc>, to: DateTime<Utc>) -> Vec<Occurrence<'_>> {
        let mut found = Vec::with_capacity(256);
        self.visit(from, to, &|_| true, &mut |o| found.push(o));
        found.sort_unstable_by_key(|o| (o.start, o.end, o.rank));
        found
    }

    /// The occurrences of one event (a series with its overrides, or a single event)
    /// overlapping `[from, to)`, sorted.
    pub fn occurrences_of(
        &self,
        calendar: &str,
        uid: &str,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> Vec<Occurrence<'_>> {
        let mut found = Vec::new();
        self.visit(
            from,
            to,
            &|e| e.calendar == calendar && e.uid == uid,
            &mut |o| found.push(o),
        );
        found.sort_unstable_by_key(|o| (o.start, o.end, o.rank));
        found
    }

    fn single_occurrence<'a>(&self, event: &'a Event, slot: &Slot) -> Occurrence<'a> {
        Occurrence {
            event,
            start: DateTime::from_timestamp(slot.start, 0).unwrap_or_default(),
            end: DateTime::from_timestamp(slot.end, 0).unwrap_or_default(),
            recurrence_id: event.recurrence_id,
            rank: self.ranks[slot.event as usize],
        }
    }

    /// Visits the occurrences of `series` overlapping `range`; `window` is the range in
    /// the series' wall clock.
    fn expand_series<'a>(
        &self,
        series: &Series,
        event: &'a Event,
        window: Window,
        range: (DateTime<Utc>, DateTime<Utc>),
        buffer: &mut Vec<NaiveDateTime>,
        visit: &mut dyn FnMut(Occurrence<'a>),
    ) {
        let rank = self.ranks[series.event as usize];
        // The reach catches earlier starts that still overlap (or move into the window).
        let local_from = window
            .start
            .checked_sub_signed(series.reach_before + window.margin)
            .unwrap_or(NaiveDateTime::MIN);
        let local_to = window
            .end
            .checked_add_signed(series.reach_after + window.margin)
            .unwrap_or(NaiveDateTime::MAX);
        series.starts_between(event, local_from, local_to, buffer);
        let (low, high) = (range.0.timestamp(), range.1.timestamp());
        for &local in buffer.iter() {
            let Some((start, end, recurrence_id)) = series.occurrence(local, self.floating) else {
                continue;
            };
            let (s, e) = (start.timestamp(), end.timestamp());
            if s < high && (e > low || s >= low) {
                visit(Occurrence {
                    event,
                    start,
                    end,
                    recurrence_id: Some(recurrence_id),
                    rank,
                });
            }
        }
    }
}

impl Series {
    /// The wall-clock starts its rules, DTSTART and RDATEs give in `[from, to)`, in
    /// order, into `buffer`.
    fn starts_between(
        &self,
        event: &Event,
        from: NaiveDateTime,
        to: NaiveDateTime,
        buffer: &mut Vec<NaiveDateTime>,
    ) {
        buffer.clear();
        if self.rules.is_empty()
            && self.include_dtstart
            && self.dtstart >= from
            && self.dtstart < to
        {
            buffer.push(self.dtstart);
        }
        for rule in &self.rules {
            let ended = rule.expand(self.include_dtstart, from, to, &mut |t| {
                buffer.push(t);
                Visit::Continue
            });
            if ended == Ended::OverBudget {
                tracing::debug!(uid = %event.uid, "recurrence expansion stopped at its budget");
            }
        }
        buffer.extend(self.rdates.iter().filter(|t| **t >= from && **t < to));
        if self.rules.len() > 1 || !self.rdates.is_empty() {
            buffer.sort_unstable();
            buffer.dedup();
        }
    }

    /// The occurrence starting (by the rules) at `local`: its start, end and
    /// RECURRENCE-ID, moved and resized by the latest `THISANDFUTURE` override before
    /// it, an RDATE period lasting its own length; `None` when it is excluded or has an
    /// override of its own.
    fn occurrence(
        &self,
        local: NaiveDateTime,
        floating: Tz,
    ) -> Option<(DateTime<Utc>, DateTime<Utc>, EventTime)> {
        // THISANDFUTURE: the latest such override before this occurrence moves it.
        let future = match self.futures.partition_point(|f| f.after < local) {
            0 => None,
            after => Some(self.futures[after - 1]),
        };
        // An RDATE period's own length wins over the usual (or a range's) length.
        let period = (!self.periods.is_empty())
            .then(|| self.periods.binary_search_by_key(&local, |p| p.0).ok())
            .flatten()
            .map(|i| self.periods[i].1);
        let (shown, length_seconds, length_days) = match future {
            Some(future) => (
                local.checked_add_signed(future.shift).unwrap_or(local),
                period.unwrap_or(future.length_seconds),
                future.length_days,
            ),
            None => (
                local,
                period.unwrap_or(self.length_seconds),
                self.length_days,
            ),
        };
        let (start, end, key, recurrence_id) = if self.all_day {
            let date = local.date();
            let shown_date = shown.date();
            let start = Zone::Floating.to_utc(shown_date.and_time(NaiveTime::MIN), floating);
            let end_date = shown_date
                .checked_add_signed(Duration::days(length_days))
                .unwrap_or(shown_date);
            let end = Zone::Floating.to_utc(end_date.and_time(NaiveTime::MIN), floating);
            (start, end, day_number(date), EventTime::Date(date))
        } else {
            let original = self.zone.to_utc(local, floating);
            let start = if future.is_some() {
                self.zone.to_utc(shown, floating)
            } else {
                original
            };
            let end = start
                .checked_add_signed(Duration::seconds(length_seconds))
                .unwrap_or(start);
            let recurrence_id = EventTime::DateTime {
                local,
                zone: self.zone,
            };
            (start, end, original.timestamp(), recurrence_id)
        };
        let listed = |keys: &[i64], key: i64| !keys.is_empty() && keys.binary_search(&key).is_ok();
        let skipped = listed(&self.excluded, key)
            || listed(&self.overridden, key)
            || (!self.all_day && listed(&self.excluded_dates, day_number(local.date())));
        (!skipped).then_some((start, end, recurrence_id))
    }
}

/// Sorts occurrences by start, end, then title.
pub fn sort_occurrences(occurrences: &mut [Occurrence<'_>]) {
    occurrences
        .sort_by(|a, b| (a.start, a.end, &a.event.title).cmp(&(b.start, b.end, &b.event.title)));
}

mod build;
