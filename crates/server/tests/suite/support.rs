use std::sync::Arc;
use std::time::Duration;

use hearth_core::{HarnessId, Toolbox};
use hearth_protocol::{self as wire, ChatSendParams, SessionCreateParams, UserMessage};
use hearth_server::{Backend, Client, Notifications, Notified, Secret, Server, ServerOptions};
use hearth_test_support::{FakeAgent, TestHost};
use tokio::sync::oneshot;

pub const WAIT: Duration = hearth_test_support::WAIT;

pub struct TestServer {
    pub url: String,
    pub token: Secret,
    pub fake: Arc<FakeAgent>,
    pub host: TestHost,
    /// The tool registry behind `approvals` (with the calendar tools when `calendars`
    /// was set), for staging proposals as an agent would.
    pub tools: Option<hearth_tools::ToolRegistry>,
    stop: Option<oneshot::Sender<()>>,
}

pub struct Setup {
    pub queue_capacity: usize,
    pub toolbox: Option<Arc<dyn Toolbox>>,
    pub config: hearth_config::Config,
    /// Proposals and the audit log (the approval gate over the host's store).
    pub approvals: bool,
    /// The calendars, with their tools in the registry behind the approvals (set
    /// together with `approvals`).
    pub calendars: Option<hearth_calendar::Calendars>,
    /// How long a browser stays logged in.
    pub login_lifetime: Duration,
    /// How long a new connection may take to send a request's head.
    pub header_read_timeout: Duration,
    /// How long a kept-alive connection may wait between requests.
    pub idle_timeout: Duration,
    /// Connections held at once.
    pub max_connections: usize,
    /// The data directory and `config.toml` `provider/add` changes.
    pub paths: Option<hearth_config::Paths>,
    /// Makes the harness of a provider `provider/add` saved.
    pub provider_harnesses: Option<Arc<dyn hearth_server::ProviderHarnesses>>,
    /// A team server with users, kept in the host's store.
    pub users: bool,
    /// The approvals' tools are also the server's toolbox (lent at `/mcp`).
    pub lend_tools: bool,
}

impl Default for Setup {
    fn default() -> Self {
        Self {
            queue_capacity: hearth_server::DEFAULT_QUEUE_CAPACITY,
            toolbox: None,
            config: hearth_config::Config::default(),
            approvals: false,
            calendars: None,
            login_lifetime: hearth_server::DEFAULT_LOGIN_LIFETIME,
            header_read_timeout: hearth_server::DEFAULT_HEADER_READ_TIMEOUT,
            idle_timeout: hearth_server::DEFAULT_IDLE_TIMEOUT,
            max_connections: hearth_server::DEFAULT_MAX_CONNECTIONS,
            paths: None,
            provider_harnesses: None,
            users: false,
            lend_tools: false,
        }
    }
}

impl TestServer {
    pub async fn start() -> Self {
        Self::start_with(Setup::default()).await
    }

    pub async fn start_with(setup: Setup) -> Self {
        let fake = FakeAgent::new("fake");
        let host = TestHost::start(vec![fake.clone()]).await;
        let tools = setup.approvals.then(|| {
            let audit = hearth_tools::AuditLog::new(host.sqlite());
            let mut builder = hearth_tools::ToolRegistry::builder(host.sqlite(), audit);
            if let Some(calendars) = &setup.calendars {
                builder
                    .register_all(hearth_calendar::calendar_tools(calendars.clone()))
                    .unwrap();
            }
            builder.build()
        });
        let approvals = tools.as_ref().map(|registry| {
            Arc::new(hearth_server::GateApprovals::new(
                registry.gate(),
                registry.audit().clone(),
            )) as Arc<dyn hearth_server::Approvals>
        });
        let backend = Backend {
            default_provider: Some(HarnessId::parse("fake").unwrap()),
            toolbox: setup.toolbox.or_else(|| {
                tools
                    .clone()
                    .filter(|_| setup.lend_tools)
                    .map(|registry| Arc::new(registry) as Arc<dyn hearth_core::Toolbox>)
            }),
            config: setup.config,
            audit: tools.as_ref().map(|registry| registry.audit().clone()),
            approvals,
            calendars: setup.calendars,
            paths: setup.paths,
            provider_harnesses: setup.provider_harnesses,
            accounts: setup
                .users
                .then(|| host.sqlite() as Arc<dyn hearth_store::Stores>),
            ..Backend::new(host.host.clone())
        };
        let mut options = ServerOptions::at("127.0.0.1", 0).unwrap();
        options.queue_capacity = setup.queue_capacity;
        options.login_lifetime = setup.login_lifetime;
        options.header_read_timeout = setup.header_read_timeout;
        options.idle_timeout = setup.idle_timeout;
        options.max_connections = setup.max_connections;
        let token = Secret::generate().unwrap();
        let server = Server::bind(backend, options, token.clone()).await.unwrap();
        let url = server.url();
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(server.serve(async move {
            stopped.await.ok();
        }));
        Self {
            url,
            token,
            fake,
            host,
            tools,
            stop: Some(stop),
        }
    }

    /// The server's `host:port`.
    pub fn authority(&self) -> &str {
        self.url.trim_start_matches("http://")
    }

    /// A raw HTTP/1.1 request (`line`, then `Host`, `headers` and `Connection: close`,
    /// then `body`); returns the status and the whole response.
    pub async fn http(&self, line: &str, headers: &[String], body: &str) -> (u16, String) {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut text = format!("{line}\r\nHost: {}\r\n", self.authority());
        for header in headers {
            text.push_str(header);
            text.push_str("\r\n");
        }
        text.push_str("Connection: close\r\n");
        if !body.is_empty() {
            text.push_str(&format!("Content-Length: {}\r\n", body.len()));
        }
        text.push_str("\r\n");
        text.push_str(body);
        let mut stream = tokio::net::TcpStream::connect(self.authority())
            .await
            .unwrap();
        stream.write_all(text.as_bytes()).await.unwrap();
        let mut response = Vec::new();
        tokio::time::timeout(WAIT, stream.read_to_end(&mut response))
            .await
            .expect("the server answered in time")
            .unwrap();
        let response = String::from_utf8_lossy(&response).into_owned();
        let status = response
            .split_whitespace()
            .nth(1)
            .and_then(|code| code.parse().ok())
            .unwrap_or_else(|| panic!("no status line in {response:?}"));
        (status, response)
    }

    /// A connected, initialized client.
    pub async fn client(&self) -> (Client, Notifications) {
        let (client, notifications) = Client::connect(&self.url, &self.token).await.unwrap();
        client.initialize("test").await.unwrap();
        (client, notifications)
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            stop.send(()).ok();
        }
    }
}

pub async fn create_session(client: &Client) -> wire::SessionState {
    client
        .call::<hearth_protocol::SessionCreate>(&SessionCreateParams::default())
        .await
        .unwrap()
        .session
}

pub async fn send(client: &Client, chat: &str, text: &str) -> String {
    client
        .call::<hearth_protocol::ChatSend>(&ChatSendParams {
            chat: chat.to_owned(),
            message: UserMessage {
                text: text.to_owned(),
                ..UserMessage::default()
            },
        })
        .await
        .unwrap()
        .turn_id
}

/// Hearth's own agent over a provider of the configuration, as `hearth serve` makes it
/// (without its tools, and without titling chats, so every model request is a turn's).
pub struct NativeProviders;

impl hearth_server::ProviderHarnesses for NativeProviders {
    fn harness(
        &self,
        config: &hearth_config::Config,
        id: &str,
        env: &hearth_llm::Environment,
        resolver: Option<Arc<dyn reqwest::dns::Resolve>>,
    ) -> Result<Arc<dyn hearth_core::Harness>, String> {
        use futures::FutureExt;
        let discovery = hearth_llm::discover_providers(
            config,
            env,
            &hearth_llm::DiscoveryOptions {
                detect_ollama: false,
                ..hearth_llm::DiscoveryOptions::default()
            },
        )
        .now_or_never()
        .ok_or("discovery without Ollama waits on nothing")?;
        let provider = discovery
            .get(id)
            .ok_or_else(|| format!("no provider `{id}`: {:?}", discovery.problems))?;
        let mut provider = provider.clone();
        provider.options.resolver = resolver;
        let agent = hearth_harness_native::NativeHarness::from_provider(
            &provider,
            Arc::new(hearth_harness_native::NoTools),
            hearth_harness_native::AgentSettings::default().with_titles(false),
        )
        .map_err(|error| error.to_string())?;
        Ok(Arc::new(agent))
    }
}

/// The next notification, failing the test after [`WAIT`].
pub async fn next(notifications: &mut Notifications) -> Notified {
    match tokio::time::timeout(WAIT, notifications.recv()).await {
        Ok(Some(notified)) => notified,
        Ok(None) => panic!("the connection closed"),
        Err(_) => panic!("no notification within {WAIT:?}"),
    }
}

/// The next envelope notification (skipping nothing: anything else fails).
pub async fn next_envelope(notifications: &mut Notifications) -> wire::Envelope {
    match next(notifications).await {
        Notified::Envelope(envelope) => envelope,
        other => panic!("expected an envelope, got {other:?}"),
    }
}

/// Envelopes until the turn completes.
pub async fn until_completed(
    notifications: &mut Notifications,
    turn_id: &str,
) -> Vec<wire::Envelope> {
    let mut seen = Vec::new();
    loop {
        let envelope = next_envelope(notifications).await;
        let done = matches!(&envelope.action, wire::Action::TurnCompleted { turn_id: id, .. } if id == turn_id);
        seen.push(envelope);
        if done {
            return seen;
        }
    }
}
