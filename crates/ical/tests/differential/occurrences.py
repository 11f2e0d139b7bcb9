"""The occurrences recurring-ical-events finds in each calendar of a folder.

Usage: occurrences.py FOLDER FROM TO  (FROM and TO as 2026-01-01, UTC midnight)

Prints one JSON object a line, by file name: {"file": ..., "occurrences": [[uid, start,
end], ...]} with times in UTC (RFC 3339; dates at midnight UTC, floating times read as
UTC, as Hearth's differential test places them), or {"file": ..., "error": ...}.
"""

import datetime
import json
import pathlib
import sys

import icalendar
import recurring_ical_events

UTC = datetime.timezone.utc


def instant(value):
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return value.astimezone(UTC)
    return datetime.datetime(value.year, value.month, value.day, tzinfo=UTC)


def end_of(event, start):
    if "DTEND" in event:
        return event["DTEND"].dt
    if "DURATION" in event:
        return start + event["DURATION"].dt
    if isinstance(start, datetime.datetime):
        return start
    return start + datetime.timedelta(days=1)


def main():
    folder, low, high = sys.argv[1:4]
    low = datetime.datetime.fromisoformat(low).replace(tzinfo=UTC)
    high = datetime.datetime.fromisoformat(high).replace(tzinfo=UTC)
    for path in sorted(pathlib.Path(folder).glob("*.ics")):
        try:
            calendar = icalendar.Calendar.from_ical(path.read_bytes())
            found = []
            for event in recurring_ical_events.of(calendar).between(low, high):
                start = event["DTSTART"].dt
                found.append(
                    [
                        str(event["UID"]),
                        instant(start).isoformat(),
                        instant(end_of(event, start)).isoformat(),
                    ]
                )
            print(json.dumps({"file": path.name, "occurrences": sorted(found)}))
        except Exception as error:  # a difference to report, not a crash
            print(json.dumps({"file": path.name, "error": repr(error)}))


if __name__ == "__main__":
    main()
