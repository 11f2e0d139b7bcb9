//! Calendars from the `[calendars.*]` sections of `config.toml`: each checked and
//! turned into a [`CalendarInfo`], and what is wrong with it reported as a
//! [`ConfigProblem`] naming the calendar and what to do (an unusable calendar is left
//! out; a wrong time zone falls back to the user's).

use std::path::{Path, PathBuf};
use std::time::Duration;

use hearth_caldav::{CalDavAccount, PasswordSource};
use hearth_config::{CalendarConfig, CalendarKind};
use hearth_ical::parse_time_zone;

use crate::caldav::CalDavSource;
use crate::presence::Origin;
use crate::source::Subscription;
use crate::store::{CalendarInfo, CalendarOptions, ConfigProblem, Storage, StorageKind};

/// How often a subscription is fetched again when its configuration does not say.
const DEFAULT_REFRESH: Duration = Duration::from_secs(60 * 60);
/// How often a CalDAV calendar is synced again when its configuration does not say.
const DEFAULT_CALDAV_REFRESH: Duration = Duration::from_secs(5 * 60);

fn expand_home(path: &Path) -> PathBuf {
    match path.strip_prefix("~") {
        Ok(rest) => match std::env::var_os("HOME") {
            Some(home) => PathBuf::from(home).join(rest),
            None => path.to_path_buf(),
        },
        Err(_) => path.to_path_buf(),
    }
}

/// The calendar `[calendars.<id>]` configures, or `None` (with the reason in
/// `problems`) when it cannot be used.
pub(crate) fn configure(
    id: &str,
    config: &CalendarConfig,
    options: &CalendarOptions,
    problems: &mut Vec<ConfigProblem>,
) -> Option<CalendarInfo> {
    let mut problem = |message: String| {
        problems.push(ConfigProblem {
            calendar: id.to_owned(),
            message,
        })
    };
    if id.is_empty() || id.contains(['/', ' ']) {
        problem(format!(
            "the calendar id `{id}` must be non-empty without `/` or spaces; rename the [calendars.{id}] section"
        ));
        return None;
    }
    if config.password.is_some() {
        problem(
            "a password is never kept in config.toml; remove `password`, put it in an environment variable named by `password_env`, or name a command printing it (a keyring) in `password_command`".to_owned(),
        );
        return None;
    }
    let zone = match config.time_zone.as_deref().map(parse_time_zone) {
        Some(Ok(zone)) => zone,
        Some(Err(error)) => {
            problem(format!(
                "{error}; the user's zone {} is used",
                options.time_zone.name()
            ));
            options.time_zone
        }
        None => options.time_zone,
    };
    let (kind, storage, location) = match storage(id, config, options) {
        Ok(storage) => storage,
        Err(message) => {
            problem(message);
            return None;
        }
    };
    let (writable, reason) = match (kind, config.writable) {
        (StorageKind::Subscription, Some(true)) => {
            problem("subscriptions are read-only; `writable = true` is ignored".to_owned());
            (false, Some("a subscription".to_owned()))
        }
        (StorageKind::Subscription, _) => (false, Some("a subscription".to_owned())),
        (_, Some(false)) => (false, Some("configured with writable = false".to_owned())),
        _ => (true, None),
    };
    Some(CalendarInfo {
        id: id.to_owned(),
        name: config.name.clone().unwrap_or_else(|| id.to_owned()),
        kind,
        location,
        writable,
        read_only_reason: reason,
        default: config.default && writable,
        time_zone: zone.name().to_owned(),
        color: config.color.clone(),
        storage,
        zone,
        origin: Origin::Configured,
    })
}

/// What holds the calendar, and where it is as shown to the user (never with a
/// password); `Err` says what to set.
fn storage(
    id: &str,
    config: &CalendarConfig,
    options: &CalendarOptions,
) -> Result<(StorageKind, Storage, String), String> {
    let path = config.path.as_deref().map(expand_home);
    match config.kind {
        CalendarKind::Ics | CalendarKind::Notes => {
            let Some(path) = path else {
                return Err("set `path` to the calendar's file (ics) or folder (notes)".to_owned());
            };
            let location = path.display().to_string();
            Ok(if config.kind == CalendarKind::Ics {
                (StorageKind::Ics, Storage::File(path), location)
            } else {
                (StorageKind::Notes, Storage::Folder(path), location)
            })
        }
        CalendarKind::Subscription => subscription(id, config, path, options),
        CalendarKind::Caldav => caldav(id, config, options),
    }
}

fn refresh(config: &CalendarConfig, default: Duration) -> Duration {
    config
        .refresh_minutes
        .map_or(default, |minutes| Duration::from_secs(minutes.max(1) * 60))
}

fn subscription(
    id: &str,
    config: &CalendarConfig,
    path: Option<PathBuf>,
    options: &CalendarOptions,
) -> Result<(StorageKind, Storage, String), String> {
    if config.url.is_none() && path.is_none() {
        return Err("set `url` (or `path`, for a downloaded copy) for the subscription".to_owned());
    }
    // A location is shown (listings, messages, proposals): never a password.
    let location = config.url.as_deref().map_or_else(
        || {
            path.as_deref()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        },
        |url| hearth_core::redact_userinfo(url).into_owned(),
    );
    let subscription = Subscription {
        calendar: id.to_owned(),
        url: config.url.clone(),
        path,
        allow_private_network: config.allow_private_network,
        max_bytes: options.max_calendar_bytes,
        refresh: refresh(config, DEFAULT_REFRESH),
    };
    Ok((
        StorageKind::Subscription,
        Storage::Subscription(subscription),
        location,
    ))
}

fn caldav(
    id: &str,
    config: &CalendarConfig,
    options: &CalendarOptions,
) -> Result<(StorageKind, Storage, String), String> {
    let Some(url) = config
        .url
        .clone()
        .filter(|url| url.starts_with("https://") || url.starts_with("http://"))
    else {
        return Err("set `url` to the calendar's http(s) address (find it with `hearth calendar add --caldav <server>`)".to_owned());
    };
    let password = match (&config.password_env, &config.password_command) {
        (Some(_), Some(_)) => {
            return Err("set `password_env` or `password_command`, not both".to_owned());
        }
        (Some(name), None) => PasswordSource::Env(name.clone()),
        (None, Some(command)) => PasswordSource::Command(command.clone()),
        (None, None) => PasswordSource::None,
    };
    if config.username.is_some() && password == PasswordSource::None {
        return Err("set `password_env` (an environment variable holding the password) or `password_command` for the user name".to_owned());
    }
    let source = CalDavSource {
        account: CalDavAccount {
            label: id.to_owned(),
            url: if url.ends_with('/') {
                url.clone()
            } else {
                format!("{url}/")
            },
            username: config.username.clone(),
            password,
            allow_private_network: config.allow_private_network,
        },
        refresh: refresh(config, DEFAULT_CALDAV_REFRESH),
        cache: options.caldav_cache_dir.join(format!("{id}.json")),
        max_bytes: options.max_calendar_bytes,
    };
    let location = hearth_core::redact_userinfo(&url).into_owned();
    Ok((StorageKind::Caldav, Storage::CalDav(source), location))
}
