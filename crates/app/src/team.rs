//! A team server's users, as its tools see them: an agent working in a user's session
//! reaches only the calendars granted to that user (`hearth users grant USER member
//! calendar:NAME`). Sessions with no owner — the operator's — reach every calendar.

use std::sync::Arc;

use futures::future::BoxFuture;
use hearth_calendar::tool_names as names;
use hearth_core::ToolCallContext;
use hearth_store::Stores;
use hearth_tools::CallAdmission;
use serde_json::Value;

/// Admits a calendar tool's call only on calendars granted to the session's owner.
pub struct CalendarGrants {
    stores: Arc<dyn Stores>,
    /// Every configured calendar's id, to tell a user which are theirs.
    calendars: Vec<String>,
}

impl CalendarGrants {
    /// Grants read from `stores`, over the configured calendars `calendars`.
    pub fn new(stores: Arc<dyn Stores>, calendars: Vec<String>) -> Self {
        Self { stores, calendars }
    }

    /// The calendars granted to `user`.
    async fn granted(&self, user: &str) -> Result<Vec<String>, String> {
        let mut granted = Vec::new();
        for calendar in &self.calendars {
            let roles = self
                .stores
                .roles(&format!("calendar:{calendar}"), user)
                .await
                .map_err(|error| format!("the calendars' grants cannot be read now: {error}"))?;
            if !roles.is_empty() {
                granted.push(calendar.clone());
            }
        }
        Ok(granted)
    }

    async fn admit_user(&self, user: &str, tool: &str, arguments: &Value) -> Result<(), String> {
        let granted = self.granted(user).await?;
        let yours = if granted.is_empty() {
            "none is granted to this session's user".to_owned()
        } else {
            format!("this session's user may use: {}", granted.join(", "))
        };
        let named = named_calendars(tool, arguments).ok_or_else(|| {
            format!("on this team server `{tool}` must name its calendar ({yours})")
        })?;
        match named.iter().find(|calendar| !granted.contains(calendar)) {
            Some(calendar) => Err(format!(
                "calendar `{calendar}` is not granted to this session's user ({yours})"
            )),
            None => Ok(()),
        }
    }
}

/// The calendars a calendar tool's call names; `None` when it names none (it would
/// reach every calendar, or the default one).
fn named_calendars(tool: &str, arguments: &Value) -> Option<Vec<String>> {
    let text = |value: &Value, key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
    match tool {
        names::EVENTS_LIST | names::EVENT_CREATE | names::EVENTS_CREATE_BATCH => {
            text(arguments, "calendar").map(|calendar| vec![calendar])
        }
        names::EVENT_GET | names::EVENT_UPDATE | names::EVENT_DELETE => {
            let id = text(arguments, "id")?;
            let (calendar, _) = id.split_once('/')?;
            Some(vec![calendar.to_owned()])
        }
        _ => None,
    }
}

fn is_calendar_tool(tool: &str) -> bool {
    [
        names::CALENDAR_LIST,
        names::EVENTS_LIST,
        names::EVENT_GET,
        names::EVENT_CREATE,
        names::EVENT_UPDATE,
        names::EVENT_DELETE,
        names::EVENTS_CREATE_BATCH,
    ]
    .contains(&tool)
}

impl CallAdmission for CalendarGrants {
    fn admit<'a>(
        &'a self,
        call: &'a ToolCallContext,
        tool: &'a str,
        arguments: &'a Value,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            if !is_calendar_tool(tool) {
                return Ok(());
            }
            let session = self
                .stores
                .session(&call.session)
                .await
                .map_err(|error| format!("the session's owner cannot be read now: {error}"))?;
            match session.and_then(|session| session.owner) {
                Some(owner) => self.admit_user(&owner.user, tool, arguments).await,
                None => Ok(()),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_call_names_its_calendars_or_none() {
        assert_eq!(
            named_calendars(
                names::EVENT_CREATE,
                &json!({"calendar": "work", "title": "x"})
            ),
            Some(vec!["work".to_owned()])
        );
        assert_eq!(
            named_calendars(names::EVENT_CREATE, &json!({"title": "x"})),
            None
        );
        assert_eq!(
            named_calendars(names::EVENT_DELETE, &json!({"id": "home/standup@test"})),
            Some(vec!["home".to_owned()])
        );
        assert_eq!(
            named_calendars(
                names::EVENTS_CREATE_BATCH,
                &json!({"calendar": "a", "events": [{"title": "x"}]})
            ),
            Some(vec!["a".to_owned()])
        );
        assert_eq!(
            named_calendars(
                names::EVENTS_CREATE_BATCH,
                &json!({"events": [{"title": "x"}]})
            ),
            None
        );
        assert_eq!(named_calendars(names::CALENDAR_LIST, &json!({})), None);
    }

    fn ics(dir: &std::path::Path, name: &str) -> String {
        let path = dir.join(format!("{name}.ics"));
        std::fs::write(
            &path,
            "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nEND:VCALENDAR\r\n",
        )
        .unwrap();
        format!(
            "[calendars.{name}]\nkind = \"ics\"\npath = {:?}\n",
            path.display().to_string()
        )
    }

    #[tokio::test]
    async fn a_users_agent_reaches_only_the_calendars_granted_to_them() {
        use hearth_core::{ChatUri, Owner, Scope, TurnId};
        use hearth_store::UserStore;
        let fake = hearth_test_support::FakeAgent::new("fake");
        let test = hearth_test_support::TestHost::start(vec![fake]).await;
        let config = format!(
            "[defaults]\ntime_zone = \"UTC\"\n\n{}\n{}",
            ics(test.dir.path(), "mine"),
            ics(test.dir.path(), "theirs")
        );
        let config =
            hearth_config::Config::parse(&config, &test.dir.path().join("config.toml")).unwrap();
        let calendars = hearth_calendar::Calendars::from_config(
            &config.calendars,
            hearth_calendar::CalendarOptions::new(test.dir.path().join("data"), chrono_tz::UTC),
        );
        let store = test.sqlite();
        let audit = hearth_tools::AuditLog::new(store.clone());
        let mut builder = hearth_tools::ToolRegistry::builder(store.clone(), audit);
        builder
            .register_all(hearth_calendar::calendar_tools(calendars))
            .unwrap();
        let registry = builder.build();
        let stores: Arc<dyn Stores> = store.clone();
        assert!(registry.admit_with(Arc::new(CalendarGrants::new(
            stores,
            vec!["mine".into(), "theirs".into()],
        ))));
        let alice = store.create_user("alice").await.unwrap();
        store
            .grant("calendar:mine", &alice.id, hearth_store::Role::Member)
            .await
            .unwrap();
        let session = |owner: Option<Owner>| {
            let host = test.host.clone();
            async move {
                host.create_session(hearth_host::NewSessionRequest {
                    provider: hearth_core::HarnessId::parse("fake").unwrap(),
                    scope: Scope::Global,
                    title: None,
                    model: None,
                    working_directories: Vec::new(),
                    owner,
                })
                .await
                .unwrap()
            }
        };
        let context = |session: &hearth_core::SessionUri| ToolCallContext {
            chat: ChatUri::default_for(session),
            session: session.clone(),
            turn_id: TurnId::generate(),
            call_id: "c".into(),
            scope: Scope::Global,
            working_directories: Vec::new(),
        };
        let hers = context(&session(Some(Owner::user(alice.id.clone()))).await);
        let call = |context: &ToolCallContext, tool: &'static str, arguments: Value| {
            let registry = registry.clone();
            let context = context.clone();
            async move { hearth_core::Toolbox::call(&registry, &context, tool, arguments).await }
        };
        let window = |calendar: Option<&str>| {
            let mut arguments = json!({"from": "2026-12-01", "to": "2026-12-08"});
            if let Some(calendar) = calendar {
                arguments["calendar"] = json!(calendar);
            }
            arguments
        };
        let mine = call(&hers, names::EVENTS_LIST, window(Some("mine"))).await;
        assert!(!mine.is_error, "{}", mine.content);
        let theirs = call(&hers, names::EVENTS_LIST, window(Some("theirs"))).await;
        assert!(theirs.is_error);
        assert!(
            theirs.content.contains("`theirs` is not granted") && theirs.content.contains("mine"),
            "{}",
            theirs.content
        );
        let every = call(&hers, names::EVENTS_LIST, window(None)).await;
        assert!(
            every.is_error && every.content.contains("must name"),
            "{}",
            every.content
        );
        let listed = call(&hers, names::CALENDAR_LIST, json!({})).await;
        assert!(listed.is_error, "{}", listed.content);
        let staged = call(
            &hers,
            names::EVENT_CREATE,
            json!({"calendar": "theirs", "title": "x", "start": "2026-12-02T10:00"}),
        )
        .await;
        assert!(
            staged.is_error && staged.proposal.is_none(),
            "{}",
            staged.content
        );
        // The operator's sessions reach every calendar.
        let operators = context(&session(None).await);
        let all = call(&operators, names::EVENTS_LIST, window(None)).await;
        assert!(!all.is_error, "{}", all.content);
    }
}
