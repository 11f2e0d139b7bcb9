//! Helpers for the tool, proposal, audit and calendar tests: a data directory with a
//! configured calendar, staging through the tool path, and direct database access for
//! the tampering cases.

use std::path::{Path, PathBuf};

use serde_json::Value;
use sqlx::ConnectOptions;
use sqlx::sqlite::SqliteConnectOptions;

use super::support::Hearth;

/// A data directory whose config has one iCalendar calendar, `home`, as the default,
/// and the UTC time zone.
pub fn with_calendar() -> (Hearth, PathBuf) {
    let hearth = Hearth::new();
    let calendar = hearth.home.path().join("home.ics");
    hearth.write(
        "config.toml",
        &format!(
            "[defaults]\ntime_zone = \"UTC\"\n\n[calendars.home]\nkind = \"ics\"\npath = {:?}\ndefault = true\n",
            calendar.display().to_string()
        ),
    );
    (hearth, calendar)
}

/// Stages a new event as an agent would (through the registry); returns the proposal id.
pub fn stage_event(hearth: &Hearth, title: &str, start: &str) -> String {
    let arguments = serde_json::json!({"title": title, "start": start}).to_string();
    let output = hearth.ok(&["tools", "call", "event_create", &arguments, "--json"]);
    let outcome: Value = serde_json::from_str(output.trim()).unwrap();
    assert_eq!(outcome["isError"], false, "{output}");
    assert!(
        outcome["content"]
            .as_str()
            .unwrap()
            .contains("awaits their approval"),
        "{output}"
    );
    outcome["proposal"]["id"].as_str().unwrap().to_owned()
}

/// A proposal as `proposals show --json` prints it.
pub fn proposal(hearth: &Hearth, id: &str) -> Value {
    serde_json::from_str(hearth.ok(&["proposals", "show", id, "--json"]).trim()).unwrap()
}

/// The audit log as `audit export` prints it, oldest first.
pub fn audit_rows(hearth: &Hearth) -> Vec<Value> {
    hearth
        .ok(&["audit", "export"])
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// Runs one SQL statement on the database directly, as someone tampering with it would.
pub fn execute(database: &Path, statement: &str) -> Result<(), sqlx::Error> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut connection = SqliteConnectOptions::new()
            .filename(database)
            .connect()
            .await?;
        sqlx::raw_sql(sqlx::AssertSqlSafe(statement.to_owned()))
            .execute(&mut connection)
            .await?;
        Ok(())
    })
}

/// Runs SQL statements that must succeed.
pub fn tamper(database: &Path, statements: &[&str]) {
    for statement in statements {
        execute(database, statement).unwrap();
    }
}
