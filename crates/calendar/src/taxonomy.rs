//! Event titles of the form `Category - SubCategory - Title`, and category counts.

use std::collections::BTreeMap;

use hearth_ical::Event;
use serde::Serialize;

const SEPARATOR: &str = " - ";

/// A title split into its taxonomy.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Taxonomy {
    /// The category (`Work`), if the title has one.
    pub category: Option<String>,
    /// The sub-category (`Meetings`), if the title has one.
    pub sub_category: Option<String>,
    /// The rest of the title.
    pub title: String,
}

fn non_empty(part: &str) -> Option<String> {
    let part = part.trim();
    (!part.is_empty()).then(|| part.to_owned())
}

impl Taxonomy {
    /// Splits a title: `A - B - C…` is category, sub-category and title (the title keeps
    /// any further ` - `); `A - B` is category and title; anything else is a title.
    pub fn parse(text: &str) -> Self {
        let parts: Vec<&str> = text.splitn(3, SEPARATOR).collect();
        match parts.as_slice() {
            [category, sub_category, title] if !title.trim().is_empty() => Self {
                category: non_empty(category),
                sub_category: non_empty(sub_category),
                title: title.trim().to_owned(),
            },
            [category, title] if !title.trim().is_empty() => Self {
                category: non_empty(category),
                sub_category: None,
                title: title.trim().to_owned(),
            },
            _ => Self {
                category: None,
                sub_category: None,
                title: text.trim().to_owned(),
            },
        }
    }

    /// Builds a taxonomy; a title that already carries a category keeps it unless
    /// `category` is given.
    pub fn new(category: Option<&str>, sub_category: Option<&str>, title: &str) -> Self {
        let parsed = Self::parse(title);
        match category.and_then(non_empty) {
            Some(category) => Self {
                category: Some(category),
                sub_category: sub_category.and_then(non_empty).or(parsed.sub_category),
                title: parsed.title,
            },
            None => parsed,
        }
    }

    /// The taxonomy of `event`'s title.
    pub fn of(event: &Event) -> Self {
        Self::parse(&event.title)
    }

    /// Whether `event` is in `category` (already lower-case): its title's category,
    /// `Category - SubCategory`, or one of its `CATEGORIES`.
    pub fn event_in(event: &Event, category: &str) -> bool {
        let taxonomy = Self::of(event);
        if let Some(own) = &taxonomy.category {
            let own = own.to_lowercase();
            if own == category {
                return true;
            }
            if let Some(sub) = &taxonomy.sub_category
                && format!("{own} - {}", sub.to_lowercase()) == category
            {
                return true;
            }
        }
        event
            .categories
            .iter()
            .any(|c| c.to_lowercase() == category)
    }

    /// `Category - SubCategory - Title`, leaving out the parts that are absent.
    pub fn format(&self) -> String {
        let mut parts: Vec<&str> = Vec::with_capacity(3);
        if let Some(category) = &self.category {
            parts.push(category);
            if let Some(sub_category) = &self.sub_category {
                parts.push(sub_category);
            }
        }
        parts.push(&self.title);
        parts.join(SEPARATOR)
    }
}

/// How many events carry a category, and how they divide into sub-categories.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CategoryCount {
    /// The category.
    pub category: String,
    /// Events in it.
    pub count: usize,
    /// Its sub-categories, by name.
    pub sub_categories: Vec<SubCategoryCount>,
}

/// Events in one sub-category.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SubCategoryCount {
    /// The sub-category.
    pub name: String,
    /// Events in it.
    pub count: usize,
}

/// Counts the categories of titles (case-insensitively merged; the first spelling
/// seen names the group), sorted by name.
pub fn count_categories<'a>(titles: impl IntoIterator<Item = &'a str>) -> Vec<CategoryCount> {
    // Lower-cased name → (first spelling, count, sub-categories the same way).
    type Counts = BTreeMap<String, (String, usize)>;
    let mut groups: BTreeMap<String, (String, usize, Counts)> = BTreeMap::new();
    for title in titles {
        let taxonomy = Taxonomy::parse(title);
        let Some(category) = taxonomy.category else {
            continue;
        };
        let entry = groups
            .entry(category.to_lowercase())
            .or_insert_with(|| (category.clone(), 0, BTreeMap::new()));
        entry.1 += 1;
        if let Some(sub) = taxonomy.sub_category {
            entry
                .2
                .entry(sub.to_lowercase())
                .or_insert_with(|| (sub.clone(), 0))
                .1 += 1;
        }
    }
    groups
        .into_values()
        .map(|(category, count, subs)| CategoryCount {
            category,
            count,
            sub_categories: subs
                .into_values()
                .map(|(name, count)| SubCategoryCount { name, count })
                .collect(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use proptest::prelude::*;

    fn taxonomy(category: Option<&str>, sub: Option<&str>, title: &str) -> Taxonomy {
        Taxonomy {
            category: category.map(str::to_owned),
            sub_category: sub.map(str::to_owned),
            title: title.to_owned(),
        }
    }

    #[test]
    fn parses_the_three_shapes() {
        assert_eq!(
            Taxonomy::parse("Work - Meetings - Weekly sync"),
            taxonomy(Some("Work"), Some("Meetings"), "Weekly sync")
        );
        assert_eq!(
            Taxonomy::parse("Work - Meetings - Q3 - planning"),
            taxonomy(Some("Work"), Some("Meetings"), "Q3 - planning")
        );
        assert_eq!(
            Taxonomy::parse("Health - Dentist"),
            taxonomy(Some("Health"), None, "Dentist")
        );
        assert_eq!(Taxonomy::parse("Dentist"), taxonomy(None, None, "Dentist"));
        assert_eq!(Taxonomy::parse("A-B"), taxonomy(None, None, "A-B"));
        assert_eq!(Taxonomy::parse("Work - "), taxonomy(None, None, "Work -"));
    }

    #[test]
    fn new_applies_or_keeps_a_category() {
        assert_eq!(
            Taxonomy::new(Some("Health"), None, "Dentist").format(),
            "Health - Dentist"
        );
        assert_eq!(
            Taxonomy::new(Some("Work"), Some("Travel"), "Work - Flight").format(),
            "Work - Travel - Flight"
        );
        assert_eq!(
            Taxonomy::new(None, None, "Work - Travel - Flight").format(),
            "Work - Travel - Flight"
        );
    }

    #[test]
    fn an_event_is_in_its_titles_category_and_its_own_categories() {
        let date = chrono::NaiveDate::from_ymd_opt(2026, 3, 3).unwrap();
        let event = Event {
            calendar: "home".into(),
            uid: "1".into(),
            recurrence_id: None,
            range: hearth_ical::OverrideRange::ThisOccurrence,
            title: "Work - Meetings - Sync".into(),
            description: None,
            location: None,
            categories: vec!["Important".into()],
            status: None,
            start: hearth_ical::EventTime::Date(date),
            end: hearth_ical::EventTime::Date(date.succ_opt().unwrap()),
            recurrence: None,
            source: hearth_ical::EventSource::Ics { line: 1 },
        };
        assert!(Taxonomy::event_in(&event, "work"));
        assert!(Taxonomy::event_in(&event, "work - meetings"));
        assert!(Taxonomy::event_in(&event, "important"));
        assert!(!Taxonomy::event_in(&event, "meetings"));
        assert_eq!(Taxonomy::of(&event).title, "Sync");
    }

    #[test]
    fn counts_categories_case_insensitively() {
        let counts = count_categories([
            "Work - Meetings - Sync",
            "work - Meetings - Retro",
            "Work - Travel",
            "Health - Dentist",
            "Lunch",
        ]);
        assert_eq!(
            counts,
            vec![
                CategoryCount {
                    category: "Health".into(),
                    count: 1,
                    sub_categories: vec![],
                },
                CategoryCount {
                    category: "Work".into(),
                    count: 3,
                    sub_categories: vec![SubCategoryCount {
                        name: "Meetings".into(),
                        count: 2
                    }],
                },
            ]
        );
    }

    proptest! {
        #[test]
        fn format_then_parse_is_identity(
            category in "[A-Za-z]{1,10}",
            sub in proptest::option::of("[A-Za-z]{1,10}"),
            title in "[A-Za-z][A-Za-z-]{0,20}[A-Za-z]",
        ) {
            let original = taxonomy(Some(&category), sub.as_deref(), &title);
            prop_assert_eq!(Taxonomy::parse(&original.format()), original);
        }
    }
}
