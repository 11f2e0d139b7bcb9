//! The human-readable before/after of a staged change.

use chrono::Duration;
use hearth_ical::{Event, EventSpec, EventTime, RecurrenceSpec, Zone};

use crate::error::Result;

/// An event as a person reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Fields {
    pub title: String,
    pub when: String,
    pub repeats: Option<String>,
    pub location: Option<String>,
    pub description: Option<String>,
}

/// `2026-03-03 09:00–10:30 (Europe/Berlin)`, `2026-03-03 (all day)`,
/// `2026-03-03 – 2026-03-05 (all day)`, `2026-03-03 22:00 – 2026-03-04 01:00 (UTC)`.
pub(crate) fn when(start: &EventTime, end: &EventTime) -> String {
    match (start, end) {
        (EventTime::Date(first), EventTime::Date(after)) => {
            let last = (*after - Duration::days(1)).max(*first);
            if last == *first {
                format!("{first} (all day)")
            } else {
                format!("{first} – {last} (all day)")
            }
        }
        _ => {
            let (from, to) = (start.local(), end.local());
            let zone = match start.zone() {
                Zone::Floating => String::new(),
                zone => format!(" ({})", zone.name()),
            };
            if from.date() == to.date() {
                format!(
                    "{} {}–{}{zone}",
                    from.date(),
                    from.format("%H:%M"),
                    to.format("%H:%M")
                )
            } else {
                format!(
                    "{} – {}{zone}",
                    from.format("%Y-%m-%d %H:%M"),
                    to.format("%Y-%m-%d %H:%M")
                )
            }
        }
    }
}

fn describe_recurrence(event: &Event) -> Option<String> {
    event.recurrence.as_ref().map(|r| {
        let mut text: Vec<String> = r.rules.iter().map(|rule| rule.describe()).collect();
        if !r.rdates.is_empty() {
            text.push(format!("{} extra dates", r.rdates.len()));
        }
        if !r.exdates.is_empty() {
            text.push(format!("{} skipped", r.exdates.len()));
        }
        text.join(", ")
    })
}

impl Fields {
    pub fn of_event(event: &Event) -> Self {
        Self {
            title: event.title.clone(),
            when: when(&event.start, &event.end),
            repeats: describe_recurrence(event),
            location: event.location.clone(),
            description: event.description.clone(),
        }
    }

    /// `current` supplies the recurrence when the spec leaves it unchanged.
    pub fn of_spec(spec: &EventSpec, current: Option<&Event>) -> Result<Self> {
        let repeats = match &spec.recurrence {
            RecurrenceSpec::None => None,
            RecurrenceSpec::Unchanged => current.and_then(describe_recurrence),
            RecurrenceSpec::Rule { rule } => {
                Some(rule.parse::<hearth_ical::RecurrenceRule>()?.describe())
            }
        };
        Ok(Self {
            title: spec.title.clone(),
            when: when(&spec.start_time()?, &spec.end_time()?),
            repeats,
            location: spec.location.clone(),
            description: spec.description.clone(),
        })
    }

    fn lines(&self) -> Vec<(&'static str, String)> {
        let mut lines = vec![("title", self.title.clone()), ("when", self.when.clone())];
        if let Some(repeats) = &self.repeats {
            lines.push(("repeats", repeats.clone()));
        }
        if let Some(location) = &self.location {
            lines.push(("location", location.clone()));
        }
        if let Some(description) = &self.description {
            lines.push(("description", description.replace('\n', "\n      ")));
        }
        lines
    }
}

/// Renders a change: `header` lines, then each field unchanged (`  `), removed (`- `)
/// or added (`+ `).
pub(crate) fn render(header: &[String], before: Option<&Fields>, after: Option<&Fields>) -> String {
    let mut out: Vec<String> = header.to_vec();
    let before = before.map(Fields::lines).unwrap_or_default();
    let after = after.map(Fields::lines).unwrap_or_default();
    for label in ["title", "when", "repeats", "location", "description"] {
        let old = before.iter().find(|(l, _)| *l == label).map(|(_, v)| v);
        let new = after.iter().find(|(l, _)| *l == label).map(|(_, v)| v);
        match (old, new) {
            (Some(old), Some(new)) if old == new => out.push(format!("  {label}: {old}")),
            (old, new) => {
                if let Some(old) = old {
                    out.push(format!("- {label}: {old}"));
                }
                if let Some(new) = new {
                    out.push(format!("+ {label}: {new}"));
                }
            }
        }
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;
    use pretty_assertions::assert_eq;

    #[test]
    fn renders_before_and_after() {
        let date = |d| NaiveDate::from_ymd_opt(2026, 3, d).unwrap();
        let before = Fields {
            title: "Dentist".into(),
            when: when(&EventTime::Date(date(3)), &EventTime::Date(date(4))),
            repeats: None,
            location: Some("Clinic".into()),
            description: None,
        };
        let after = Fields {
            when: when(&EventTime::Date(date(3)), &EventTime::Date(date(6))),
            location: None,
            ..before.clone()
        };
        assert_eq!(
            render(&["calendar: home".into()], Some(&before), Some(&after)),
            "calendar: home\n  title: Dentist\n- when: 2026-03-03 (all day)\n+ when: 2026-03-03 – 2026-03-05 (all day)\n- location: Clinic"
        );
        assert_eq!(
            render(&[], None, Some(&before)),
            "+ title: Dentist\n+ when: 2026-03-03 (all day)\n+ location: Clinic"
        );
    }
}
