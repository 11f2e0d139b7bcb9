//! The zones of one calendar text: each `TZID` resolved once — an IANA or Windows name,
//! else the zone its `VTIMEZONE` defines — and `X-WR-TIMEZONE` for floating times, with
//! a warning for each zone it cannot place.

use std::collections::HashMap;

use crate::component::Component;
use crate::contentline::{excerpt, unescape_text};
use crate::error::LoadWarning;
use crate::time::Zone;
use crate::timezone::{resolve_tzid, zone_from_vtimezone};

/// Turns `TZID`s into zones, once per name, warning about those it cannot place.
pub(super) struct ZoneResolver<'t, 'a> {
    origin: String,
    vtimezones: HashMap<String, &'t Component<'a>>,
    resolved: HashMap<String, Zone>,
    pub(super) warnings: Vec<LoadWarning>,
    /// `X-WR-TIMEZONE` (Google Calendar, Apple Calendar): the zone the producer meant
    /// for the calendar's floating times, its line, and whether that was said yet.
    calendar_zone: Option<(Zone, usize, String, bool)>,
}

impl<'t, 'a> ZoneResolver<'t, 'a> {
    pub(super) fn new(origin: &str, calendars: &[&'t Component<'a>]) -> Self {
        let mut vtimezones = HashMap::new();
        for component in calendars
            .iter()
            .flat_map(|c| c.children.iter())
            .filter(|c| c.name == "VTIMEZONE")
        {
            if let Some(tzid) = component.value("TZID") {
                vtimezones.insert(unescape_text(tzid.trim()).into_owned(), component);
            }
        }
        let mut warnings = Vec::new();
        let calendar_zone = calendars
            .iter()
            .find_map(|c| c.property("X-WR-TIMEZONE"))
            .and_then(|property| {
                let name = unescape_text(property.content.value.trim()).into_owned();
                let line = format!("X-WR-TIMEZONE:{}", excerpt(&name));
                match resolve_tzid(name.trim_matches('"')) {
                    Some(tz) => Some((Zone::Named(tz), property.line, line, false)),
                    None => {
                        warnings.push(LoadWarning::new(
                            format!("{origin}:{}", property.line),
                            format!("`{line}` is not a time zone Hearth knows; floating times are placed in the calendar's zone"),
                        ));
                        None
                    }
                }
            });
        Self {
            origin: origin.to_owned(),
            vtimezones,
            resolved: HashMap::new(),
            warnings,
            calendar_zone,
        }
    }

    /// The zone of a date-time written without one: `X-WR-TIMEZONE`'s when the
    /// calendar has it (said once), else floating.
    pub(super) fn floating_zone(&mut self) -> Zone {
        match &mut self.calendar_zone {
            Some((zone, line, text, said)) => {
                if !*said {
                    *said = true;
                    self.warnings.push(LoadWarning::new(
                        format!("{}:{line}", self.origin),
                        format!(
                            "`{text}`: times without a zone in this calendar are read in {}, as Google Calendar and Apple Calendar mean them",
                            zone.name()
                        ),
                    ));
                }
                *zone
            }
            None => Zone::Floating,
        }
    }

    pub(super) fn resolve(&mut self, tzid: &str, line: usize) -> Zone {
        if let Some(zone) = self.resolved.get(tzid) {
            return *zone;
        }
        let unquoted = tzid.trim().trim_matches('"');
        let zone = if let Some(tz) = resolve_tzid(unquoted) {
            Zone::Named(tz)
        } else if let Some(component) = self.vtimezones.get(unquoted) {
            match zone_from_vtimezone(component, unquoted) {
                Some((zone, true)) => zone,
                Some((zone, false)) => {
                    self.warnings.push(LoadWarning::new(
                        format!("{}:{line}", self.origin),
                        format!(
                            "time zone `{unquoted}` matches no known zone; its standard offset {} is used all year",
                            zone.name()
                        ),
                    ));
                    zone
                }
                None => self.unknown(unquoted, line, "its VTIMEZONE cannot be read"),
            }
        } else {
            self.unknown(
                unquoted,
                line,
                "it is neither an IANA or Windows name nor defined by a VTIMEZONE",
            )
        };
        self.resolved.insert(tzid.to_owned(), zone);
        zone
    }

    fn unknown(&mut self, tzid: &str, line: usize, why: &str) -> Zone {
        self.warnings.push(LoadWarning::new(
            format!("{}:{line}", self.origin),
            format!("unknown time zone `{tzid}` ({why}); its times are read as floating (the calendar's zone)"),
        ));
        Zone::Floating
    }
}
