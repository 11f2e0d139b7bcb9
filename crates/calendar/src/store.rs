//! The configured calendars ([`Calendars`]): which exist, which is the default, and
//! loading each into an [`EventIndex`] — cached, and reloaded when its file or folder
//! changes (or, for a subscription or a CalDAV calendar, when its refresh interval has
//! passed; a CalDAV calendar that cannot sync is read from its last sync).

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use hearth_caldav::{CachedResource, DavTransport, NoNetwork, SyncCache, SyncReport};
use hearth_config::CalendarConfig;
use hearth_ical::{EventIndex, LoadWarning};
use serde::Serialize;

use crate::caldav::CalDavSource;
use crate::configure::configure;
use crate::error::{CalendarError, Result};
use crate::presence::{Origin, StorageState};
use crate::source::{LocalSource, Subscription, SubscriptionSource};

/// Calendars larger than this are refused unless configured otherwise.
pub const DEFAULT_MAX_CALENDAR_BYTES: u64 = 128 * 1024 * 1024;

/// How soon a CalDAV calendar that could not sync is tried again.
const OFFLINE_RETRY: Duration = Duration::from_secs(60);

/// The kind of storage behind a calendar.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StorageKind {
    /// A local iCalendar file.
    Ics,
    /// A folder of Full Calendar notes.
    Notes,
    /// A read-only iCalendar subscription.
    Subscription,
    /// A calendar on a CalDAV server.
    Caldav,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Storage {
    File(PathBuf),
    Folder(PathBuf),
    Subscription(Subscription),
    CalDav(CalDavSource),
}

/// One calendar as configured.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CalendarInfo {
    /// Its id (the `[calendars.<id>]` key).
    pub id: String,
    /// Display name.
    pub name: String,
    /// Kind.
    pub kind: StorageKind,
    /// File, folder or URL.
    pub location: String,
    /// Whether changes may be staged for it.
    pub writable: bool,
    /// Why it is read-only, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_only_reason: Option<String>,
    /// Whether new events go here by default.
    pub default: bool,
    /// The zone its floating times and all-day events are placed in.
    pub time_zone: String,
    /// Its display colour, when configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
    #[serde(skip)]
    pub(crate) storage: Storage,
    #[serde(skip)]
    pub(crate) zone: Tz,
    #[serde(skip)]
    pub(crate) origin: Origin,
}

/// A configured calendar Hearth cannot use, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ConfigProblem {
    /// The calendar's id.
    pub calendar: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

/// How calendars are set up.
#[derive(Clone)]
pub struct CalendarOptions {
    /// The folder the default calendar (`default.ics`) is created in on first use when
    /// no writable default is configured (Hearth passes `<data dir>/calendars`).
    pub default_dir: PathBuf,
    /// The user's time zone: floating times of calendars without their own zone, and the
    /// zone times are shown in.
    pub time_zone: Tz,
    /// Calendars larger than this are refused.
    pub max_calendar_bytes: u64,
    /// Where subscriptions are fetched from.
    pub subscription_source: Arc<dyn SubscriptionSource>,
    /// How CalDAV servers are reached.
    pub dav_transport: Arc<dyn DavTransport>,
    /// The folder CalDAV calendars are cached in (one file each).
    pub caldav_cache_dir: PathBuf,
}

impl CalendarOptions {
    /// Options with the default size limit and local subscriptions.
    pub fn new(default_dir: impl Into<PathBuf>, time_zone: Tz) -> Self {
        let default_dir = default_dir.into();
        Self {
            caldav_cache_dir: default_dir.join("caldav"),
            default_dir,
            time_zone,
            max_calendar_bytes: DEFAULT_MAX_CALENDAR_BYTES,
            subscription_source: Arc::new(LocalSource),
            dav_transport: Arc::new(NoNetwork),
        }
    }

    /// Reaches CalDAV servers through `transport` (Hearth's guarded fetcher).
    pub fn with_dav_transport(mut self, transport: Arc<dyn DavTransport>) -> Self {
        self.dav_transport = transport;
        self
    }

    /// Fetches subscriptions through `source` (Hearth's guarded fetcher).
    pub fn with_subscription_source(mut self, source: Arc<dyn SubscriptionSource>) -> Self {
        self.subscription_source = source;
        self
    }
}

/// What a calendar's storage looked like when it was loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Stamp {
    Missing,
    File {
        len: u64,
        modified: Option<SystemTime>,
        inode: u64,
    },
    Folder(Vec<(PathBuf, u64, Option<SystemTime>)>),
    Fetched(Instant),
    /// A CalDAV sync (or a failed one, read from the cache), good for the duration.
    Synced(Instant, Duration),
}

/// The current content of a calendar's storage, for staging changes.
#[derive(Debug)]
pub(crate) enum Content {
    /// An iCalendar file: its text (empty when missing), fingerprint, and why Hearth
    /// will not write to it, if it will not.
    Ics {
        text: String,
        fingerprint: String,
        blocker: Option<String>,
    },
    /// A note folder: each event note's fingerprint by its uid.
    Notes {
        fingerprints: HashMap<String, String>,
    },
    /// A subscription's text.
    Subscription { text: String },
    /// A CalDAV calendar's resources as last synced, by href, and the href of each
    /// event's uid.
    CalDav {
        resources: BTreeMap<String, CachedResource>,
        by_uid: HashMap<String, String>,
    },
}

/// A calendar loaded and indexed.
#[derive(Debug)]
pub struct LoadedCalendar {
    /// The calendar.
    pub info: CalendarInfo,
    /// Its events.
    pub index: EventIndex,
    /// What could not be read.
    pub warnings: Vec<LoadWarning>,
    /// When a CalDAV calendar was last synced with its server.
    pub synced_at: Option<DateTime<Utc>>,
    /// Why a CalDAV calendar is read from its last sync rather than synced now, if it is.
    pub offline: Option<String>,
    pub(crate) content: Content,
}

struct Cached {
    stamp: Stamp,
    loaded: Arc<LoadedCalendar>,
}

pub(crate) struct Inner {
    pub calendars: Vec<CalendarInfo>,
    pub problems: Vec<ConfigProblem>,
    pub options: CalendarOptions,
    cache: Mutex<HashMap<String, Cached>>,
    pub write_lock: tokio::sync::Mutex<()>,
}

/// Hearth's calendars: the configured ones plus, when none is a writable default, a
/// default local calendar created on first write.
#[derive(Clone)]
pub struct Calendars {
    pub(crate) inner: Arc<Inner>,
}

impl Calendars {
    /// The calendars of `config` (`Config.calendars`).
    pub fn from_config(
        config: &BTreeMap<String, CalendarConfig>,
        options: CalendarOptions,
    ) -> Self {
        let mut problems = Vec::new();
        let mut calendars: Vec<CalendarInfo> = config
            .iter()
            .filter_map(|(id, calendar)| configure(id, calendar, &options, &mut problems))
            .collect();
        for (id, calendar) in config {
            if calendar.default && calendars.iter().any(|c| &c.id == id && !c.writable) {
                problems.push(ConfigProblem {
                    calendar: id.clone(),
                    message: "a read-only calendar cannot be the default".to_owned(),
                });
            }
        }
        let defaults: Vec<usize> = calendars
            .iter()
            .enumerate()
            .filter(|(_, c)| c.default)
            .map(|(i, _)| i)
            .collect();
        if defaults.len() > 1 {
            let chosen = calendars[defaults[0]].id.clone();
            problems.push(ConfigProblem {
                calendar: chosen.clone(),
                message: format!(
                    "several calendars are marked `default = true`; `{chosen}` is used"
                ),
            });
            for &i in &defaults[1..] {
                calendars[i].default = false;
            }
        }
        if defaults.is_empty() {
            let writable: Vec<usize> = calendars
                .iter()
                .enumerate()
                .filter(|(_, c)| c.writable)
                .map(|(i, _)| i)
                .collect();
            if let [only] = writable.as_slice() {
                calendars[*only].default = true;
            } else {
                let id = ["default", "hearth", "hearth-default"]
                    .into_iter()
                    .find(|id| !calendars.iter().any(|c| c.id == *id))
                    .unwrap_or("hearth-default-calendar");
                let path = options.default_dir.join("default.ics");
                calendars.push(CalendarInfo {
                    id: id.to_owned(),
                    name: "Default".to_owned(),
                    kind: StorageKind::Ics,
                    location: path.display().to_string(),
                    writable: true,
                    read_only_reason: None,
                    default: true,
                    time_zone: options.time_zone.name().to_owned(),
                    color: None,
                    storage: Storage::File(path),
                    zone: options.time_zone,
                    origin: Origin::HearthDefault,
                });
            }
        }
        Self {
            inner: Arc::new(Inner {
                calendars,
                problems,
                options,
                cache: Mutex::new(HashMap::new()),
                write_lock: tokio::sync::Mutex::new(()),
            }),
        }
    }

    /// The usable calendars.
    pub fn calendars(&self) -> &[CalendarInfo] {
        &self.inner.calendars
    }

    /// Configured calendars that could not be used.
    pub fn problems(&self) -> &[ConfigProblem] {
        &self.inner.problems
    }

    /// The user's time zone.
    pub fn time_zone(&self) -> Tz {
        self.inner.options.time_zone
    }

    /// A calendar by id.
    pub fn calendar(&self, id: &str) -> Result<&CalendarInfo> {
        self.inner
            .calendars
            .iter()
            .find(|c| c.id == id)
            .ok_or_else(|| CalendarError::UnknownCalendar {
                id: id.to_owned(),
                known: self.inner.calendars.iter().map(|c| c.id.clone()).collect(),
            })
    }

    /// The calendar new events go to.
    pub fn default_calendar(&self) -> Option<&CalendarInfo> {
        self.inner.calendars.iter().find(|c| c.default)
    }

    /// The named calendar, or the default one.
    pub fn calendar_or_default(&self, id: Option<&str>) -> Result<&CalendarInfo> {
        match id.map(str::trim).filter(|id| !id.is_empty()) {
            Some(id) => self.calendar(id),
            None => self.default_calendar().ok_or_else(|| {
                CalendarError::InvalidInput(
                    "there is no default calendar; name one with `calendar`".to_owned(),
                )
            }),
        }
    }

    /// Loads (or takes from the cache) a calendar's events.
    pub async fn load(&self, id: &str) -> Result<Arc<LoadedCalendar>> {
        let info = self.calendar(id)?.clone();
        match &info.storage {
            Storage::Subscription(subscription) => {
                self.load_subscription(info.clone(), subscription.clone())
                    .await
            }
            Storage::CalDav(source) => self.load_caldav(info.clone(), source.clone()).await,
            Storage::File(_) | Storage::Folder(_) => {
                let inner = Arc::clone(&self.inner);
                tokio::task::spawn_blocking(move || inner.load_local(info))
                    .await
                    .map_err(|error| CalendarError::Task(error.to_string()))?
            }
        }
    }

    async fn load_subscription(
        &self,
        info: CalendarInfo,
        subscription: Subscription,
    ) -> Result<Arc<LoadedCalendar>> {
        let cached = self.inner.cached(&info.id);
        if let Some(cached) = &cached
            && let Stamp::Fetched(at) = cached.stamp
            && at.elapsed() < subscription.refresh
        {
            return Ok(Arc::clone(&cached.loaded));
        }
        let fetched = self
            .inner
            .options
            .subscription_source
            .fetch(&subscription)
            .await;
        let bytes = match (fetched, cached) {
            (Ok(bytes), _) => bytes,
            // Serve the last good copy while the source is unreachable.
            (Err(error), Some(cached)) => {
                tracing::warn!(calendar = %info.id, %error, "subscription fetch failed; using the last copy");
                return Ok(cached.loaded);
            }
            (Err(error), None) => return Err(error),
        };
        let max = self.inner.options.max_calendar_bytes;
        if bytes.len() as u64 > max {
            return Err(CalendarError::TooLarge {
                what: info.location.clone(),
                size: bytes.len() as u64,
                limit: max,
            });
        }
        let inner = Arc::clone(&self.inner);
        tokio::task::spawn_blocking(move || {
            let id = info.id.clone();
            let loaded = Arc::new(crate::loading::load_subscription(info, &bytes)?);
            inner.remember(&id, Stamp::Fetched(Instant::now()), Arc::clone(&loaded));
            Ok(loaded)
        })
        .await
        .map_err(|error| CalendarError::Task(error.to_string()))?
    }

    /// A CalDAV calendar: the last sync while it is fresh; else syncs, and when that
    /// fails reads the last sync from the cache with a warning saying when it was made.
    async fn load_caldav(
        &self,
        info: CalendarInfo,
        source: CalDavSource,
    ) -> Result<Arc<LoadedCalendar>> {
        if let Some(cached) = self.inner.cached(&info.id)
            && let Stamp::Synced(at, valid) = cached.stamp
            && at.elapsed() < valid
        {
            return Ok(cached.loaded);
        }
        let transport = Arc::clone(&self.inner.options.dav_transport);
        let (cache, warnings, valid, offline) = match crate::caldav::sync(&*transport, &source)
            .await
        {
            Ok((cache, _)) => (cache, Vec::new(), source.refresh, None),
            Err(error) => {
                let Some(last) = crate::caldav::read_cache_blocking(&source).await? else {
                    return Err(error);
                };
                let when = last.synced_at.map_or_else(
                    || "an unknown time".to_owned(),
                    |at| at.format("%Y-%m-%d %H:%M UTC").to_string(),
                );
                let message = format!("cannot sync ({error}); showing the copy synced at {when}");
                tracing::warn!("calendar `{}`: {message}", info.id);
                let warning = LoadWarning::new(info.location.clone(), message);
                let offline = Some(error.to_string());
                (
                    last,
                    vec![warning],
                    OFFLINE_RETRY.min(source.refresh),
                    offline,
                )
            }
        };
        self.remember_caldav(info, cache, warnings, valid, offline)
            .await
    }

    async fn remember_caldav(
        &self,
        info: CalendarInfo,
        cache: SyncCache,
        warnings: Vec<LoadWarning>,
        valid: Duration,
        offline: Option<String>,
    ) -> Result<Arc<LoadedCalendar>> {
        let inner = Arc::clone(&self.inner);
        tokio::task::spawn_blocking(move || {
            let id = info.id.clone();
            let mut loaded = crate::loading::load_caldav(info, cache, warnings);
            loaded.offline = offline;
            let loaded = Arc::new(loaded);
            inner.remember(
                &id,
                Stamp::Synced(Instant::now(), valid),
                Arc::clone(&loaded),
            );
            loaded
        })
        .await
        .map_err(|error| CalendarError::Task(error.to_string()))
    }

    /// Syncs a CalDAV calendar with its server now; a failure leaves the last sync as it
    /// was and is returned.
    pub async fn sync(&self, id: &str) -> Result<SyncReport> {
        let info = self.calendar(id)?.clone();
        let Storage::CalDav(source) = &info.storage else {
            return Err(CalendarError::InvalidInput(format!(
                "calendar `{id}` is not a CalDAV calendar; only those sync"
            )));
        };
        let source = source.clone();
        let transport = Arc::clone(&self.inner.options.dav_transport);
        let (cache, report) = crate::caldav::sync(&*transport, &source).await?;
        self.remember_caldav(info, cache, Vec::new(), source.refresh, None)
            .await?;
        Ok(report)
    }

    /// Drops a calendar's cached events (after Hearth wrote to it).
    pub(crate) fn forget(&self, id: &str) {
        self.inner
            .cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
    }
}

impl Inner {
    fn cached(&self, id: &str) -> Option<CachedView> {
        self.cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .map(|c| CachedView {
                stamp: c.stamp.clone(),
                loaded: Arc::clone(&c.loaded),
            })
    }

    fn remember(&self, id: &str, stamp: Stamp, loaded: Arc<LoadedCalendar>) {
        self.cache
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.to_owned(), Cached { stamp, loaded });
    }

    fn load_local(&self, info: CalendarInfo) -> Result<Arc<LoadedCalendar>> {
        if info.storage_state() == StorageState::Missing {
            return Err(info.missing());
        }
        let stamp = crate::loading::stamp(&info.storage)?;
        if let Some(cached) = self.cached(&info.id)
            && cached.stamp == stamp
        {
            return Ok(cached.loaded);
        }
        let id = info.id.clone();
        let loaded = Arc::new(crate::loading::load_local(
            info,
            self.options.max_calendar_bytes,
        )?);
        self.remember(&id, stamp, Arc::clone(&loaded));
        Ok(loaded)
    }
}

struct CachedView {
    stamp: Stamp,
    loaded: Arc<LoadedCalendar>,
}
