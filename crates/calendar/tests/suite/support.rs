//! Helpers: fixture files, calendars from `config.toml` text, times.

use std::path::{Path, PathBuf};

use std::sync::Arc;

use chrono::{DateTime, Utc};
use hearth_calendar::{CalendarOptions, Calendars, EventQuery, calendar_tools};
use hearth_config::Config;
use hearth_core::{ChatUri, Scope, SessionUri, ToolCallContext, ToolHandler, TurnId};

/// The text of a file under `tests/fixtures`.
pub fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Copies a fixture into `dir` and returns its path.
pub fn copy_fixture(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, fixture(name)).unwrap();
    path
}

/// Copies the fixture note folder into `dir/notes`.
pub fn copy_notes(dir: &Path) -> PathBuf {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/notes");
    let target = dir.join("notes");
    copy_tree(&source, &target);
    target
}

fn copy_tree(source: &Path, target: &Path) {
    std::fs::create_dir_all(target).unwrap();
    for entry in std::fs::read_dir(source).unwrap() {
        let entry = entry.unwrap();
        let to = target.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &to);
        } else {
            std::fs::copy(entry.path(), to).unwrap();
        }
    }
}

/// Calendars from the `[calendars.*]` sections of `toml`, with the user in `zone`.
pub fn calendars(toml: &str, data: &Path, zone: chrono_tz::Tz) -> Calendars {
    let config = Config::parse(toml, Path::new("config.toml")).unwrap();
    Calendars::from_config(
        &config.calendars,
        CalendarOptions::new(data.join("calendars"), zone),
    )
}

/// One iCalendar file calendar `id` at `path`.
pub fn ics_calendar(id: &str, path: &Path, zone: chrono_tz::Tz) -> Calendars {
    let toml = format!(
        "[calendars.{id}]\nkind = \"ics\"\npath = \"{}\"\ntime_zone = \"{}\"\n",
        path.display(),
        zone.name()
    );
    calendars(&toml, path.parent().unwrap(), zone)
}

pub fn utc(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .unwrap()
        .with_timezone(&Utc)
}

/// `(title, start)` of the occurrences in `[from, to)`.
pub async fn occurrences(
    calendars: &Calendars,
    from: &str,
    to: &str,
) -> Vec<(String, DateTime<Utc>)> {
    let query = EventQuery {
        from: utc(from),
        to: utc(to),
        text: None,
        category: None,
        calendar: None,
        limit: 1000,
    };
    let listing = calendars.events(&query).await.unwrap();
    listing
        .occurrences
        .into_iter()
        .map(|o| (o.title, o.start_utc))
        .collect()
}

/// The context of a tool call in a test chat.
pub fn context() -> ToolCallContext {
    let session: SessionUri = "hearth-session:native/s1".parse().unwrap();
    ToolCallContext {
        chat: "hearth-chat:native/s1/c1".parse::<ChatUri>().unwrap(),
        session,
        turn_id: TurnId::generate(),
        call_id: "call-1".into(),
        scope: Scope::Global,
        working_directories: Vec::new(),
    }
}

/// The calendar tool `name` over `calendars`.
pub fn tool(calendars: &Calendars, name: &str) -> Arc<dyn ToolHandler> {
    calendar_tools(calendars.clone())
        .into_iter()
        .find(|t| t.name() == name)
        .unwrap()
}

/// One note folder calendar `id` at `folder`, in `zone`.
pub fn notes_calendar(id: &str, folder: &Path, zone: chrono_tz::Tz) -> Calendars {
    let toml = format!(
        "[calendars.{id}]\nkind = \"notes\"\npath = \"{}\"\ntime_zone = \"{}\"\n",
        folder.display(),
        zone.name()
    );
    calendars(&toml, folder.parent().unwrap(), zone)
}
