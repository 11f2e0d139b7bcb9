//! Time zones: IANA names (strict, for arguments), `TZID`s as calendar programs write
//! them (IANA names behind vendor prefixes, Windows names, custom `VTIMEZONE`s matched
//! to the IANA zone with the same rules), and `VTIMEZONE` blocks for zones Hearth writes.

mod windows;

use chrono::{
    DateTime, Datelike, Duration, FixedOffset, NaiveDate, NaiveDateTime, Offset, TimeZone, Utc,
    Weekday,
};
use chrono_tz::{OffsetComponents, OffsetName, TZ_VARIANTS, Tz};

use crate::component::Component;
use crate::error::{IcalError, Result};
use crate::expand::{Expander, Visit};
use crate::rrule::RecurrenceRule;
use crate::time::{Zone, format_date_time, parse_date_time};

/// Parses an IANA time zone name (case-insensitively), or says which name was meant.
pub fn parse_time_zone(name: &str) -> Result<Tz> {
    let trimmed = name.trim();
    if let Ok(tz) = trimmed.parse::<Tz>() {
        return Ok(tz);
    }
    if let Some(tz) = TZ_VARIANTS
        .iter()
        .find(|tz| tz.name().eq_ignore_ascii_case(trimmed))
    {
        return Ok(*tz);
    }
    Err(IcalError::UnknownTimeZone {
        name: trimmed.to_owned(),
        suggestion: suggest(trimmed),
    })
}

/// A zone whose city matches the last part of `name` (`Berlin` → `Europe/Berlin`), or
/// the IANA zone of a Windows name.
fn suggest(name: &str) -> Option<String> {
    if let Some(tz) = windows_zone(name) {
        return Some(tz.name().to_owned());
    }
    let lowered = name.to_ascii_lowercase();
    let close = TZ_VARIANTS
        .iter()
        .map(|tz| (edit_distance(&tz.name().to_ascii_lowercase(), &lowered), tz))
        .filter(|(distance, _)| *distance <= 2)
        .min_by_key(|(distance, _)| *distance);
    if let Some((_, tz)) = close {
        return Some(tz.name().to_owned());
    }
    let city = name
        .rsplit('/')
        .next()
        .unwrap_or(name)
        .replace(' ', "_")
        .to_ascii_lowercase();
    if city.len() < 3 {
        return None;
    }
    TZ_VARIANTS
        .iter()
        .find(|tz| {
            let zone_city = tz
                .name()
                .rsplit('/')
                .next()
                .unwrap_or("")
                .to_ascii_lowercase();
            zone_city == city || (city.len() >= 5 && zone_city.starts_with(&city))
        })
        .map(|tz| tz.name().to_owned())
}

/// Levenshtein distance of two short strings.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != *cb);
            current.push(substitution.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

fn windows_zone(name: &str) -> Option<Tz> {
    windows::WINDOWS_ZONES
        .iter()
        .find(|(windows, _)| windows.eq_ignore_ascii_case(name))
        .and_then(|(_, iana)| iana.parse().ok())
}

/// The IANA zone a file's `TZID` names, if it names one: an IANA name (any case), one
/// behind a vendor prefix (`/mozilla.org/20050126_1/America/New_York`), or a Windows
/// name (`W. Europe Standard Time`).
pub fn resolve_tzid(tzid: &str) -> Option<Tz> {
    let tzid = tzid.trim().trim_matches('"').trim();
    if tzid.is_empty() {
        return None;
    }
    if let Ok(tz) = parse_time_zone(tzid) {
        return Some(tz);
    }
    if let Some(tz) = windows_zone(tzid) {
        return Some(tz);
    }
    // Vendor prefixes: try the last one, two and three path segments.
    let segments: Vec<&str> = tzid.split('/').filter(|s| !s.is_empty()).collect();
    for take in [3usize, 2, 1] {
        if segments.len() > take {
            let candidate = segments[segments.len() - take..].join("/");
            if let Ok(tz) = parse_time_zone(&candidate) {
                return Some(tz);
            }
        }
    }
    None
}

fn parse_offset(text: &str) -> Option<FixedOffset> {
    let text = text.trim();
    let (sign, digits) = match text.as_bytes().first()? {
        b'+' => (1, &text[1..]),
        b'-' => (-1, &text[1..]),
        _ => (1, text),
    };
    if !(digits.len() == 4 || digits.len() == 6) || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let hours: i32 = digits[..2].parse().ok()?;
    let minutes: i32 = digits[2..4].parse().ok()?;
    let seconds: i32 = digits.get(4..6).map_or(Some(0), |s| s.parse().ok())?;
    FixedOffset::east_opt(sign * (hours * 3600 + minutes * 60 + seconds))
}

/// One change of offset a `VTIMEZONE` defines.
struct Transition {
    at: DateTime<Utc>,
    from: i32,
    to: i32,
}

/// One `STANDARD` or `DAYLIGHT` observance: its start, offsets (seconds east of UTC)
/// and rule.
struct Observance {
    start: NaiveDateTime,
    from: i32,
    to: i32,
    rule: Option<RecurrenceRule>,
}

/// The zone a `VTIMEZONE` defines: its `X-LIC-LOCATION` or `TZID` when they name an
/// IANA zone; else the IANA zone whose offsets and transitions agree with its rules in
/// a recent year (preferring one whose city appears in the `TZID`); else its standard
/// offset, fixed (`exact` is false then).
pub fn zone_from_vtimezone(vtimezone: &Component<'_>, tzid: &str) -> Option<(Zone, bool)> {
    if let Some(tz) = vtimezone.value("X-LIC-LOCATION").and_then(resolve_tzid) {
        return Some((Zone::Named(tz), true));
    }
    let (observances, standard) = observances(vtimezone)?;
    let fixed = FixedOffset::east_opt(standard).map(Zone::Fixed)?;
    let transitions = transitions(&observances)?;
    if transitions.is_empty() {
        return Some((fixed, true));
    }
    Some(match iana_zone_agreeing(&transitions, tzid) {
        Some(tz) => (Zone::Named(tz), true),
        None => (fixed, false),
    })
}

/// The observances of a `VTIMEZONE`, and its standard offset (the latest `STANDARD`'s,
/// else the first observance's); `None` when one cannot be read.
fn observances(vtimezone: &Component<'_>) -> Option<(Vec<Observance>, i32)> {
    let mut latest_standard: Option<(NaiveDateTime, i32)> = None;
    let mut observances = Vec::new();
    for observance in &vtimezone.children {
        let daylight = observance.name == "DAYLIGHT";
        if !daylight && observance.name != "STANDARD" {
            continue;
        }
        let to = observance.value("TZOFFSETTO").and_then(parse_offset)?;
        let from = observance
            .value("TZOFFSETFROM")
            .and_then(parse_offset)
            .unwrap_or(to);
        let start = observance
            .value("DTSTART")
            .and_then(parse_date_time)
            .map(|(t, _)| t)?;
        if !daylight && latest_standard.is_none_or(|(t, _)| start >= t) {
            latest_standard = Some((start, to.local_minus_utc()));
        }
        let rule = observance
            .value("RRULE")
            .and_then(|r| r.parse::<RecurrenceRule>().ok());
        observances.push(Observance {
            start,
            from: from.local_minus_utc(),
            to: to.local_minus_utc(),
            rule,
        });
    }
    let standard = latest_standard
        .map(|(_, offset)| offset)
        .or_else(|| observances.first().map(|o| o.to))?;
    Some((observances, standard))
}

/// The changes of offset the observances make in a recent year (2025, or the year of
/// the latest observance if later).
fn transitions(observances: &[Observance]) -> Option<Vec<Transition>> {
    let year = observances
        .iter()
        .map(|o| o.start.year())
        .max()
        .unwrap_or(2025)
        .max(2025);
    let (first, last) = (
        NaiveDate::from_ymd_opt(year, 1, 1)?.and_hms_opt(0, 0, 0)?,
        NaiveDate::from_ymd_opt(year + 1, 1, 1)?.and_hms_opt(0, 0, 0)?,
    );
    let mut transitions = Vec::new();
    for observance in observances {
        let (from, to) = (observance.from, observance.to);
        if from == to {
            continue;
        }
        let mut push = |local: NaiveDateTime| {
            transitions.push(Transition {
                at: (local - Duration::seconds(i64::from(from))).and_utc(),
                from,
                to,
            });
        };
        match &observance.rule {
            Some(rule) => {
                let expander = Expander::new(rule, observance.start, None, false);
                expander.expand(true, first, last, &mut |t| {
                    push(t);
                    Visit::Continue
                });
            }
            None if observance.start >= first && observance.start < last => push(observance.start),
            None => {}
        }
    }
    Some(transitions)
}

/// An IANA zone that makes every one of `transitions`, preferring one whose city the
/// `tzid` names.
fn iana_zone_agreeing(transitions: &[Transition], tzid: &str) -> Option<Tz> {
    let lowered = tzid.to_ascii_lowercase().replace('_', " ");
    let agrees = |tz: &Tz| {
        transitions.iter().all(|t| {
            let offset_at = |instant: DateTime<Utc>| {
                tz.offset_from_utc_datetime(&instant.naive_utc())
                    .fix()
                    .local_minus_utc()
            };
            offset_at(t.at - Duration::minutes(1)) == t.from
                && offset_at(t.at + Duration::minutes(1)) == t.to
        })
    };
    let mut matching = TZ_VARIANTS
        .iter()
        .filter(|tz| !tz.name().starts_with("Etc/") && agrees(tz));
    let first_match = matching.next().copied();
    std::iter::once(first_match)
        .flatten()
        .chain(matching.copied())
        .find(|tz| {
            tz.name()
                .rsplit('/')
                .next()
                .is_some_and(|city| lowered.contains(&city.replace('_', " ").to_ascii_lowercase()))
        })
        .or(first_match)
}

fn format_offset(seconds: i32) -> String {
    let sign = if seconds < 0 { '-' } else { '+' };
    let seconds = seconds.abs();
    let (hours, minutes, secs) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    if secs == 0 {
        format!("{sign}{hours:02}{minutes:02}")
    } else {
        format!("{sign}{hours:02}{minutes:02}{secs:02}")
    }
}

fn weekday_code(weekday: Weekday) -> &'static str {
    ["MO", "TU", "WE", "TH", "FR", "SA", "SU"][weekday.num_days_from_monday() as usize]
}

/// A `VTIMEZONE` block (lines ended by `ending`) describing `tz` by the rules it follows
/// in `year`, as yearly `STANDARD`/`DAYLIGHT` observances from 1970 on.
pub fn vtimezone_block(tz: Tz, year: i32, ending: &str) -> String {
    let mut lines = vec!["BEGIN:VTIMEZONE".to_owned(), format!("TZID:{}", tz.name())];
    let changes = offset_changes(tz, year);
    if changes.is_empty() {
        let now = tz.offset_from_utc_datetime(&Utc::now().naive_utc());
        let offset = now.fix().local_minus_utc();
        lines.push("BEGIN:STANDARD".to_owned());
        lines.push("DTSTART:19700101T000000".to_owned());
        lines.push(format!("TZOFFSETFROM:{}", format_offset(offset)));
        lines.push(format!("TZOFFSETTO:{}", format_offset(offset)));
        if let Some(name) = now.abbreviation() {
            lines.push(format!("TZNAME:{name}"));
        }
        lines.push("END:STANDARD".to_owned());
    }
    for change in changes {
        lines.extend(observance_lines(tz, change));
    }
    lines.push("END:VTIMEZONE".to_owned());
    let mut out = String::new();
    for line in lines {
        out.push_str(&line);
        out.push_str(ending);
    }
    out
}

/// The changes of `tz`'s offset in `year`: when (to the minute), from and to which
/// offset (seconds east of UTC).
fn offset_changes(tz: Tz, year: i32) -> Vec<(DateTime<Utc>, i32, i32)> {
    let offset_at = |instant: DateTime<Utc>| {
        tz.offset_from_utc_datetime(&instant.naive_utc())
            .fix()
            .local_minus_utc()
    };
    let mut changes = Vec::new();
    let Some(start) = NaiveDate::from_ymd_opt(year, 1, 1).and_then(|d| d.and_hms_opt(0, 0, 0))
    else {
        return changes;
    };
    let start = start.and_utc();
    let mut previous = offset_at(start);
    for day in 1..=366 {
        let instant = start + Duration::days(day);
        let offset = offset_at(instant);
        if offset != previous {
            // Narrow the change down to the minute.
            let (mut low, mut high) = (0i64, 24 * 60);
            let day_start = instant - Duration::days(1);
            while high - low > 1 {
                let middle = (low + high) / 2;
                if offset_at(day_start + Duration::minutes(middle)) == previous {
                    low = middle;
                } else {
                    high = middle;
                }
            }
            changes.push((day_start + Duration::minutes(high), previous, offset));
            previous = offset;
        }
    }
    changes
}

/// The yearly observance of one change of offset: its rule (the change's weekday of its
/// month), started on that rule's date in 1970 so it covers earlier events too.
fn observance_lines(tz: Tz, (at, from, to): (DateTime<Utc>, i32, i32)) -> Vec<String> {
    let offset = tz.offset_from_utc_datetime(&at.naive_utc());
    let local = at.naive_utc() + Duration::seconds(i64::from(from));
    let date = local.date();
    let last = date + Duration::days(7);
    let ordinal = if last.month() != date.month() {
        -1
    } else {
        (date.day0() / 7 + 1) as i32
    };
    let kind = if offset.dst_offset() > Duration::zero() {
        "DAYLIGHT"
    } else {
        "STANDARD"
    };
    let rule = format!(
        "FREQ=YEARLY;BYMONTH={};BYDAY={ordinal}{}",
        date.month(),
        weekday_code(date.weekday())
    );
    let start_1970 = rule
        .parse::<RecurrenceRule>()
        .ok()
        .and_then(|parsed| {
            let origin = NaiveDate::from_ymd_opt(1970, 1, 1)?.and_time(local.time());
            let end = NaiveDate::from_ymd_opt(1971, 1, 1)?.and_hms_opt(0, 0, 0)?;
            let mut found = None;
            Expander::new(&parsed, origin, None, false).expand(false, origin, end, &mut |t| {
                found = Some(t);
                Visit::Stop
            });
            found
        })
        .unwrap_or(local);
    let mut lines = vec![
        format!("BEGIN:{kind}"),
        format!("DTSTART:{}", format_date_time(start_1970)),
        format!("RRULE:{rule}"),
        format!("TZOFFSETFROM:{}", format_offset(from)),
        format!("TZOFFSETTO:{}", format_offset(to)),
    ];
    if let Some(name) = offset.abbreviation() {
        lines.push(format!("TZNAME:{name}"));
    }
    lines.push(format!("END:{kind}"));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::component::parse_tree;
    use pretty_assertions::assert_eq;

    #[test]
    fn every_windows_name_maps_to_a_known_zone() {
        for (windows, iana) in windows::WINDOWS_ZONES {
            assert!(iana.parse::<Tz>().is_ok(), "{windows} → {iana}");
        }
    }

    #[test]
    fn resolves_tzids_as_programs_write_them() {
        let berlin = Some(chrono_tz::Europe::Berlin);
        assert_eq!(resolve_tzid("Europe/Berlin"), berlin);
        assert_eq!(resolve_tzid("\"europe/berlin\""), berlin);
        assert_eq!(resolve_tzid("W. Europe Standard Time"), berlin);
        assert_eq!(
            resolve_tzid("/mozilla.org/20050126_1/America/New_York"),
            Some(chrono_tz::America::New_York)
        );
        assert_eq!(
            resolve_tzid("/softwarestudio.org/Olson_20011030_5/America/Argentina/Buenos_Aires"),
            Some(chrono_tz::America::Argentina::Buenos_Aires)
        );
        assert_eq!(resolve_tzid("Mars/Olympus_Mons"), None);
    }

    #[test]
    fn argument_errors_suggest_a_zone() {
        let error = parse_time_zone("Berlin").unwrap_err().to_string();
        assert!(error.contains("did you mean `Europe/Berlin`"), "{error}");
        assert_eq!(
            parse_time_zone("asia/tokyo").unwrap(),
            chrono_tz::Asia::Tokyo
        );
        let error = parse_time_zone("Europe/Berln").unwrap_err().to_string();
        assert!(error.contains("did you mean `Europe/Berlin`"), "{error}");
        let error = parse_time_zone("Nowhere/Atall").unwrap_err().to_string();
        assert!(error.contains("use an IANA name"), "{error}");
    }

    fn vtimezone(text: &str) -> (Zone, bool) {
        let tree = parse_tree(text);
        let component = &tree.components[0];
        let tzid = component.value("TZID").unwrap_or_default().to_owned();
        zone_from_vtimezone(component, &tzid).unwrap()
    }

    #[test]
    fn matches_a_custom_vtimezone_to_the_iana_zone() {
        let text = "BEGIN:VTIMEZONE\nTZID:(UTC+01:00) Amsterdam\\, Berlin\\, Bern\\, Rome\nBEGIN:STANDARD\nDTSTART:16010101T030000\nTZOFFSETFROM:+0200\nTZOFFSETTO:+0100\nRRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=-1SU;BYMONTH=10\nEND:STANDARD\nBEGIN:DAYLIGHT\nDTSTART:16010101T020000\nTZOFFSETFROM:+0100\nTZOFFSETTO:+0200\nRRULE:FREQ=YEARLY;INTERVAL=1;BYDAY=-1SU;BYMONTH=3\nEND:DAYLIGHT\nEND:VTIMEZONE\n";
        assert_eq!(
            vtimezone(text),
            (Zone::Named(chrono_tz::Europe::Amsterdam), true)
        );
        let fixed = "BEGIN:VTIMEZONE\nTZID:Custom\nBEGIN:STANDARD\nDTSTART:19700101T000000\nTZOFFSETFROM:+0530\nTZOFFSETTO:+0530\nEND:STANDARD\nEND:VTIMEZONE\n";
        assert_eq!(
            vtimezone(fixed),
            (Zone::Fixed(FixedOffset::east_opt(19800).unwrap()), true)
        );
    }

    #[test]
    fn generated_vtimezones_match_back() {
        for tz in [
            chrono_tz::Europe::Berlin,
            chrono_tz::America::New_York,
            chrono_tz::Australia::Sydney,
            chrono_tz::Asia::Tokyo,
        ] {
            let block = vtimezone_block(tz, 2026, "\n");
            let (zone, exact) = vtimezone(&block);
            assert!(exact, "{block}");
            match zone {
                Zone::Named(found) => {
                    // Any zone with the same rules will do; the name must match here.
                    assert_eq!(found, tz, "{block}");
                }
                Zone::Fixed(offset) => assert_eq!(tz, chrono_tz::Asia::Tokyo, "{offset}"),
                other => panic!("{other:?}"),
            }
        }
    }
}
