//! MCP servers that belong to one session: those an editor passes with an ACP session.
//! Only that session's turns list and call their tools.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use hearth_config::McpServerConfig;
use hearth_core::SessionUri;
use hearth_fetch::FetchPolicy;

use crate::toolbox::McpTools;

/// The MCP servers of each session that has its own, shared between the surface that
/// registers them and the toolbox that offers them. Cheap to clone.
#[derive(Clone)]
pub struct SessionMcpServers {
    policy: FetchPolicy,
    sessions: Arc<Mutex<HashMap<SessionUri, McpTools>>>,
}

impl std::fmt::Debug for SessionMcpServers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionMcpServers")
            .field("sessions", &self.lock().len())
            .finish_non_exhaustive()
    }
}

impl SessionMcpServers {
    /// No session has servers yet; HTTP servers not marked local will be checked against
    /// `policy`.
    pub fn new(policy: FetchPolicy) -> Self {
        Self {
            policy,
            sessions: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<SessionUri, McpTools>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Gives `session` the servers of `config` (in place of any it had, whose servers
    /// stop); none leaves it without. Servers start on the session's first listing.
    /// Returns what is wrong with the servers that cannot be used.
    pub async fn set(
        &self,
        session: &SessionUri,
        config: &BTreeMap<String, McpServerConfig>,
    ) -> Vec<String> {
        let tools = McpTools::from_config(config, self.policy.clone());
        let problems = tools.problems().iter().map(ToString::to_string).collect();
        let replaced = if tools.is_empty() {
            self.lock().remove(session)
        } else {
            self.lock().insert(session.clone(), tools)
        };
        if let Some(replaced) = replaced {
            replaced.shutdown().await;
        }
        problems
    }

    /// The servers of `session`, if it has any.
    pub fn get(&self, session: &SessionUri) -> Option<McpTools> {
        self.lock().get(session).cloned()
    }

    /// Whether a server of any session offers the tool `name`.
    pub fn any_owns(&self, name: &str) -> bool {
        self.lock().values().any(|tools| tools.owns(name))
    }

    /// Forgets every session's servers and stops them.
    pub async fn shutdown(&self) {
        let sessions: Vec<McpTools> = self.lock().drain().map(|(_, tools)| tools).collect();
        for tools in sessions {
            tools.shutdown().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hearth_core::{HarnessId, SessionId};

    fn session() -> SessionUri {
        SessionUri::new(HarnessId::parse("mock").unwrap(), SessionId::generate())
    }

    #[tokio::test]
    async fn a_sessions_servers_are_its_own_until_replaced_or_shut_down() {
        let servers = SessionMcpServers::new(FetchPolicy::default());
        let (ours, other) = (session(), session());
        let config = BTreeMap::from([(
            "notes".to_owned(),
            McpServerConfig {
                command: Some("notes-server".to_owned()),
                ..McpServerConfig::default()
            },
        )]);
        assert!(servers.set(&ours, &config).await.is_empty());
        assert!(
            servers
                .get(&ours)
                .is_some_and(|tools| tools.owns("notes__lookup"))
        );
        assert!(servers.get(&other).is_none());

        let bad = BTreeMap::from([("a__b".to_owned(), McpServerConfig::default())]);
        assert_eq!(servers.set(&other, &bad).await.len(), 1);
        assert!(servers.get(&other).is_none());

        servers.set(&ours, &BTreeMap::new()).await;
        assert!(servers.get(&ours).is_none());
        servers.set(&ours, &config).await;
        servers.shutdown().await;
        assert!(servers.get(&ours).is_none());
    }
}
