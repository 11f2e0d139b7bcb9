//! A fresh PostgreSQL database for each test that runs against PostgreSQL, on the test
//! server `.ci/postgres start` runs (its URL in `HEARTH_TEST_POSTGRES`). Without that
//! server such tests are skipped with the reason, unless `HEARTH_REQUIRE_POSTGRES=1`.

use hearth_store::PgStore;
use sqlx::Connection;

/// The variable naming the test server's `postgres` database, as a superuser.
pub const SERVER_VARIABLE: &str = "HEARTH_TEST_POSTGRES";

/// The variable that turns a missing server into a failure.
pub const REQUIRE_VARIABLE: &str = "HEARTH_REQUIRE_POSTGRES";

/// The URL of a new, empty database on the test server, or `None` (the test is skipped,
/// and says why) when there is no server and none is required.
#[allow(clippy::print_stderr, reason = "a skipped test says why on stderr")]
pub async fn fresh_database() -> Option<String> {
    let Ok(server) = std::env::var(SERVER_VARIABLE) else {
        assert!(
            std::env::var(REQUIRE_VARIABLE).as_deref() != Ok("1"),
            "{REQUIRE_VARIABLE}=1 but {SERVER_VARIABLE} is not set: start a server with `eval \"$(.ci/postgres start)\"`"
        );
        eprintln!("skipped on PostgreSQL: {SERVER_VARIABLE} is not set (see .ci/postgres)");
        return None;
    };
    let name = format!("hearth_test_{}", uuid::Uuid::new_v4().simple());
    let mut connection = sqlx::PgConnection::connect(&server)
        .await
        .unwrap_or_else(|error| panic!("connect to the test server {server}: {error}"));
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut connection)
        .await
        .unwrap_or_else(|error| panic!("create database {name}: {error}"));
    let _ = connection.close().await;
    let base = server
        .rsplit_once('/')
        .map_or(server.as_str(), |(base, _)| base);
    Some(format!("{base}/{name}"))
}

/// A store on a new database of the test server (see [`fresh_database`]).
pub async fn fresh_store() -> Option<PgStore> {
    let url = fresh_database().await?;
    Some(
        PgStore::connect(&url)
            .await
            .unwrap_or_else(|error| panic!("open the store on {url}: {error}")),
    )
}
